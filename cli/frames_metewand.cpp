#include "commands.h"
#include "output.h"

namespace dot::cli {

// Scaffolding: filled in by the metewand module's issue.
int decode_frames_metewand(const FramesOptions& /*options*/) {
  return report(make_error(Code::Internal, "unsupported", "frames decode --format metewand is not built yet"));
}

}  // namespace dot::cli
