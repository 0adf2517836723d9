#pragma once
// The plain values the store takes and gives back. The store keeps bytes and
// their digests; it never parses a plan (core owns the plan model).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/byte_stream.h"
#include "dot/base/fd.h"
#include "dot/base/result.h"
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
// A sealed plan's text of at least this many bytes is stored packed (one
// zstd frame, as a proposal document): at 100,000 paths 23 MB become about
// 4, and SQLite never copies the whole text into the row it builds. A
// smaller one stays as it is (readable with sqlite3). Either is read back
// as exactly the text, up to kMaxProposalBytes.
inline constexpr std::size_t kPackedPlanBytes = std::size_t{64} << 10;

struct PluginRecord {
  std::string plugin_id;              // manifest id, e.g. "org.dot.hello"
  std::string sha256;                 // pinned digest of the copied executable (64 hex)
  std::string manifest;               // the manifest document (canonical JSON bytes)
  std::int64_t registered_at_ms = 0;  // set by the store
};

struct ProposalStart {
  std::string plugin_id;
  std::string plugin_digest;       // 64 hex
  std::int64_t started_at_ms = 0;  // 0: the store uses now
};

// A version-2 plan's files (docs/spec/dpp-general.md limits max_file_bytes and
// max_total_bytes): each file at most kMaxFileBlobBytes, a plan's files
// together at most kMaxPlanFileBytes. They are streamed, never held whole.
inline constexpr std::uint64_t kMaxFileBlobBytes = std::uint64_t{16} << 20;
inline constexpr std::uint64_t kMaxPlanFileBytes = std::uint64_t{1} << 30;

// One streamed file: the artifact a version-2 write installs, or the backup
// apply keeps of a target, keyed by its operation's index in the plan.
enum class FileKind : std::uint8_t { Artifact, Backup };
struct FileBlob {
  std::uint32_t index = 0;  // the operation's index in the plan
  bool exists = true;       // backups only: false = the target was absent
  std::uint64_t size = 0;   // 0 when !exists
  std::string sha256;       // lowercase hex of the bytes ("" when !exists)
  bool operator==(const FileBlob&) const = default;
};
// Opens the bytes of `blob` for the store to read from their start to their
// end (read(2), so a fresh descriptor per call). The store reads at most
// size + 1 bytes in bounded chunks, hashing them.
using FileOpener = std::function<Result<UniqueFd>(const FileBlob& blob)>;

// One dot.log message of a general-profile proposal, kept in arrival order.
struct LogRecord {
  std::string level;    // debug | info | warning | error
  std::string message;  // plugin text, at most 4096 bytes, exact
  std::string method;   // the request it came during, e.g. "dot.plan"
  bool operator==(const LogRecord&) const = default;
};

// The reason of a proposal that ended without a plan because it would change
// nothing (every target already equals its `after`): an outcome, not an
// error. Every other reason is a DOT_E_* code.
inline constexpr std::string_view kNoChangesCode = "NO_CHANGES";

// Why a proposal ended without a plan.
struct Abandonment {
  std::string code;           // "DOT_E_PROTOCOL", ..., or kNoChangesCode
  std::string detail;         // one line for humans
  std::string plugin_stderr;  // raw bytes; cut to kMaxStderrBytes by the store
  // The stored proposal document is dropped (NULL, as before schema 3): a
  // no-change proposal of many paths keeps a small record only.
  bool drop_proposal = false;
};

// What core last saw of a target (the stat cache, docs/spec/store-schema.md):
// its stat fields and the SHA-256 of its content then, and when that digest
// was taken (the racy-timestamp rule compares the file's times with it).
struct StatEntry {
  std::string path;
  std::int64_t dev = 0;
  std::int64_t ino = 0;
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  std::int64_t mode = 0;
  std::int64_t uid = 0;
  std::int64_t gid = 0;
  std::string sha256;
  std::int64_t recorded_ns = 0;  // CLOCK_REALTIME before the content was read
  bool operator==(const StatEntry&) const = default;
};

// What inspect shows per slot; core derives it from the plan.
struct OperationSummary {
  std::string name;           // slot name, e.g. "hello.txt"
  std::string before_sha256;  // "" when the target did not exist
  std::string after_sha256;
};

// An operation row as it is read: OperationSummary's fields by view.
struct OperationRowView {
  std::string_view name;
  std::string_view before_sha256;
  std::string_view after_sha256;
};
// An operation row as a seal writes it, made for the row: the name by
// view, the digests spelled for it (a version-2 plan holds them as bytes).
struct SealRow {
  std::string_view name;
  std::string before_sha256;
  std::string after_sha256;
};

struct Blob {
  std::uint32_t slot = 0;
  bool exists = true;  // backups only: false = the target was absent (bytes empty)
  std::string bytes;   // <= kMaxBlobBytes
  std::string sha256;  // lowercase hex of bytes ("" when !exists)
};

struct SealInput {
  std::string plan_id;         // must equal sha256_hex(canonical_plan)
  std::string proposal_id;     // 64 hex
  std::string canonical_plan;  // the plan bytes exactly as hashed
  // Or, for a plan too large to hold whole, its `canonical_bytes` bytes as
  // `write_canonical` writes them to the sink it is given (canonical_plan
  // stays empty). The store has them written once, packed as they come when
  // there are kPackedPlanBytes or more, and hashed: pieces of another
  // length or digest than plan_id are refused and nothing is stored.
  std::uint64_t canonical_bytes = 0;
  std::function<Status(ByteSink& out)> write_canonical;
  // Number of post-commit effects; nullopt for a pre-capability plan (no
  // "effects" key), which never gets a ledger.
  std::optional<std::uint32_t> effect_count;
  std::vector<OperationSummary> operations;  // slot order
  // Or, for a plan too large to copy its rows (a view of each is made as
  // the store writes it; `operations` stays empty): `operation_count` rows,
  // row i from operation_at(i), its name a view valid until the seal returns.
  std::size_t operation_count = 0;
  std::function<SealRow(std::size_t)> operation_at;
  std::size_t row_count() const { return operation_at ? operation_count : operations.size(); }
  SealRow row(std::size_t i) const {
    if (operation_at) return operation_at(i);
    const OperationSummary& o = operations[i];
    return {o.name, o.before_sha256, o.after_sha256};
  }
  std::vector<Blob> artifacts;    // slot order, one per operation
  std::string plugin_stderr;      // kept for inspect (may be empty)
  std::int64_t sealed_at_ms = 0;  // 0: now
  // A version-2 plan: its artifacts are `files`, not `artifacts` (which
  // stays empty): one per operation with an after digest, ascending index,
  // each read through `open_file` within the seal's SQLite transaction and
  // checked (size and digest, DOT_E_ARTIFACT_MISMATCH).
  bool streamed = false;
  std::vector<FileBlob> files;
  // Or, for a plan too large to list them (`files` stays empty):
  // `file_count` files, the k-th made by file_at(k) each time the store
  // reads it (a list was 13 MB at 100,000 files).
  std::size_t file_count = 0;
  std::function<FileBlob(std::size_t)> file_at;
  std::size_t files_total() const { return file_at ? file_count : files.size(); }
  FileBlob file(std::size_t k) const { return file_at ? file_at(k) : files[k]; }
  FileOpener open_file;
  std::vector<LogRecord> logs;  // the proposal's dot.log messages
};

struct Event {
  std::int64_t seq = 0;            // global, increasing
  State state = State::Proposing;  // the state after this event
  std::int64_t at_ms = 0;
  std::string code;  // "" or a DOT_E_* name
  std::string detail;
};

struct EffectEntry {
  std::uint32_t index = 0;
  EffectState state = EffectState::Attempted;
  std::string idempotency_key;  // sha256_hex(plan_id + ":commit:" + index)
  std::uint32_t attempts = 0;
  std::int64_t updated_at_ms = 0;
  std::string code;  // set when FAILED
  std::string detail;
};

// One row of `inspect list`.
struct TxnSummary {
  TxnId id = 0;
  State state = State::Proposing;
  std::string plan_id;      // "" until SEALED (and for ABANDONED)
  std::string proposal_id;  // "" until known
  std::string plugin_id;
  std::int64_t created_at_ms = 0;
  std::int64_t updated_at_ms = 0;
  std::string code;  // last error code, "" when none
  std::uint32_t operation_count = 0;
  std::optional<std::uint32_t> effect_count;  // nullopt: pre-capability or not sealed
  bool pruned = false;                        // blobs and events dropped by `store prune`
  bool effect_failed = false;                 // some ledger entry is FAILED (POST_COMMIT_FAILED)
};

// The status `status` and `inspect` show for a transaction (docs/spec/transactions.md,
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
  std::string detail;               // last error detail
  std::string plugin_stderr;
  bool plugin_stderr_truncated = false;
  std::vector<OperationSummary> operations;
  std::vector<EffectEntry> effects;
  std::vector<Event> events;
  bool has_backups = false;
  std::vector<LogRecord> logs;  // dot.log messages, in order
  bool streamed = false;        // a version-2 plan (files in file_artifact)
};

// A sealed plan as apply and recovery need it, re-verified on load.
// Every member has a default: a loader names in one designated initializer
// what it has read and fills the rest as it reads on.
struct SealedPlan {
  TxnId id = 0;
  State state = State::Sealed;
  std::string plan_id{};
  std::string proposal_id{};
  std::string canonical_plan{};
  std::optional<std::uint32_t> effect_count{};
  std::size_t operation_count = 0;  // the operations' count (their rows may not be loaded)
  std::vector<OperationSummary> operations{};
  std::vector<Blob> artifacts{};
  std::vector<Blob> backups{};  // empty before PREPARED
  std::vector<EffectEntry> effects{};
  // A version-2 plan: its files (metadata only; Store::read_file streams the
  // bytes) and its proposal document (the preimage of proposal_id).
  bool streamed = false;
  std::vector<FileBlob> files{};
  std::vector<FileBlob> file_backups{};  // empty before PREPARED
  std::string proposal_document{};
  // `store prune` dropped its blobs, events and proposal document (a
  // finished transaction only; never loaded to apply or roll back).
  bool pruned = false;
};

// A plan that wrote targets and was not undone (DONE or COMMITTED), as
// `status` needs it to tell whether the targets still hold what it wrote.
struct AppliedPlan {
  TxnId id = 0;
  std::string plan_id;
  bool streamed = false;  // a version-2 plan
};

// A path and the plugin that owns it (Store::owners_of).
struct PathOwner {
  std::string path;
  std::string plugin_id;
  TxnId txn = 0;  // the transaction that wrote it last
  bool operator==(const PathOwner&) const = default;
};

struct ListFilter {
  std::optional<State> state;
  std::size_t limit = 50;  // 0 = no limit
};

}  // namespace dot::store
