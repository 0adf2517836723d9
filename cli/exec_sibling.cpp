#include "exec_sibling.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "dot/base/result.h"
#include "output.h"

namespace dot::cli {

bool sibling_path(std::string_view name, char (&out)[PATH_MAX]) noexcept {
  ssize_t n = ::readlink("/proc/self/exe", out, sizeof out);
  if (n <= 0) return false;
  char* end = out + n;
  while (end > out && end[-1] != '/') --end;
  if (static_cast<std::size_t>(end - out) + name.size() >= sizeof out) {
    errno = ENAMETOOLONG;
    return false;
  }
  std::memcpy(end, name.data(), name.size());
  end[name.size()] = '\0';
  return true;
}

namespace {

Result<std::string> find_sibling(std::string_view name) {
  char path[PATH_MAX];
  if (!sibling_path(name, path))
    return make_error(Code::Internal, "exec_sibling",
                      fmt::format("cannot find the dot-core executable in /proc/self/exe: {}", std::strerror(errno)));
  return std::string(path);
}

}  // namespace

bool wants_json(const std::vector<std::string>& args) {
  return std::find(args.begin(), args.end(), "--json") != args.end();
}

int exec_sibling(std::string_view name, std::vector<std::string> args, bool json) {
  auto path = find_sibling(name);
  if (!path.ok()) return report(path.error(), json);
  if (args.empty()) args.emplace_back();
  args[0] = *path;
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  ::execv(path->c_str(), argv.data());
  return report(make_error(Code::Internal, "exec_sibling",
                           fmt::format("cannot run {} (install it next to dot-core, docs/startup.md): {}", *path,
                                       std::strerror(errno))),
                json);
}

}  // namespace dot::cli
