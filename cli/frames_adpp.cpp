#include "commands.h"
#include "output.h"

namespace dot::cli {

// Scaffolding: filled in by the adpp module's issue.
int decode_frames_adpp(const FramesOptions& /*options*/) {
  return report(make_error(Code::Internal, "unsupported", "frames decode --format adpp is not built yet"));
}

}  // namespace dot::cli
