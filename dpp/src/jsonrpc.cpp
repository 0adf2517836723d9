// The JSON-RPC 2.0 envelope as DPP narrows it (jsonrpc.h).
#include "dot/dpp/jsonrpc.h"
#include "dot/dpp/error_kinds.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "fields.h"

namespace dot::dpp {
namespace {

constexpr std::string_view kMethodNames[] = {"dot.initialize", "dot.plan", "dot.materialize", "dot.validate",
                                             "dot.shutdown"};

Error at(json::Value v, ErrorKind kind, std::string detail) {
  return make_parse_error(kind, v.offset(), std::move(detail));
}

// The object readers' kinds (missing_field, unknown_field...), reported under the wire's code.
[[maybe_unused]] Error at(json::Value v, base::ErrorKind kind, std::string detail) {
  return make_parse_error_as(Code::Protocol, kind, v.offset(), std::move(detail));
}

Error missing(json::Value obj, std::string_view what, std::string_view name) {
  return at(obj, base::ErrorKind::MissingField, fmt::format("the {} has no \"{}\" field", what, name));
}

}  // namespace

Result<std::uint64_t> read_id(json::Value v, std::string_view what) {
  if (!v.is_number() || !v.is_integer_spelling())
    return at(v, dpp::ErrorKind::Id, fmt::format("the {} id must be a positive integer", what));
  std::string_view t = v.number_text();
  if (t[0] == '-' || t == "0" || t[0] == '0')
    return at(v, dpp::ErrorKind::Id, fmt::format("the {} id {} is not a positive integer", what, t));
  if (t.size() > 16) return at(v, dpp::ErrorKind::Id, fmt::format("the {} id {} is too large", what, t));
  std::uint64_t id = 0;
  for (char c : t) id = id * 10 + static_cast<std::uint64_t>(c - '0');
  if (id > (std::uint64_t{1} << 53) - 1)
    return at(v, dpp::ErrorKind::Id, fmt::format("the {} id {} is too large", what, t));
  return id;
}

Status check_version(json::Value v) {
  if (!v.is_string() || v.as_string() != "2.0")
    return at(v, dpp::ErrorKind::JsonrpcVersion, "\"jsonrpc\" must be the string \"2.0\"");
  return {};
}

std::string_view method_name(Method m) noexcept {
  auto i = static_cast<std::size_t>(m);
  return i >= 1 && i <= 5 ? kMethodNames[i - 1] : std::string_view("dot.unknown");
}

std::optional<Method> method_from_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i < 5; ++i)
    if (kMethodNames[i] == name) return static_cast<Method>(i + 1);
  return std::nullopt;
}

Error as_protocol(Error e) {
  if (e.code == Code::Validation) e.code = Code::Protocol;
  return e;
}

Result<std::string> encode_request(std::uint64_t id, Method method, const jcs::Node& params) {
  auto n = jcs::Node::object();
  n.set("id", jcs::Node::integer(static_cast<std::int64_t>(id)))
      .set("jsonrpc", jcs::Node::string("2.0"))
      .set("method", jcs::Node::string(std::string(method_name(method))))
      .set("params", params);
  return jcs::encode(n, jcs::Profile::Rfc8785);
}

fields::Envelope fields::read_envelope(json::Value object, unsigned accepted) {
  struct Slot {
    std::string_view key;
    unsigned bit;
    std::optional<json::Value> Envelope::*member;
  };
  static constexpr Slot kSlots[] = {
      {"jsonrpc", kJsonrpcMember, &Envelope::version}, {"id", kIdMember, &Envelope::id},
      {"result", kResultMember, &Envelope::result},    {"error", kErrorMember, &Envelope::error},
      {"method", kMethodMember, &Envelope::method},    {"params", kParamsMember, &Envelope::params},
  };
  Envelope e;
  for (json::Member m : object.members()) {
    const Slot* slot =
        std::find_if(std::begin(kSlots), std::end(kSlots), [&](const Slot& s) { return s.key == m.key; });
    if (slot != std::end(kSlots) && (slot->bit & accepted) != 0)
      e.*(slot->member) = m.value;
    else if (!e.unknown)
      e.unknown = m;
  }
  return e;
}

Error fields::unknown_member(const json::Member& m, std::string_view what) {
  return make_parse_error_as(Code::Protocol, base::ErrorKind::UnknownField, m.key_offset,
                             fmt::format("unknown field \"{}\" in {}", m.key, what));
}

Result<fields::Envelope> fields::read_response_envelope(json::Value root, std::string_view what) {
  if (root.is_array())
    return at(root, dpp::ErrorKind::Batch, fmt::format("the {} is a batch; batches are not allowed", what));
  if (!root.is_object()) return at(root, dpp::ErrorKind::NotObject, fmt::format("the {} must be a JSON object", what));
  fields::Envelope env = fields::read_envelope(root, fields::kAnyMember);
  if (env.unknown) return fields::unknown_member(*env.unknown, fmt::format("the {}", what));
  return env;
}

Status fields::check_response_envelope(json::Value root, const fields::Envelope& m, std::uint64_t expected_id,
                                       Method method) {
  std::string what = fmt::format("response to {}", method_name(method));
  if (!m.version) return missing(root, what, "jsonrpc");
  DOT_TRY(check_version(*m.version));
  if (!m.id) return missing(root, what, "id");
  if (m.id->is_null() && m.error)
    return at(*m.id, dpp::ErrorKind::Id,
              fmt::format("the plugin answered {} with an error for id null", method_name(method)));
  DOT_ASSIGN_OR_RETURN(std::uint64_t got, read_id(*m.id, "response"));
  if (got != expected_id)
    return at(*m.id, dpp::ErrorKind::IdMismatch, fmt::format("the {} has id {}, expected {}", what, got, expected_id));
  if (m.result && m.error)
    return at(root, base::ErrorKind::UnknownField, fmt::format("the {} has both \"result\" and \"error\"", what));
  return {};
}

Result<json::Value> decode_response(const json::Document& doc, std::uint64_t expected_id, Method method) {
  json::Value root = doc.root();
  std::string what = fmt::format("response to {}", method_name(method));
  DOT_ASSIGN_OR_RETURN(const fields::Envelope env, fields::read_response_envelope(root, what));
  if (env.method || env.params) {
    if (!env.id)
      return at(root, dpp::ErrorKind::Notification,
                fmt::format("a notification instead of the {}; notifications are not allowed", what));
    return at(root, dpp::ErrorKind::MethodInResponse, fmt::format("the {} carries \"method\" or \"params\"", what));
  }
  DOT_TRY(fields::check_response_envelope(root, env, expected_id, method));
  const std::optional<json::Value>& error = env.error;
  if (error) {
    // A well-formed error object fails the call with the plugin's words.
    if (!error->is_object()) return at(*error, base::ErrorKind::WrongType, "\"error\" must be an object");
    std::optional<json::Value> code, message;
    for (json::Member m : error->members()) {
      if (m.key == "code")
        code = m.value;
      else if (m.key == "message")
        message = m.value;
      else if (m.key != "data")
        return make_parse_error_as(Code::Protocol, base::ErrorKind::UnknownField, m.key_offset,
                                   fmt::format("unknown field \"{}\" in the error object", m.key));
    }
    if (!code || !code->is_number() || !code->is_integer_spelling())
      return at(*error, base::ErrorKind::WrongType, "the error object needs an integer \"code\"");
    if (!message || !message->is_string())
      return at(*error, base::ErrorKind::WrongType, "the error object needs a string \"message\"");
    std::string text(message->as_string().substr(0, 200));
    return at(*error, dpp::ErrorKind::ErrorResponseExpected,
              fmt::format("the plugin answered {} with error {}: {}", method_name(method), code->number_text(), text));
  }
  if (!env.result) return missing(root, what, "result");
  return *env.result;
}

Result<Request> decode_request(const json::Document& doc) {
  json::Value root = doc.root();
  if (root.is_array()) return at(root, dpp::ErrorKind::Batch, "a batch request; batches are not allowed");
  if (!root.is_object()) return at(root, dpp::ErrorKind::NotObject, "a request must be a JSON object");
  const fields::Envelope env = fields::read_envelope(root, fields::kRequestMembers);
  if (env.unknown) return fields::unknown_member(*env.unknown, "the request");
  const auto& [version, id, result, error, method, params, unknown] = env;
  if (!version) return missing(root, "request", "jsonrpc");
  DOT_TRY(check_version(*version));
  if (!method) return missing(root, "request", "method");
  if (!id) return at(root, dpp::ErrorKind::Notification, "a notification; notifications are not allowed");
  Request req;
  DOT_ASSIGN_OR_RETURN(req.id, read_id(*id, "request"));
  if (!method->is_string()) return at(*method, base::ErrorKind::WrongType, "\"method\" must be a string");
  auto m = method_from_name(method->as_string());
  if (!m) return at(*method, dpp::ErrorKind::Method, fmt::format("unknown method \"{}\"", method->as_string()));
  req.method = *m;
  if (!params) return missing(root, "request", "params");
  if (!params->is_object()) return at(*params, base::ErrorKind::WrongType, "\"params\" must be an object");
  req.params = *params;
  return req;
}

Result<std::string> encode_result(std::uint64_t id, jcs::Node result) {
  auto n = jcs::Node::object();
  n.set("id", jcs::Node::integer(static_cast<std::int64_t>(id)))
      .set("jsonrpc", jcs::Node::string("2.0"))
      .set("result", std::move(result));
  return jcs::encode(n, jcs::Profile::Rfc8785);
}

Result<std::string> encode_error(std::optional<std::uint64_t> id, std::int64_t code, std::string_view message) {
  auto err = jcs::Node::object();
  err.set("code", jcs::Node::integer(code)).set("message", jcs::Node::string(std::string(message)));
  auto n = jcs::Node::object();
  n.set("error", std::move(err))
      .set("id", id ? jcs::Node::integer(static_cast<std::int64_t>(*id)) : jcs::Node::null())
      .set("jsonrpc", jcs::Node::string("2.0"));
  return jcs::encode(n, jcs::Profile::Rfc8785);
}

}  // namespace dot::dpp
