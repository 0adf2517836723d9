// frames decode --format metewand: one JSON object per frame of a captured
// Metewand JSON-lines stream, then the clean end or the first FrameError
// (docs/spec/cli.md). The FrameReader is the one the worker session uses.
#include "commands.h"
#include "dot/base/jcs.h"
#include "dot/metewand/frame_reader.h"
#include "frames_capture.h"
#include "json_writer.h"
#include "output.h"

namespace dot::cli {

int decode_frames_metewand(const FramesOptions& options) {
  auto capture = FramesCapture::open(options);
  if (!capture.ok()) return report(capture.error());
  metewand::FrameReader reader(capture->source());
  std::uint64_t frames = 0;
  for (;;) {
    std::optional<metewand::FrameError> error;
    if (options.count_only) {
      auto line = reader.next_line();
      if (!line.ok())
        error = std::move(line).error();
      else if (!line->has_value())
        break;
      else
        ++frames;
    } else {
      auto frame = reader.read_frame();
      if (!frame.ok()) {
        error = std::move(frame).error();
      } else if (!frame->has_value()) {
        break;
      } else {
        ++frames;
        // RFC 8785 rendering: every accepted value has one (numbers as their
        // binary64 value, which is what a Metewand peer means by them).
        auto value = jcs::canonicalize((*frame)->document.root(), jcs::Profile::Rfc8785);
        if (!value.ok()) return report(value.error());
        JsonWriter w;
        w.begin_object().key("frame").number(frames).key("offset").number((*frame)->offset).key("value").raw(*value);
        if (!write_stdout(std::move(w.end_object()).line())) return report(stdout_error());
      }
    }
    if (error) {
      JsonWriter w;
      w.begin_object().key("error").string(error->name()).key("offset").number(error->offset);
      w.raw_members(error->json_payload()).end_object();
      (void)write_stdout(std::move(w).line());
      return report(error->to_error());
    }
  }
  return finish_frames(frames);
}

}  // namespace dot::cli
