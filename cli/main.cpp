// dot-core: one binary, many subcommands. This file only wires them together;
// each group lives in its own cmd_<group>.cpp (see commands.h).
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <memory>
#include <string_view>

#include <CLI/CLI.hpp>

#include "commands.h"

namespace {

// Each command group and the top-level commands it adds (commands.h).
struct Group {
  std::initializer_list<std::string_view> commands;
  void (*add)(CLI::App&, dot::cli::Context&);
};
const Group kGroups[] = {
    {{"version"}, dot::cli::add_version_command},
    {{"jcs"}, dot::cli::add_jcs_commands},
    {{"vectors"}, dot::cli::add_vectors_commands},
    {{"frames"}, dot::cli::add_frames_commands},
    {{"init"}, dot::cli::add_init_command},
    {{"store"}, dot::cli::add_store_commands},
    {{"inspect"}, dot::cli::add_inspect_commands},
    {{"register", "plan", "apply", "rollback", "recover", "retry-effects", "discard", "status", "export", "plan-id"},
     dot::cli::add_engine_commands},
    {{"doctor"}, dot::cli::add_doctor_command},
    {{"adpp"}, dot::cli::add_adpp_commands},
    {{"metewand"}, dot::cli::add_metewand_commands},
};

// The app with every group, or (only != nullptr) with the one group that
// names `only`.
std::unique_ptr<CLI::App> make_app(dot::cli::Context& ctx, const char* only) {
  auto app = std::make_unique<CLI::App>("dot-core: a DPP plugin host and plan-sealing transaction engine");
  app->name("dot-core");
  app->require_subcommand(1);
  app->set_help_all_flag("--help-all", "Show help for every command");
  app->footer(
      "Examples:\n"
      "  dot-core jcs canonicalize doc.json\n"
      "  dot-core vectors replay vectors/jcs\n"
      "Run `dot-core COMMAND --help` for the options of a command.");
  for (const auto& g : kGroups) {
    if (only != nullptr && std::find(g.commands.begin(), g.commands.end(), std::string_view(only)) == g.commands.end())
      continue;
    g.add(*app, ctx);
  }
  return app;
}

bool has_command(const CLI::App& app, const std::string& name) {
  return !app.get_subcommands([&](const CLI::App* s) { return s->check_name(name); }).empty();
}

}  // namespace

int main(int argc, char** argv) {
  // A peer that closes a pipe must give us EPIPE, never kill us.
  std::signal(SIGPIPE, SIG_IGN);

  // Building every command (CLI11 allocates each subcommand and option) costs
  // a dot-core process more than a millisecond on a small VM, more than the
  // parse: when the first argument names a command, only its group is built
  // (docs/startup.md). Anything else (help, a typo) gets the whole app, so
  // listings and errors are unchanged; so does a command that is not where
  // kGroups says (the table is a shortcut, never the authority).
  dot::cli::Context ctx;
  std::unique_ptr<CLI::App> app;
  if (argc > 1) {
    app = make_app(ctx, argv[1]);
    if (!has_command(*app, argv[1])) app.reset();
  }
  if (!app) app = make_app(ctx, nullptr);

  try {
    app->parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app->exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app->exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app->exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11 uses 100-127 for its own errors; spec/cli.md says usage is 2.
    app->exit(e);
    return dot::cli::kExitUsage;
  }
  if (!ctx.action) return dot::cli::kExitUsage;
  int code = ctx.action();
  std::fflush(stdout);
  return code;
}
