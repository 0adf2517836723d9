// Which managed root a command works on (root_option.h).
#include "root_option.h"
#include "dot/store/error_kinds.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace dot::cli {

CLI::Option* add_root_option(CLI::App* cmd, std::string& root) {
  return cmd->add_option("--root", root,
                         "The managed root (default: $DOT_ROOT, else the nearest managed root from the current "
                         "directory up)");
}

std::string root_to_create(const std::string& given) {
  if (!given.empty()) return given;
  const char* env = std::getenv("DOT_ROOT");
  return env != nullptr ? std::string(env) : std::string();
}

Result<std::string> resolve_root(const std::string& given) {
  std::string named = root_to_create(given);
  if (!named.empty()) return named;
  // getcwd gives the physical path: the walk up never passes a symlink.
  std::string cwd(4096, '\0');
  while (::getcwd(cwd.data(), cwd.size()) == nullptr) {
    if (errno != ERANGE || cwd.size() >= (1u << 20))
      return make_error(
          store::ErrorKind::NoRoot,
          fmt::format("cannot read the current directory ({}); pass --root or set DOT_ROOT", std::strerror(errno)));
    cwd.resize(cwd.size() * 2);
  }
  cwd.resize(std::strlen(cwd.c_str()));
  return store::discover_root(cwd);
}

}  // namespace dot::cli
