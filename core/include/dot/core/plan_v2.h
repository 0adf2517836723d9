#pragma once
// The plan model of the general DPP profile (spec/dpp-general.md, "Plan model
// and ids"): version-2 plans of paths, actions, modes and the folders apply
// creates, hashed as full RFC 8785 (jcs::Profile::Rfc8785). The hello
// profile's version-1 model (plan.h) is untouched; both versions share its
// Snapshot and Effect.
//
// Keys in canonical order: Folder {mode, path}; PathOperation {action, after,
// before, path}; PlanV2 {directories, effects, nonce, operations,
// plugin_digest, plugin_id, profile, proposal_id, root_id, version}.

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/jcs.h"
#include "dot/base/json.h"
#include "dot/base/result.h"
#include "dot/core/plan.h"

namespace dot::core {

inline constexpr std::uint64_t kPlanVersion2 = 2;
inline constexpr std::string_view kGeneralProfile = "org.dot.dpp/v1";
// Every folder apply creates is private to core's user.
inline constexpr std::uint64_t kCreatedFolderMode = 0700;
// A plugin id: at most this many bytes (spec/dpp-general.md, registration).
inline constexpr std::size_t kMaxPluginIdBytes = 128;

enum class Action : std::uint8_t { Write, Remove };
std::string_view action_name(Action action) noexcept;  // "write", "remove"

// One target `path` (relative, path_rules.h) goes from `before` to `after`.
// A write's after is {exists, egid, requested mode, sha256, euid}; a
// remove's after is the absent snapshot.
struct PathOperation {
  Action action = Action::Write;
  Snapshot after;
  Snapshot before;
  std::string path;
  bool operator==(const PathOperation&) const = default;
};

// A folder apply creates (and rollback removes when empty).
struct Folder {
  std::uint64_t mode = kCreatedFolderMode;
  std::string path;
  bool operator==(const Folder&) const = default;
};

struct PlanV2 {
  std::vector<Folder> directories;
  std::vector<Effect> effects;
  std::string nonce;
  std::vector<PathOperation> operations;
  std::string plugin_digest;
  std::string plugin_id;
  std::string profile = std::string(kGeneralProfile);
  std::string proposal_id;
  std::string root_id;
  std::uint64_t version = kPlanVersion2;
  bool operator==(const PlanV2&) const = default;
};

jcs::Node to_node(const PlanV2& plan);
// Full RFC 8785 bytes of the plan exactly as stored and hashed.
Result<std::string> canonical_bytes(const PlanV2& plan);
// `plan` with every `after` absent and proposal_id "", canonical. Of the
// plan as the plugin proposed it (no-ops included, core's `before`
// observations) it is the proposal document stored for every proposal; of a
// sealed plan it is the proposal_id's preimage (the same bytes when nothing
// was a no-op), so a sealed plan's proposal_id recomputes from it alone.
Result<std::string> proposal_document(const PlanV2& plan);
// SHA-256 hex of proposal_document(plan).
Result<std::string> compute_proposal_id(const PlanV2& plan);
// SHA-256 hex of canonical_bytes(plan).
Result<std::string> compute_plan_id(const PlanV2& plan);

// The no-op rule: a write whose target already holds the same bytes and mode,
// or a remove of an absent target, changes nothing.
bool is_noop(const PathOperation& op) noexcept;
// The operations a sealed plan holds: `proposed` without its no-ops, in order.
// Empty means every operation is a no-op: nothing is sealed (NO_CHANGES).
std::vector<PathOperation> without_noops(std::span<const PathOperation> proposed);

// The folders apply creates for `operations`: every missing parent folder of
// every write, in ascending UTF-8 byte order (so parents come first), mode
// kCreatedFolderMode. `existing` holds the parent folders (relative paths)
// that exist in the root; below a missing folder nothing exists, whatever
// `existing` says.
std::vector<Folder> derive_directories(std::span<const PathOperation> operations,
                                       const std::set<std::string, std::less<>>& existing);

// Strict decoding of a version-2 plan object: exact field names, none missing
// or unknown; version 2; profile kGeneralProfile; nonce, plugin_digest and
// root_id 64 lowercase hex; proposal_id that or "" (a proposal document);
// plugin_id 1..kMaxPluginIdBytes bytes; effects exactly the one root-sync
// (Code::Policy); operations by path_rules.h (check_plan_paths; the action
// and mode of each by check_action_mode, the mode a write's after.mode);
// snapshots self-consistent (decode_snapshot); a write's after present
// unless this is a proposal document (every after absent); a remove's after
// absent; directories strictly ascending, each a valid path with mode
// kCreatedFolderMode, a parent folder of some write. Format errors are
// Code::Validation; a broken path rule keeps its path_rules.h code.
Result<PlanV2> decode_plan_v2(json::Value value);
// decode_plan_v2 of stored bytes that must be canonical: re-encoding gives
// exactly `bytes` (Code::Validation kind not_canonical).
Result<PlanV2> decode_canonical_plan_v2(std::string_view bytes);

}  // namespace dot::core
