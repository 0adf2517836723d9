// The one shell quoting of the command line's hints (hints.h).
#include "hints.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace dot::cli {

std::string command_for(std::string_view root_dir, std::string_view command) {
  // Characters no POSIX shell gives a meaning to; anything else is quoted.
  auto plain = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != '\0' && std::strchr("/._-+:,=@%", c) != nullptr);
  };
  std::string word;
  if (!root_dir.empty() && std::all_of(root_dir.begin(), root_dir.end(), plain)) {
    word = root_dir;
  } else {
    word = "'";
    for (char c : root_dir) word += c == '\'' ? std::string("'\\''") : std::string(1, c);
    word += "'";
  }
  return fmt::format("dot-core {} --root {}", command, word);
}

}  // namespace dot::cli
