// dot-core: one binary, many subcommands. This file only wires them together;
// each group lives in its own cmd_<group>.cpp (see commands.h).
#include <csignal>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "commands.h"

int main(int argc, char** argv) {
  // A peer that closes a pipe must give us EPIPE, never kill us.
  std::signal(SIGPIPE, SIG_IGN);

  CLI::App app{"dot-core: a DPP plugin host and plan-sealing transaction engine"};
  app.name("dot-core");
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every command");
  app.footer(
      "Examples:\n"
      "  dot-core jcs canonicalize doc.json\n"
      "  dot-core vectors replay vectors/jcs\n"
      "Run `dot-core COMMAND --help` for the options of a command.");

  dot::cli::Context ctx;
  dot::cli::add_version_command(app, ctx);
  dot::cli::add_jcs_commands(app, ctx);
  dot::cli::add_vectors_commands(app, ctx);
  dot::cli::add_frames_commands(app, ctx);
  dot::cli::add_store_commands(app, ctx);
  dot::cli::add_engine_commands(app, ctx);
  dot::cli::add_doctor_command(app, ctx);
  dot::cli::add_adpp_commands(app, ctx);
  dot::cli::add_metewand_commands(app, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11 uses 100-127 for its own errors; spec/cli.md says usage is 2.
    app.exit(e);
    return dot::cli::kExitUsage;
  }
  if (!ctx.action) return dot::cli::kExitUsage;
  int code = ctx.action();
  std::fflush(stdout);
  return code;
}
