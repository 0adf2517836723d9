#pragma once
// How a person types a dot-core command for a root, in every hint the
// program prints ("run `dot-core recover --root DIR`", plan's "apply it
// with"): the one place that quotes for a shell. Core's errors get their
// hints through the Root's CommandHint, which the command line sets to
// command_for (core/root.h).

#include <string>
#include <string_view>

namespace dot::cli {

// "dot-core COMMAND --root DIR", with DIR single-quoted for a POSIX shell
// unless every byte of it is one no shell gives a meaning to.
std::string command_for(std::string_view root_dir, std::string_view command);

}  // namespace dot::cli
