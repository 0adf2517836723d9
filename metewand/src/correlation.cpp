// Binding worker responses to requests: one pending id at a time (correlation.h).
#include "dot/metewand/correlation.h"
#include "dot/metewand/error_kinds.h"

#include <limits>

#include <fmt/format.h>

namespace dot::metewand {

ErrorKind CorrelationError::error_kind() const noexcept {
  switch (kind) {
    case Kind::InvalidRequestId:
      return ErrorKind::InvalidRequestId;
    case Kind::ExtraResponse:
      return ErrorKind::ExtraResponse;
    case Kind::MismatchedRequestId:
      return ErrorKind::MismatchedRequestId;
    case Kind::RequestAlreadyPending:
      return ErrorKind::RequestAlreadyPending;
    case Kind::RequestIdExhausted:
      return ErrorKind::RequestIdExhausted;
  }
  return ErrorKind::InvalidRequestId;
}

std::string_view CorrelationError::name() const noexcept { return dot::Kind(error_kind()).name(); }

std::string CorrelationError::message() const {
  switch (kind) {
    case Kind::InvalidRequestId:
      return "the response is not an object with a string id";
    case Kind::ExtraResponse:
      return fmt::format("extra response \"{}\": that request was already answered or none is pending", actual);
    case Kind::MismatchedRequestId:
      return fmt::format("response id \"{}\" does not match the pending request \"{}\"", actual, expected);
    case Kind::RequestAlreadyPending:
      return fmt::format("request \"{}\" is still pending; version 1 allows one request at a time", expected);
    case Kind::RequestIdExhausted:
      return "the request id sequence is exhausted";
  }
  return {};
}

Error CorrelationError::to_error() const { return make_error(error_kind(), message()); }

std::optional<std::string_view> response_id(json::Value response) noexcept {
  if (!response.is_object()) return std::nullopt;
  auto id = response.find("id");
  if (!id || !id->is_string()) return std::nullopt;
  return id->as_string();
}

Expected<Done, CorrelationError> ResponseCorrelator::accept(json::Value response) {
  return accept_id(response_id(response));
}

Expected<Done, CorrelationError> ResponseCorrelator::accept_id(std::optional<std::string_view> id) {
  CorrelationError e;
  if (!id) return e;  // InvalidRequestId, whatever the state
  e.actual = std::string(*id);
  if (!expected_) {
    e.kind = CorrelationError::Kind::ExtraResponse;
    return e;
  }
  if (*id != *expected_) {
    e.kind = CorrelationError::Kind::MismatchedRequestId;
    e.expected = *expected_;
    return e;
  }
  expected_.reset();
  return Done{};
}

Expected<std::string, CorrelationError> RequestTracker::begin_request() {
  CorrelationError e;
  if (pending_) {
    e.kind = CorrelationError::Kind::RequestAlreadyPending;
    e.expected = *pending_;
    return e;
  }
  if (exhausted_) {
    e.kind = CorrelationError::Kind::RequestIdExhausted;
    return e;
  }
  std::string id = std::to_string(next_);
  if (next_ == std::numeric_limits<std::uint64_t>::max())
    exhausted_ = true;
  else
    ++next_;
  pending_ = id;
  return id;
}

Expected<Done, CorrelationError> RequestTracker::complete_response(std::string_view id) {
  CorrelationError e;
  e.actual = std::string(id);
  if (!pending_) {
    e.kind = CorrelationError::Kind::ExtraResponse;
    return e;
  }
  if (id != *pending_) {
    // A second answer to a request already answered is an extra response,
    // whatever is pending now; any other id is a mismatch.
    e.kind = answered(id) ? CorrelationError::Kind::ExtraResponse : CorrelationError::Kind::MismatchedRequestId;
    if (e.kind == CorrelationError::Kind::MismatchedRequestId) e.expected = *pending_;
    return e;
  }
  pending_.reset();
  return Done{};
}

bool RequestTracker::answered(std::string_view id) const noexcept {
  // Ids are the decimal spellings of 0, 1, ...: canonical digits only.
  if (id.empty() || id.size() > 20 || (id.size() > 1 && id[0] == '0')) return false;
  std::uint64_t n = 0;
  for (char c : id) {
    if (c < '0' || c > '9') return false;
    std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (n > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return false;
    n = n * 10 + digit;
  }
  // Issued ids are below next_ (all of them once exhausted); the pending one
  // is not answered yet.
  bool issued = exhausted_ || n < next_;
  return issued && !(pending_ && *pending_ == id);
}

}  // namespace dot::metewand
