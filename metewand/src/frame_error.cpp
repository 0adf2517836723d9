#include "dot/metewand/frame_error.h"

#include <fmt/format.h>

#include "dot/base/jcs.h"

namespace dot::metewand {

std::string_view frame_error_name(FrameError::Kind kind) noexcept {
  switch (kind) {
    case FrameError::Kind::Io: return "Io";
    case FrameError::Kind::LineTooLong: return "LineTooLong";
    case FrameError::Kind::EarlyEof: return "EarlyEof";
    case FrameError::Kind::ByteOrderMark: return "ByteOrderMark";
    case FrameError::Kind::InvalidUtf8: return "InvalidUtf8";
    case FrameError::Kind::DuplicateKey: return "DuplicateKey";
    case FrameError::Kind::MalformedJson: return "MalformedJson";
  }
  return "Io";
}

std::string_view FrameError::name() const noexcept { return frame_error_name(kind); }

std::string FrameError::message() const {
  switch (kind) {
    case Kind::Io: return fmt::format("the protocol stream could not be read: {}", detail);
    case Kind::LineTooLong: return fmt::format("the line exceeds the {}-byte limit", limit);
    case Kind::EarlyEof:
      return fmt::format("the stream ended after {} bytes of a line without its line feed", received);
    case Kind::ByteOrderMark: return "the line begins with a UTF-8 byte-order mark";
    case Kind::InvalidUtf8: return fmt::format("the line is not valid UTF-8 after byte {}", valid_up_to);
    case Kind::DuplicateKey: {
      std::string quoted;
      jcs::append_string(quoted, key);
      return fmt::format("the object key {} appears twice", quoted);
    }
    case Kind::MalformedJson: return fmt::format("the line is not one JSON value: {}", detail);
  }
  return detail;
}

std::string FrameError::json_payload() const {
  switch (kind) {
    case Kind::LineTooLong: return fmt::format("\"limit\":{}", limit);
    case Kind::EarlyEof: return fmt::format("\"received\":{}", received);
    case Kind::InvalidUtf8: return fmt::format("\"valid_up_to\":{}", valid_up_to);
    case Kind::DuplicateKey: {
      std::string out = "\"key\":";
      jcs::append_string(out, key);
      return out;
    }
    default: return {};
  }
}

Error FrameError::to_error() const {
  Code code = Code::Protocol;
  if (kind == Kind::Io && io_code == Code::Timeout) code = Code::Timeout;
  return make_parse_error(code, std::string(name()), offset, message());
}

}  // namespace dot::metewand
