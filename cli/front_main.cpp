// dot-core, the front end: a statically linked executable that runs the store
// commands (init, store, inspect) and `version` itself, and replaces itself
// with dot-core-engine, installed next to it, for everything else.
//
// Why: a dynamically linked C++ process that loads libsimdjson and libstdc++
// costs ~4 ms on our VM before main(); `inspect show` does 0.5 ms of warm
// store work. The store commands need neither simdjson nor the plan model, so
// they live here, linked statically (no loader, no relocations against shared
// libraries); the engine commands pay one extra exec (docs/startup.md).
#include <csignal>
#include <string>
#include <vector>

#include "app.h"
#include "exec_sibling.h"

namespace {

const dot::cli::CommandGroup kFrontGroups[] = {
    {{"version"}, dot::cli::add_version_command},
    {{"init"}, dot::cli::add_init_command},
    {{"store"}, dot::cli::add_store_commands},
    {{"inspect"}, dot::cli::add_inspect_commands},
};

}  // namespace

int main(int argc, char** argv) {
  // Help, typos and every other command: the engine has the whole app, so
  // listings and errors are those of the full command set.
  if (argc < 2 || !dot::cli::names_a_command(kFrontGroups, argv[1])) {
    std::vector<std::string> args(argv, argv + argc);
    bool json = dot::cli::wants_json(args);
    return dot::cli::exec_sibling("dot-core-engine", std::move(args), json);
  }
  // A peer that closes a pipe must give us EPIPE, never kill us.
  std::signal(SIGPIPE, SIG_IGN);
  return dot::cli::run_app(argc, argv, kFrontGroups);
}
