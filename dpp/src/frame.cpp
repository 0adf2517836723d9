// DPP framing: the Content-Length header state machine, every rejection named (frame.h).
#include "dot/dpp/frame.h"
#include "dot/dpp/error_kinds.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace dot::dpp {
namespace {

constexpr std::string_view kPrefix = "Content-Length: ";

// A byte for a detail line: printable ASCII quoted, anything else in hex.
std::string show_byte(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u == '\r') return "CR";
  if (u == '\n') return "LF";
  if (u >= 0x20 && u < 0x7f && u != '"' && u != '\\') return fmt::format("'{}'", c);
  return fmt::format("0x{:02x}", u);
}

enum class HeaderState : std::uint8_t { Prefix, FirstDigit, Digits, Lf1, Cr2, Lf2, Done };

// The fewest bytes that could still complete a valid header from this state.
// Reading no more than that keeps the reader from ever taking a byte that
// belongs to the next frame of a valid stream, and bounds the read-ahead past
// an illegal byte.
std::size_t min_remaining(HeaderState s, std::size_t prefix_pos) {
  switch (s) {
    case HeaderState::Prefix:
      return kPrefix.size() - prefix_pos + 1 + 4;
    case HeaderState::FirstDigit:
      return 1 + 4;
    case HeaderState::Digits:
      return 4;
    case HeaderState::Lf1:
      return 3;
    case HeaderState::Cr2:
      return 2;
    case HeaderState::Lf2:
      return 1;
    case HeaderState::Done:
      return 0;
  }
  return 1;
}

}  // namespace

Result<std::size_t> FrameReader::fill(std::size_t max) {
  auto got = source_.read(buf_ + end_, std::min(max, sizeof buf_ - end_));
  if (got.ok()) {
    end_ += *got;
    read_ += *got;
  }
  return got;
}

Result<std::optional<Frame>> FrameReader::next() {
  if (failed_) return *failed_;
  auto fail = [&](ErrorKind kind, std::uint64_t at, std::string detail) -> Error {
    failed_ = make_parse_error(kind, at, std::move(detail));
    return *failed_;
  };

  HeaderState state = HeaderState::Prefix;
  std::size_t pos = 0;  // header bytes consumed so far in this frame
  std::size_t length = 0;
  while (state != HeaderState::Done) {
    if (start_ == end_) {
      start_ = end_ = 0;
      auto got = fill(min_remaining(state, pos));
      if (!got.ok()) {
        failed_ = std::move(got).error();
        return *failed_;
      }
      if (*got == 0) {
        if (pos == 0) return std::optional<Frame>();
        return fail(dpp::ErrorKind::EarlyEof, offset_ + pos,
                    fmt::format("stream ended after {} header bytes of a frame", pos));
      }
    }
    const char c = buf_[start_++];
    const std::uint64_t at = offset_ + pos;
    ++pos;
    switch (state) {
      case HeaderState::Prefix:
        if (c != kPrefix[pos - 1]) {
          return fail(
              dpp::ErrorKind::Header, at,
              fmt::format("{} where the header \"Content-Length: \" expects '{}'", show_byte(c), kPrefix[pos - 1]));
        }
        if (pos == kPrefix.size()) state = HeaderState::FirstDigit;
        break;
      case HeaderState::FirstDigit:
        if (c >= '1' && c <= '9') {
          length = static_cast<std::size_t>(c - '0');
          state = HeaderState::Digits;
        } else if (c == '0') {
          return fail(dpp::ErrorKind::Length, at, "length 0 or with a leading zero");
        } else if (c == '+' || c == '-') {
          return fail(dpp::ErrorKind::Length, at, fmt::format("length with a sign {}", show_byte(c)));
        } else if (c == ' ' || c == '\t') {
          return fail(dpp::ErrorKind::Length, at, "whitespace before the length");
        } else if (c == '\r' || c == '\n') {
          return fail(dpp::ErrorKind::Length, at, "no length digits");
        } else {
          return fail(dpp::ErrorKind::Length, at, fmt::format("{} where a length digit is expected", show_byte(c)));
        }
        break;
      case HeaderState::Digits:
        if (c >= '0' && c <= '9') {
          length = length * 10 + static_cast<std::size_t>(c - '0');
          if (length > max_body_)
            return fail(dpp::ErrorKind::Length, at, fmt::format("length over the limit of {} bytes", max_body_));
        } else if (c == '\r') {
          state = HeaderState::Lf1;
        } else if (c == '\n') {
          return fail(dpp::ErrorKind::Header, at, "LF-only line end; header lines end with CRLF");
        } else {
          return fail(dpp::ErrorKind::Length, at,
                      fmt::format("{} in the length; only digits are allowed", show_byte(c)));
        }
        break;
      case HeaderState::Lf1:
        if (c != '\n')
          return fail(dpp::ErrorKind::Header, at, fmt::format("CR followed by {} instead of LF", show_byte(c)));
        state = HeaderState::Cr2;
        break;
      case HeaderState::Cr2:
        if (c == '\r') {
          state = HeaderState::Lf2;
        } else if (c == '\n') {
          return fail(dpp::ErrorKind::Header, at, "LF-only line end; the header ends with an empty CRLF line");
        } else {
          return fail(
              dpp::ErrorKind::ExtraHeader, at,
              fmt::format("a second header line starting with {}; only Content-Length is allowed", show_byte(c)));
        }
        break;
      case HeaderState::Lf2:
        if (c != '\n')
          return fail(dpp::ErrorKind::Header, at, fmt::format("CR followed by {} instead of LF", show_byte(c)));
        state = HeaderState::Done;
        break;
      case HeaderState::Done:
        break;
    }
  }

  Frame frame;
  frame.offset = offset_;
  frame.body_offset = offset_ + pos;
  // The buffer follows the bytes that arrived, doubling from kMaxBody up to
  // the announced length: memory is bounded by the limit and by what the
  // peer actually sent, never by what it merely announced.
  frame.body.resize(std::min(length, kMaxBody));
  std::size_t have = std::min(length, end_ - start_);
  std::memcpy(frame.body.data(), buf_ + start_, have);
  start_ += have;
  while (have < length) {
    if (have == frame.body.size()) frame.body.resize(std::min(length, 2 * frame.body.size()));
    auto got = source_.read(frame.body.data() + have, frame.body.size() - have);
    if (!got.ok()) {
      failed_ = std::move(got).error();
      return *failed_;
    }
    if (*got == 0)
      return fail(dpp::ErrorKind::EarlyEof, frame.body_offset + have,
                  fmt::format("stream ended after {} of {} body bytes", have, length));
    have += *got;
    read_ += *got;
  }
  offset_ = frame.body_offset + length;
  return std::optional<Frame>(std::move(frame));
}

Result<std::string> encode_frame(std::string_view body, std::size_t max_body) {
  if (body.empty() || body.size() > max_body)
    return make_error(dpp::ErrorKind::Length,
                      fmt::format("a frame body must be 1 to {} bytes, not {}", max_body, body.size()));
  std::string out;
  out.reserve(body.size() + 32);
  out += kPrefix;
  out += std::to_string(body.size());
  out += "\r\n\r\n";
  out += body;
  return out;
}

Status FrameWriter::write(std::string_view body) {
  DOT_ASSIGN_OR_RETURN(std::string bytes, encode_frame(body, max_body_));
  return sink_.write(bytes);
}

}  // namespace dot::dpp
