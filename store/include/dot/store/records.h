#pragma once
// The plain values the store takes and gives back. The store keeps bytes and
// their digests; it never parses a plan (core owns the plan model).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dot/store/state.h"

namespace dot::store {

// Row id of a transaction (a proposal and the transaction it becomes share it).
using TxnId = std::int64_t;

// Artifacts, backups and plugin stderr are bounded like the targets they hold.
inline constexpr std::size_t kMaxBlobBytes = 64 * 1024;
inline constexpr std::size_t kMaxStderrBytes = 64 * 1024;
// A proposal document (the plan as proposed, every `after` absent): a bound
// on what one row keeps, the largest plan document core reads.
inline constexpr std::size_t kMaxProposalBytes = std::size_t{256} << 20;

struct PluginRecord {
  std::string plugin_id;       // manifest id, e.g. "org.dot.hello"
  std::string sha256;          // pinned digest of the copied executable (64 hex)
  std::string manifest;        // the manifest document (canonical JSON bytes)
  std::int64_t registered_at_ms = 0;  // set by the store
};

struct ProposalStart {
  std::string plugin_id;
  std::string plugin_digest;   // 64 hex
  std::int64_t started_at_ms = 0;  // 0: the store uses now
};

// The reason of a proposal that ended without a plan because it would change
// nothing (every target already equals its `after`): an outcome, not an
// error. Every other reason is a DOT_E_* code.
inline constexpr std::string_view kNoChangesCode = "NO_CHANGES";

// Why a proposal ended without a plan.
struct Abandonment {
  std::string code;            // "DOT_E_PROTOCOL", ..., or kNoChangesCode
  std::string detail;          // one line for humans
  std::string plugin_stderr;   // raw bytes; cut to kMaxStderrBytes by the store
};

// What inspect shows per slot; core derives it from the plan.
struct OperationSummary {
  std::string name;            // slot name, e.g. "hello.txt"
  std::string before_sha256;   // "" when the target did not exist
  std::string after_sha256;
};

struct Blob {
  std::uint32_t slot = 0;
  bool exists = true;          // backups only: false = the target was absent (bytes empty)
  std::string bytes;           // <= kMaxBlobBytes
  std::string sha256;          // lowercase hex of bytes ("" when !exists)
};

struct SealInput {
  std::string plan_id;         // must equal sha256_hex(canonical_plan)
  std::string proposal_id;     // 64 hex
  std::string canonical_plan;  // the plan bytes exactly as hashed
  // Number of post-commit effects; nullopt for a pre-capability plan (no
  // "effects" key), which never gets a ledger.
  std::optional<std::uint32_t> effect_count;
  std::vector<OperationSummary> operations;  // slot order
  std::vector<Blob> artifacts;               // slot order, one per operation
  std::string plugin_stderr;                 // kept for inspect (may be empty)
  std::int64_t sealed_at_ms = 0;             // 0: now
};

struct Event {
  std::int64_t seq = 0;        // global, increasing
  State state = State::Proposing;  // the state after this event
  std::int64_t at_ms = 0;
  std::string code;            // "" or a DOT_E_* name
  std::string detail;
};

struct EffectEntry {
  std::uint32_t index = 0;
  EffectState state = EffectState::Attempted;
  std::string idempotency_key;  // sha256_hex(plan_id + ":commit:" + index)
  std::uint32_t attempts = 0;
  std::int64_t updated_at_ms = 0;
  std::string code;            // set when FAILED
  std::string detail;
};

// One row of `inspect list`.
struct TxnSummary {
  TxnId id = 0;
  State state = State::Proposing;
  std::string plan_id;         // "" until SEALED (and for ABANDONED)
  std::string proposal_id;     // "" until known
  std::string plugin_id;
  std::int64_t created_at_ms = 0;
  std::int64_t updated_at_ms = 0;
  std::string code;            // last error code, "" when none
  std::uint32_t operation_count = 0;
  std::optional<std::uint32_t> effect_count;  // nullopt: pre-capability or not sealed
  bool pruned = false;         // blobs and events dropped by `store prune`
  bool effect_failed = false;  // some ledger entry is FAILED (POST_COMMIT_FAILED)
};

// The status `status` and `inspect` show for a transaction (spec/transactions.md,
// "Reporting"): its state, except that a COMMITTED one with a ledger is
// POST_COMMIT_FAILED when some effect FAILED, else POST_COMMIT_PENDING, and
// an ABANDONED proposal that would have changed nothing is NO_CHANGES. The
// one place this rule lives.
std::string_view display_status(const TxnSummary& t) noexcept;

// Everything `inspect show` prints.
struct TxnDetail {
  TxnSummary summary;
  std::string canonical_plan;  // "" until sealed
  // The proposal document (its SHA-256 is the proposal id): "" until the
  // plugin proposed, and for proposals recorded before schema version 3.
  std::string proposal_document;
  std::string plugin_digest;
  std::int64_t started_at_ms = 0;
  std::int64_t finished_at_ms = 0;  // sealed or abandoned; 0 while PROPOSING
  std::string detail;          // last error detail
  std::string plugin_stderr;
  bool plugin_stderr_truncated = false;
  std::vector<OperationSummary> operations;
  std::vector<EffectEntry> effects;
  std::vector<Event> events;
  bool has_backups = false;
};

// A sealed plan as apply and recovery need it, re-verified on load.
struct SealedPlan {
  TxnId id = 0;
  State state = State::Sealed;
  std::string plan_id;
  std::string proposal_id;
  std::string canonical_plan;
  std::optional<std::uint32_t> effect_count;
  std::vector<OperationSummary> operations;
  std::vector<Blob> artifacts;
  std::vector<Blob> backups;   // empty before PREPARED
  std::vector<EffectEntry> effects;
};

// A plan that wrote targets and was not undone (DONE or COMMITTED), as
// `status` needs it to tell whether the targets still hold what it wrote.
struct AppliedPlan {
  TxnId id = 0;
  std::string plan_id;
  std::string canonical_plan;  // verified: hashes to plan_id
};

// A path and the plugin that owns it (Store::owners_of).
struct PathOwner {
  std::string path;
  std::string plugin_id;
  TxnId txn = 0;               // the transaction that wrote it last
  bool operator==(const PathOwner&) const = default;
};

struct ListFilter {
  std::optional<State> state;
  std::size_t limit = 50;      // 0 = no limit
};

}  // namespace dot::store
