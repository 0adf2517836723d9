#pragma once
// The JSON-RPC 2.0 envelope as the hello profile narrows it: "jsonrpc":"2.0",
// positive integer ids 1..5 in method order, one request outstanding, no
// notifications, no batches. A response carries exactly jsonrpc, id and one of
// result / error; a well-formed error object fails the call with the plugin's
// code and message (an extension over the Go core, which rejects it as an
// unknown field).
//
// Every decode error is Code::Protocol with one of these kinds and the offset
// of the offending value:
//   batch, notification, not_object, missing_field, unknown_field, method_in_response,
//   jsonrpc_version, id (not a positive integer), id_mismatch, wrong_type,
//   error_response (the plugin answered with an error object), method (unknown or out of order)

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dot/base/jcs.h"
#include "dot/base/json.h"
#include "dot/base/result.h"

namespace dot::dpp {

enum class Method : std::uint8_t { Initialize = 1, Plan = 2, Materialize = 3, Validate = 4, Shutdown = 5 };

std::string_view method_name(Method m) noexcept;  // "dot.initialize" ...
std::optional<Method> method_from_name(std::string_view name) noexcept;
// The hello profile sends each method once, in order, with id 1..5.
inline std::uint64_t method_id(Method m) noexcept { return static_cast<std::uint64_t>(m); }

// Standard JSON-RPC error codes a plugin answers with.
inline constexpr std::int64_t kParseError = -32700;
inline constexpr std::int64_t kInvalidRequest = -32600;
inline constexpr std::int64_t kMethodNotFound = -32601;
inline constexpr std::int64_t kInvalidParams = -32602;

// The envelope pieces every profile shares. A positive integer id spelled as
// plain digits (no sign, fraction, exponent or leading zero), at most 2^53 - 1
// (kind id; `what` is "request" or "response").
Result<std::uint64_t> read_id(json::Value v, std::string_view what);
// "jsonrpc" is exactly the string "2.0" (kind jsonrpc_version).
Status check_version(json::Value v);

// ---- host side ----

// Canonical request body: {"id":N,"jsonrpc":"2.0","method":M,"params":P}.
Result<std::string> encode_request(std::uint64_t id, Method method, const jcs::Node& params);

// Checks the envelope of the response to request `expected_id` (sent for
// `method`, named in details) and returns its `result` value.
Result<json::Value> decode_response(const json::Document& doc, std::uint64_t expected_id, Method method);

// ---- plugin side ----

struct Request {
  std::uint64_t id = 0;
  Method method = Method::Initialize;
  json::Value params;  // an object; valid while the Document lives
};

// Checks a request envelope: exactly jsonrpc, id, method, params; a known method.
Result<Request> decode_request(const json::Document& doc);

// {"id":N,"jsonrpc":"2.0","result":R}
// `result` by value: a large one (a dot.plan answer) is moved in, not copied.
Result<std::string> encode_result(std::uint64_t id, jcs::Node result);
// {"error":{"code":C,"message":M},"id":N|null,"jsonrpc":"2.0"}
Result<std::string> encode_error(std::optional<std::uint64_t> id, std::int64_t code, std::string_view message);

// Re-labels a strict-reader (Code::Validation) error as Code::Protocol,
// keeping kind, offset and detail; other errors pass unchanged.
Error as_protocol(Error e);

}  // namespace dot::dpp
