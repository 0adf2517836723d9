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
namespace {

Result<std::string> sibling_path(std::string_view name) {
  std::string self(PATH_MAX, '\0');
  ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size());
  if (n <= 0 || static_cast<std::size_t>(n) >= self.size())
    return make_error(Code::Internal, "exec_sibling",
                      fmt::format("cannot find the dot-core executable in /proc/self/exe: {}", std::strerror(errno)));
  self.resize(static_cast<std::size_t>(n));
  return self.substr(0, self.rfind('/') + 1) + std::string(name);
}

}  // namespace

bool wants_json(const std::vector<std::string>& args) {
  return std::find(args.begin(), args.end(), "--json") != args.end();
}

int exec_sibling(std::string_view name, std::vector<std::string> args, bool json) {
  auto path = sibling_path(name);
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
