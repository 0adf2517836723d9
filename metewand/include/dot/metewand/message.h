#pragma once
// Metewand messages on the wire: canonical JSON (the `metewand` JCS profile)
// plus one LF, never longer than the framing limit; and the error a typed
// message layer reports when a frame does not have its message's shape.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dot/base/error.h"
#include "dot/base/jcs.h"
#include "dot/metewand/error_kinds.h"
#include "dot/metewand/expected.h"

namespace dot::metewand {

struct MessageError {
  enum class Kind : std::uint8_t {
    InvalidMessage,  // a frame is not the message expected (shape, fields, values)
    Serialization,   // a built message is outside the metewand JCS profile
    LineTooLong,     // the encoded line (LF included) would exceed kMaxLineBytes
  };
  Kind kind = Kind::InvalidMessage;
  std::string detail;
  std::optional<std::uint64_t> offset;  // InvalidMessage: offset in the line, when known
  std::size_t limit = 0;                // LineTooLong

  // This error's row of metewand/error_kinds.h; name() is its name.
  ErrorKind error_kind() const noexcept;
  std::string_view name() const noexcept;
  std::string message() const;
  Error to_error() const;  // Code::Protocol, kind = name()
};

// Canonical bytes of `message` under the metewand profile, then one LF.
Expected<std::string, MessageError> encode_message(const jcs::Node& message);

// A MessageError (InvalidMessage) from a dot::Error of the strict reader or
// ObjectReader, keeping its kind and offset in the detail.
MessageError invalid_message(const Error& error);
MessageError invalid_message(std::string detail, std::optional<std::uint64_t> offset = std::nullopt);

}  // namespace dot::metewand
