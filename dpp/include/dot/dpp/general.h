#pragma once
// The general profile org.dot.dpp/v1 (docs/spec/dpp-general.md), the message layer:
// its types, each with a strict decoder (exact, case-sensitive names; unknown
// and missing fields rejected; exact JSON types; Code::Protocol with the kinds
// of messages.h and the offset of the offending value) and a canonical
// encoder; the negotiation core offers and the check of the plugin's echo;
// and the envelope of whatever the host reads while a request is outstanding
// (a response, an error response, or a notification).
//
// Decoding is about shape and the negotiated limits only. What a plan means
// (path rules, order, action and mode values: DOT_E_POLICY / DOT_E_PATH_ESCAPE)
// is core's plan model, and the staged files against the claims are core's
// stage check; nothing here validates a path beyond its JSON type.
//
// Kinds beyond messages.h, all Code::Protocol (every negotiated limit
// breached is DOT_E_PROTOCOL):
//   max_operations   more operations (or artifacts) than limits.max_operations
//   max_file_bytes   an artifact claims more than limits.max_file_bytes
//   max_total_bytes  the claims together exceed limits.max_total_bytes
//   log_level        a dot.log level other than debug, info, warning, error
//   log_message      a dot.log message over 4096 bytes
//   error_message    an error response's message over 4096 bytes
//   error_data       an error response's data over 4096 bytes in canonical form
// and check_identity's DOT_E_PLUGIN_IDENTITY kinds: id, protocol, profile,
// assurance, nonce, inputs, limits, capabilities.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/jcs.h"
#include "dot/base/json.h"
#include "dot/base/result.h"
#include "dot/dpp/jsonrpc.h"
#include "dot/dpp/messages.h"

namespace dot::dpp::general {

inline constexpr std::uint64_t kProtocol = 1;
inline constexpr std::string_view kProfile = "org.dot.dpp/v1";
inline constexpr std::string_view kLogCapability = "log";
// Offered after "log": echoed by a plugin whose dot.plan declares each
// write's SHA-256 and size, so that dot.materialize names only the paths
// core needs staged (docs/spec/dpp-general.md, "Declared digests").
inline constexpr std::string_view kDigestsCapability = "digests";
// Offered after "digests", with the folder in dot.initialize's `cache`:
// echoed by a plugin that keeps files of its own there from one run to the
// next (docs/spec/dpp-general.md, "The plugin's cache").
inline constexpr std::string_view kCacheCapability = "cache";
// Offered last: echoed by a plugin that may send the operations of
// dot.plan and the artifacts of dot.materialize in batches, as
// notifications ahead of the result, so that no frame has to hold a whole
// large plan (docs/spec/dpp-general.md, "Batches").
inline constexpr std::string_view kBatchesCapability = "batches";
inline constexpr std::string_view kOperationsMethod = "dot.operations";
inline constexpr std::string_view kArtifactsMethod = "dot.artifacts";
// How many elements the runtimes put in one batch: with paths and link
// texts of at most 4095 bytes, 1024 operations fit well within one frame.
inline constexpr std::size_t kBatchElements = 1024;
inline constexpr std::string_view kLogMethod = "dot.log";
inline constexpr std::size_t kMaxLogMessageBytes = 4096;
inline constexpr std::size_t kMaxErrorMessageBytes = 4096;
inline constexpr std::size_t kMaxErrorDataBytes = 4096;

// The limits object of dot.initialize. The member initialisers are the
// profile's values (docs/spec/dpp-general.md, "Negotiation"): kLimits.
struct Limits {
  std::uint64_t deadline_ms = 60000;          // the longest core waits for the plugin's next frame or exit
  std::uint64_t max_frame_bytes = 16777216;   // one frame body, both directions
  std::uint64_t max_stdout_bytes = 67108864;  // the whole invocation, notifications included
  std::uint64_t max_stderr_bytes = 65536;     // kept; one byte more fails
  std::uint64_t max_operations = 100000;
  std::uint64_t max_file_bytes = 16777216;     // one written file
  std::uint64_t max_total_bytes = 1073741824;  // all written files
  std::uint64_t max_log_messages = 1000;       // the whole invocation
  bool operator==(const Limits&) const = default;
};
inline constexpr Limits kLimits{};

// dot.initialize params (host -> plugin): the hello profile's members
// (messages.h; protocol kProtocol, profile kProfile) and the general
// profile's inputs and limits, and `cache` exactly when "cache" is offered.
struct InitializeParams : dpp::InitializeParams {
  std::optional<std::string> cache;  // the plugin's cache folder, an absolute path
  std::vector<std::string> inputs;   // absolute directories, in registration order
  Limits limits;
  bool operator==(const InitializeParams&) const = default;
};

// dot.initialize result (plugin -> host): the echo, the hello profile's
// members (`id` is the manifest id, e.g. "org.dot.mirror") and the echoed
// inputs and limits.
struct InitializeResult : dpp::InitializeResult {
  std::vector<std::string> inputs;
  Limits limits;
  bool operator==(const InitializeResult&) const = default;
};

// dot.plan params: the paths this plugin owns in the root, ascending.
struct PlanParams {
  std::vector<std::string> managed;
  bool operator==(const PlanParams&) const = default;
};

// What a plugin that negotiated digests declares for a write: the SHA-256
// (64 lowercase hex digits) and size of the bytes it would stage.
struct Digest {
  std::string sha256;
  std::uint64_t size = 0;
  bool operator==(const Digest&) const = default;
};

// One proposed operation. `link_text` is the optional member of the same
// name, present on the wire only when set (a "link": the text of the symbolic
// link to create; path_rules.h check_link_text judges it).
struct Operation {
  std::string action;  // "write" | "remove" | "link" (checked by core's plan model)
  std::uint64_t mode = 0;
  std::string path;
  std::optional<std::string> link_text{};
  std::optional<Digest> digest = std::nullopt;  // members sha256 and size: a write's, with digests only
  bool operator==(const Operation&) const = default;
};

// A folder the plan asks to be created with `mode` when it is missing.
struct FolderRequest {
  std::uint64_t mode = 0;
  std::string path;
  bool operator==(const FolderRequest&) const = default;
};

// dot.plan result. `directories` is optional on the wire (absent means
// none: every folder core creates is then 0700) and encoded only when
// non-empty, so an answer without it keeps its bytes.
struct PlanResult {
  std::vector<EffectRequest> effects;
  std::vector<Operation> operations;
  std::vector<FolderRequest> directories;
  bool operator==(const PlanResult&) const = default;
};

struct Artifact {
  std::string path;
  std::string sha256;
  std::uint64_t size = 0;
  bool operator==(const Artifact&) const = default;
};

// dot.materialize params. `paths` is sent only when digests were
// negotiated: the writes core needs staged, in operation order.
struct MaterializeParams {
  std::optional<std::vector<std::string>> paths;
  std::string stage;
  bool operator==(const MaterializeParams&) const = default;
};

// dot.materialize result.
struct MaterializeResult {
  std::vector<Artifact> artifacts;
  bool operator==(const MaterializeResult&) const = default;
};

// dot.log notification params.
struct LogParams {
  std::string level;  // debug | info | warning | error
  std::string message;
  bool operator==(const LogParams&) const = default;
};

// The error object of an error response. `data` is the canonical (RFC 8785)
// text of the optional data value.
struct ErrorObject {
  std::int64_t code = 0;
  std::string message;
  std::optional<std::string> data;
  bool operator==(const ErrorObject&) const = default;
};

// ["materialize","plan","post-commit-effects","validate","log","digests","cache","batches"]:
// what core offers.
std::vector<std::string> offered_capabilities();
// Whether `offered` is an offer of this profile: the first four, then "log",
// "digests", "cache" and "batches", each there or not, in that order (core
// sends all eight; dpp conform varies them).
bool is_profile_offer(const std::vector<std::string>& offered);
// Whether dot.initialize's params offer "cache" with a folder to keep it in
// (the member present exactly when the capability is offered, an absolute path).
bool cache_offer_is_whole(const InitializeParams& params);

// What the echo negotiated beyond the first four capabilities.
struct Negotiated {
  bool log = false;
  bool digests = false;
  bool cache = false;
  bool batches = false;
};
// The dot.initialize params core sends: the offered capabilities, kLimits;
// "cache" offered with `cache` as its folder, and left out without one.
InitializeParams initialize_params(std::string_view assurance, std::string nonce, std::vector<std::string> inputs,
                                   std::optional<std::string> cache = std::nullopt);

// The echo check: protocol, profile, assurance (= required), nonce, inputs
// and limits exactly as sent, `id` equal to the manifest id, capabilities the
// first four sent, in order, then "log", "digests", "cache" and "batches",
// each optional and only when it was offered. Returns what was negotiated.
// Errors DOT_E_PLUGIN_IDENTITY.
Result<Negotiated> check_identity(const InitializeParams& sent, const InitializeResult& echo,
                                  std::string_view manifest_id);

// A plugin id: at most this many bytes (docs/spec/dpp-general.md, "Registration
// and manifest").
inline constexpr std::size_t kMaxPluginIdBytes = 128;
// What keeps `id` from being a plugin id (the spec's pattern
// ^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+$, at most kMaxPluginIdBytes long), said
// after "it": "has no '.'"; nothing when it is one.
std::optional<std::string> plugin_id_problem(std::string_view id);
// DOT_E_POLICY (kind plugin_id) naming the id when it has a problem.
Status check_plugin_id(std::string_view id);

// The level and size rules of a dot.log message (kinds log_level, log_message).
Status check_log(const LogParams& log);

jcs::Node to_node(const Limits& m);
jcs::Node to_node(const InitializeParams& m);
jcs::Node to_node(const InitializeResult& m);
jcs::Node to_node(const PlanParams& m);
// The same params referring to m's managed list, not copying it (core's
// request: 100,000 managed paths of 64 bytes are 11 MB): encode it while m lives.
jcs::Node plan_params_node(const PlanParams& m);
jcs::Node to_node(const Operation& m);
// Its operations already encoded (jcs::Node::encoded): errors are
// encode_to's (a string that is not UTF-8).
Result<jcs::Node> to_node(const PlanResult& m);
jcs::Node to_node(const Artifact& m);
jcs::Node to_node(const MaterializeParams& m);
// The same params from views (core's request: the paths its plan holds,
// never copied); the node refers to the paths: encode it while they live.
jcs::Node materialize_params_node(std::optional<std::span<const std::string_view>> paths, std::string_view stage);
jcs::Node to_node(const MaterializeResult& m);
jcs::Node to_node(const LogParams& m);
// {"code":C,"data":D,"message":M}; `data` must be valid JSON text.
Result<jcs::Node> to_node(const ErrorObject& m);

Result<Limits> decode_limits(json::Value v);
Result<InitializeParams> decode_initialize_params(json::Value v);
Result<InitializeResult> decode_initialize_result(json::Value v);
Result<PlanParams> decode_plan_params(json::Value v);

// A list that may come in batches ("batches" negotiated): the elements read
// so far, in order, and the bytes they claim. The limits hold over the
// whole list, batches and result together. A reader that takes each batch
// as it comes (HostSession's operation sink) moves `items` on and counts
// them in `handed_on`: the limits and the elements' numbers still count them.
template <typename T>
struct Batched {
  std::vector<T> items;
  std::uint64_t claimed_bytes = 0;  // declared sizes (operations), claimed sizes (artifacts)
  std::uint64_t handed_on = 0;      // elements read before `items` and passed on
};

// With the negotiated limits: at most limits.max_operations operations.
// With `digests`, a write has sha256 (64 lowercase hex, kind declared_digest)
// and size (max_file_bytes, max_total_bytes as for artifacts) and nothing
// else does; without, neither member is known. The plan's operations are
// `earlier`'s (its dot.operations batches), then the result's.
Result<PlanResult> decode_plan_result(json::Value v, const Limits& limits, bool digests = false,
                                      Batched<Operation> earlier = {});
// dot.operations params {operations}: each operation as in the result,
// appended to `ops`, the limits counted with what `ops` holds.
Status decode_operations_batch(json::Value params, const Limits& limits, bool digests, Batched<Operation>& ops);
// {stage} or {paths, stage}: paths at most limits.max_operations.
Result<MaterializeParams> decode_materialize_params(json::Value v, const Limits& limits);
// At most max_operations artifacts, each size at most max_file_bytes, all
// together at most max_total_bytes (the claims; core checks the files);
// `earlier`'s (dot.artifacts batches) first.
Result<MaterializeResult> decode_materialize_result(json::Value v, const Limits& limits,
                                                    Batched<Artifact> earlier = {});
// dot.artifacts params {artifacts}: appended to `arts`, as in the result.
Status decode_artifacts_batch(json::Value params, const Limits& limits, Batched<Artifact>& arts);
// Shape, then check_log.
Result<LogParams> decode_log_params(json::Value v);
// {code, message, data?}: code an integer within +-(2^53 - 1), message a
// string, the size rules above.
Result<ErrorObject> decode_error_object(json::Value v);

// What the host reads while request `expected_id` (for `method`) is
// outstanding.
struct Reply {
  enum class Kind : std::uint8_t { Result, Error, Notification };
  Kind kind = Kind::Result;
  json::Value result;  // Kind::Result
  ErrorObject error;   // Kind::Error
  std::string method;  // Kind::Notification: its method, any string
  json::Value params;  // Kind::Notification
};

// The general envelope: a response exactly as messages.h's decode_response
// checks it, except that an error object is a reply (decoded strictly) and
// not a failure; and a message with "method" and neither "id", "result" nor
// "error" is a notification {jsonrpc, method, params} (kinds jsonrpc_version,
// wrong_type, missing_field, unknown_field). Which notifications are allowed
// is the session's rule.
Result<Reply> decode_reply(const json::Document& doc, std::uint64_t expected_id, Method method);

// {"jsonrpc":"2.0","method":"dot.log","params":{"level":L,"message":M}}
Result<std::string> encode_log(const LogParams& log);
// {"jsonrpc":"2.0","method":"dot.operations","params":{"operations":[...]}}
Result<std::string> encode_operations_batch(std::span<const Operation> ops);
// {"jsonrpc":"2.0","method":"dot.artifacts","params":{"artifacts":[...]}}
Result<std::string> encode_artifacts_batch(std::span<const Artifact> arts);
// An error response carrying `error` (with its data), id null when unknown.
Result<std::string> encode_error_response(std::optional<std::uint64_t> id, const ErrorObject& error);

}  // namespace dot::dpp::general
