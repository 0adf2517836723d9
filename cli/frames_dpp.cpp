// dot-core frames decode --format dpp: the DPP decoder as a command, over a
// captured stream read incrementally (never more than one frame in memory).
#include "commands.h"
#include "dot/dpp/body.h"
#include "dot/dpp/frame.h"
#include "frames_capture.h"
#include "json_writer.h"
#include "output.h"

namespace dot::cli {

namespace {

std::string error_line(const Error& e) {
  JsonWriter w;
  w.begin_object().key("error").string(e.kind).key("offset").number(e.offset.value_or(0));
  w.key("detail").string(e.detail).end_object();
  return std::move(w).line();
}

}  // namespace

int decode_frames_dpp(const FramesOptions& options) {
  auto capture = FramesCapture::open(options);
  if (!capture.ok()) return report(capture.error());
  dpp::FrameReader reader(capture->source());
  std::uint64_t count = 0;
  for (;;) {
    auto frame = reader.next();
    Status st;
    if (frame.ok() && frame->has_value()) st = dpp::check_body((*frame)->body, (*frame)->body_offset);
    if (!frame.ok() || !st.ok()) {
      Error e = frame.ok() ? st.error() : frame.error();
      if (e.code != Code::Protocol) return report(e);
      if (!write_stdout(error_line(e))) return report(stdout_error());
      report(e);
      return kExitError;
    }
    if (!frame->has_value()) break;
    ++count;
    if (!options.count_only) {
      JsonWriter w;
      w.begin_object().key("frame").number(count).key("offset").number((*frame)->offset);
      w.key("value").raw(dpp::compact_json((*frame)->body)).end_object();
      if (!write_stdout(std::move(w).line())) return report(stdout_error());
    }
  }
  return finish_frames(count);
}

}  // namespace dot::cli
