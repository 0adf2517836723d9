// The general profile's message layer (dot/dpp/general.h) over arbitrary
// frame bodies: the host's reply envelope for each request, the typed
// decoders of every message (results, params, dot.log, error objects), and
// the echo check. Deterministic oracles:
//   - every refusal is DOT_E_PROTOCOL, except the echo's missing or added
//     members (DOT_E_PLUGIN_IDENTITY) and check_identity's verdicts;
//   - whatever decodes re-encodes canonically and decodes to the same value;
//   - a decoded plan or materialize result respects the limits it was
//     decoded with (checked here again from the values, not from the code);
//   - declared digests (sha256, size) appear exactly on the writes of a plan
//     decoded with digests, as 64 lowercase hex within the byte limits;
//     dot.materialize params name at most max_operations paths, and core's
//     request from views of them is the same text; a batch of artifacts
//     handed on is judged by the limits as one kept;
//   - a decoded dot.log has one of the four levels and at most 4096 bytes;
//     an error object's message and canonical data at most 4096 bytes, its
//     code within +-(2^53 - 1), and its data canonical text that parses back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/jcs.h"
#include "dot/dpp/body.h"
#include "dot/dpp/general.h"
#include "dot/dpp/jsonrpc.h"

namespace {

namespace g = dot::dpp::general;

constexpr std::int64_t kMaxSafe = (std::int64_t{1} << 53) - 1;

void check(bool ok) {
  if (!ok) std::abort();
}

// A refusal must carry one of the allowed codes.
template <typename T>
bool refused(const dot::Result<T>& r, bool identity_allowed = false) {
  if (r.ok()) return false;
  check(r.error().code == dot::Code::Protocol || (identity_allowed && r.error().code == dot::Code::PluginIdentity));
  return true;
}

// to_node of a dot.plan result encodes its operations as it goes (a Result).
dot::Result<dot::jcs::Node> as_result(dot::jcs::Node n) { return n; }
dot::Result<dot::jcs::Node> as_result(dot::Result<dot::jcs::Node> n) { return n; }

template <typename T, typename Decode>
void round_trip(const T& value, Decode decode) {
  auto node = as_result(g::to_node(value));
  check(node.ok());  // what decoded is valid UTF-8
  auto bytes = dot::jcs::encode(*node, dot::jcs::Profile::Rfc8785);
  if (!bytes.ok()) return;  // e.g. integers the canonical form cannot carry
  auto doc = dot::dpp::parse_body(*bytes, 0, g::kLimits.max_frame_bytes);
  check(doc.ok());
  auto again = decode(doc->root());
  check(again.ok() && *again == value);
}

// Small limits too, so that the count and claim checks are reached by small inputs.
constexpr g::Limits kSmall{.deadline_ms = 1,
                           .max_frame_bytes = 4096,
                           .max_stdout_bytes = 4096,
                           .max_stderr_bytes = 1,
                           .max_operations = 3,
                           .max_file_bytes = 100,
                           .max_total_bytes = 150,
                           .max_log_messages = 1};

// Batches: the operations of a decoded plan sent again as two dot.operations
// batches ahead of the same result. The list is the three in order when
// the limits allow it, and refused by them otherwise (max_operations, or
// the claims' bytes), counted over the whole list.
void batches_of(const g::PlanResult& plan, dot::json::Value result, const g::Limits& l, bool digests) {
  auto frame = g::encode_operations_batch(plan.operations);
  check(frame.ok());
  auto doc = dot::dpp::parse_body(*frame, 0, 1u << 30);
  check(doc.ok());
  auto params = doc->root().find("params");
  check(params.has_value());
  g::Batched<g::Operation> ops;
  std::uint64_t declared = 0;
  for (const auto& op : plan.operations) declared += op.digest ? op.digest->size : 0;
  for (int batch = 1; batch <= 2; ++batch) {
    auto st = g::decode_operations_batch(*params, l, digests, ops);
    const bool fits = plan.operations.size() * static_cast<std::size_t>(batch) <= l.max_operations &&
                      declared * static_cast<std::uint64_t>(batch) <= l.max_total_bytes;
    check(st.ok() == fits);
    if (!st.ok()) {
      check(st.error().code == dot::Code::Protocol);
      return;
    }
    check(ops.items.size() == plan.operations.size() * static_cast<std::size_t>(batch));
    check(ops.claimed_bytes == declared * static_cast<std::uint64_t>(batch));
  }
  auto whole = g::decode_plan_result(result, l, digests, ops);
  const bool fits = plan.operations.size() * 3 <= l.max_operations && declared * 3 <= l.max_total_bytes;
  check(whole.ok() == fits);
  if (!whole.ok()) return;
  check(whole->operations.size() == plan.operations.size() * 3);
  for (std::size_t i = 0; i < whole->operations.size(); ++i)
    check(whole->operations[i] == plan.operations[i % plan.operations.size()]);
}

void results(dot::json::Value v, dot::dpp::Method m) {
  using dot::dpp::Method;
  switch (m) {
    case Method::Initialize: {
      auto r = g::decode_initialize_result(v);
      if (refused(r, true)) return;
      round_trip(*r, g::decode_initialize_result);
      auto sent = g::initialize_params("audit", std::string(64, 'a'), {"/in"});
      auto verdict = g::check_identity(sent, *r, "org.dot.mirror");
      if (!verdict.ok()) check(verdict.error().code == dot::Code::PluginIdentity);
      return;
    }
    case Method::Plan:
      for (const g::Limits& l : {g::kLimits, kSmall})
        for (bool digests : {false, true}) {
          auto r = g::decode_plan_result(v, l, digests);
          if (refused(r)) continue;
          check(r->operations.size() <= l.max_operations);
          // Declared digests: on every write and nothing else with them, never
          // without; 64 lowercase hex; sizes within the byte limits.
          std::uint64_t total = 0;
          for (const auto& op : r->operations) {
            check(op.digest.has_value() == (digests && op.action == "write"));
            if (!op.digest) continue;
            check(op.digest->sha256.size() == 64 &&
                  op.digest->sha256.find_first_not_of("0123456789abcdef") == std::string::npos);
            check(op.digest->size <= l.max_file_bytes);
            total += op.digest->size;
          }
          check(total <= l.max_total_bytes);
          round_trip(*r, [&l, digests](dot::json::Value x) { return g::decode_plan_result(x, l, digests); });
          batches_of(*r, v, l, digests);
        }
      return;
    case Method::Materialize:
      for (const g::Limits& l : {g::kLimits, kSmall}) {
        auto r = g::decode_materialize_result(v, l);
        if (refused(r)) continue;
        check(r->artifacts.size() <= l.max_operations);
        std::uint64_t total = 0;
        for (const auto& a : r->artifacts) {
          check(a.size <= l.max_file_bytes);
          total += a.size;
        }
        check(total <= l.max_total_bytes);
        round_trip(*r, [&l](dot::json::Value x) { return g::decode_materialize_result(x, l); });
        // The same value as the params of a dot.artifacts batch (the same
        // shape), then as the result after it: twice the list, or refused
        // by the limits over both.
        g::Batched<g::Artifact> arts;
        check(g::decode_artifacts_batch(v, l, arts).ok());
        check(arts.items == r->artifacts && arts.claimed_bytes == total);
        g::Batched<g::Artifact> handed = arts;
        auto twice = g::decode_materialize_result(v, l, std::move(arts));
        const bool fits_twice = r->artifacts.size() * 2 <= l.max_operations && total * 2 <= l.max_total_bytes;
        check(twice.ok() == fits_twice);
        // The batch handed on to a sink (HostSession's): counted, not
        // kept; the limits judge the same, the result keeps only its part.
        handed.handed_on = handed.items.size();
        handed.items.clear();
        auto rest = g::decode_materialize_result(v, l, std::move(handed));
        check(rest.ok() == fits_twice);
        if (rest.ok()) check(rest->artifacts == r->artifacts);
      }
      return;
    default: return;
  }
}

void error_object(const g::ErrorObject& e) {
  check(e.code >= -kMaxSafe && e.code <= kMaxSafe);
  check(e.message.size() <= g::kMaxErrorMessageBytes);
  if (e.data) {
    check(e.data->size() <= g::kMaxErrorDataBytes);
    auto data = dot::json::parse(*e.data);
    check(data.ok());
    auto again = dot::jcs::canonicalize(data->root(), dot::jcs::Profile::Rfc8785);
    check(again.ok() && *again == *e.data);
  }
  // What the runtime would send back for it decodes to the same object.
  auto body = g::encode_error_response(std::nullopt, e);
  check(body.ok());
  auto doc = dot::dpp::parse_body(*body, 0, g::kLimits.max_frame_bytes);
  check(doc.ok());
  auto back = g::decode_error_object(*doc->root().find("error"));
  check(back.ok() && *back == e);
}

void log_params(const g::LogParams& p) {
  check(p.level == "debug" || p.level == "info" || p.level == "warning" || p.level == "error");
  check(p.message.size() <= g::kMaxLogMessageBytes);
  round_trip(p, g::decode_log_params);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  auto doc = dot::dpp::parse_body(body, 0, g::kLimits.max_frame_bytes);
  if (!doc.ok()) return 0;
  using dot::dpp::Method;
  for (Method m : {Method::Initialize, Method::Plan, Method::Materialize, Method::Validate, Method::Shutdown}) {
    auto reply = g::decode_reply(*doc, dot::dpp::method_id(m), m);
    if (refused(reply)) continue;
    switch (reply->kind) {
      case g::Reply::Kind::Result: results(reply->result, m); break;
      case g::Reply::Kind::Error: error_object(reply->error); break;
      case g::Reply::Kind::Notification: {
        auto p = g::decode_log_params(reply->params);
        if (!refused(p)) log_params(*p);
        break;
      }
    }
  }
  // The same body as params, the plugin's side of each message.
  dot::json::Value root = doc->root();
  auto ip = g::decode_initialize_params(root);
  if (!refused(ip)) round_trip(*ip, g::decode_initialize_params);
  auto pp = g::decode_plan_params(root);
  if (!refused(pp)) round_trip(*pp, g::decode_plan_params);
  for (const g::Limits& l : {g::kLimits, kSmall}) {
    auto mp = g::decode_materialize_params(root, l);
    if (refused(mp)) continue;
    check(!mp->paths || mp->paths->size() <= l.max_operations);
    round_trip(*mp, [&l](dot::json::Value x) { return g::decode_materialize_params(x, l); });
    // Core's request from views of its paths is the same text.
    std::vector<std::string_view> views;
    if (mp->paths) views.assign(mp->paths->begin(), mp->paths->end());
    const auto asked = mp->paths ? std::optional<std::span<const std::string_view>>(views) : std::nullopt;
    auto from_views = dot::jcs::encode(g::materialize_params_node(asked, mp->stage), dot::jcs::Profile::Rfc8785);
    auto from_strings = dot::jcs::encode(g::to_node(*mp), dot::jcs::Profile::Rfc8785);
    check(from_views.ok() == from_strings.ok());
    if (from_views.ok()) check(*from_views == *from_strings);
  }
  auto lp = g::decode_log_params(root);
  if (!refused(lp)) log_params(*lp);
  auto eo = g::decode_error_object(root);
  if (!refused(eo)) error_object(*eo);
  results(root, Method::Initialize);
  results(root, Method::Plan);
  results(root, Method::Materialize);
  return 0;
}
