#pragma once
// The action of a conform command (adpp, dpp and metewand conform): the
// program under test, given after --, is required unless --list asks only for
// the cases (a usage error, exit 2, like any missing argument).

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"

namespace dot::cli {

template <typename Options>
void set_conform_action(CLI::App* cmd, Context& ctx, std::shared_ptr<Options> o,
                        std::vector<std::string> Options::*program, const char* missing, int (*run)(const Options&)) {
  cmd->callback([&ctx, o, program, missing, run] {
    if (!o->list && ((*o).*program).empty()) throw CLI::RequiredError(missing);
    ctx.action = [o, run] { return run(*o); };
  });
}

}  // namespace dot::cli
