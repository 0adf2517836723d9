// Building the command-line app from the command groups and running it (app.h).
#include "app.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "usage.h"

namespace dot::cli {
namespace {

bool group_names(const CommandGroup& g, std::string_view name) {
  return std::find(g.commands.begin(), g.commands.end(), name) != g.commands.end();
}

int run_words(std::vector<std::string> words, std::span<const CommandGroup> groups) {
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  return run_app(static_cast<int>(words.size()), argv.data(), groups);
}

// `dot-core help [COMMAND...]` is `dot-core [COMMAND...] --help`, once every
// word is known to name a command (CLI11 would answer `plna --help` with the
// top-level help and exit 0).
void add_help_command(CLI::App& app, Context& ctx, std::span<const CommandGroup> groups) {
  auto* help = app.add_subcommand("help", "Show the help of a command (`dot-core help inspect list`)");
  auto words = std::make_shared<std::vector<std::string>>();
  help->add_option("COMMAND", *words, "The command and its subcommands");
  help->callback([&app, &ctx, words, groups] {
    ctx.action = [&app, words, groups] {
      const CLI::App* cur = &app;
      for (const auto& w : *words) {
        auto found =
            cur->get_subcommands([&](const CLI::App* s) { return !s->get_name().empty() && s->check_name(w); });
        if (found.empty()) return report_unknown_command(*cur, w);
        cur = found.front();
      }
      std::vector<std::string> args{app.get_name()};
      args.insert(args.end(), words->begin(), words->end());
      args.push_back("--help");
      return run_words(std::move(args), groups);
    };
  });
}

// `dot-core --help` lists the commands under three headings, a day's work
// first; CLI11 shows each heading where its first command was added.
void set_help_headings(CLI::App& app) {
  static constexpr std::string_view kEveryday[] = {"init", "register", "plan", "apply", "status", "rollback"};
  static constexpr std::string_view kUpkeep[] = {"recover", "retry-effects", "discard", "unregister",
                                                 "forget",  "export",        "plan-id", "inspect",
                                                 "store",   "doctor",        "version", "help"};
  for (CLI::App* cmd : app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string& name = cmd->get_name();
    auto in = [&](const auto& names) { return std::find(std::begin(names), std::end(names), name) != std::end(names); };
    if (in(kEveryday))
      cmd->group("Everyday commands");
    else if (in(kUpkeep))
      cmd->group("Looking after a root");
    else
      cmd->group("Protocol tools");
  }
}

// The app with every group of `groups`, or (only != nullptr) with the one
// group that names `only`.
std::unique_ptr<CLI::App> make_app(std::span<const CommandGroup> groups, Context& ctx, const char* only) {
  auto app = std::make_unique<CLI::App>("dot-core: a DPP plugin host and plan-sealing transaction engine");
  app->name("dot-core");
  app->require_subcommand(1);
  app->set_help_all_flag("--help-all", "Show help for every command");
  app->footer(
      "A day's work (in a managed root, or with --root DIR):\n"
      "  dot-core init --root ~                     # once: ~ becomes a managed root (only ~/.dot is made)\n"
      "  dot-core register --plugin /usr/libexec/dot-core/dot-mirror --id org.dot.mirror \\\n"
      "      --profile org.dot.dpp/v1 --assurance process --input ~/dotfiles\n"
      "  dot-core plan                              # see every change, sealed as a plan\n"
      "  dot-core apply                             # apply the one plan waiting, atomically\n"
      "  dot-core status --exit-code                # drift: files edited by hand since\n"
      "  dot-core rollback 3f2a                     # undo the newest applied plan\n"
      "And of the protocol tools:\n"
      "  dot-core jcs canonicalize doc.json\n"
      "  dot-core vectors replay vectors/jcs\n"
      "Run `dot-core COMMAND --help` (or `dot-core help COMMAND`) for the options of a command.");
  // `dot-core --version` is `dot-core version` (run_app re-runs it).
  app->add_flag_callback(
      "--version", [] { throw CLI::CallForVersion(); }, "Print the version (the same as `dot-core version`)");
  for (const auto& g : groups) {
    if (only != nullptr && !group_names(g, only)) continue;
    g.add(*app, ctx);
  }
  // help needs every command: only the whole app has it.
  if (only == nullptr) add_help_command(*app, ctx, groups);
  set_help_headings(*app);
  return app;
}

bool has_command(const CLI::App& app, const std::string& name) {
  return !app.get_subcommands([&](const CLI::App* s) { return s->check_name(name); }).empty();
}

}  // namespace

std::unique_ptr<CLI::App> make_full_app(std::span<const CommandGroup> groups, Context& ctx) {
  return make_app(groups, ctx, nullptr);
}

int run_app(int argc, char** argv, std::span<const CommandGroup> groups) {
  // Building every command (CLI11 allocates each subcommand and option) costs
  // a dot-core process more than a millisecond on a small VM, more than the
  // parse: when the first argument names a command, only its group is built
  // (docs/startup.md). Anything else (help, a typo) gets the whole app, so
  // listings and errors are unchanged; so does a command that is not where
  // the group table says (the table is a shortcut, never the authority).
  Context ctx;
  std::unique_ptr<CLI::App> app;
  if (argc > 1) {
    app = make_app(groups, ctx, argv[1]);
    if (!has_command(*app, argv[1])) app.reset();
  }
  if (!app) app = make_app(groups, ctx, nullptr);

  try {
    app->parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app->exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app->exit(e);
  } catch (const CLI::CallForVersion&) {
    return run_words({app->get_name(), "version"}, groups);
  } catch (const CLI::ParseError& e) {
    // CLI11 uses 100-127 for its own errors; docs/spec/cli.md says usage is 2,
    // except under --detailed-exitcode, where 2 means "changes" and any
    // error is 1.
    const int usage = report_usage_error(*app, e);
    for (int i = 1; i < argc; ++i)
      if (argv[i] == kDetailedExitcodeFlag) return kExitError;
    return usage;
  }
  if (!ctx.action) return kExitUsage;
  int code = ctx.action();
  std::fflush(stdout);
  return code;
}

CLI::App* add_json_command(CLI::App& app, Context& ctx, const std::string& name, const std::string& about,
                           const std::string& json_help, std::function<int(bool)> run) {
  auto* cmd = app.add_subcommand(name, about);
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, json_help);
  cmd->callback([&ctx, json, run = std::move(run)] { ctx.action = [json, run] { return run(*json); }; });
  return cmd;
}

}  // namespace dot::cli
