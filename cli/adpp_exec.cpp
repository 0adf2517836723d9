// dot-core's side of the ADPP commands: the process becomes dot-core-adpp,
// which sits next to the dot-core executable and runs the same command line.
//
// Why a second executable: ADPP needs libprotobuf, and merely loading and
// initialising it (symbol relocations, descriptor registration, exit-time
// teardown) cost every dot-core process several milliseconds, including
// `plan` and `inspect`, which never touch ADPP (docs/startup.md). Only the
// ADPP commands pay the one extra exec now.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "dot/base/fd.h"
#include "output.h"

namespace dot::cli {
namespace {

constexpr std::string_view kHelper = "dot-core-adpp";

Result<std::string> helper_path() {
  std::string self(PATH_MAX, '\0');
  ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size());
  if (n <= 0 || static_cast<std::size_t>(n) >= self.size())
    return make_error(Code::Internal, "adpp_helper",
                      fmt::format("cannot find the dot-core executable in /proc/self/exe: {}", std::strerror(errno)));
  self.resize(static_cast<std::size_t>(n));
  return self.substr(0, self.rfind('/') + 1) + std::string(kHelper);
}

// Our own command line exactly as we received it: the helper parses the very
// same arguments with the very same command definitions.
Result<std::vector<std::string>> own_arguments() {
  DOT_ASSIGN_OR_RETURN(std::string cmdline, read_file("/proc/self/cmdline", 1u << 24));
  std::vector<std::string> args;
  std::size_t start = 0;
  while (start < cmdline.size()) {
    std::size_t end = cmdline.find('\0', start);
    if (end == std::string::npos) end = cmdline.size();
    args.emplace_back(cmdline, start, end - start);
    start = end + 1;
  }
  if (args.empty())
    return make_error(Code::Internal, "adpp_helper", "/proc/self/cmdline is empty");
  return args;
}

int become_helper(bool json) {
  auto path = helper_path();
  if (!path.ok()) return report(path.error(), json);
  auto args = own_arguments();
  if (!args.ok()) return report(args.error(), json);
  (*args)[0] = *path;
  std::vector<char*> argv;
  for (auto& a : *args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  ::execv(path->c_str(), argv.data());
  return report(make_error(Code::Internal, "adpp_helper",
                           fmt::format("cannot run {} (the ADPP commands live there; it is installed next to "
                                       "dot-core): {}",
                                       *path, std::strerror(errno))),
                json);
}

}  // namespace

int decode_frames_adpp(const FramesOptions&) { return become_helper(false); }

int run_adpp_conform(const AdppConformOptions& options) { return become_helper(options.json); }

}  // namespace dot::cli
