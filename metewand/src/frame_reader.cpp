// The Metewand v1 JSON-lines framer (frame_reader.h).
#include "dot/metewand/frame_reader.h"
#include "dot/base/error_kinds.h"

#include <algorithm>
#include <cstring>

#include <simdjson.h>

namespace dot::metewand {
namespace {

json::ReadLimits line_limits() {
  json::ReadLimits limits;
  limits.max_bytes = kMaxLineBytes;
  limits.max_depth = kMaxNestingDepth;
  return limits;
}

FrameError make(FrameError::Kind kind, std::uint64_t offset) {
  FrameError e;
  e.kind = kind;
  e.offset = offset;
  return e;
}

// The unescaped key whose opening quote the strict reader reported (at or
// just after `at`). The key was fully parsed before it was found repeated, so
// its literal is well-formed; the strict reader decodes it again.
std::optional<std::string> key_literal_at(std::string_view line, std::uint64_t at) {
  std::size_t p = static_cast<std::size_t>(std::min<std::uint64_t>(at, line.size()));
  while (p < line.size() && line[p] != '"') ++p;
  if (p >= line.size()) return std::nullopt;
  std::size_t q = p + 1;
  while (q < line.size() && line[q] != '"') q += (line[q] == '\\') ? 2 : 1;
  if (q >= line.size()) return std::nullopt;
  auto doc = json::parse(line.substr(p, q - p + 1));
  if (!doc.ok() || !doc->root().is_string()) return std::nullopt;
  return std::string(doc->root().as_string());
}

FrameError from_reader_error(const Error& error, std::string_view line, std::uint64_t offset) {
  if (error.is(base::ErrorKind::DuplicateKey)) {
    FrameError e = make(FrameError::Kind::DuplicateKey, offset);
    auto key = error.offset ? key_literal_at(line, *error.offset) : std::nullopt;
    e.key = key ? *key : error.detail;
    return e;
  }
  // Every other refusal of the strict reader (depth, lone surrogates, numbers
  // beyond binary64, grammar, trailing data) is one variant on this layer.
  FrameError e = make(FrameError::Kind::MalformedJson, offset);
  e.detail = error.message();
  return e;
}

// ByteOrderMark, then InvalidUtf8: both come before any JSON check.
std::optional<FrameError> check_encoding(std::string_view line, std::uint64_t offset) {
  if (line.size() >= 3 && static_cast<unsigned char>(line[0]) == 0xEF && static_cast<unsigned char>(line[1]) == 0xBB &&
      static_cast<unsigned char>(line[2]) == 0xBF)
    return make(FrameError::Kind::ByteOrderMark, offset);
  if (!simdjson::validate_utf8(line.data(), line.size())) {
    FrameError e = make(FrameError::Kind::InvalidUtf8, offset);
    e.valid_up_to = utf8_valid_up_to(line);
    return e;
  }
  return std::nullopt;
}

}  // namespace

Expected<Done, FrameError> validate_line(std::string_view line, std::uint64_t offset) {
  if (auto e = check_encoding(line, offset)) return *e;
  auto st = json::validate(line, line_limits());
  if (!st.ok()) return from_reader_error(st.error(), line, offset);
  return Done{};
}

namespace {

// validate_line for a line followed by json::kPadding readable bytes, with
// the reader's own parser.
Expected<Done, FrameError> validate_buffered_line(json::Parser& parser, std::string_view line, std::uint64_t offset) {
  // An accepted line is valid UTF-8 without a BOM (the reader checks both),
  // so the encoding checks, which come first among the errors, only need to
  // run on a refused line.
  auto st = parser.validate_padded(line, line_limits());
  if (st.ok()) return Done{};
  if (auto e = check_encoding(line, offset)) return *e;
  return from_reader_error(st.error(), line, offset);
}

Expected<json::Document, FrameError> parse_buffered_line(json::Parser& parser, std::string_view line,
                                                         std::uint64_t offset) {
  if (auto e = check_encoding(line, offset)) return *e;
  auto doc = parser.parse(line, line_limits());
  if (!doc.ok()) return from_reader_error(doc.error(), line, offset);
  return std::move(doc).value();
}

}  // namespace

Expected<json::Document, FrameError> parse_line(std::string_view line, std::uint64_t offset) {
  if (auto e = check_encoding(line, offset)) return *e;
  auto doc = json::parse(line, line_limits());
  if (!doc.ok()) return from_reader_error(doc.error(), line, offset);
  return std::move(doc).value();
}

FrameReader::FrameReader(ByteSource& source, std::size_t read_size)
    : source_(source),
      read_size_(std::max<std::size_t>(1, read_size)),
      capacity_(kMaxLineBytes + read_size_),
      allocated_(std::min<std::size_t>(capacity_, 64 * 1024)),
      buf_(std::make_unique_for_overwrite<char[]>(allocated_ + json::kPadding)) {}

FrameError FrameReader::fail(FrameError error) {
  failure_ = error;
  return error;
}

Expected<std::optional<Frame>, FrameError> FrameReader::next_raw_line() {
  if (failure_) return *failure_;
  for (;;) {
    char* buf = buf_.get();
    if (scan_ < end_) {
      const void* lf = std::memchr(buf + scan_, '\n', end_ - scan_);
      if (lf != nullptr) {
        std::size_t at = static_cast<std::size_t>(static_cast<const char*>(lf) - buf);
        std::uint64_t offset = base_ + start_;
        if (at - start_ + 1 > kMaxLineBytes) {
          FrameError e = make(FrameError::Kind::LineTooLong, offset);
          e.limit = kMaxLineBytes;
          return fail(e);
        }
        Frame frame{std::string_view(buf + start_, at - start_), offset};
        start_ = scan_ = at + 1;
        return std::optional<Frame>(frame);
      }
      scan_ = end_;
    }
    // No LF among the buffered bytes of this line.
    std::size_t partial = end_ - start_;
    if (partial >= kMaxLineBytes) {
      // The 1,048,576th byte arrived without an LF: no legal LF can follow.
      FrameError e = make(FrameError::Kind::LineTooLong, base_ + start_);
      e.limit = kMaxLineBytes;
      return fail(e);
    }
    if (eof_) {
      if (partial == 0) return std::optional<Frame>();
      FrameError e = make(FrameError::Kind::EarlyEof, base_ + start_);
      e.received = partial;
      return fail(e);
    }
    // Never read past the byte that would make this line too long, so an
    // endless line costs exactly kMaxLineBytes of input and of buffer.
    std::size_t allowed = kMaxLineBytes - partial;
    std::size_t want = std::min(read_size_, allowed);
    if (partial == 0 || allocated_ - end_ < want) {
      std::memmove(buf, buf + start_, partial);
      base_ += start_;
      start_ = 0;
      scan_ = end_ = partial;
    }
    if (allocated_ - end_ < want && end_ >= allocated_ / 2) {
      // Only a line filling half the buffer grows it (a short partial line
      // leaves room enough to read); partial < kMaxLineBytes, so the new
      // size stays within capacity_.
      std::size_t grown = std::min(capacity_, std::max(allocated_ * 2, end_ + want));
      auto bigger = std::make_unique_for_overwrite<char[]>(grown + json::kPadding);
      std::memcpy(bigger.get(), buf, end_);
      buf_ = std::move(bigger);
      buf = buf_.get();
      allocated_ = grown;
    }
    std::size_t room = std::min(allocated_ - end_, allowed);
    auto n = source_.read(buf + end_, room);
    if (!n.ok()) {
      FrameError e = make(FrameError::Kind::Io, base_ + start_);
      e.detail = n.error().message();
      e.io_code = n.error().code;
      return fail(e);
    }
    if (*n == 0) eof_ = true;
    end_ += std::min(*n, room);
  }
}

Expected<std::optional<Frame>, FrameError> FrameReader::next_line() {
  auto raw = next_raw_line();
  if (!raw.ok() || !raw->has_value()) return raw;
  const Frame& frame = **raw;
  auto checked = validate_buffered_line(parser_, frame.bytes, frame.offset);
  if (!checked.ok()) return fail(std::move(checked).error());
  return raw;
}

Expected<std::optional<ParsedFrame>, FrameError> FrameReader::read_frame() {
  auto raw = next_raw_line();
  if (!raw.ok()) return std::move(raw).error();
  if (!raw->has_value()) return std::optional<ParsedFrame>();
  const Frame& frame = **raw;
  auto doc = parse_buffered_line(parser_, frame.bytes, frame.offset);
  if (!doc.ok()) return fail(std::move(doc).error());
  return std::optional<ParsedFrame>(ParsedFrame{std::move(doc).value(), frame.offset});
}

}  // namespace dot::metewand
