// Why the JSON-lines FrameReader refused a line, one variant per rule (frame_error.h).
#include "dot/metewand/frame_error.h"
#include "dot/metewand/error_kinds.h"

#include <fmt/format.h>

#include "dot/base/jcs.h"

namespace dot::metewand {

ErrorKind frame_error_kind(FrameError::Kind kind) noexcept {
  switch (kind) {
    case FrameError::Kind::Io:
      return ErrorKind::Io;
    case FrameError::Kind::LineTooLong:
      return ErrorKind::LineTooLong;
    case FrameError::Kind::EarlyEof:
      return ErrorKind::EarlyEof;
    case FrameError::Kind::ByteOrderMark:
      return ErrorKind::ByteOrderMark;
    case FrameError::Kind::InvalidUtf8:
      return ErrorKind::InvalidUtf8;
    case FrameError::Kind::DuplicateKey:
      return ErrorKind::DuplicateKey;
    case FrameError::Kind::MalformedJson:
      return ErrorKind::MalformedJson;
  }
  return ErrorKind::Io;
}

std::string_view frame_error_name(FrameError::Kind kind) noexcept { return dot::Kind(frame_error_kind(kind)).name(); }

ErrorKind FrameError::error_kind() const noexcept { return frame_error_kind(kind); }
std::string_view FrameError::name() const noexcept { return frame_error_name(kind); }

std::string FrameError::message() const {
  switch (kind) {
    case Kind::Io:
      return fmt::format("the protocol stream could not be read: {}", detail);
    case Kind::LineTooLong:
      return fmt::format("the line exceeds the {}-byte limit", limit);
    case Kind::EarlyEof:
      return fmt::format("the stream ended after {} bytes of a line without its line feed", received);
    case Kind::ByteOrderMark:
      return "the line begins with a UTF-8 byte-order mark";
    case Kind::InvalidUtf8:
      return fmt::format("the line is not valid UTF-8 after byte {}", valid_up_to);
    case Kind::DuplicateKey: {
      std::string quoted;
      jcs::append_string(quoted, key);
      return fmt::format("the object key {} appears twice", quoted);
    }
    case Kind::MalformedJson:
      return fmt::format("the line is not one JSON value: {}", detail);
  }
  return detail;
}

std::string FrameError::json_payload() const {
  switch (kind) {
    case Kind::LineTooLong:
      return fmt::format("\"limit\":{}", limit);
    case Kind::EarlyEof:
      return fmt::format("\"received\":{}", received);
    case Kind::InvalidUtf8:
      return fmt::format("\"valid_up_to\":{}", valid_up_to);
    case Kind::DuplicateKey: {
      std::string out = "\"key\":";
      jcs::append_string(out, key);
      return out;
    }
    default:
      return {};
  }
}

Error FrameError::to_error() const {
  // A read that passed its deadline is the session's timeout.
  const Code code = kind == Kind::Io && io_code == Code::Timeout ? Code::Timeout : Code::Protocol;
  return make_parse_error_as(code, error_kind(), offset, message());
}

}  // namespace dot::metewand
