#pragma once
// Building the command-line app from command groups and running it.

#include <initializer_list>
#include <memory>
#include <span>
#include <string_view>

#include "commands.h"

namespace dot::cli {

// The top-level commands one add_*_commands function registers.
struct CommandGroup {
  std::initializer_list<std::string_view> commands;
  void (*add)(CLI::App&, Context&);
};

// Parses argv against the app built from `groups` and runs the chosen
// command; returns the process exit code (docs/spec/cli.md).
int run_app(int argc, char** argv, std::span<const CommandGroup> groups);

// The whole app, every group built: what `dot-core --help-all` shows and what
// dot-core-docgen (docgen.cpp) walks for the man pages and completions.
std::unique_ptr<CLI::App> make_full_app(std::span<const CommandGroup> groups, Context& ctx);

// Every command group, in the order `dot-core --help` lists them
// (all_commands.cpp).
std::span<const CommandGroup> all_command_groups();

}  // namespace dot::cli
