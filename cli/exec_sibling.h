#pragma once
// Replacing this process with another dot-core executable installed next to
// it (dot-core-engine, dot-core-adpp; docs/startup.md): standard input and
// output, the exit code and signals stay those of the one command the user ran.

#include <climits>
#include <string>
#include <string_view>
#include <vector>

namespace dot::cli {

// Execs the executable `name` from the directory of /proc/self/exe with `args`
// (args[0] is replaced by its path). Returns only on failure: reports
// DOT_E_INTERNAL naming the path (as JSON on stdout too when `json`) and
// returns exit code 1.
int exec_sibling(std::string_view name, std::vector<std::string> args, bool json);

// The path of the executable `name` next to this one, written into `out`
// without allocating (safe before C++ static initialisation, for the front
// end's early exec). False with errno set when it cannot be found or is too long.
bool sibling_path(std::string_view name, char (&out)[PATH_MAX]) noexcept;

// True when `args` holds the flag `--json` (how a failed exec reports).
bool wants_json(const std::vector<std::string>& args);

}  // namespace dot::cli
