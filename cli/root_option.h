#pragma once
// Which managed root a command works on, decided in one place for every
// command that takes --root (docs/user-guide.md, "Finding the root"):
// --root if given; else $DOT_ROOT if set and not empty; else the nearest
// managed root from the current directory up (store::discover_root), like
// git finds its repository. `init` never walks up: it creates a root that
// does not exist yet, so it needs --root or $DOT_ROOT.

#include <string>

#include <CLI/CLI.hpp>

#include "dot/base/result.h"
#include "dot/store/root.h"

namespace dot::cli {

// Declares --root on `cmd` (optional: resolve_root fills it in).
CLI::Option* add_root_option(CLI::App* cmd, std::string& root);

// The directory of the managed root named by `given` (--root), or by
// $DOT_ROOT, or found from the current directory (DOT_E_STORE when none).
// A named root is checked when the command opens it, like any other.
Result<std::string> resolve_root(const std::string& given);

// The directory `init` creates: `given`, else $DOT_ROOT; empty when neither.
std::string root_to_create(const std::string& given);

}  // namespace dot::cli
