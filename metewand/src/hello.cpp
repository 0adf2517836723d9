// The Metewand v1 hello handshake: types, strict decoding, validation (hello.h).
#include "dot/metewand/hello.h"
#include "dot/metewand/error_kinds.h"

#include <algorithm>
#include <array>
#include <limits>

#include <fmt/format.h>

#include "dot/base/sha256.h"

namespace dot::metewand {
namespace {

constexpr std::array<std::string_view, 3> kRoles = {"dataset_materializer", "implementation", "problem_evaluator"};
constexpr std::array<std::string_view, 4> kCapabilities = {"one_shot", "applicability", "fresh_sequence",
                                                           "streaming_profile"};

#define MW_TRY_MSG(lhs, expr)                                                                           \
  auto DOT_CONCAT_(mw_r_, __LINE__) = (expr);                                                           \
  if (!DOT_CONCAT_(mw_r_, __LINE__).ok()) return invalid_message(DOT_CONCAT_(mw_r_, __LINE__).error()); \
  lhs = std::move(DOT_CONCAT_(mw_r_, __LINE__)).value()

// A member read by one of the field readers below, whose error is already a
// MessageError.
#define MW_TRY_FIELD(lhs, expr)                                                                   \
  auto DOT_CONCAT_(mw_f_, __LINE__) = (expr);                                                     \
  if (!DOT_CONCAT_(mw_f_, __LINE__).ok()) return std::move(DOT_CONCAT_(mw_f_, __LINE__)).error(); \
  lhs = std::move(DOT_CONCAT_(mw_f_, __LINE__)).value()

// `out` once no member is left unread: a member nobody asked for makes the
// message invalid.
template <class T>
Expected<T, MessageError> finished(const json::ObjectReader& r, T out) {
  auto fin = r.finish();
  if (!fin.ok()) return invalid_message(fin.error());
  return out;
}

Expected<std::string, MessageError> request_id_field(json::ObjectReader& r) {
  MW_TRY_MSG(json::Value id, r.required("id"));
  if (!id.is_string()) return invalid_message("id: must be a string", id.offset());
  if (id.as_string().empty()) return invalid_message("id: must not be empty", id.offset());
  return std::string(id.as_string());
}

// The member `name`, an array or an object as `type` says; otherwise the
// message is invalid ("NAME: must be an array").
Expected<json::Value, MessageError> container_field(json::ObjectReader& r, std::string_view name, json::Type type) {
  MW_TRY_MSG(json::Value v, r.required(name));
  if (v.type() != type)
    return invalid_message(fmt::format("{}: must be {}", name, type == json::Type::Array ? "an array" : "an object"),
                           v.offset());
  return v;
}

Expected<std::string, MessageError> worker_id_field(json::ObjectReader& r) {
  MW_TRY_MSG(json::Value w, r.required("worker_id"));
  if (!w.is_string() || !is_worker_identity(w.as_string()))
    return invalid_message("worker_id: not a version-1 resolved-worker identity", w.offset());
  return std::string(w.as_string());
}

// A JSON number spelled as plain non-negative digits that fits u32.
std::optional<std::uint32_t> as_u32(json::Value v) {
  if (!v.is_number() || !v.is_integer_spelling()) return std::nullopt;
  auto text = v.number_text();
  if (text.empty() || text[0] == '-' || text.size() > 10) return std::nullopt;
  std::uint64_t n = 0;
  for (char c : text) n = n * 10 + static_cast<std::uint64_t>(c - '0');
  if (n > std::numeric_limits<std::uint32_t>::max()) return std::nullopt;
  return static_cast<std::uint32_t>(n);
}

jcs::Node capabilities_node(std::span<const Capability> caps) {
  jcs::Node out = jcs::Node::array();
  for (Capability c : caps) out.push(jcs::Node::string(std::string(capability_name(c))));
  return out;
}

jcs::Node sdk_node(const std::optional<SdkMetadata>& sdk) {
  if (!sdk) return jcs::Node::null();
  jcs::Node o = jcs::Node::object();
  o.set("name", jcs::Node::string(sdk->name));
  o.set("version", jcs::Node::string(sdk->version));
  return o;
}

std::vector<Capability> protocol_order(std::vector<Capability> caps) {
  std::sort(caps.begin(), caps.end());
  caps.erase(std::unique(caps.begin(), caps.end()), caps.end());
  return caps;
}

Expected<HelloResponse, MessageError> decode_success(json::Value value) {
  json::ObjectReader r(value, "hello response");
  HelloResponse out;
  MW_TRY_FIELD(json::Value caps, container_field(r, "capabilities", json::Type::Array));
  for (json::Value c : caps.elements()) {
    auto cap = c.is_string() ? capability_from_name(c.as_string()) : std::nullopt;
    if (!cap) return invalid_message("capabilities: unknown capability", c.offset());
    if (std::find(out.capabilities.begin(), out.capabilities.end(), *cap) != out.capabilities.end())
      return invalid_message(fmt::format("capabilities: \"{}\" appears twice", capability_name(*cap)), c.offset());
    out.capabilities.push_back(*cap);
  }
  out.capabilities = protocol_order(std::move(out.capabilities));
  MW_TRY_FIELD(out.id, request_id_field(r));
  MW_TRY_MSG(json::Value ok, r.required("ok"));
  if (!ok.is_bool() || !ok.as_bool())
    return invalid_message("ok: a successful hello response requires ok: true", ok.offset());
  MW_TRY_MSG(json::Value protocol, r.required("protocol"));
  auto version = as_u32(protocol);
  if (!version || *version != kWireProtocolVersion)
    return invalid_message("protocol: must be wire-protocol version 1", protocol.offset());
  out.protocol = *version;
  MW_TRY_MSG(json::Value sdk, r.required("sdk"));
  if (!sdk.is_null()) {
    if (!sdk.is_object()) return invalid_message("sdk: must be null or an object", sdk.offset());
    json::ObjectReader sr(sdk, "sdk");
    MW_TRY_MSG(std::string_view name, sr.required_string("name"));
    MW_TRY_MSG(std::string_view version_text, sr.required_string("version"));
    auto fin = sr.finish();
    if (!fin.ok()) return invalid_message(fin.error());
    if (name.empty()) return invalid_message("sdk.name: must not be empty", sdk.offset());
    if (version_text.empty()) return invalid_message("sdk.version: must not be empty", sdk.offset());
    out.sdk = SdkMetadata{std::string(name), std::string(version_text)};
  }
  MW_TRY_FIELD(out.worker_id, worker_id_field(r));
  return finished(r, std::move(out));
}

}  // namespace

std::string_view role_name(WorkerRole role) noexcept { return kRoles[static_cast<std::size_t>(role)]; }

std::optional<WorkerRole> role_from_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kRoles.size(); ++i)
    if (kRoles[i] == name) return static_cast<WorkerRole>(i);
  return std::nullopt;
}

std::string_view capability_name(Capability capability) noexcept {
  return kCapabilities[static_cast<std::size_t>(capability)];
}

std::optional<Capability> capability_from_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kCapabilities.size(); ++i)
    if (kCapabilities[i] == name) return static_cast<Capability>(i);
  return std::nullopt;
}

bool is_worker_identity(std::string_view text) noexcept {
  if (text.substr(0, kResolvedWorkerPrefix.size()) != kResolvedWorkerPrefix) return false;
  return is_sha256_hex(text.substr(kResolvedWorkerPrefix.size()));
}

std::string worker_identity_from_digest(std::string_view sha256_hex) {
  return std::string(kResolvedWorkerPrefix) + std::string(sha256_hex);
}

jcs::Node HelloRequest::to_node() const {
  // Built from the numbers' text: g++ 12 at -O1 with ASan reports a
  // false -Wmaybe-uninitialized when Nodes are pushed in a loop here.
  std::string text = "[";
  for (std::size_t i = 0; i < protocols.size(); ++i) text += (i ? "," : "") + std::to_string(protocols[i]);
  text += "]";
  auto parsed = json::parse(text);
  jcs::Node protos = parsed.ok() ? jcs::Node::from(parsed->root()) : jcs::Node::array();
  jcs::Node o = jcs::Node::object();
  o.set("id", jcs::Node::string(id));
  o.set("method", jcs::Node::string("hello"));
  o.set("protocols", std::move(protos));
  o.set("role", jcs::Node::string(std::string(role_name(role))));
  o.set("worker_id", jcs::Node::string(worker_id));
  return o;
}

Expected<HelloRequest, MessageError> decode_hello_request(json::Value value) {
  json::ObjectReader r(value, "hello request");
  HelloRequest out;
  MW_TRY_FIELD(out.id, request_id_field(r));
  MW_TRY_MSG(json::Value method, r.required("method"));
  if (!method.is_string() || method.as_string() != "hello")
    return invalid_message("method: must be \"hello\"", method.offset());
  MW_TRY_MSG(json::Value protos, r.required("protocols"));
  if (!protos.is_array() || protos.size() == 0)
    return invalid_message("protocols: must be a non-empty array", protos.offset());
  out.protocols.clear();
  for (json::Value p : protos.elements()) {
    auto v = as_u32(p);
    if (!v) return invalid_message("protocols: versions are integers 0..4294967295", p.offset());
    if (std::find(out.protocols.begin(), out.protocols.end(), *v) != out.protocols.end())
      return invalid_message("protocols: versions must be unique", p.offset());
    out.protocols.push_back(*v);
  }
  MW_TRY_MSG(json::Value role, r.required("role"));
  auto parsed_role = role.is_string() ? role_from_name(role.as_string()) : std::nullopt;
  if (!parsed_role) return invalid_message("role: unknown worker role", role.offset());
  out.role = *parsed_role;
  MW_TRY_FIELD(out.worker_id, worker_id_field(r));
  return finished(r, std::move(out));
}

jcs::Node HelloResponse::to_node() const {
  jcs::Node o = jcs::Node::object();
  o.set("capabilities", capabilities_node(protocol_order(capabilities)));
  o.set("id", jcs::Node::string(id));
  o.set("ok", jcs::Node::boolean(true));
  o.set("protocol", jcs::Node::integer(protocol));
  o.set("sdk", sdk_node(sdk));
  o.set("worker_id", jcs::Node::string(worker_id));
  return o;
}

jcs::Node WorkerFailure::to_node() const {
  jcs::Node err = jcs::Node::object();
  err.set("code", jcs::Node::string(code));
  err.set("message", jcs::Node::string(message));
  if (details) err.set("details", *details);
  jcs::Node o = jcs::Node::object();
  o.set("error", std::move(err));
  o.set("id", jcs::Node::string(id));
  o.set("ok", jcs::Node::boolean(false));
  return o;
}

Expected<WorkerFailure, MessageError> decode_worker_failure(json::Value value) {
  json::ObjectReader r(value, "failure response");
  WorkerFailure out;
  MW_TRY_FIELD(json::Value err, container_field(r, "error", json::Type::Object));
  {
    json::ObjectReader er(err, "error");
    MW_TRY_MSG(json::Value code, er.required("code"));
    if (!code.is_string() ||
        std::find(std::begin(kFailureCodes), std::end(kFailureCodes), code.as_string()) == std::end(kFailureCodes))
      return invalid_message("error.code: unknown failure code", code.offset());
    out.code = std::string(code.as_string());
    MW_TRY_MSG(json::Value msg, er.required("message"));
    if (!msg.is_string() || msg.as_string().empty())
      return invalid_message("error.message: must be a non-empty string", msg.offset());
    out.message = std::string(msg.as_string());
    if (auto details = er.optional("details")) {
      if (!details->is_object()) return invalid_message("error.details: must be an object", details->offset());
      out.details = jcs::Node::from(*details);
    }
    auto fin = er.finish();
    if (!fin.ok()) return invalid_message(fin.error());
  }
  MW_TRY_FIELD(out.id, request_id_field(r));
  MW_TRY_MSG(json::Value ok, r.required("ok"));
  if (!ok.is_bool() || ok.as_bool()) return invalid_message("ok: a failure response requires ok: false", ok.offset());
  return finished(r, std::move(out));
}

Expected<HelloReply, MessageError> decode_hello_reply(json::Value value) {
  if (!value.is_object()) return invalid_message("a hello reply must be an object", value.offset());
  auto ok = value.find("ok");
  if (ok && ok->is_bool() && !ok->as_bool()) {
    auto f = decode_worker_failure(value);
    if (!f.ok()) return std::move(f).error();
    return HelloReply(std::move(f).value());
  }
  auto s = decode_success(value);
  if (!s.ok()) return std::move(s).error();
  return HelloReply(std::move(s).value());
}

ErrorKind HandshakeError::error_kind() const noexcept {
  switch (kind) {
    case Kind::MismatchedRequestId:
      return ErrorKind::HelloMismatchedRequestId;
    case Kind::NoCommonProtocol:
      return ErrorKind::NoCommonProtocol;
    case Kind::ProtocolMismatch:
      return ErrorKind::ProtocolMismatch;
    case Kind::WorkerIdentityMismatch:
      return ErrorKind::WorkerIdentityMismatch;
    case Kind::CapabilityForRole:
      return ErrorKind::CapabilityForRole;
    case Kind::ReservedCapability:
      return ErrorKind::ReservedCapability;
    case Kind::MissingCapability:
      return ErrorKind::MissingCapability;
  }
  return ErrorKind::HelloMismatchedRequestId;
}

std::string_view HandshakeError::name() const noexcept { return dot::Kind(error_kind()).name(); }

std::string HandshakeError::message() const {
  std::string_view cap = capability ? capability_name(*capability) : std::string_view("?");
  switch (kind) {
    case Kind::MismatchedRequestId:
      return fmt::format("response id \"{}\" does not match the hello request \"{}\"", actual, expected);
    case Kind::NoCommonProtocol:
      return fmt::format("no common protocol version: offered [{}], supported [1]", actual);
    case Kind::ProtocolMismatch:
      return fmt::format("the worker reported protocol {}, but protocol {} was selected", actual, expected);
    case Kind::WorkerIdentityMismatch:
      return fmt::format("worker identity \"{}\" does not match the expected \"{}\"", actual, expected);
    case Kind::CapabilityForRole:
      return fmt::format(
          "capability \"{}\" was selected for a {} worker; only implementation workers take capabilities", cap,
          role_name(role));
    case Kind::ReservedCapability:
      return fmt::format("capability \"{}\" is reserved in version 1 and cannot be selected", cap);
    case Kind::MissingCapability:
      return fmt::format("the worker did not report the selected capability \"{}\"", cap);
  }
  return {};
}

Error HandshakeError::to_error() const { return make_error(error_kind(), message()); }

jcs::Node NegotiatedSession::to_node() const {
  jcs::Node o = jcs::Node::object();
  o.set("capabilities", capabilities_node(reported));
  o.set("protocol", jcs::Node::integer(protocol));
  o.set("role", jcs::Node::string(std::string(role_name(role))));
  o.set("sdk", sdk_node(sdk));
  o.set("selected", capabilities_node(selected));
  o.set("worker_id", jcs::Node::string(worker_id));
  return o;
}

Expected<std::uint32_t, HandshakeError> negotiate_protocol(std::span<const std::uint32_t> offered) {
  if (std::find(offered.begin(), offered.end(), kWireProtocolVersion) != offered.end()) return kWireProtocolVersion;
  HandshakeError e;
  e.kind = HandshakeError::Kind::NoCommonProtocol;
  for (std::size_t i = 0; i < offered.size(); ++i) e.actual += fmt::format("{}{}", i ? "," : "", offered[i]);
  return e;
}

Expected<NegotiatedSession, HandshakeError> validate_hello_response(const HelloRequest& request,
                                                                    const HelloResponse& response,
                                                                    std::span<const Capability> selected) {
  using K = HandshakeError::Kind;
  if (response.id != request.id)
    return HandshakeError{.kind = K::MismatchedRequestId, .expected = request.id, .actual = response.id};
  auto protocol = negotiate_protocol(request.protocols);
  if (!protocol.ok()) return std::move(protocol).error();
  if (response.protocol != *protocol)
    return HandshakeError{.kind = K::ProtocolMismatch,
                          .expected = std::to_string(*protocol),
                          .actual = std::to_string(response.protocol)};
  if (response.worker_id != request.worker_id)
    return HandshakeError{
        .kind = K::WorkerIdentityMismatch, .expected = request.worker_id, .actual = response.worker_id};
  std::vector<Capability> chosen = protocol_order(std::vector<Capability>(selected.begin(), selected.end()));
  if (!chosen.empty() && request.role != WorkerRole::Implementation)
    return HandshakeError{.kind = K::CapabilityForRole, .capability = chosen.front(), .role = request.role};
  for (Capability c : chosen)
    if (c != Capability::OneShot) return HandshakeError{.kind = K::ReservedCapability, .capability = c};
  for (Capability c : chosen)
    if (std::find(response.capabilities.begin(), response.capabilities.end(), c) == response.capabilities.end())
      return HandshakeError{.kind = K::MissingCapability, .capability = c};
  NegotiatedSession out;
  out.role = request.role;
  out.protocol = *protocol;
  out.worker_id = response.worker_id;
  out.sdk = response.sdk;
  out.selected = std::move(chosen);
  out.reported = protocol_order(response.capabilities);
  return out;
}

}  // namespace dot::metewand

namespace dot::metewand {

std::optional<ErrorKind> failure_kind(std::string_view code) noexcept {
  for (ErrorKind k : {ErrorKind::FailureInvalidRequest, ErrorKind::FailureUnsupportedOperation,
                      ErrorKind::FailureOperationFailed, ErrorKind::FailureInternalError})
    if (kind_row(k).name == code) return k;
  return std::nullopt;
}

}  // namespace dot::metewand
