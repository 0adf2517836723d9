// Metewand messages on the wire: canonical JSON plus one LF (message.h).
#include "dot/metewand/message.h"
#include "dot/metewand/error_kinds.h"

#include <fmt/format.h>

#include "dot/metewand/frame_error.h"

namespace dot::metewand {

ErrorKind MessageError::error_kind() const noexcept {
  switch (kind) {
    case Kind::InvalidMessage:
      return ErrorKind::InvalidMessage;
    case Kind::Serialization:
      return ErrorKind::Serialization;
    case Kind::LineTooLong:
      return ErrorKind::LineTooLong;
  }
  return ErrorKind::InvalidMessage;
}

std::string_view MessageError::name() const noexcept { return dot::Kind(error_kind()).name(); }

std::string MessageError::message() const {
  if (kind == Kind::LineTooLong) return fmt::format("the encoded message exceeds the {}-byte line limit", limit);
  return detail;
}

Error MessageError::to_error() const {
  Error e = make_error(error_kind(), message());
  e.offset = offset;
  return e;
}

MessageError invalid_message(const Error& error) {
  MessageError e;
  e.kind = MessageError::Kind::InvalidMessage;
  e.detail = error.kind.empty() ? error.detail : fmt::format("{}: {}", error.kind, error.detail);
  e.offset = error.offset;
  return e;
}

MessageError invalid_message(std::string detail, std::optional<std::uint64_t> offset) {
  MessageError e;
  e.kind = MessageError::Kind::InvalidMessage;
  e.detail = std::move(detail);
  e.offset = offset;
  return e;
}

Expected<std::string, MessageError> encode_message(const jcs::Node& message) {
  auto bytes = jcs::encode(message, jcs::Profile::Metewand);
  if (!bytes.ok()) {
    MessageError e;
    e.kind = MessageError::Kind::Serialization;
    e.detail = bytes.error().message();
    return e;
  }
  std::string line = std::move(bytes).value();
  if (line.size() + 1 > kMaxLineBytes) {
    MessageError e;
    e.kind = MessageError::Kind::LineTooLong;
    e.limit = kMaxLineBytes;
    return e;
  }
  line += '\n';
  return line;
}

}  // namespace dot::metewand
