// The general profile org.dot.dpp/v1's messages: strict decoders and canonical encoders (general.h).
#include "dot/dpp/general.h"
#include "dot/dpp/error_kinds.h"

// See messages.cpp: g++ 12 at -O1 with sanitizers reports a false
// -Wmaybe-uninitialized inside std::variant's move of jcs::Node.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "dot/base/sha256.h"
#include "fields.h"

namespace dot::dpp::general {
namespace {

using namespace fields;

Error at(json::Value v, ErrorKind kind, std::string detail) {
  return make_parse_error(kind, v.offset(), std::move(detail));
}

// The object readers' kinds (missing_field, unknown_field...), reported under the wire's code.
[[maybe_unused]] Error at(json::Value v, base::ErrorKind kind, std::string detail) {
  return make_parse_error_as(Code::Protocol, kind, v.offset(), std::move(detail));
}

Error identity(ErrorKind kind, std::string detail) { return make_error(kind, std::move(detail)); }

// The echo is judged against what core sent: a member missing from it or
// added to it (at the top or inside limits) is a wrong echo like a changed
// value, DOT_E_PLUGIN_IDENTITY with the member as kind ("limits" for one of
// the limits, "echo" for an added top-level member); a value of the wrong
// JSON type stays a shape error (DOT_E_PROTOCOL).
Error echo_error(Error e, ErrorKind kind) {
  if (e.code == Code::Protocol && (e.is(base::ErrorKind::MissingField) || e.is(base::ErrorKind::UnknownField))) {
    e.kind = kind;
    e.code = e.kind.row()->code;
  }
  return e;
}

template <typename T>
Result<T> echoed(Result<T> r, ErrorKind kind) {
  if (!r.ok()) return echo_error(std::move(r).error(), kind);
  return r;
}

Status echoed(Status st, ErrorKind kind) {
  if (!st.ok()) return echo_error(st.error(), kind);
  return st;
}

// The general profile names a staged file by its "path" beneath the root.
constexpr ArtifactKey<Artifact> kArtifactKey{"path", &Artifact::path};

// The byte limits of what a run may write, applied to claims as they are
// read (declared digests in dot.plan, artifacts in dot.materialize).
class ByteBudget {
 public:
  // `claimed`: what earlier batches of the same list claimed.
  explicit ByteBudget(const Limits& limits, std::uint64_t claimed = 0) : limits_(limits), total_(claimed) {}
  Status take(std::uint64_t size, json::Value at_value, std::string_view what) {
    if (size > limits_.max_file_bytes)
      return at(
          at_value, dpp::ErrorKind::MaxFileBytes,
          fmt::format("{} claims {} bytes; the negotiated limit is {} per file", what, size, limits_.max_file_bytes));
    // Both terms are at most 2^53 - 1: the sum cannot wrap.
    total_ += size;
    if (total_ > limits_.max_total_bytes)
      return at(at_value, dpp::ErrorKind::MaxTotalBytes,
                fmt::format("the claims reach {} bytes at {}; the negotiated limit is {} in all", total_, what,
                            limits_.max_total_bytes));
    return {};
  }
  std::uint64_t total() const noexcept { return total_; }

 private:
  const Limits& limits_;
  std::uint64_t total_;
};

// A write's declared sha256 and size (digests negotiated).
Result<Digest> declared_digest(json::ObjectReader& r, json::Value op, std::string_view what, ByteBudget& budget) {
  Digest d;
  DOT_ASSIGN_OR_RETURN(d.sha256, string_field(r, "sha256", what));
  DOT_ASSIGN_OR_RETURN(d.size, uint_field(r, "size", what, kMaxSafe));
  if (!is_sha256_hex(d.sha256))
    return at(op, dpp::ErrorKind::DeclaredDigest,
              fmt::format("{} declares sha256 \"{}\", not 64 lowercase hex digits", what, excerpt(d.sha256)));
  DOT_TRY(budget.take(d.size, op, what));
  return d;
}

Result<Limits> limits_field(json::ObjectReader& r) {
  auto v = r.required("limits");
  if (!v.ok()) return as_protocol(v.error());
  return decode_limits(*v);
}

}  // namespace

std::vector<std::string> offered_capabilities() {
  return {"materialize",
          "plan",
          "post-commit-effects",
          "validate",
          std::string(kLogCapability),
          std::string(kDigestsCapability),
          std::string(kCacheCapability),
          std::string(kBatchesCapability)};
}

bool is_profile_offer(const std::vector<std::string>& offered) {
  const std::vector<std::string> all = offered_capabilities();
  if (offered.size() < 4 || !std::equal(all.begin(), all.begin() + 4, offered.begin())) return false;
  std::size_t next = 4;
  if (next < offered.size() && offered[next] == kLogCapability) ++next;
  if (next < offered.size() && offered[next] == kDigestsCapability) ++next;
  if (next < offered.size() && offered[next] == kCacheCapability) ++next;
  if (next < offered.size() && offered[next] == kBatchesCapability) ++next;
  return next == offered.size();
}

bool cache_offer_is_whole(const InitializeParams& p) {
  const bool offered =
      std::find(p.capabilities.begin(), p.capabilities.end(), kCacheCapability) != p.capabilities.end();
  return offered == p.cache.has_value() && (!p.cache || (!p.cache->empty() && p.cache->front() == '/'));
}

InitializeParams initialize_params(std::string_view assurance, std::string nonce, std::vector<std::string> inputs,
                                   std::optional<std::string> cache) {
  InitializeParams p;
  p.capabilities = offered_capabilities();
  if (!cache) std::erase(p.capabilities, kCacheCapability);
  p.cache = std::move(cache);
  p.inputs = std::move(inputs);
  p.limits = kLimits;
  p.nonce = std::move(nonce);
  p.profile = std::string(kProfile);
  p.protocol = kProtocol;
  p.required_assurance = std::string(assurance);
  return p;
}

std::optional<std::string> plugin_id_problem(std::string_view id) {
  // ^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+$ by hand: a first label starting with a
  // letter, then one or more ".label" with non-empty labels.
  if (id.size() > kMaxPluginIdBytes) return fmt::format("is {} bytes long", id.size());
  if (id.empty() || !(id[0] >= 'a' && id[0] <= 'z')) return "does not start with a lowercase letter";
  std::size_t labels = 1;
  bool label_empty = false;
  for (char c : id) {
    if (c == '.') {
      if (label_empty) return "has an empty label";
      ++labels;
      label_empty = true;
    } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') {
      label_empty = false;
    } else {
      return "has a character other than a-z, 0-9, '-' and '.'";
    }
  }
  if (label_empty) return "has an empty label";
  if (labels < 2) return "has no '.'";
  return std::nullopt;
}

Status check_plugin_id(std::string_view id) {
  auto why = plugin_id_problem(id);
  if (!why) return {};
  return make_error(dpp::ErrorKind::PluginId,
                    fmt::format("plugin id \"{}\" {}: an id is like org.example.tool (lowercase letters, digits "
                                "and '-' in dot-separated labels, starting with a letter, at most {} bytes)",
                                id, *why, kMaxPluginIdBytes));
}

Result<Negotiated> check_identity(const InitializeParams& sent, const InitializeResult& echo,
                                  std::string_view manifest_id) {
  DOT_TRY(check_echo({sent.protocol, sent.profile, sent.required_assurance, sent.nonce},
                     {echo.id, echo.protocol, echo.profile, echo.assurance, echo.nonce}, manifest_id));
  if (echo.inputs != sent.inputs)
    return identity(dpp::ErrorKind::Inputs, fmt::format("the plugin echoed {} inputs that differ from the {} core sent",
                                                        echo.inputs.size(), sent.inputs.size()));
  // Named limit by limit: which one differs is what a plugin author needs.
  constexpr std::pair<std::string_view, std::uint64_t Limits::*> kKeys[] = {
      {"deadline_ms", &Limits::deadline_ms},           {"max_file_bytes", &Limits::max_file_bytes},
      {"max_frame_bytes", &Limits::max_frame_bytes},   {"max_log_messages", &Limits::max_log_messages},
      {"max_operations", &Limits::max_operations},     {"max_stderr_bytes", &Limits::max_stderr_bytes},
      {"max_stdout_bytes", &Limits::max_stdout_bytes}, {"max_total_bytes", &Limits::max_total_bytes},
  };
  for (const auto& [name, field] : kKeys)
    if (echo.limits.*field != sent.limits.*field)
      return identity(dpp::ErrorKind::EchoedLimits, fmt::format("the plugin echoed limits.{} {}, core sent {}", name,
                                                                echo.limits.*field, sent.limits.*field));
  // The first four offered, in order, then "log", "digests", "cache" and
  // "batches", each only if core offered it and in that order.
  const auto& offer = sent.capabilities;
  std::vector<std::string> want(offer.begin(),
                                offer.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(4, offer.size())));
  auto offered = [&](std::string_view c) { return std::find(offer.begin() + 4, offer.end(), c) != offer.end(); };
  auto echoed_next = [&](std::string_view c) {
    return offer.size() >= 4 && offered(c) && echo.capabilities.size() > want.size() &&
           echo.capabilities[want.size()] == c;
  };
  Negotiated n;
  if (echoed_next(kLogCapability)) {
    n.log = true;
    want.emplace_back(kLogCapability);
  }
  if (echoed_next(kDigestsCapability)) {
    n.digests = true;
    want.emplace_back(kDigestsCapability);
  }
  if (echoed_next(kCacheCapability)) {
    n.cache = true;
    want.emplace_back(kCacheCapability);
  }
  if (echoed_next(kBatchesCapability)) {
    n.batches = true;
    want.emplace_back(kBatchesCapability);
  }
  DOT_TRY(check_capabilities(echo.capabilities, want, sent.capabilities));
  return n;
}

Status check_log(const LogParams& log) {
  if (log.level != "debug" && log.level != "info" && log.level != "warning" && log.level != "error")
    return make_error(dpp::ErrorKind::LogLevel,
                      fmt::format("dot.log level \"{}\" is not debug, info, warning or error", excerpt(log.level)));
  if (log.message.size() > kMaxLogMessageBytes)
    return make_error(dpp::ErrorKind::LogMessage, fmt::format("a dot.log message of {} bytes; at most {} are allowed",
                                                              log.message.size(), kMaxLogMessageBytes));
  return {};
}

// ---- encoders ----

jcs::Node to_node(const Limits& m) {
  auto n = jcs::Node::object();
  n.set("deadline_ms", uint_node(m.deadline_ms))
      .set("max_file_bytes", uint_node(m.max_file_bytes))
      .set("max_frame_bytes", uint_node(m.max_frame_bytes))
      .set("max_log_messages", uint_node(m.max_log_messages))
      .set("max_operations", uint_node(m.max_operations))
      .set("max_stderr_bytes", uint_node(m.max_stderr_bytes))
      .set("max_stdout_bytes", uint_node(m.max_stdout_bytes))
      .set("max_total_bytes", uint_node(m.max_total_bytes));
  return n;
}

// The hello profile's members (messages.cpp), then inputs and limits; the
// encoder sorts the members.
jcs::Node to_node(const InitializeParams& m) {
  auto n = dpp::to_node(static_cast<const dpp::InitializeParams&>(m));
  n.set("inputs", string_array(m.inputs)).set("limits", to_node(m.limits));
  if (m.cache) n.set("cache", jcs::Node::string(*m.cache));
  return n;
}

jcs::Node to_node(const InitializeResult& m) {
  auto n = dpp::to_node(static_cast<const dpp::InitializeResult&>(m));
  n.set("inputs", string_array(m.inputs)).set("limits", to_node(m.limits));
  return n;
}

jcs::Node to_node(const PlanParams& m) {
  auto n = jcs::Node::object();
  n.set("managed", string_array(m.managed));
  return n;
}

jcs::Node plan_params_node(const PlanParams& m) {
  auto n = jcs::Node::object();
  n.set("managed", string_array(std::span<const std::string>(m.managed)));
  return n;
}

jcs::Node to_node(const Operation& m) {
  auto n = jcs::Node::object();
  n.set("action", jcs::Node::string(m.action)).set("mode", uint_node(m.mode)).set("path", jcs::Node::string(m.path));
  if (m.link_text) n.set("link_text", jcs::Node::string(*m.link_text));
  if (m.digest) n.set("sha256", jcs::Node::string(m.digest->sha256)).set("size", uint_node(m.digest->size));
  return n;
}

namespace {
template <class Paths>
jcs::Node materialize_node(const std::optional<Paths>& paths, std::string_view stage) {
  auto n = jcs::Node::object();
  if (paths) n.set("paths", string_array(*paths));
  n.set("stage", jcs::Node::string(std::string(stage)));
  return n;
}
}  // namespace

jcs::Node materialize_params_node(std::optional<std::span<const std::string_view>> paths, std::string_view stage) {
  return materialize_node(paths, stage);
}

jcs::Node to_node(const MaterializeParams& m) { return materialize_node(m.paths, m.stage); }

namespace {
// One operation at a time into one piece of canonical text, as core
// encodes its plans: a tree of every value of 100,000 operations would
// hold about 1.6 KiB each, most of a plugin's memory.
Result<jcs::Node> operations_node(std::span<const Operation> ops) {
  constexpr std::size_t kTypicalOperationBytes = 160;
  std::string text;
  text.reserve(ops.size() * kTypicalOperationBytes + 2);
  DOT_TRY(jcs::encode_array_to(
      text, ops, [](const Operation& o) { return to_node(o); }, jcs::Profile::Rfc8785));
  return jcs::Node::encoded(std::move(text), jcs::Profile::Rfc8785);
}
}  // namespace

Result<jcs::Node> to_node(const PlanResult& m) {
  auto effects = jcs::Node::array();
  for (const auto& e : m.effects) effects.push(dpp::to_node(e));
  auto dirs = jcs::Node::array();
  for (const auto& d : m.directories)
    dirs.push(jcs::Node::object().set("mode", uint_node(d.mode)).set("path", jcs::Node::string(d.path)));
  DOT_ASSIGN_OR_RETURN(jcs::Node ops, operations_node(m.operations));
  auto n = jcs::Node::object();
  if (!m.directories.empty()) n.set("directories", std::move(dirs));
  n.set("effects", std::move(effects)).set("operations", std::move(ops));
  return n;
}

jcs::Node to_node(const Artifact& m) { return artifact_node(m, kArtifactKey); }

jcs::Node to_node(const MaterializeResult& m) { return artifacts_node(m.artifacts, kArtifactKey); }

jcs::Node to_node(const LogParams& m) {
  auto n = jcs::Node::object();
  n.set("level", jcs::Node::string(m.level)).set("message", jcs::Node::string(m.message));
  return n;
}

Result<jcs::Node> to_node(const ErrorObject& m) {
  auto n = jcs::Node::object();
  n.set("code", jcs::Node::integer(m.code));
  if (m.data) {
    auto doc = json::parse(*m.data);
    if (!doc.ok()) return make_error(dpp::ErrorKind::ErrorDataEncoding, "the error data is not one JSON value");
    n.set("data", jcs::Node::from(doc->root()));
  }
  n.set("message", jcs::Node::string(m.message));
  return n;
}

namespace {
Result<std::string> encode_notification(std::string_view method, jcs::Node params) {
  auto n = jcs::Node::object();
  n.set("jsonrpc", jcs::Node::string("2.0"))
      .set("method", jcs::Node::string(std::string(method)))
      .set("params", std::move(params));
  return jcs::encode(n, jcs::Profile::Rfc8785);
}
}  // namespace

Result<std::string> encode_log(const LogParams& log) { return encode_notification(kLogMethod, to_node(log)); }

Result<std::string> encode_operations_batch(std::span<const Operation> ops) {
  DOT_ASSIGN_OR_RETURN(jcs::Node list, operations_node(ops));
  auto params = jcs::Node::object();
  params.set("operations", std::move(list));
  return encode_notification(kOperationsMethod, std::move(params));
}

Result<std::string> encode_artifacts_batch(std::span<const Artifact> arts) {
  auto list = jcs::Node::array();
  for (const Artifact& a : arts) list.push(to_node(a));
  auto params = jcs::Node::object();
  params.set("artifacts", std::move(list));
  return encode_notification(kArtifactsMethod, std::move(params));
}

Result<std::string> encode_error_response(std::optional<std::uint64_t> id, const ErrorObject& error) {
  DOT_ASSIGN_OR_RETURN(jcs::Node err, to_node(error));
  auto n = jcs::Node::object();
  n.set("error", std::move(err))
      .set("id", id ? jcs::Node::integer(static_cast<std::int64_t>(*id)) : jcs::Node::null())
      .set("jsonrpc", jcs::Node::string("2.0"));
  return jcs::encode(n, jcs::Profile::Rfc8785);
}

// ---- decoders ----

Result<Limits> decode_limits(json::Value v) {
  return decode_object<Limits>(v, "limits", [](auto& r, auto what, Limits& m) -> Status {
    DOT_ASSIGN_OR_RETURN(m.deadline_ms, uint_field(r, "deadline_ms", what, kMaxSafe));
    DOT_ASSIGN_OR_RETURN(m.max_file_bytes, uint_field(r, "max_file_bytes", what, kMaxSafe));
    DOT_ASSIGN_OR_RETURN(m.max_frame_bytes, uint_field(r, "max_frame_bytes", what, kMaxSafe));
    DOT_ASSIGN_OR_RETURN(m.max_log_messages, uint_field(r, "max_log_messages", what, kMaxSafe));
    DOT_ASSIGN_OR_RETURN(m.max_operations, uint_field(r, "max_operations", what, kMaxSafe));
    DOT_ASSIGN_OR_RETURN(m.max_stderr_bytes, uint_field(r, "max_stderr_bytes", what, kMaxSafe));
    DOT_ASSIGN_OR_RETURN(m.max_stdout_bytes, uint_field(r, "max_stdout_bytes", what, kMaxSafe));
    DOT_ASSIGN_OR_RETURN(m.max_total_bytes, uint_field(r, "max_total_bytes", what, kMaxSafe));
    return {};
  });
}

Result<InitializeParams> decode_initialize_params(json::Value v) {
  // The hello profile's members, then the general profile's own.
  auto read = [](auto& r, auto what, InitializeParams& m) -> Status {
    DOT_TRY(read_initialize_params(r, what, m));
    if (r.optional("cache")) {
      DOT_ASSIGN_OR_RETURN(m.cache, string_field(r, "cache", what));
    }
    DOT_ASSIGN_OR_RETURN(m.inputs, string_array_field(r, "inputs", what));
    DOT_ASSIGN_OR_RETURN(m.limits, limits_field(r));
    return {};
  };
  return decode_object<InitializeParams>(v, "dot.initialize params", read);
}

Result<InitializeResult> decode_initialize_result(json::Value v) {
  constexpr std::string_view what = "dot.initialize result";
  DOT_ASSIGN_OR_RETURN(auto r, object(v, what));
  InitializeResult m;
  DOT_TRY(
      read_initialize_result(r, what, m, [](auto read, ErrorKind member) { return echoed(std::move(read), member); }));
  DOT_ASSIGN_OR_RETURN(m.inputs, echoed(string_array_field(r, "inputs", what), dpp::ErrorKind::Inputs));
  DOT_ASSIGN_OR_RETURN(m.limits, echoed(limits_field(r), dpp::ErrorKind::EchoedLimits));
  DOT_TRY(echoed(finish(r), dpp::ErrorKind::Echo));
  return m;
}

Result<PlanParams> decode_plan_params(json::Value v) {
  return decode_object<PlanParams>(v, "dot.plan params", [](auto& r, auto what, PlanParams& m) -> Status {
    DOT_ASSIGN_OR_RETURN(m.managed, string_array_field(r, "managed", what));
    return {};
  });
}

namespace {
// The "operations" member of a dot.plan result or a dot.operations batch,
// appended to `ops` and held with it to the limits.
Status read_operations(json::ObjectReader& r, std::string_view what, const Limits& limits, bool digests,
                       Batched<Operation>& ops) {
  DOT_ASSIGN_OR_RETURN(json::Value arr, array_field(r, "operations", what, limits.max_operations,
                                                    dpp::ErrorKind::MaxOperations, ops.handed_on + ops.items.size()));
  // Reserved once: growing by each batch's count would copy the list every batch.
  if (ops.items.empty()) ops.items.reserve(arr.size());
  ByteBudget budget(limits, ops.claimed_bytes);
  DOT_TRY(decode_objects(
      arr, "operation", ops.items,
      [&](json::ObjectReader& orr, std::string_view ow, json::Value o, Operation& op) -> Status {
        DOT_ASSIGN_OR_RETURN(op.action, string_field(orr, "action", ow));
        DOT_ASSIGN_OR_RETURN(op.mode, uint_field(orr, "mode", ow, kMaxSafe));
        DOT_ASSIGN_OR_RETURN(op.path, string_field(orr, "path", ow));
        if (orr.optional("link_text")) {
          DOT_ASSIGN_OR_RETURN(std::string text, string_field(orr, "link_text", ow));
          op.link_text = std::move(text);
        }
        // Only a write declares; on anything else finish() refuses the members.
        if (digests && op.action == "write") {
          DOT_ASSIGN_OR_RETURN(op.digest, declared_digest(orr, o, ow, budget));
        }
        return {};
      },
      ops.handed_on));
  ops.claimed_bytes = budget.total();
  return {};
}

// dot.plan's result, read in the order of its members.
Status read_plan_result(json::ObjectReader& r, std::string_view what, PlanResult& m, const Limits& limits, bool digests,
                        Batched<Operation>& ops) {
  if (r.optional("directories")) {
    DOT_ASSIGN_OR_RETURN(json::Value dirs,
                         array_field(r, "directories", what, limits.max_operations, dpp::ErrorKind::MaxOperations));
    DOT_TRY(
        decode_objects(dirs, "folder", m.directories,
                       [](json::ObjectReader& fr, std::string_view fw, json::Value, FolderRequest& folder) -> Status {
                         DOT_ASSIGN_OR_RETURN(folder.mode, uint_field(fr, "mode", fw, kMaxSafe));
                         DOT_ASSIGN_OR_RETURN(folder.path, string_field(fr, "path", fw));
                         return {};
                       }));
  }
  DOT_ASSIGN_OR_RETURN(m.effects, effects_field(r, what));
  DOT_TRY(read_operations(r, what, limits, digests, ops));
  m.operations = std::move(ops.items);
  return {};
}

// dot.materialize's params: the paths core needs staged, when it names
// them, and the stage.
Status read_materialize_params(json::ObjectReader& r, std::string_view what, MaterializeParams& m,
                               const Limits& limits) {
  if (r.optional("paths")) {
    DOT_ASSIGN_OR_RETURN(json::Value arr,
                         array_field(r, "paths", what, limits.max_operations, dpp::ErrorKind::MaxOperations));
    std::vector<std::string> paths;
    paths.reserve(arr.size());
    for (json::Value e : arr.elements()) {
      if (!e.is_string())
        return wrong_type(e, fmt::format("{} field \"paths\" element {}", what, paths.size()), "a string");
      paths.emplace_back(e.as_string());
    }
    m.paths = std::move(paths);
  }
  DOT_ASSIGN_OR_RETURN(m.stage, string_field(r, "stage", what));
  return {};
}
}  // namespace

Result<PlanResult> decode_plan_result(json::Value v, const Limits& limits, bool digests, Batched<Operation> earlier) {
  return decode_object<PlanResult>(v, "dot.plan result", [&](auto& r, auto what, PlanResult& m) {
    return read_plan_result(r, what, m, limits, digests, earlier);
  });
}

Status decode_operations_batch(json::Value params, const Limits& limits, bool digests, Batched<Operation>& ops) {
  constexpr std::string_view what = "dot.operations params";
  DOT_ASSIGN_OR_RETURN(auto r, object(params, what));
  DOT_TRY(read_operations(r, what, limits, digests, ops));
  return finish(r);
}

Result<MaterializeParams> decode_materialize_params(json::Value v, const Limits& limits) {
  return decode_object<MaterializeParams>(v, "dot.materialize params", [&](auto& r, auto what, MaterializeParams& m) {
    return read_materialize_params(r, what, m, limits);
  });
}

namespace {
// The artifacts of a dot.materialize result or a dot.artifacts batch (the
// same shape, named `what`) after those of `arts`, held with them to the limits.
Status read_artifacts(json::Value v, std::string_view what, const Limits& limits, Batched<Artifact>& arts) {
  ByteBudget budget(limits, arts.claimed_bytes);
  auto within_limits = [&](const Artifact& art, json::Value a, std::string_view aw) -> Status {
    return budget.take(art.size, a, aw);
  };
  DOT_ASSIGN_OR_RETURN(arts.items, decode_artifacts(v, kArtifactKey, limits.max_operations, within_limits,
                                                    std::move(arts.items), what, arts.handed_on));
  arts.claimed_bytes = budget.total();
  return {};
}
}  // namespace

Result<MaterializeResult> decode_materialize_result(json::Value v, const Limits& limits, Batched<Artifact> earlier) {
  DOT_TRY(read_artifacts(v, "dot.materialize result", limits, earlier));
  return MaterializeResult{std::move(earlier.items)};
}

Status decode_artifacts_batch(json::Value params, const Limits& limits, Batched<Artifact>& arts) {
  return read_artifacts(params, "dot.artifacts params", limits, arts);
}

Result<LogParams> decode_log_params(json::Value v) {
  auto read = [](auto& r, auto what, LogParams& m) -> Status {
    DOT_ASSIGN_OR_RETURN(m.level, string_field(r, "level", what));
    DOT_ASSIGN_OR_RETURN(m.message, string_field(r, "message", what));
    return {};
  };
  DOT_ASSIGN_OR_RETURN(LogParams m, decode_object<LogParams>(v, "dot.log params", read));
  if (auto st = check_log(m); !st.ok()) {
    Error e = st.error();
    e.offset = v.offset();
    return e;
  }
  return m;
}

Result<ErrorObject> decode_error_object(json::Value v) {
  constexpr std::string_view what = "error object";
  DOT_ASSIGN_OR_RETURN(auto r, object(v, what));
  ErrorObject m;
  auto code = r.required("code");
  if (!code.ok()) return as_protocol(code.error());
  if (!code->is_number() || !code->is_integer_spelling())
    return wrong_type(*code, "the error object's \"code\"", "an integer");
  std::string_view t = code->number_text();
  std::string_view digits = t[0] == '-' ? t.substr(1) : t;
  // JSON-RPC codes are small; anything beyond what JCS carries exactly is
  // refused (16 digits cannot overflow the accumulator).
  std::uint64_t magnitude = 0;
  for (char d : digits.substr(0, 17)) magnitude = magnitude * 10 + static_cast<std::uint64_t>(d - '0');
  if (digits.size() > 16 || magnitude > kMaxSafe)
    return wrong_type(*code, "the error object's \"code\"", "an integer within +-(2^53 - 1)");
  m.code = t[0] == '-' ? -static_cast<std::int64_t>(magnitude) : static_cast<std::int64_t>(magnitude);
  auto message = r.required("message");
  if (!message.ok()) return as_protocol(message.error());
  if (!message->is_string()) return wrong_type(*message, "the error object's \"message\"", "a string");
  m.message = std::string(message->as_string());
  if (m.message.size() > kMaxErrorMessageBytes)
    return at(
        *message, dpp::ErrorKind::ErrorMessage,
        fmt::format("the error message has {} bytes; at most {} are allowed", m.message.size(), kMaxErrorMessageBytes));
  if (auto data = r.optional("data")) {
    auto text = jcs::canonicalize(*data, jcs::Profile::Rfc8785);
    if (!text.ok())
      return at(*data, dpp::ErrorKind::ErrorData,
                fmt::format("the error data cannot be canonical: {}", text.error().detail));
    if (text->size() > kMaxErrorDataBytes)
      return at(*data, dpp::ErrorKind::ErrorData,
                fmt::format("the error data has {} bytes in canonical form; at most {} are allowed", text->size(),
                            kMaxErrorDataBytes));
    m.data = std::move(text).value();
  }
  DOT_TRY(finish(r));
  return m;
}

Result<Reply> decode_reply(const json::Document& doc, std::uint64_t expected_id, Method method) {
  json::Value root = doc.root();
  std::string what = fmt::format("response to {}", method_name(method));
  DOT_ASSIGN_OR_RETURN(const fields::Envelope env, fields::read_response_envelope(root, what));
  const auto& [version, id, result, error, meth, params, unknown] = env;
  Reply reply;
  if (meth || params) {
    // A notification has method and params and nothing of a response.
    if (id || result || error)
      return at(root, dpp::ErrorKind::MethodInResponse, fmt::format("the {} carries \"method\" or \"params\"", what));
    if (!version) return at(root, base::ErrorKind::MissingField, "the notification has no \"jsonrpc\" field");
    DOT_TRY(check_version(*version));
    if (!meth) return at(root, base::ErrorKind::MissingField, "the notification has no \"method\" field");
    if (!meth->is_string())
      return at(*meth, base::ErrorKind::WrongType, "the notification's \"method\" must be a string");
    if (!params) return at(root, base::ErrorKind::MissingField, "the notification has no \"params\" field");
    reply.kind = Reply::Kind::Notification;
    reply.method = std::string(meth->as_string());
    reply.params = *params;
    return reply;
  }
  DOT_TRY(check_response_envelope(root, env, expected_id, method));
  if (error) {
    DOT_ASSIGN_OR_RETURN(reply.error, decode_error_object(*error));
    reply.kind = Reply::Kind::Error;
    return reply;
  }
  if (!result) return at(root, base::ErrorKind::MissingField, fmt::format("the {} has no \"result\" field", what));
  reply.kind = Reply::Kind::Result;
  reply.result = *result;
  return reply;
}

}  // namespace dot::dpp::general
