#include "commands.h"
#include "output.h"

namespace dot::cli {

// Scaffolding: filled in by the dpp module's issue.
int decode_frames_dpp(const FramesOptions& /*options*/) {
  return report(make_error(Code::Internal, "unsupported", "frames decode --format dpp is not built yet"));
}

}  // namespace dot::cli
