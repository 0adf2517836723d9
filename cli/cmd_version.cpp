// `dot-core version` and `--version`: the version and the git commit of the build.
#include <CLI/CLI.hpp>

#include "build_info.h"  // generated at build time (cmake/BuildInfo.cmake)
#include "commands.h"
#include "json_writer.h"
#include "output.h"

namespace dot::cli {

std::string version_line() {
  return std::string("dot-core ") + DOT_BUILD_VERSION + " (commit " + DOT_BUILD_COMMIT + ")";
}

namespace {

int run_version(bool json) {
  if (json) {
    JsonWriter w;
    w.begin_object().key("commit").string(DOT_BUILD_COMMIT).key("version").string(DOT_BUILD_VERSION).end_object();
    return write_stdout(std::move(w).line()) ? kExitOk : kExitError;
  }
  return write_stdout(version_line() + "\n") ? kExitOk : kExitError;
}

}  // namespace

void add_version_command(CLI::App& app, Context& ctx) {
  auto* cmd = add_json_command(app, ctx, "version", "Print the dot-core version and the git commit it was built from",
                               "Print {\"commit\":...,\"version\":...} instead", run_version);
  cmd->footer(
      "The commit is \"unknown\" when dot-core was built outside a git checkout, and ends in\n"
      "\"-dirty\" when tracked files differed from it.\n"
      "Example:\n  dot-core version --json");
}

}  // namespace dot::cli
