#pragma once
// The plan model of docs/spec/dpp-hello.md and its canonical encoding: Snapshot,
// Operation, Effect, Plan; proposal_id and plan_id; the sealed plan document
// `{plan, plan_id}` and its strict decoding.
//
// Canonical bytes are the JCS hello subset (jcs::Profile::Hello), keys in
// lexical order: Snapshot {exists, gid, mode, sha256, uid}, Operation
// {after, before, name}, Effect {failure_policy, kind, target}, Plan
// {effects?, nonce, operations, plugin_digest, proposal_id, root_id, version}.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/jcs.h"
#include "dot/base/json.h"
#include "dot/base/result.h"
#include "dot/base/sha256.h"
#include "dot/dpp/hello.h"

namespace dot::core {

// What a present entry is. Only the general profile (version-2 plans) has
// symbolic links; a hello snapshot is always a file.
enum class EntryKind : std::uint8_t { File, Symlink };

// Core's own observation of one target (or of a staged file, for `after`).
// A symlink's snapshot is {exists, gid, mode kLinkMode, sha256 of its
// link_text, uid} with kind Symlink and the link's own text: its "bytes"
// are its text, so its backup and its artifact are that text.
// Members are laid out for size, not in canonical order (a plan of 100,000
// paths holds two snapshots per path): the one- and two-byte members first,
// then the digest's 33 bytes, then the ids, which are 32 bits on Linux
// (uid_t, gid_t; decode_snapshot refuses larger ones): 80 bytes with
// libstdc++, none of it on the heap but a link's text. Build one with
// designated initializers, in this order.
struct Snapshot {
  bool exists = false;
  EntryKind kind = EntryKind::File;  // File when absent
  std::uint16_t mode = 0;            // permission bits only: st_mode & 07777
  Sha256Digest sha256;               // of the bytes; none when absent
  std::uint32_t gid = 0;
  std::uint32_t uid = 0;
  std::string link_text{};  // a symlink's text; "" otherwise

  static Snapshot absent() { return Snapshot{}; }
  bool is_link() const noexcept { return exists && kind == EntryKind::Symlink; }
  bool operator==(const Snapshot&) const = default;
};
static_assert(sizeof(Snapshot) <= 48 + sizeof(std::string), "a Snapshot's members are laid out for size");

// The mode every symlink snapshot records: what Linux shows for any link
// (its permission bits are never used, and symlinkat cannot set them).
inline constexpr std::uint64_t kLinkMode = 0777;
// The snapshot of a symlink holding `link_text`, owned by `uid` and `gid`.
Snapshot link_snapshot(std::string link_text, std::uint32_t uid, std::uint32_t gid);

// One slot: the target `name` (directly under the root) goes from `before` to `after`.
struct Operation {
  Snapshot after;
  Snapshot before;
  std::string name;
  bool operator==(const Operation&) const = default;
};

struct Effect {
  std::string failure_policy;
  std::string kind;
  std::string target;
  bool operator==(const Effect&) const = default;
};

// The one effect the hello profile allows: root-sync.
Effect root_sync_effect();

inline constexpr std::uint64_t kPlanVersion = 1;
// At most 16 slots and 4 effects (general DPP rules the hello profile narrows).
inline constexpr std::size_t kMaxOperations = 16;
inline constexpr std::size_t kMaxEffects = 4;
// A slot name: ^[a-z][a-z0-9-]{0,30}\.txt$.
bool is_valid_slot_name(std::string_view name) noexcept;
// Code::PathEscape (kind slot_name) for any name outside the pattern (docs/spec/cli.md).
Status check_slot_name(std::string_view name);

struct Plan {
  // Absent only in plans sealed before the post-commit-effects capability.
  std::optional<std::vector<Effect>> effects;
  std::string nonce;
  std::vector<Operation> operations;
  std::string plugin_digest;
  std::string proposal_id;
  std::string root_id;
  std::uint64_t version = kPlanVersion;

  bool operator==(const Plan&) const = default;
  // True for a plan without an `effects` key (see docs/spec/transactions.md).
  bool pre_capability() const noexcept { return !effects.has_value(); }
};

jcs::Node to_node(const Snapshot& s);
jcs::Node to_node(const Effect& e);
// Strict decoding of one snapshot (`what` names it in errors): exact fields,
// sha256 64 lowercase hex when it exists, the all-zero absent snapshot when
// it does not. Code::Validation. Shared by both plan versions. With
// `links` (version 2 only) a snapshot may also be a symlink's: members
// "kind":"symlink" and "link_text" (both present or neither; encoded only
// for a symlink, so a file's snapshot and every document without a link
// keep their bytes and ids), exists, mode kLinkMode, the text valid
// (dpp check_link_text) and sha256 its digest.
Result<Snapshot> decode_snapshot(json::Value value, std::string_view what, bool links = false);
jcs::Node to_node(const Plan& plan);

// Canonical (JCS hello) bytes of the plan exactly as stored and hashed.
Result<std::string> canonical_bytes(const Plan& plan);
// The proposal document: the canonical plan with every `after` absent and
// proposal_id "" (what the plugin proposed, with core's `before`
// observations). Stored for every proposal, sealed or abandoned.
Result<std::string> proposal_document(const Plan& plan);
// SHA-256 hex of proposal_document(plan).
Result<std::string> compute_proposal_id(const Plan& plan);
// SHA-256 hex of canonical_bytes(plan).
Result<std::string> compute_plan_id(const Plan& plan);

// Strict decoding of a plan object: exact field names, no unknown or missing
// field (only `effects` may be absent), version 1, ids 64 lowercase hex,
// names valid slot names and unique, snapshots self-consistent (an absent one
// is all zero), modes within 07777, integers within the hello subset.
// Code::Validation (kind and offset kept), or the slot-name code.
Result<Plan> decode_plan(json::Value value);
// Decodes the canonical bytes of a stored plan and requires that they are
// canonical: re-encoding gives exactly `bytes`.
Result<Plan> decode_canonical_plan(std::string_view bytes);

// Checks the plan's own integrity: proposal_id recomputes from it.
Status verify_proposal_id(const Plan& plan);

// The mode of every staged file and sealed artifact (docs/spec/dpp-hello.md):
// the protocol's, which the stage reader holds staged files to.
inline constexpr std::uint64_t kArtifactMode = dpp::hello::kArtifactMode;
// The `after` snapshot `plan` seals for a verified staged file whose bytes
// hash to `sha256`: exists, mode kArtifactMode, owned by core's effective uid
// and gid. Apply writes exactly these fields (owner and mode included), so
// they are never taken from anywhere else.
Snapshot sealed_after(const Sha256Digest& sha256);

// The hello profile's no-op rule: the target already is its sealed after,
// whole snapshot (bytes, mode and owner), because a hello write always seals
// sealed_after and apply gives the target exactly those fields, so any field
// that differs is a change. The general profile has its own rule (plan_v2.h
// is_general_noop: bytes and mode only, as docs/spec/dpp-general.md says).
bool is_hello_noop(const Operation& op) noexcept;

// The half of the target policy a snapshot can show (target.h
// check_target_policy adds what only the file shows: type, links, size): a
// present target has no setuid, setgid or sticky bit, no group or other bits,
// its owner-read bit, and is owned by the effective uid. Rollback writes a
// `before` back with exactly these fields. Code::Policy (kind target) naming
// `name` and the rule.
Status check_snapshot_policy(std::string_view name, const Snapshot& snapshot);

// Every rule `plan` enforces on what it seals, as one check of a finished
// plan. `plan` runs it before sealing and every load of a stored plan runs it
// again (applier.h verify_sealed_plan: apply, rollback, recover,
// retry-effects, export and `store check`), so a row edited in the database,
// its ids recomputed, is refused like a plugin's proposal would have been:
//   names    the hello profile's (dpp::hello::check_hello_names);
//   effects  exactly the one root-sync request (dpp::hello::check_hello_effects),
//            or no effects key at all in a pre-capability plan
//            (docs/spec/transactions.md);
//   before   absent, or within check_snapshot_policy;
//   after    exactly sealed_after(its digest).
// Code::Policy, kind "plan_invariant", the detail listing every violation.
Status check_plan_invariants(const Plan& plan);

// The exported sealed plan document: {"plan":<plan>,"plan_id":"<hex>"}, canonical.
Result<std::string> encode_plan_document(const Plan& plan, std::string_view plan_id);

// Plan documents of both versions (decode_plan_document): plan_document.h.

}  // namespace dot::core
