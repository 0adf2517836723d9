#pragma once
// FrameError: why the JSON-lines FrameReader refused a line. One variant per
// rule of the Metewand v1 framing contract, in the order the checks fire.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "dot/base/error.h"
#include "dot/metewand/error_kinds.h"

namespace dot::metewand {

// One line, LF included, is at most this many bytes (inclusive).
inline constexpr std::size_t kMaxLineBytes = 1024 * 1024;

struct FrameError {
  enum class Kind : std::uint8_t {
    Io,           // the byte source failed (detail says how)
    LineTooLong,  // limit
    EarlyEof,     // received
    ByteOrderMark,
    InvalidUtf8,    // valid_up_to
    DuplicateKey,   // key
    MalformedJson,  // detail: the strict reader's kind and message
  };

  Kind kind = Kind::Io;
  // Stream offset of the first byte of the line the error belongs to.
  std::uint64_t offset = 0;
  std::size_t limit = 0;        // LineTooLong
  std::size_t received = 0;     // EarlyEof: buffered bytes of the partial line, CR included
  std::size_t valid_up_to = 0;  // InvalidUtf8: length of the valid UTF-8 prefix of the line
  std::string key;              // DuplicateKey: the repeated key, unescaped
  std::string detail;           // Io and MalformedJson: what went wrong
  // Io only: the byte source's own error (a session's deadline shows up here
  // as Code::Timeout).
  Code io_code = Code::Io;

  // "Io", "LineTooLong", ... exactly the variant names of the contract.
  // This error's row of metewand/error_kinds.h; name() is its name.
  ErrorKind error_kind() const noexcept;
  std::string_view name() const noexcept;
  // One sentence for humans, starting with nothing but the facts.
  std::string message() const;
  // The payload as JSON members without braces, for frames decode:
  // "\"limit\":1048576" / "\"key\":\"a\"" / "" (no payload).
  std::string json_payload() const;
  // Code::Protocol (Code::Timeout for a timed-out source), kind = name(),
  // offset = line offset, detail = message().
  Error to_error() const;
};

std::string_view frame_error_name(FrameError::Kind kind) noexcept;

}  // namespace dot::metewand
