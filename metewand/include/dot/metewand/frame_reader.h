#pragma once
// FrameReader: the Metewand v1 JSON-lines framer. It assembles LF-terminated
// lines from any ByteSource, whatever the fragmentation, and checks each line
// against the framing contract (docs/spec/metewand.md) in this order:
//   Io, LineTooLong{limit}, EarlyEof{received}, ByteOrderMark,
//   InvalidUtf8{valid_up_to}, DuplicateKey{key}, MalformedJson.
// Memory is bounded: one buffer that grows (by doubling, from 64 KiB) only as
// long lines need it, never beyond kMaxLineBytes plus one read size; an
// unterminated line is refused at its 1,048,576th byte and nothing after
// that byte is read. After an error the reader only
// repeats that error (there is no resynchronisation).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "dot/base/utf8.h"

#include "dot/base/byte_stream.h"
#include "dot/base/json.h"
#include "dot/metewand/expected.h"
#include "dot/metewand/frame_error.h"

namespace dot::metewand {

// Nesting the Metewand reader accepts: 127 levels, 128 refused.
inline constexpr std::size_t kMaxNestingDepth = 127;

// One accepted line: its bytes without the LF (CR kept; it is JSON
// whitespace), valid until the next call on the reader.
struct Frame {
  std::string_view bytes;
  std::uint64_t offset = 0;  // stream offset of the line's first byte
};

// A parsed line.
struct ParsedFrame {
  json::Document document;
  std::uint64_t offset = 0;
};

class FrameReader {
 public:
  static constexpr std::size_t kDefaultReadSize = 64 * 1024;

  // `source` must outlive the reader. `read_size` is the largest single read
  // once the buffer holds no partial line; it is also the slack the buffer
  // has beyond kMaxLineBytes.
  explicit FrameReader(ByteSource& source, std::size_t read_size = kDefaultReadSize);

  // The next line, validated without building a tree (the fast path);
  // nullopt at a clean end of stream (and on every call after it).
  Expected<std::optional<Frame>, FrameError> next_line();
  // The next line parsed into a document.
  Expected<std::optional<ParsedFrame>, FrameError> read_frame();

  // The most the line buffer may ever hold: kMaxLineBytes + read size.
  std::size_t buffer_capacity() const noexcept { return capacity_; }
  // What the line buffer holds now (<= buffer_capacity()).
  std::size_t buffer_allocated() const noexcept { return allocated_; }
  // Stream offset just past the last accepted line.
  std::uint64_t position() const noexcept { return base_ + start_; }
  bool failed() const noexcept { return failure_.has_value(); }

 private:
  // The raw line (no LF) and its offset, or clean EOF, or a framing error of
  // the first three kinds.
  Expected<std::optional<Frame>, FrameError> next_raw_line();
  FrameError fail(FrameError error);

  ByteSource& source_;
  std::size_t read_size_;
  std::size_t capacity_;
  std::size_t allocated_;
  // allocated_ bytes plus json::kPadding spare ones: any line inside the
  // buffer is followed by the padding json::Parser::validate_padded needs,
  // so lines are checked where they lie, never copied.
  std::unique_ptr<char[]> buf_;
  // Kept across lines: simdjson's buffers are allocated once per reader.
  json::Parser parser_;
  std::size_t start_ = 0;   // first byte of the current line
  std::size_t scan_ = 0;    // bytes before this were searched for LF
  std::size_t end_ = 0;     // one past the last buffered byte
  std::uint64_t base_ = 0;  // stream offset of buf_[0]
  bool eof_ = false;
  std::optional<FrameError> failure_;
};

// The checks of one complete line (no LF): ByteOrderMark, InvalidUtf8,
// DuplicateKey, MalformedJson. `offset` is copied into the error.
Expected<Done, FrameError> validate_line(std::string_view line, std::uint64_t offset = 0);
// The same checks, building the document.
Expected<json::Document, FrameError> parse_line(std::string_view line, std::uint64_t offset = 0);

// Length of the longest valid UTF-8 prefix: the `valid_up_to` of InvalidUtf8,
// judged by the same rule as every other decoder (dot/base/utf8.h).
inline std::size_t utf8_valid_up_to(std::string_view bytes) noexcept { return utf8_valid_prefix(bytes); }

}  // namespace dot::metewand
