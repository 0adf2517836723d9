#pragma once
// Binding worker responses to requests. ResponseCorrelator holds one pending
// request id; RequestTracker allocates the session's ids ("0", "1", ...) and
// allows one pending request at a time.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dot/base/error.h"
#include "dot/base/json.h"
#include "dot/metewand/error_kinds.h"
#include "dot/metewand/expected.h"

namespace dot::metewand {

struct CorrelationError {
  enum class Kind : std::uint8_t {
    InvalidRequestId,       // not an object, or `id` missing or not a string
    ExtraResponse,          // actual: a response after the pending one was satisfied
    MismatchedRequestId,    // expected, actual; the request stays pending
    RequestAlreadyPending,  // expected: the pending id (tracker only)
    RequestIdExhausted,     // the id counter would wrap (tracker only)
  };
  Kind kind = Kind::InvalidRequestId;
  std::string expected;
  std::string actual;

  // This error's row of metewand/error_kinds.h; name() is its name.
  ErrorKind error_kind() const noexcept;
  std::string_view name() const noexcept;
  std::string message() const;
  Error to_error() const;  // Code::Protocol, kind = name()
};

class ResponseCorrelator {
 public:
  explicit ResponseCorrelator(std::string expected_id) : expected_(std::move(expected_id)) {}

  // Checks, in order: InvalidRequestId (even after completion), ExtraResponse,
  // MismatchedRequestId; otherwise the response is accepted and the request
  // is complete.
  Expected<Done, CorrelationError> accept(json::Value response);
  // The same on an already extracted id (nullopt: no string id).
  Expected<Done, CorrelationError> accept_id(std::optional<std::string_view> id);

  bool complete() const noexcept { return !expected_.has_value(); }
  const std::optional<std::string>& pending() const noexcept { return expected_; }

 private:
  std::optional<std::string> expected_;
};

// The string `id` of a response object, if it has one.
std::optional<std::string_view> response_id(json::Value response) noexcept;

class RequestTracker {
 public:
  // The next id, now pending; RequestAlreadyPending while one is.
  Expected<std::string, CorrelationError> begin_request();
  // Completes the pending request: ExtraResponse when none is pending or
  // when `id` is a request already answered, MismatchedRequestId (request
  // stays pending) for any other id.
  Expected<Done, CorrelationError> complete_response(std::string_view id);
  // Whether `id` was issued by this tracker and already answered.
  bool answered(std::string_view id) const noexcept;
  const std::optional<std::string>& pending() const noexcept { return pending_; }

 private:
  std::uint64_t next_ = 0;
  bool exhausted_ = false;
  std::optional<std::string> pending_;
};

}  // namespace dot::metewand
