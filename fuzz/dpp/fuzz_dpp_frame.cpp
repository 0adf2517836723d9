// The DPP frame reader and body checks over arbitrary streams, read in
// chunks whose size the input chooses (first byte), so splits land anywhere.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "dot/dpp/body.h"
#include "dot/dpp/frame.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::size_t chunk = data[0] % 32;  // 0: no extra limit
  std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  dot::MemorySource src(stream, {chunk});
  dot::dpp::FrameReader reader(src);
  std::uint64_t last_end = 0;
  for (;;) {
    auto f = reader.next();
    if (!f.ok()) {
      const auto& e = f.error();
      // Offsets point into what was read, never past the stream.
      if (!e.offset || *e.offset > stream.size() || *e.offset < last_end) std::abort();
      if (e.code != dot::Code::Protocol) std::abort();
      // Never reads more than the shortest valid completion of a header past
      // the offending byte.
      if (src.consumed() > *e.offset + 1 + 25) std::abort();
      break;
    }
    if (!f->has_value()) {
      if (src.consumed() != stream.size()) std::abort();
      break;
    }
    const auto& frame = **f;
    if (frame.offset != last_end || frame.body.empty() || frame.body.size() > dot::dpp::kMaxBody) std::abort();
    if (stream.substr(frame.body_offset, frame.body.size()) != frame.body) std::abort();
    last_end = frame.body_offset + frame.body.size();
    if (reader.offset() != last_end || src.consumed() != last_end) std::abort();
    auto st = dot::dpp::check_body(frame.body, frame.body_offset);
    auto doc = dot::dpp::parse_body(frame.body, frame.body_offset);
    if (st.ok() != doc.ok()) std::abort();
    if (st.ok()) {
      std::string compact = dot::dpp::compact_json(frame.body);
      if (!dot::dpp::check_body(compact, 0).ok()) std::abort();
    } else if (st.error().kind != doc.error().kind || st.error().offset != doc.error().offset) {
      std::abort();
    }
  }
  return 0;
}
