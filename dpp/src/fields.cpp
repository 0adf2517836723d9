// The typed field readers and writers every DPP message codec shares (fields.h).
#include "fields.h"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "dot/base/utf8.h"
#include "dot/dpp/error_kinds.h"
#include "dot/dpp/jsonrpc.h"

namespace dot::dpp::fields {

Error wrong_type(json::Value v, std::string_view what, std::string_view expected) {
  return make_parse_error_as(Code::Protocol, base::ErrorKind::WrongType, v.offset(),
                             fmt::format("{} must be {}", what, expected));
}

Result<std::string> string_field(json::ObjectReader& r, std::string_view name, std::string_view what) {
  auto v = r.required(name);
  if (!v.ok()) return as_protocol(v.error());
  if (!v->is_string()) return wrong_type(*v, fmt::format("{} field \"{}\"", what, name), "a string");
  return std::string(v->as_string());
}

Result<std::uint64_t> uint_field(json::ObjectReader& r, std::string_view name, std::string_view what,
                                 std::uint64_t max) {
  auto v = r.required(name);
  if (!v.ok()) return as_protocol(v.error());
  if (!v->is_number() || !v->is_integer_spelling() || v->number_text()[0] == '-' ||
      (v->number_text().size() > 1 && v->number_text()[0] == '0'))
    return wrong_type(*v, fmt::format("{} field \"{}\"", what, name), "a non-negative integer");
  std::uint64_t out = 0;
  for (char c : v->number_text()) {
    if (out > (max - static_cast<std::uint64_t>(c - '0')) / 10)
      return wrong_type(*v, fmt::format("{} field \"{}\"", what, name), fmt::format("at most {}", max));
    out = out * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return out;
}

Result<bool> bool_field(json::ObjectReader& r, std::string_view name, std::string_view what) {
  auto v = r.required(name);
  if (!v.ok()) return as_protocol(v.error());
  if (!v->is_bool()) return wrong_type(*v, fmt::format("{} field \"{}\"", what, name), "true or false");
  return v->as_bool();
}

Result<json::Value> array_field(json::ObjectReader& r, std::string_view name, std::string_view what) {
  auto v = r.required(name);
  if (!v.ok()) return as_protocol(v.error());
  if (!v->is_array()) return wrong_type(*v, fmt::format("{} field \"{}\"", what, name), "an array");
  return v;
}

Result<json::Value> array_field(json::ObjectReader& r, std::string_view name, std::string_view what, std::uint64_t max,
                                ErrorKind kind, std::uint64_t earlier) {
  DOT_ASSIGN_OR_RETURN(json::Value arr, array_field(r, name, what));
  // earlier <= max (each batch was held to it) and a frame holds far fewer
  // than 2^64 elements: the sum cannot wrap.
  if (earlier + arr.size() > max) {
    if (earlier == 0)
      return make_parse_error(kind, arr.offset(),
                              fmt::format("the {} holds {} {}; the negotiated limit is {} ({})", what, arr.size(), name,
                                          max, Kind(kind).name()));
    return make_parse_error(kind, arr.offset(),
                            fmt::format("the {} holds {} {} after {} in earlier batches; the negotiated limit is {} "
                                        "in all ({})",
                                        what, arr.size(), name, earlier, max, Kind(kind).name()));
  }
  return arr;
}

Result<std::vector<std::string>> string_array_field(json::ObjectReader& r, std::string_view name,
                                                    std::string_view what) {
  DOT_ASSIGN_OR_RETURN(json::Value arr, array_field(r, name, what));
  std::vector<std::string> out;
  std::size_t i = 0;
  for (json::Value e : arr.elements()) {
    if (!e.is_string()) return wrong_type(e, fmt::format("{} field \"{}\" element {}", what, name, i), "a string");
    out.emplace_back(e.as_string());
    ++i;
  }
  return out;
}

Result<json::ObjectReader> object(json::Value v, std::string_view what) {
  if (!v.is_object())
    return make_parse_error(dpp::ErrorKind::NotObject, v.offset(), fmt::format("{} must be an object", what));
  return json::ObjectReader(v, what);
}

Status finish(const json::ObjectReader& r) {
  auto st = r.finish();
  if (!st.ok()) return as_protocol(st.error());
  return {};
}

namespace {
template <class Strings>
Status write_string_array(std::string& out, const Strings& strings) {
  out += '[';
  bool first = true;
  for (const auto& s : strings) {
    if (!first) out += ',';
    first = false;
    DOT_TRY(jcs::encode_string_to(out, s, jcs::Profile::Rfc8785));
  }
  out += ']';
  return {};
}
}  // namespace

jcs::Node string_array(std::vector<std::string> strings) {
  auto owned = std::make_shared<const std::vector<std::string>>(std::move(strings));
  return jcs::Node::written([owned](std::string& out) { return write_string_array(out, *owned); },
                            jcs::Profile::Rfc8785);
}

jcs::Node string_array(std::span<const std::string_view> strings) {
  return jcs::Node::written([strings](std::string& out) { return write_string_array(out, strings); },
                            jcs::Profile::Rfc8785);
}

jcs::Node string_array(std::span<const std::string> strings) {
  return jcs::Node::written([strings](std::string& out) { return write_string_array(out, strings); },
                            jcs::Profile::Rfc8785);
}

jcs::Node uint_node(std::uint64_t v) { return jcs::Node::integer(static_cast<std::int64_t>(v)); }

std::string excerpt(std::string_view s) {
  constexpr std::size_t kMax = 80;
  std::string out = dot::shown(s.substr(0, kMax));
  if (s.size() > kMax) out += "...";
  return out;
}

Result<std::vector<EffectRequest>> effects_field(json::ObjectReader& r, std::string_view what) {
  DOT_ASSIGN_OR_RETURN(json::Value effects, array_field(r, "effects", what));
  std::vector<EffectRequest> out;
  DOT_TRY(decode_objects(effects, "effect", out,
                         [](json::ObjectReader& er, std::string_view ew, json::Value, EffectRequest& eff) -> Status {
                           DOT_ASSIGN_OR_RETURN(eff.failure_policy, string_field(er, "failure_policy", ew));
                           DOT_ASSIGN_OR_RETURN(eff.kind, string_field(er, "kind", ew));
                           DOT_ASSIGN_OR_RETURN(eff.target, string_field(er, "target", ew));
                           return {};
                         }));
  return out;
}

std::string list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += fmt::format("{}\"{}\"", i ? "," : "", v[i]);
  return out + "]";
}

namespace {
Error identity(ErrorKind kind, std::string detail) { return make_error(kind, std::move(detail)); }
}  // namespace

Status check_echo(const SentIdentity& sent, const EchoedIdentity& echo, std::string_view manifest_id) {
  if (echo.id != manifest_id)
    return identity(dpp::ErrorKind::EchoedId, fmt::format("the plugin says it is \"{}\", the manifest names \"{}\"",
                                                          excerpt(echo.id), manifest_id));
  if (echo.protocol != sent.protocol)
    return identity(dpp::ErrorKind::EchoedProtocol,
                    fmt::format("the plugin echoed protocol {}, core sent {}", echo.protocol, sent.protocol));
  if (echo.profile != sent.profile)
    return identity(dpp::ErrorKind::EchoedProfile, fmt::format("the plugin echoed profile \"{}\", core sent \"{}\"",
                                                               excerpt(echo.profile), sent.profile));
  if (echo.assurance != sent.assurance)
    return identity(dpp::ErrorKind::EchoedAssurance,
                    fmt::format("the plugin echoed assurance \"{}\", core requires \"{}\"", excerpt(echo.assurance),
                                sent.assurance));
  if (echo.nonce != sent.nonce) return identity(dpp::ErrorKind::EchoedNonce, "the plugin echoed a different nonce");
  return {};
}

Status check_capabilities(const std::vector<std::string>& got, const std::vector<std::string>& want,
                          const std::vector<std::string>& sent) {
  for (std::size_t i = 0; i < std::max(got.size(), want.size()); ++i) {
    if (i >= got.size())
      return identity(
          dpp::ErrorKind::EchoedCapabilities,
          fmt::format("the plugin dropped capability \"{}\" (position {}); core sent {}", want[i], i, list(sent)));
    if (i >= want.size())
      return identity(dpp::ErrorKind::EchoedCapabilities,
                      fmt::format("the plugin added capability \"{}\" (position {}); core sent {}", excerpt(got[i]), i,
                                  list(sent)));
    if (got[i] != want[i])
      return identity(dpp::ErrorKind::EchoedCapabilities,
                      fmt::format("capability {} is \"{}\", core sent \"{}\" there (order matters); core sent {}", i,
                                  excerpt(got[i]), want[i], list(sent)));
  }
  return {};
}

}  // namespace dot::dpp::fields
