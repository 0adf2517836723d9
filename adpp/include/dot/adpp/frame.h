#pragma once
// The framing of the ADPP framed-stdio profile v1: every message is a 4-byte
// little-endian length followed by exactly that many bytes of protobuf, at
// most 1 MiB, in both directions.
//
// Errors are Code::Protocol with one of the kinds of docs/spec/cli.md:
//   length     a zero or over-cap length prefix (offset of the prefix)
//   early_eof  the stream ended inside a frame (offset of that frame)
//   parse      a payload that is not the expected protobuf message

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/message_lite.h>

#include "dot/base/result.h"

namespace dot::adpp {

inline constexpr std::size_t kPrefixBytes = 4;
inline constexpr std::uint32_t kMaxFrameBytes = 1048576;

// The length a prefix announces (little-endian), from exactly 4 bytes.
std::uint32_t read_prefix(const char* bytes) noexcept;
void write_prefix(char* out, std::uint32_t length) noexcept;

// Appends prefix + serialized message to `out`. A message larger than
// max_frame, or one that serializes to nothing (it would be a zero-length
// frame), is refused (kind "length") and `out` is left unchanged.
Status append_frame(std::string& out, const google::protobuf::MessageLite& message,
                    std::uint32_t max_frame = kMaxFrameBytes);
Result<std::string> encode_frame(const google::protobuf::MessageLite& message,
                                 std::uint32_t max_frame = kMaxFrameBytes);

// One complete frame found in a byte buffer.
struct FrameView {
  std::uint64_t offset = 0;  // where the prefix starts in the stream
  std::string_view payload;  // points into the caller's (or reader's) bytes
};

// Parses `payload` as `message` (kind "parse" on failure, with `offset`).
Status parse_payload(std::string_view payload, google::protobuf::MessageLite& message, std::uint64_t offset,
                     std::string_view what);

// An incremental reader for a byte stream that may arrive in any split:
// several frames in one read, or one frame over many. Bytes are written
// straight into its buffer (prepare/commit) so a frame is copied once.
//
// A prefix is checked as soon as its 4 bytes are present: an over-cap length
// is refused before any of the payload is allocated or read, and the reader
// then stays broken. A zero length is refused too, but the stream is still in
// step after it, so reading may go on (broken() stays false).
class FrameReader {
 public:
  explicit FrameReader(std::uint32_t max_frame = kMaxFrameBytes);

  // Space for at least `min_bytes` more bytes at the end of the buffer.
  char* prepare(std::size_t min_bytes);
  // Marks `n` bytes written into prepare()'s area as received.
  void commit(std::size_t n);
  // Copies bytes in (prepare + memcpy + commit).
  void feed(std::string_view bytes);

  // The next complete frame, nullopt when more bytes are needed, or an error
  // for a bad prefix. The view stays valid until the next prepare/feed/next.
  Result<std::optional<FrameView>> next();
  // Call at end of stream: early_eof when a partial frame is buffered.
  Status finish() const;

  // How many bytes the current frame still lacks (prefix or payload); a
  // reader can size its next read with it.
  std::size_t missing() const noexcept;
  std::size_t buffered() const noexcept { return end_ - start_; }
  std::uint64_t consumed() const noexcept { return consumed_; }
  bool broken() const noexcept { return broken_; }

 private:
  std::vector<char> buf_;
  std::size_t start_ = 0, end_ = 0;
  std::uint64_t consumed_ = 0;  // stream offset of buf_[start_]
  std::uint32_t max_frame_;
  bool broken_ = false;
};

// Decodes the frame at the start of `bytes` (a whole captured stream, no
// copying): the frame, or nullopt for an empty input, or an error (length,
// early_eof). `base_offset` is the stream offset of bytes[0].
Result<std::optional<FrameView>> decode_frame(std::string_view bytes, std::uint64_t base_offset = 0,
                                              std::uint32_t max_frame = kMaxFrameBytes);

}  // namespace dot::adpp
