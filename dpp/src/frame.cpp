// DPP framing: the Content-Length header state machine, every rejection named (frame.h).
#include "dot/dpp/frame.h"
#include "dot/dpp/error_kinds.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

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

// The header of one frame as it is read: its state, the bytes consumed (the
// one being judged included) and the length's digits so far.
struct Header {
  HeaderState state = HeaderState::Prefix;
  std::size_t pos = 0;
  std::size_t length = 0;
  std::size_t max_body = 0;
};

// Why a header byte is refused (the caller adds its offset).
struct Refusal {
  ErrorKind kind;
  std::string detail;
};

// One transition per state: what byte `c` does to `h` (moves it on, or not),
// or why it is refused.
using Transition = std::optional<Refusal> (*)(Header& h, char c);

std::optional<Refusal> on_prefix(Header& h, char c) {
  if (c != kPrefix[h.pos - 1])
    return Refusal{dpp::ErrorKind::Header, fmt::format("{} where the header \"Content-Length: \" expects '{}'",
                                                       show_byte(c), kPrefix[h.pos - 1])};
  if (h.pos == kPrefix.size()) h.state = HeaderState::FirstDigit;
  return std::nullopt;
}

std::optional<Refusal> on_first_digit(Header& h, char c) {
  if (c >= '1' && c <= '9') {
    h.length = static_cast<std::size_t>(c - '0');
    h.state = HeaderState::Digits;
    return std::nullopt;
  }
  if (c == '0') return Refusal{dpp::ErrorKind::Length, "length 0 or with a leading zero"};
  if (c == '+' || c == '-') return Refusal{dpp::ErrorKind::Length, fmt::format("length with a sign {}", show_byte(c))};
  if (c == ' ' || c == '\t') return Refusal{dpp::ErrorKind::Length, "whitespace before the length"};
  if (c == '\r' || c == '\n') return Refusal{dpp::ErrorKind::Length, "no length digits"};
  return Refusal{dpp::ErrorKind::Length, fmt::format("{} where a length digit is expected", show_byte(c))};
}

std::optional<Refusal> on_digits(Header& h, char c) {
  if (c >= '0' && c <= '9') {
    h.length = h.length * 10 + static_cast<std::size_t>(c - '0');
    if (h.length > h.max_body)
      return Refusal{dpp::ErrorKind::Length, fmt::format("length over the limit of {} bytes", h.max_body)};
    return std::nullopt;
  }
  if (c == '\r') {
    h.state = HeaderState::Lf1;
    return std::nullopt;
  }
  if (c == '\n') return Refusal{dpp::ErrorKind::Header, "LF-only line end; header lines end with CRLF"};
  return Refusal{dpp::ErrorKind::Length, fmt::format("{} in the length; only digits are allowed", show_byte(c))};
}

// The LF after a CR, then `next`.
template <HeaderState next>
std::optional<Refusal> on_lf(Header& h, char c) {
  if (c != '\n') return Refusal{dpp::ErrorKind::Header, fmt::format("CR followed by {} instead of LF", show_byte(c))};
  h.state = next;
  return std::nullopt;
}

std::optional<Refusal> on_cr2(Header& h, char c) {
  if (c == '\r') {
    h.state = HeaderState::Lf2;
    return std::nullopt;
  }
  if (c == '\n') return Refusal{dpp::ErrorKind::Header, "LF-only line end; the header ends with an empty CRLF line"};
  return Refusal{dpp::ErrorKind::ExtraHeader,
                 fmt::format("a second header line starting with {}; only Content-Length is allowed", show_byte(c))};
}

// The state machine's table, in HeaderState order (Done reads no byte).
constexpr Transition kTransitions[] = {on_prefix, on_first_digit,          on_digits, on_lf<HeaderState::Cr2>,
                                       on_cr2,    on_lf<HeaderState::Done>};

}  // namespace

Result<std::size_t> FrameReader::fill(std::size_t max) {
  auto got = source_.read(buf_ + end_, std::min(max, sizeof buf_ - end_));
  if (got.ok()) {
    end_ += *got;
    read_ += *got;
  }
  return got;
}

Error FrameReader::stop(Error e) {
  failed_ = e;
  return e;
}

Result<std::optional<Frame>> FrameReader::next() {
  if (failed_) return *failed_;
  Header h;
  h.max_body = max_body_;
  while (h.state != HeaderState::Done) {
    if (start_ == end_) {
      start_ = end_ = 0;
      auto got = fill(min_remaining(h.state, h.pos));
      if (!got.ok()) return stop(std::move(got).error());
      if (*got == 0) {
        if (h.pos == 0) return std::optional<Frame>();
        return stop(make_parse_error(dpp::ErrorKind::EarlyEof, offset_ + h.pos,
                                     fmt::format("stream ended after {} header bytes of a frame", h.pos)));
      }
    }
    const char c = buf_[start_++];
    const std::uint64_t at = offset_ + h.pos;
    ++h.pos;
    if (auto refusal = kTransitions[static_cast<std::size_t>(h.state)](h, c))
      return stop(make_parse_error(refusal->kind, at, std::move(refusal->detail)));
  }
  return read_body(h.pos, h.length);
}

Result<std::optional<Frame>> FrameReader::read_body(std::size_t header_bytes, std::size_t length) {
  Frame frame;
  frame.offset = offset_;
  frame.body_offset = offset_ + header_bytes;
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
    if (!got.ok()) return stop(std::move(got).error());
    if (*got == 0)
      return stop(make_parse_error(dpp::ErrorKind::EarlyEof, frame.body_offset + have,
                                   fmt::format("stream ended after {} of {} body bytes", have, length)));
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
