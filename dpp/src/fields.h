#pragma once
// The typed field readers and writers every DPP message decoder and encoder
// of this library shares (hello and general profile alike), so that one rule
// says what a "non-negative integer" or an "array of strings" is on the wire.
// Errors are Code::Protocol with the kinds of messages.h and the offset of the
// offending value. Internal to dot_dpp.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "dot/base/jcs.h"
#include "dot/base/json.h"
#include "dot/base/result.h"
#include "dot/dpp/error_kinds.h"
#include "dot/dpp/jsonrpc.h"
#include "dot/dpp/messages.h"

namespace dot::dpp::fields {

// Integers are bounded by what JCS can carry exactly (2^53 - 1).
inline constexpr std::uint64_t kMaxSafe = (std::uint64_t{1} << 53) - 1;

Error wrong_type(json::Value v, std::string_view what, std::string_view expected);
Result<std::string> string_field(json::ObjectReader& r, std::string_view name, std::string_view what);
// Plain digits (no sign, fraction, exponent or leading zero), at most `max`.
Result<std::uint64_t> uint_field(json::ObjectReader& r, std::string_view name, std::string_view what,
                                 std::uint64_t max);
Result<bool> bool_field(json::ObjectReader& r, std::string_view name, std::string_view what);
Result<json::Value> array_field(json::ObjectReader& r, std::string_view name, std::string_view what);
// An array member of at most `max` elements (the negotiated limit `kind`),
// counted with `earlier` elements of the same list sent in earlier batches:
// the count is judged first, so nothing is built for an array over it
// (Code::Protocol, kind `kind`, at the array).
Result<json::Value> array_field(json::ObjectReader& r, std::string_view name, std::string_view what, std::uint64_t max,
                                ErrorKind kind, std::uint64_t earlier = 0);
Result<std::vector<std::string>> string_array_field(json::ObjectReader& r, std::string_view name,
                                                    std::string_view what);
// "effects": [{failure_policy, kind, target}], the one effect shape of both profiles.
Result<std::vector<EffectRequest>> effects_field(json::ObjectReader& r, std::string_view what);
// kind not_object when `v` is not an object.
Result<json::ObjectReader> object(json::Value v, std::string_view what);
// unknown_field for the first member nobody asked for.
Status finish(const json::ObjectReader& r);

// A message that is one object, `what`: `read(r, what, m)` reads its members
// into a T (a member missing or of the wrong type fails there), then finish()
// refuses any member left. The shape of every object message of both profiles.
template <typename T, typename Read>
Result<T> decode_object(json::Value v, std::string_view what, Read read) {
  DOT_ASSIGN_OR_RETURN(auto r, object(v, what));
  T m;
  DOT_TRY(read(r, what, m));
  DOT_TRY(finish(r));
  return m;
}

// Each element of `array` as an object named "NOUN i" ("operation 3"):
// `read(r, what, element, item)` reads its members into a new T, finish()
// refuses any member left, `then(item, element, what)` judges the whole item,
// and it is appended to `out`. The shape of every array of objects of both
// profiles (folders, operations, effects, artifacts).
template <typename T, typename Read, typename Then>
Status decode_objects(json::Value array, std::string_view noun, std::vector<T>& out, Read read, Then then,
                      std::size_t handed_on = 0) {
  // Numbered in the whole list: `out` holds what earlier batches sent, after
  // the `handed_on` elements already passed on from it (Batched::handed_on).
  std::size_t i = handed_on + out.size();
  for (json::Value e : array.elements()) {
    std::string what = fmt::format("{} {}", noun, i++);
    DOT_ASSIGN_OR_RETURN(auto r, object(e, what));
    T item;
    DOT_TRY(read(r, what, e, item));
    DOT_TRY(finish(r));
    DOT_TRY(then(item, e, what));
    out.push_back(std::move(item));
  }
  return {};
}
template <typename T, typename Read>
Status decode_objects(json::Value array, std::string_view noun, std::vector<T>& out, Read read,
                      std::size_t handed_on = 0) {
  return decode_objects(
      array, noun, out, read, [](const T&, json::Value, std::string_view) { return Status{}; }, handed_on);
}

// Plugin-supplied text in a detail line: its first 80 bytes through the one
// escaper (dot::shown), then "..." if there was more. A detail must stay one
// short line however much the plugin sent.
std::string excerpt(std::string_view s);

// ["a","b"] for a detail line (core's own strings).
std::string list(const std::vector<std::string>& v);

// ---- dot.initialize: the members both profiles share (messages.cpp) ----
// The general profile (general.cpp) reads its inputs and limits after them,
// so the hello profile's members are read by one rule in both.
Status read_initialize_params(json::ObjectReader& r, std::string_view what, InitializeParams& m);
// `wrap(result, member)` sees each member's read and returns it or another
// error: the general profile judges a missing echo member as a wrong echo.
template <typename Wrap>
Status read_initialize_result(json::ObjectReader& r, std::string_view what, InitializeResult& m, Wrap wrap) {
  DOT_ASSIGN_OR_RETURN(m.assurance, wrap(string_field(r, "assurance", what), ErrorKind::EchoedAssurance));
  DOT_ASSIGN_OR_RETURN(m.capabilities,
                       wrap(string_array_field(r, "capabilities", what), ErrorKind::EchoedCapabilities));
  DOT_ASSIGN_OR_RETURN(m.id, wrap(string_field(r, "id", what), ErrorKind::EchoedId));
  DOT_ASSIGN_OR_RETURN(m.nonce, wrap(string_field(r, "nonce", what), ErrorKind::EchoedNonce));
  DOT_ASSIGN_OR_RETURN(m.profile, wrap(string_field(r, "profile", what), ErrorKind::EchoedProfile));
  DOT_ASSIGN_OR_RETURN(m.protocol, wrap(uint_field(r, "protocol", what, kMaxSafe), ErrorKind::EchoedProtocol));
  return {};
}

// ---- the identity echo both profiles check (DOT_E_PLUGIN_IDENTITY) ----
struct SentIdentity {
  std::uint64_t protocol;
  std::string_view profile, assurance, nonce;
};
struct EchoedIdentity {
  std::string_view id;
  std::uint64_t protocol;
  std::string_view profile, assurance, nonce;
};
// id (against the manifest), protocol, profile, assurance, nonce, in that order.
Status check_echo(const SentIdentity& sent, const EchoedIdentity& echo, std::string_view manifest_id);
// `got` equals `want` element by element, same order; details show `sent`
// (what core offered).
Status check_capabilities(const std::vector<std::string>& got, const std::vector<std::string>& want,
                          const std::vector<std::string>& sent);

// ---- the JSON-RPC envelope (jsonrpc.cpp) ----
// The members of an envelope object, read in one pass by every reader of
// requests, responses and notifications (host and plugin side).
struct Envelope {
  std::optional<json::Value> version, id, result, error, method, params;
  std::optional<json::Member> unknown;  // the first member the reader does not accept
};
// Which members a reader accepts; any other is Envelope::unknown.
enum EnvelopeMember : unsigned {
  kJsonrpcMember = 1U << 0,
  kIdMember = 1U << 1,
  kResultMember = 1U << 2,
  kErrorMember = 1U << 3,
  kMethodMember = 1U << 4,
  kParamsMember = 1U << 5,
};
inline constexpr unsigned kRequestMembers = kJsonrpcMember | kIdMember | kMethodMember | kParamsMember;
inline constexpr unsigned kAnyMember = kRequestMembers | kResultMember | kErrorMember;
// `object` must be a JSON object.
Envelope read_envelope(json::Value object, unsigned accepted);
// Code::Protocol kind unknown_field: `m` in `what` ("the request", ...).
Error unknown_member(const json::Member& m, std::string_view what);

// A response's envelope, as both profiles read it: not a batch, an object,
// no member outside the envelope (kinds batch, not_object, unknown_field);
// `what` is "response to METHOD", for the messages.
Result<Envelope> read_response_envelope(json::Value root, std::string_view what);

// The rules both profiles apply to a response's members: "jsonrpc" present
// and "2.0", an id present, no error for id null, the id the one expected,
// never both result and error (kinds missing_field, jsonrpc_version, id,
// id_mismatch, unknown_field).
Status check_response_envelope(json::Value root, const Envelope& m, std::uint64_t expected_id, Method method);

// A JSON array of strings, each checked and written into the text as the
// tree is encoded (under RFC 8785, every DPP message's form): one piece, not
// a node per string (48 bytes beside each string, for the 100,000 paths of
// a managed list or of dot.materialize's params). The node owns the strings
// (its copies share them).
jcs::Node string_array(std::vector<std::string> strings);
// The same of a list the caller keeps (core's own requests: the paths its
// plan or its managed list holds, never copied): the node refers to the
// strings; encode it while they live.
jcs::Node string_array(std::span<const std::string_view> strings);
jcs::Node string_array(std::span<const std::string> strings);
jcs::Node uint_node(std::uint64_t v);

// ---- dot.materialize's result, one codec for both profiles ----
// {"artifacts": [{KEY, "sha256", "size"}, ...]}: the hello profile names a
// staged file by KEY "name", the general profile by "path". `file` is the
// member of the profile's artifact type A that KEY carries.
template <typename A>
struct ArtifactKey {
  std::string_view key;
  std::string A::*file;
};

template <typename A>
jcs::Node artifact_node(const A& a, ArtifactKey<A> k) {
  auto n = jcs::Node::object();
  n.set(std::string(k.key), jcs::Node::string(a.*k.file))
      .set("sha256", jcs::Node::string(a.sha256))
      .set("size", uint_node(a.size));
  return n;
}

template <typename A>
jcs::Node artifacts_node(const std::vector<A>& artifacts, ArtifactKey<A> k) {
  auto arts = jcs::Node::array();
  for (const A& a : artifacts) arts.push(artifact_node(a, k));
  auto n = jcs::Node::object();
  n.set("artifacts", std::move(arts));
  return n;
}

// With `max_count`, more artifacts than that (with the `earlier` ones of
// batches before, and the `handed_on` ones passed on from them) are refused
// before any is decoded (kind max_operations); `each(artifact, value, what)`
// judges every artifact once its fields are read (the general profile's
// byte limits). `what` names the message: a dot.materialize result, or the
// params of a dot.artifacts batch (the same shape).
template <typename A, typename Each>
Result<std::vector<A>> decode_artifacts(json::Value v, ArtifactKey<A> k, std::optional<std::uint64_t> max_count,
                                        Each each, std::vector<A> earlier = {},
                                        std::string_view what = "dot.materialize result", std::size_t handed_on = 0) {
  DOT_ASSIGN_OR_RETURN(auto r, object(v, what));
  DOT_ASSIGN_OR_RETURN(json::Value arts, max_count ? array_field(r, "artifacts", what, *max_count,
                                                                 ErrorKind::MaxOperations, handed_on + earlier.size())
                                                   : array_field(r, "artifacts", what));
  std::vector<A> out = std::move(earlier);
  // Reserved once: growing by each batch's count would copy the list every batch.
  if (max_count && out.empty()) out.reserve(arts.size());
  auto read = [&k](json::ObjectReader& ar, std::string_view aw, json::Value, A& art) -> Status {
    DOT_ASSIGN_OR_RETURN(art.*k.file, string_field(ar, k.key, aw));
    DOT_ASSIGN_OR_RETURN(art.sha256, string_field(ar, "sha256", aw));
    DOT_ASSIGN_OR_RETURN(art.size, uint_field(ar, "size", aw, kMaxSafe));
    return {};
  };
  DOT_TRY(decode_objects(arts, "artifact", out, read, each, handed_on));
  DOT_TRY(finish(r));
  return out;
}

// Unbounded but by the frame, each artifact judged later (the hello profile:
// hello.h check_artifacts holds the names to the plan).
template <typename A>
Result<std::vector<A>> decode_artifacts(json::Value v, ArtifactKey<A> k) {
  return decode_artifacts(v, k, std::nullopt, [](const A&, json::Value, std::string_view) { return Status{}; });
}

}  // namespace dot::dpp::fields
