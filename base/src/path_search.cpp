// Finding the executable a bare command name means: absolute PATH entries only (path_search.h).
#include "dot/base/path_search.h"
#include "dot/base/error_kinds.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

namespace dot {

Result<std::string> find_executable(std::string_view name, std::string_view path_list) {
  if (name.find('/') != std::string_view::npos) return std::string(name);
  if (name.empty() || name == "." || name == "..")
    return make_error(base::ErrorKind::NotFound, "an empty name, \".\" or \"..\" names no executable");
  std::size_t skipped = 0;
  for (;;) {
    auto colon = path_list.find(':');
    std::string_view dir = path_list.substr(0, colon);
    if (dir.empty() || dir.front() != '/') {
      ++skipped;
    } else {
      std::string candidate = fmt::format("{}{}{}", dir, dir.back() == '/' ? "" : "/", name);
      struct stat st {};
      if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
          ::faccessat(AT_FDCWD, candidate.c_str(), X_OK, AT_EACCESS) == 0)
        return candidate;
    }
    if (colon == std::string_view::npos) break;
    path_list.remove_prefix(colon + 1);
  }
  std::string note = skipped == 0 ? std::string()
                                  : fmt::format(" ({} empty or relative PATH entr{} not searched)", skipped,
                                                skipped == 1 ? "y was" : "ies were");
  return make_error(base::ErrorKind::NotFound, fmt::format("no executable named {} on PATH{}", name, note));
}

Result<std::string> find_executable(std::string_view name) {
  const char* path = std::getenv("PATH");
  return find_executable(name, path != nullptr ? std::string_view(path) : kDefaultPath);
}

}  // namespace dot
