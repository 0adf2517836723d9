#pragma once
// Finding the executable a bare command name means, like a shell's PATH
// search minus its surprises: only absolute PATH entries are searched. An
// empty entry (which a shell reads as the current directory) and a relative
// one ("bin", ".") would make what runs depend on where the user happens to
// stand, so they are skipped, and a not-found error says they were.

#include <string>
#include <string_view>

#include "dot/base/result.h"

namespace dot {

// PATH when the environment has none (what execvp and the shells assume).
inline constexpr std::string_view kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

// A name with a '/' is a path and is returned as it is (it may be relative:
// the user named it). Otherwise the first regular file named `name` that we
// may execute in an absolute entry of `path_list`. Errors: Code::Io kind
// "not_found" (an empty name, ".", "..", or no match).
Result<std::string> find_executable(std::string_view name, std::string_view path_list);

// find_executable with this process's PATH (kDefaultPath without one).
Result<std::string> find_executable(std::string_view name);

}  // namespace dot
