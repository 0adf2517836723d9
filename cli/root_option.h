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

// A path the user typed (`forget ~/.vimrc`, `forget .vimrc` from inside the
// root), as a path relative to the root `root_dir`: relative to the current
// directory like git's, its folders resolved (the last component is never
// followed: it may be a managed symlink). DOT_E_VALIDATION kind
// outside_root when it is not below the root.
Result<std::string> path_in_root(const std::string& root_dir, const std::string& typed);

}  // namespace dot::cli
