// dot-core-engine's side of the ADPP commands: the process becomes
// dot-core-adpp, which sits next to it and runs the same command line.
//
// Why a separate executable: ADPP needs libprotobuf, and merely loading and
// initialising it (symbol relocations, descriptor registration, exit-time
// teardown) cost every process several milliseconds, including `plan`, which
// never touches ADPP (docs/startup.md). Only the ADPP commands pay the exec.
#include <string>
#include <vector>

#include "commands.h"
#include "dot/base/fd.h"
#include "exec_sibling.h"
#include "output.h"

namespace dot::cli {
namespace {

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
  if (args.empty()) return make_error(Code::Internal, "exec_sibling", "/proc/self/cmdline is empty");
  return args;
}

int become_adpp(bool json) {
  auto args = own_arguments();
  if (!args.ok()) return report(args.error(), json);
  return exec_sibling("dot-core-adpp", std::move(*args), json);
}

}  // namespace

int decode_frames_adpp(const FramesOptions&) { return become_adpp(false); }

int run_adpp_conform(const AdppConformOptions& options) { return become_adpp(options.json); }

}  // namespace dot::cli
