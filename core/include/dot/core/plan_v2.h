#pragma once
// The plan model of the general DPP profile (docs/spec/dpp-general.md, "Plan model
// and ids"): version-2 plans of paths, actions, modes and the folders apply
// creates, hashed as full RFC 8785 (jcs::Profile::Rfc8785). The hello
// profile's version-1 model (plan.h) is untouched; both versions share its
// Snapshot and Effect.
//
// Keys in canonical order: Folder {mode, path}; PathOperation {action, after,
// before, path}; PlanV2 {directories, effects, [exclude,] nonce, operations,
// plugin_digest, plugin_id, profile, proposal_id, root_id, version}.
//
// Versioning: `exclude` (plan --exclude) is written only when the plan has
// exclusions, and the folder modes other than 0700 only when a plan asks for
// them, so every version-2 document written before either existed decodes to
// the same plan and re-encodes to the same bytes (the same ids); the version
// stays 2 because a document that uses neither is exactly what it was.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/byte_stream.h"
#include "dot/base/jcs.h"
#include "dot/base/json.h"
#include "dot/base/result.h"
#include "dot/base/write_access.h"
#include "dot/core/plan.h"
#include "dot/dpp/general.h"

namespace dot::core {

inline constexpr std::uint64_t kPlanVersion2 = 2;
inline constexpr std::string_view kGeneralProfile = "org.dot.dpp/v1";
// The mode of a folder apply creates when the plan asks for none: private
// to core's user. A plugin may name another (dot.plan `directories`):
// dpp::is_folder_mode, group write only for the user's private group.
inline constexpr std::uint64_t kCreatedFolderMode = 0700;
// A plugin id: at most this many bytes (the protocol's, dpp/general.h).
inline constexpr std::size_t kMaxPluginIdBytes = dpp::general::kMaxPluginIdBytes;

// Link: the target becomes a symbolic link holding the proposed link text.
enum class Action : std::uint8_t { Write, Remove, Link };
std::string_view action_name(Action action) noexcept;  // "write", "remove", "link"

// One target `path` (relative, dpp/path_rules.h) goes from `before` to `after`.
// A write's after is {exists, egid, requested mode, sha256, euid}, a file's;
// a link's is link_snapshot(text, euid, egid); a remove's after is the
// absent snapshot. A `before` may be a file's or a symlink's.
struct PathOperation {
  Action action = Action::Write;
  Snapshot after;
  Snapshot before;
  std::string path;
  bool operator==(const PathOperation&) const = default;
};

// A folder apply creates with `mode` (and rollback removes when empty).
struct Folder {
  std::uint64_t mode = kCreatedFolderMode;
  std::string path;
  bool operator==(const Folder&) const = default;
};

struct PlanV2 {
  std::vector<Folder> directories;
  std::vector<Effect> effects;
  // The `plan --exclude` patterns (path_glob.h) whose matches were left out
  // of the plan, ascending and unique; absent from the document when empty.
  std::vector<std::string> exclude;
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
// Whether two plans are the same but for their operations and proposal_id
// (a sealed plan and its proposal document), without copying either's
// operations. Every member of PlanV2 above but those two is compared here.
inline bool same_but_operations_and_id(const PlanV2& a, const PlanV2& b) noexcept {
  return a.directories == b.directories && a.effects == b.effects && a.exclude == b.exclude && a.nonce == b.nonce &&
         a.plugin_digest == b.plugin_digest && a.plugin_id == b.plugin_id && a.profile == b.profile &&
         a.root_id == b.root_id && a.version == b.version;
}

// Full RFC 8785 bytes of the plan exactly as stored and hashed.
Result<std::string> canonical_bytes(const PlanV2& plan);
// The same bytes handed to `out` in pieces as they are encoded (the store
// packs a large plan's text as it comes: never held whole).
Status write_canonical(const PlanV2& plan, ByteSink& out);
// The proposal document of `proposed`, the plan as the plugin proposed it
// (every operation, no-ops included, with core's `before` observations):
// `proposed` with every `after` absent and proposal_id "", canonical. It is
// stored for every proposal, sealed or abandoned, and it is the preimage of
// the proposal_id (docs/spec/dpp-general.md "Plan model and ids").
Result<std::string> proposal_document(const PlanV2& proposed);
// The proposal document of a run whose plugin declared its writes' digests
// (docs/spec/dpp-general.md, "Declared digests"): every write keeps the after
// it declared ({exists:true, gid, mode, sha256, uid}), so proposal_id binds
// the declared digests; removes stay absent.
Result<std::string> declared_proposal_document(const PlanV2& proposed);
// The SHA-256 (hex) and length of a document.
struct DocumentDigest {
  std::string sha256;
  std::uint64_t bytes = 0;
};
// The same document (declared_proposal_document's or proposal_document's)
// handed to `out` in pieces as it is written: the store packs it as it
// comes, so a large one is never held whole.
Status write_proposal_document(const PlanV2& proposed, bool declared, ByteSink& out);
// SHA-256 hex of proposal_document(proposed). Of a sealed plan whose
// proposal left no-ops out this is NOT its proposal_id: a sealed plan's
// proposal_id is checked against its stored proposal document
// (check_proposal_binding), never recomputed from the sealed plan alone.
Result<std::string> compute_proposal_id(const PlanV2& proposed);
// SHA-256 hex of canonical_bytes(plan).
Result<std::string> compute_plan_id(const PlanV2& plan);

// The general profile's no-op rule (docs/spec/dpp-general.md "Plan"): a write
// whose target already is a file with the same bytes and mode, a link whose
// target already is a symlink with the same text, or a remove of an absent
// target, changes nothing. Its own rule, not the hello profile's
// whole-snapshot equality (plan.h is_hello_noop says why that one compares
// the owner too): here the target policy already requires core's uid, and a
// group that differs is nothing the plugin asked to change.
bool is_general_noop(const PathOperation& op) noexcept;
// Whether an operation of this action and `before` can be a no-op whatever
// its after (a proposal document holds no after): a write of an existing
// file, a link of an existing symlink, a remove of an absent target.
bool can_be_noop(Action action, const Snapshot& before) noexcept;
// The half of the general target policy (target.h check_path_target_policy)
// a snapshot can show: a present target is owned by the effective uid and
// has no setuid, setgid or sticky bit and no write bit for others; a group
// write bit only when `judge` finds the group the owner's private one
// (base/write_access.h, the one rule); a symlink: owned by the effective
// uid, its mode never used. Rollback writes a `before` back with exactly
// these fields, so every stored `before` is held to it again on load.
// Code::Policy (kind target) naming `path` and the rule.
Status check_path_snapshot_policy(std::string_view path, const Snapshot& snapshot, WriteAccessJudge& judge);
// The folder modes apply can create for core's user: dpp::is_folder_mode,
// and a group write bit only for the effective gid when it is the user's
// private group. Code::Policy kind mode naming `path`.
Status check_created_folder_mode(std::string_view path, std::uint64_t mode, WriteAccessJudge& judge);

// The rules on what `plan` seals that the decoder (decode_plan_v2: formats,
// path rules, actions and modes, folders, the one root-sync effect) cannot
// judge from the text alone, as one check of a finished plan or proposal
// document. `plan` runs it before sealing and every load of a stored plan
// runs it again on the plan and on its proposal document (applier.h
// verify_sealed_plan_v2: apply, rollback, recover, retry-effects and
// `store check`), so a row edited in the database with both ids recomputed is
// refused like a plugin's proposal would have been:
//   before  absent, or within check_path_snapshot_policy;
//   after   of a write: owned by the effective uid and gid (apply gives the
//           file exactly this owner), a group write bit only under the
//           user-private-group rule; of a remove: absent;
//   directories  a mode of check_created_folder_mode.
// Code::Policy, kind "plan_invariant", the detail listing every violation
// (each naming the operation, the field and the path).
Status check_plan_invariants(const PlanV2& plan);
// The same rules given a plan's parts one at a time (a stored plan read as
// it streams): its folders, then each operation with its index; verdict()
// is check_plan_invariants' error over all of them.
class PlanInvariants {
 public:
  void folders(std::span<const Folder> directories);
  void add(const PathOperation& op, std::size_t index);
  Status verdict() const;

 private:
  WriteAccessJudge judge_;
  std::vector<std::string> violations_;
};

// The operations a sealed plan holds: `proposed` without its no-ops, in order.
// Empty means every operation is a no-op: nothing is sealed (NO_CHANGES).
std::vector<PathOperation> without_noops(std::span<const PathOperation> proposed);
// Whether every operation of `proposed` is a no-op: the plan changes nothing
// (NO_CHANGES), and without_noops would be empty.
bool changes_nothing(std::span<const PathOperation> proposed) noexcept;
// The plan `plan` seals from `proposed` (every `after` filled in from the
// verified stage): proposal_id = compute_proposal_id(proposed), operations
// without_noops. directories are kept: a no-op write's target exists, so
// its parents do, and no created folder belongs to it alone.
// With `declared`, the proposal document is declared_proposal_document's.
Result<PlanV2> seal_from_proposal(const PlanV2& proposed, bool declared = false);
// The same, given the proposal's id already computed from its document (the
// planner hashes the document once, when it stores it): `proposed`, taken
// by value so that a caller done with it moves it in, without its no-ops.
PlanV2 sealed_from(PlanV2 proposed, std::string proposal_id);
// The binding of a sealed plan to its stored proposal document, checked on
// every load: `document` is a canonical proposal document (proposal_id "",
// every after absent, or every write's after declared) hashing to
// sealed.proposal_id; every field but the operations and proposal_id is the
// same; sealed.operations, with their `after` absent or as declared, are the
// document's operations in order with only some left out, each left out one
// able to be a no-op (a write of an existing target, a remove of an absent
// one; a declared write only when it is a no-op by its declared after); the sealed plan holds at least one operation
// and no no-op. Code::Validation kind proposal_binding (proposal_id_mismatch
// for the hash), or the decoder's error for the document. Returns the
// decoded proposal document.
Result<PlanV2> check_proposal_binding(const PlanV2& sealed, std::string_view document);
// The same binding checked as the document streams (a stored proposal
// document is read as it unpacks, never held whole): its bytes go to
// write() in pieces, then finish() gives the document's plan without its
// operations, which went one at a time to `each` (the rules of a proposal
// are checked on them there) and were walked against sealed.operations. The
// errors are check_proposal_binding's, in its order: write() keeps them for
// finish(), so that a document of another hash is refused as that first.
class ProposalBinding final : public ByteSink {
 public:
  using ProposedFn = std::function<void(const PathOperation& proposed, std::size_t index)>;
  explicit ProposalBinding(const PlanV2& sealed, ProposedFn each = {});
  ~ProposalBinding() override;
  ProposalBinding(const ProposalBinding&) = delete;
  ProposalBinding& operator=(const ProposalBinding&) = delete;
  Status write(std::string_view piece) override;
  Result<PlanV2> finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The mode asked for each folder by path (a plan's own `directories`, or a
// plugin's dot.plan `directories`).
using FolderModes = std::map<std::string, std::uint64_t, std::less<>>;
// The folders apply creates for `operations`: every missing parent folder of
// every write and link, in ascending UTF-8 byte order (so parents come
// first), each with its mode in `modes`, else kCreatedFolderMode. `existing`
// holds the parent folders (relative paths) that exist in the root; below a
// missing folder nothing exists, whatever `existing` says.
std::vector<Folder> derive_directories(std::span<const PathOperation> operations,
                                       const std::set<std::string, std::less<>>& existing,
                                       const FolderModes& modes = {});

// The folder holding `path` ("" for an entry directly under the root).
std::string_view parent_folder(std::string_view path) noexcept;
// Every folder whose entries apply or rollback of `plan` change: the parent
// of each operation's path and of each created folder, "" for the root,
// ascending and unique. Apply makes each durable once (one fsync per folder)
// after its renames; rollback after its restores.
std::vector<std::string> touched_folders(const PlanV2& plan);

// Strict decoding of a version-2 plan object: exact field names, none missing
// or unknown; version 2; profile kGeneralProfile; nonce, plugin_digest and
// root_id 64 lowercase hex; proposal_id that or "" (a proposal document);
// plugin_id 1..kMaxPluginIdBytes bytes; effects exactly the one root-sync
// (Code::Policy); operations by dpp/path_rules.h (check_plan_paths; the action
// and mode of each by check_action_mode, the mode a write's after.mode);
// snapshots self-consistent (decode_snapshot); a write's after present
// unless this is a proposal document (every after absent); a remove's after
// absent; directories strictly ascending, each a valid path with a mode of
// dpp::is_folder_mode, a parent folder of some write; `exclude`, when
// present, a non-empty, strictly ascending list of valid patterns. Format errors are
// Code::Validation; a broken path rule keeps its dpp/path_rules.h code.
Result<PlanV2> decode_plan_v2(json::Value value);
// decode_plan_v2 of stored bytes that must be canonical: re-encoding gives
// exactly `bytes` (Code::Validation kind not_canonical).
Result<PlanV2> decode_canonical_plan_v2(std::string_view bytes);

}  // namespace dot::core
