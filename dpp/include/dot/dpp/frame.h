#pragma once
// DPP framing: exactly `Content-Length: N\r\n\r\n` followed by N bytes
// (1 <= N <= 65536), both directions (docs/spec/dpp-hello.md, "Framing"). The
// general profile negotiates a larger N (max_frame_bytes, 16 MiB) with the
// same rules: a reader and writer take the limit at construction.
//
// FrameReader checks the header byte by byte as it arrives and stops at the
// first byte that proves the frame illegal; it never asks its source for more
// than the rest of the header line (64 bytes at most) or the rest of the
// announced body, so it buffers at most one frame; and the body buffer grows
// with the bytes that actually arrive (doubling from 64 KiB), so a peer that
// announces 16 MiB and sends ten bytes costs 64 KiB, not 16 MiB. Errors are Code::Protocol
// with the kind and the stream offset of the offending byte:
//
//   kind          when
//   header        a byte that cannot start or continue `Content-Length: `, or a
//                 line end that is not CRLF (LF-only included)
//   length        N with a sign, a space, a leading zero, no digits, a
//                 non-digit, 0, or over the limit (proven at the first digit
//                 that makes it too big, so 20 digits fail at the sixth)
//   extra_header  a second header line (Content-Type too)
//   early_eof     the stream ends inside a frame (offset: where it ended)
//
// End of stream before the first byte of a frame is a clean end.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dot/base/byte_stream.h"
#include "dot/base/result.h"

namespace dot::dpp {

inline constexpr std::size_t kMaxBody = 65536;
inline constexpr std::size_t kMaxHeaderLine = 64;  // "Content-Length: N\r\n"
inline constexpr std::size_t kMaxDepth = 16;

struct Frame {
  std::uint64_t offset = 0;       // stream offset of the frame's first header byte
  std::uint64_t body_offset = 0;  // stream offset of the body's first byte
  std::string body;               // exactly N bytes, not yet checked as JSON
};

class FrameReader {
 public:
  // `max_body` is the largest N accepted (kMaxBody, or a negotiated limit).
  explicit FrameReader(ByteSource& source, std::size_t max_body = kMaxBody) : source_(source), max_body_(max_body) {}

  // The next frame's raw body; nullopt at a clean end of stream. After an
  // error the reader stays failed (every later call returns the same error).
  Result<std::optional<Frame>> next();

  // Bytes consumed by the frames returned so far (the offset of the next frame).
  std::uint64_t offset() const noexcept { return offset_; }
  // Bytes obtained from the source, including a partial frame after an error.
  std::uint64_t bytes_read() const noexcept { return read_; }
  // Bytes read from the source beyond the last returned frame (a peer that
  // wrote before it was asked). At most kMaxHeaderLine.
  std::size_t buffered() const noexcept { return end_ - start_; }

 private:
  Result<std::size_t> fill(std::size_t max);
  // The body of the frame whose header took `header_bytes`.
  Result<std::optional<Frame>> read_body(std::size_t header_bytes, std::size_t length);
  // Keeps `e` as the reader's failure and returns it.
  Error stop(Error e);
  ByteSource& source_;
  std::size_t max_body_;
  std::uint64_t offset_ = 0;
  std::uint64_t read_ = 0;
  // Header bytes read ahead of parsing (the header read may also take the
  // start of the body, or of the next frame when bodies are tiny).
  char buf_[kMaxHeaderLine];
  std::size_t start_ = 0, end_ = 0;
  std::optional<Error> failed_;
};

// `Content-Length: N\r\n\r\n` + body. A body that is empty or over `max_body`
// is Code::Protocol kind "length" (we never send what we would refuse).
Result<std::string> encode_frame(std::string_view body, std::size_t max_body = kMaxBody);

class FrameWriter {
 public:
  explicit FrameWriter(ByteSink& sink, std::size_t max_body = kMaxBody) : sink_(sink), max_body_(max_body) {}
  // One frame, header and body in a single write.
  Status write(std::string_view body);

 private:
  ByteSink& sink_;
  std::size_t max_body_;
};

}  // namespace dot::dpp
