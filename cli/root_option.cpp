// Which managed root a command works on (root_option.h).
#include "root_option.h"
#include "dot/base/utf8.h"
#include "dot/store/error_kinds.h"
#include "error_kinds.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

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

Result<std::string> path_in_root(const std::string& root_dir, const std::string& typed) {
  namespace fs = std::filesystem;
  auto outside = [&](std::string_view why) {
    return make_error(ErrorKind::OutsideRoot,
                      fmt::format("\"{}\" {} (the managed root is {})", shown(typed), why, shown(root_dir)));
  };
  std::error_code ec;
  const fs::path given = fs::absolute(fs::path(typed), ec).lexically_normal();
  if (ec || !given.has_filename()) return outside("names no file");
  // The folders resolved, the last name kept as typed; the root likewise.
  const fs::path folder = fs::canonical(given.parent_path(), ec);
  if (ec) return outside(fmt::format("is in a folder that cannot be resolved ({})", ec.message()));
  const fs::path root = fs::canonical(fs::path(root_dir), ec);
  if (ec) return outside(fmt::format("cannot be placed: the root cannot be resolved ({})", ec.message()));
  const fs::path rel = (folder / given.filename()).lexically_relative(root);
  if (rel.empty() || rel == "." || *rel.begin() == "..") return outside("is not below the managed root");
  return rel.string();
}

}  // namespace dot::cli
