#include <fmt/format.h>

#include "commands.h"
#include "output.h"

#ifndef DOT_VERSION
#define DOT_VERSION "0.0.0"
#endif

namespace dot::cli {

void add_version_command(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("version", "Print the dot-core version");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print {\"version\":...} instead");
  cmd->footer("Example:\n  dot-core version");
  cmd->callback([&ctx, json] {
    ctx.action = [json] {
      if (*json) return write_stdout(fmt::format("{{\"version\":\"{}\"}}\n", DOT_VERSION)) ? 0 : 1;
      return write_stdout(fmt::format("dot-core {}\n", DOT_VERSION)) ? 0 : 1;
    };
  });
}

}  // namespace dot::cli
