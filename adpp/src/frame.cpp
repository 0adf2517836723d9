// ADPP framing: a 4-byte little-endian length and at most 1 MiB of protobuf (frame.h).
#include "dot/adpp/frame.h"
#include "dot/adpp/error_kinds.h"

#include <cstring>

#include <fmt/format.h>
#include <google/protobuf/stubs/logging.h>

namespace dot::adpp {
namespace {

Error length_error(std::uint64_t offset, std::uint32_t length, std::uint32_t max_frame) {
  if (length == 0) return make_parse_error(adpp::ErrorKind::Length, offset, "zero-length frame");
  return make_parse_error(adpp::ErrorKind::Length, offset,
                          fmt::format("frame length {} exceeds the limit of {} bytes", length, max_frame));
}

}  // namespace

std::uint32_t read_prefix(const char* bytes) noexcept {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes);
  return static_cast<std::uint32_t>(b[0]) | (static_cast<std::uint32_t>(b[1]) << 8) |
         (static_cast<std::uint32_t>(b[2]) << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
}

void write_prefix(char* out, std::uint32_t length) noexcept {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((length >> (8 * i)) & 0xFFu);
}

Status append_frame(std::string& out, const google::protobuf::MessageLite& message, std::uint32_t max_frame) {
  std::size_t size = message.ByteSizeLong();
  // An all-default message serializes to nothing, and a zero-length frame is
  // malformed on the wire: refuse to send what we would refuse to receive.
  if (size == 0)
    return make_error(adpp::ErrorKind::Length,
                      fmt::format("an empty {} would be a zero-length frame", message.GetTypeName()));
  if (size > max_frame)
    return make_error(adpp::ErrorKind::Length, fmt::format("{} of {} bytes exceeds the frame limit of {} bytes",
                                                           message.GetTypeName(), size, max_frame));
  std::size_t at = out.size();
  out.resize(at + kPrefixBytes + size);
  write_prefix(out.data() + at, static_cast<std::uint32_t>(size));
  // ByteSizeLong() above cached the sizes this serializer relies on.
  message.SerializeWithCachedSizesToArray(reinterpret_cast<std::uint8_t*>(out.data() + at + kPrefixBytes));
  return {};
}

Result<std::string> encode_frame(const google::protobuf::MessageLite& message, std::uint32_t max_frame) {
  std::string out;
  DOT_TRY(append_frame(out, message, max_frame));
  return out;
}

Status parse_payload(std::string_view payload, google::protobuf::MessageLite& message, std::uint64_t offset,
                     std::string_view what) {
  // libprotobuf would also log each invalid UTF-8 string to stderr; the
  // error we return says it once, and stderr may be a provider's diagnostics.
  google::protobuf::LogSilencer quiet;
  if (payload.size() > static_cast<std::size_t>(INT32_MAX) ||
      !message.ParseFromArray(payload.data(), static_cast<int>(payload.size())))
    return make_parse_error(adpp::ErrorKind::Parse, offset,
                            fmt::format("the {}-byte payload is not a valid {}", payload.size(), what));
  return {};
}

FrameReader::FrameReader(std::uint32_t max_frame) : max_frame_(max_frame) {}

char* FrameReader::prepare(std::size_t min_bytes) {
  if (buf_.size() - end_ < min_bytes) {
    // Move the unread tail to the front before growing, so the buffer stays
    // bounded by one frame plus one read.
    if (start_ > 0) {
      std::memmove(buf_.data(), buf_.data() + start_, end_ - start_);
      end_ -= start_;
      start_ = 0;
    }
    if (buf_.size() - end_ < min_bytes) buf_.resize(end_ + min_bytes);
  }
  return buf_.data() + end_;
}

void FrameReader::commit(std::size_t n) { end_ += n; }

void FrameReader::feed(std::string_view bytes) {
  if (bytes.empty()) return;
  std::memcpy(prepare(bytes.size()), bytes.data(), bytes.size());
  commit(bytes.size());
}

Result<std::optional<FrameView>> FrameReader::next() {
  if (broken_)
    return make_parse_error(adpp::ErrorKind::Length, consumed_, "the stream is unusable after an over-cap prefix");
  if (end_ - start_ < kPrefixBytes) return std::optional<FrameView>{};
  std::uint32_t length = read_prefix(buf_.data() + start_);
  if (length == 0 || length > max_frame_) {
    Error e = length_error(consumed_, length, max_frame_);
    if (length == 0) {
      start_ += kPrefixBytes;
      consumed_ += kPrefixBytes;
    } else {
      broken_ = true;
    }
    return e;
  }
  if (end_ - start_ < kPrefixBytes + length) return std::optional<FrameView>{};
  FrameView frame{consumed_, std::string_view(buf_.data() + start_ + kPrefixBytes, length)};
  start_ += kPrefixBytes + length;
  consumed_ += kPrefixBytes + length;
  if (start_ == end_) start_ = end_ = 0;  // the view stays valid: nothing is overwritten until prepare()
  return std::optional<FrameView>{frame};
}

Status FrameReader::finish() const {
  if (end_ == start_ || broken_) return {};
  if (end_ - start_ < kPrefixBytes)
    return make_parse_error(adpp::ErrorKind::EarlyEof, consumed_,
                            fmt::format("the stream ended after {} of 4 prefix bytes", end_ - start_));
  return make_parse_error(adpp::ErrorKind::EarlyEof, consumed_,
                          fmt::format("the stream ended after {} of {} payload bytes", end_ - start_ - kPrefixBytes,
                                      read_prefix(buf_.data() + start_)));
}

std::size_t FrameReader::missing() const noexcept {
  std::size_t have = end_ - start_;
  if (have < kPrefixBytes) return kPrefixBytes - have;
  std::uint32_t length = read_prefix(buf_.data() + start_);
  if (length == 0 || length > max_frame_) return 0;
  std::size_t want = kPrefixBytes + length;
  return have >= want ? 0 : want - have;
}

Result<std::optional<FrameView>> decode_frame(std::string_view bytes, std::uint64_t base_offset,
                                              std::uint32_t max_frame) {
  if (bytes.empty()) return std::optional<FrameView>{};
  if (bytes.size() < kPrefixBytes)
    return make_parse_error(adpp::ErrorKind::EarlyEof, base_offset,
                            fmt::format("the stream ended after {} of 4 prefix bytes", bytes.size()));
  std::uint32_t length = read_prefix(bytes.data());
  if (length == 0 || length > max_frame) return length_error(base_offset, length, max_frame);
  if (bytes.size() - kPrefixBytes < length)
    return make_parse_error(
        adpp::ErrorKind::EarlyEof, base_offset,
        fmt::format("the stream ended after {} of {} payload bytes", bytes.size() - kPrefixBytes, length));
  return std::optional<FrameView>{FrameView{base_offset, bytes.substr(kPrefixBytes, length)}};
}

}  // namespace dot::adpp
