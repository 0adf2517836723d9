#pragma once
// The SQLite journal of one managed root (docs/store.md). Every durable step
// is one SQLite transaction (WAL, synchronous=FULL) followed by the commit
// hook. Every error is a dot::Error: DOT_E_STORE for a database we cannot
// use (missing, not ours, newer schema, corrupt, read-only, locked past the
// busy timeout; the detail names the file and the cause), DOT_E_RECOVERY_REQUIRED
// for an illegal transition or a row whose bytes no longer match their digest,
// DOT_E_NOT_FOUND for an unknown or ambiguous id.
//
// One Store per process and thread; not thread-safe. Mutating calls assume the
// caller holds the root's RootLock (the store itself does not check it).

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/byte_stream.h"
#include "dot/base/result.h"
#include "dot/store/commit_hook.h"
#include "dot/store/records.h"
#include "dot/store/state.h"

namespace dot::store {

namespace detail {
class ReadTxn;
}  // namespace detail

// Schema version written by this build (PRAGMA user_version). Version 1 is the
// pre-capability layout (no effect ledger, no effect count); version 4 keys
// the plugin table by plugin id (several plugins per root); version 5 keeps
// the owner of every path (path_owner); version 6 adds the general
// profile's streamed files and dot.log messages; version 7 pins the
// ownership view's index (one probe per path, not per operation); version 8
// adds the stat cache (stat_cache); version 9 released paths; version 10
// packs proposal documents (zstd); version 11 packs large plan texts.
inline constexpr int kSchemaVersion = 11;
// PRAGMA application_id of every dot-core store ("DotC").
inline constexpr std::int32_t kApplicationId = 0x446f7443;

struct OpenOptions {
  // Read-only: no write of any kind (PRAGMA query_only) once open, except a
  // pending schema migration, which every open performs (atomically, in one
  // SQLite transaction). Mutating calls on a read-only store are DOT_E_INTERNAL.
  bool read_only = false;
  std::chrono::milliseconds busy_timeout{5000};
  CommitHook commit_hook;
};

// The idempotency key of effect `index` of plan `plan_id`:
// sha256_hex(plan_id + ":commit:" + decimal index).
std::string effect_idempotency_key(std::string_view plan_id, std::uint32_t index);

// How `inspect` names a row that has neither a plan id nor a proposal id
// (a proposal that failed before dot.plan answered): "txn-12". No hex id
// starts with 't', so find() never confuses the two.
inline constexpr std::string_view kRowIdPrefix = "txn-";

// The shortest hex prefix find() accepts for a plan or proposal id: 4, like
// git's shortest abbreviation; a prefix two ids share is refused, never
// guessed, so short is safe.
inline constexpr std::size_t kMinIdPrefix = 4;

// Milliseconds since the Unix epoch (the store's clock).
std::int64_t now_ms();

// SQLite's unix VFS opens a database by its absolute path, symlinks
// resolved, and cannot open one whose path, with the longest suffix it adds
// ("-journal"), is longer than the VFS allows: 504 bytes with Debian's
// SQLite. A database that `create` would build (`db_path` + ".new") or
// `open` would read at a longer path is refused here with DOT_E_IO
// (kind path_too_long) naming the path and both lengths, before any file is
// made; `init` calls it before it creates the root.
Status check_database_path_length(const std::string& db_path);

class Store {
 public:
  // Opens an existing database (never creates one), checks it is ours and not
  // newer than kSchemaVersion, migrates it forward, and configures WAL,
  // synchronous=FULL, foreign keys and the busy timeout.
  static Result<Store> open(const std::string& db_path, const OpenOptions& options = {});
  // Creates a new database at `db_path` (must not exist) with this root id.
  // Used by init_root; tests use it directly.
  static Result<Store> create(const std::string& db_path, std::string_view root_id, const OpenOptions& options = {});

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  const std::string& path() const noexcept;
  // The schema version found on disk before open migrated it.
  int opened_version() const noexcept;
  void set_commit_hook(CommitHook hook);

  // ---- root and plugin -------------------------------------------------
  Result<std::string> root_id();
  // The plugin registered under `plugin_id`, if any.
  Result<std::optional<PluginRecord>> plugin(std::string_view plugin_id);
  // Every registered plugin, ascending by plugin id (byte order).
  Result<std::vector<PluginRecord>> plugins();
  // Stores a plugin under its id; a plugin already registered under that id
  // is replaced only when `replace` (otherwise DOT_E_CONFLICT). Other
  // plugins' rows are never touched.
  Status register_plugin(const PluginRecord& record, bool replace);

  // ---- path ownership --------------------------------------------------
  // Which plugin owns each path (docs/spec/dpp-general.md, "Plan"): the plugin of
  // the newest COMMITTED or DONE transaction with an operation on the path,
  // when that operation wrote it (after_sha256 non-empty; a removal leaves
  // the path unowned; a rolled-back transaction never counts). Derived from
  // the operation rows, kept current by transition() in the same SQLite
  // transaction as the state change (into COMMITTED, into ROLLING_BACK), so
  // both calls are index lookups however long the history is; check()
  // compares it with the derivation.
  //
  // The paths `plugin_id` owns, ascending by UTF-8 bytes: dot.plan's `managed`.
  Result<std::vector<std::string>> owned_paths(std::string_view plugin_id);
  // The owner of each of `paths` that has one (in the order of `paths`),
  // but for the paths `except_plugin` owns (a plan asks only which of its
  // paths another plugin owns: a plugin's own 100,000 rows are not copied).
  Result<std::vector<PathOwner>> owners_of(std::span<const std::string_view> paths,
                                           std::string_view except_plugin = {});
  // `dot-core forget`: each of `paths` stops being owned, its file left as
  // it is. Its path_owner row and stat cache entry go and a path_release
  // row records the transaction whose ownership ended (derived_owner then
  // agrees); a later applied transaction on the path owns it again. All or
  // nothing, in one SQLite transaction: a path no plugin owns is
  // DOT_E_VALIDATION kind not_owned. The owners released, in `paths` order.
  Result<std::vector<PathOwner>> release_paths(const std::vector<std::string>& paths);
  // For each released path, the transaction whose ownership it gave up:
  // `status` does not judge a released path against that plan.
  Result<std::map<std::string, TxnId, std::less<>>> released_paths();
  // `dot-core unregister`: removes the plugin row, in one SQLite transaction
  // with releasing every path it owns when `release`. Kinds: no_such_plugin
  // (DOT_E_VALIDATION); plugin_busy (DOT_E_CONFLICT) while one of its
  // transactions is SEALED, PROPOSING or in flight; plugin_owns_paths
  // (DOT_E_POLICY, the count named) while it owns a path and not `release`.
  // The paths released.
  Result<std::vector<PathOwner>> unregister_plugin(std::string_view plugin_id, bool release);

  // ---- the stat cache ----------------------------------------------------
  // What core last saw of target `path`, if anything (an optimisation only:
  // an empty cache is always correct).
  Result<std::optional<StatEntry>> stat_entry(std::string_view path);
  // One read transaction over the queries made while it lives (a plan's
  // stat-cache lookups, one per target): they see one snapshot and take
  // SQLite's file lock once instead of once per query. Nothing may be
  // written through the store while it lives.
  class ReadScope {
   public:
    ReadScope(ReadScope&&) noexcept;
    ReadScope& operator=(ReadScope&&) = delete;
    ~ReadScope();

   private:
    friend class Store;
    explicit ReadScope(std::unique_ptr<detail::ReadTxn> txn);
    std::unique_ptr<detail::ReadTxn> txn_;
  };
  Result<ReadScope> read_scope();
  // Stores `entries` (each replacing the path's previous one) in one SQLite
  // transaction. A digest that is not 64 lowercase hex is DOT_E_VALIDATION
  // and nothing is stored.
  Status remember_stats(const std::vector<StatEntry>& entries);

  // ---- proposals -------------------------------------------------------
  // A new PROPOSING row (and its event).
  Result<TxnId> begin_proposal(const ProposalStart& start);
  // Records the proposal id once computed (before materialize) with the
  // proposal document it is the SHA-256 of (kept for every proposal, sealed
  // or abandoned: what was proposed). A document that does not hash to the id
  // is DOT_E_VALIDATION. Only a caller without one (the store's own tests)
  // leaves it empty; then none is kept.
  Status set_proposal_id(TxnId id, std::string_view proposal_id, std::string_view document = {});
  // The same for a document `bytes` long that `write` hands over in pieces
  // (to the ByteSink it is given, in order): packed as it comes, never held
  // whole (30 MB at 100,000 paths). Pieces that are not exactly `bytes`
  // long, or do not hash to the id, are DOT_E_VALIDATION; nothing is stored.
  using DocumentWriter = std::function<Status(ByteSink& out)>;
  Status set_proposal_id(TxnId id, std::string_view proposal_id, std::uint64_t bytes, const DocumentWriter& write);
  // PROPOSING -> ABANDONED with the error and the plugin's bounded stderr.
  // `logs`: the proposal's dot.log messages, kept in order (general profile).
  Status abandon(TxnId id, const Abandonment& why, const std::vector<LogRecord>& logs = {});
  // PROPOSING -> SEALED in one SQLite transaction: plan bytes, plan_id,
  // proposal_id, effect count, operations, artifacts (each digest checked
  // against its bytes: DOT_E_ARTIFACT_MISMATCH; plan_id against the bytes:
  // DOT_E_VALIDATION). A plan_id already stored is DOT_E_CONFLICT.
  Status seal(TxnId id, const SealInput& input);

  // ---- version-2 files (streamed) ------------------------------------------
  // Streams the stored bytes of file `index` (an operation index) of a
  // version-2 plan to `out` in chunks of at most 1 MiB, hashing them; the
  // length and digest are checked at the end against the row's: a mismatch
  // is DOT_E_RECOVERY_REQUIRED (tampered), and whatever `out` already got
  // must then be discarded. No such file (or pruned): DOT_E_NOT_FOUND.
  Status read_file(TxnId id, FileKind kind, std::uint32_t index, ByteSink& out);

  // ---- transactions ----------------------------------------------------
  // Loads a sealed plan with its artifacts, backups and ledger, recomputing
  // plan_id from the stored bytes and every blob's digest: any mismatch is
  // DOT_E_RECOVERY_REQUIRED naming the row. Never returns unverified bytes.
  // A version-2 plan (streamed) comes with its files' metadata, each checked
  // against its operation row, and its proposal document; its files' bytes
  // are read with read_file (verified as they stream).
  Result<SealedPlan> load_sealed(TxnId id);
  // The same load of a version-2 plan without what grows with its
  // operations as text: canonical_plan, proposal_document and operations are
  // left empty (a plan of 100,000 operations is 60 MB of them), to be read
  // as they stream with read_plan_text, read_proposal_document and
  // read_operation_rows, which check what load_sealed checks of them (the
  // plan text against plan_id at its end; the caller checks the proposal
  // document against proposal_id). The files' metadata are checked against
  // the operation rows as those stream, and `files` is left empty too
  // (read_file finds each by its index); `file_backups` are kept. A
  // version-1 plan loads whole.
  Result<SealedPlan> load_sealed_without_texts(TxnId id);
  // The proposal document of transaction `id` handed to `out` as it
  // unpacks (its hash is the caller's to check: core's proposal binding).
  // None kept (a pruned transaction, or the store's own tests): nothing is
  // written. Errors as read_plan_text's.
  Status read_proposal_document(TxnId id, ByteSink& out);
  // The operation rows of transaction `id` in slot order, one at a time.
  using OperationRowFn = std::function<Status(const OperationRowView& row)>;
  Status read_operation_rows(TxnId id, const OperationRowFn& each);
  // SEALED -> PREPARED, storing the backups (slot order) in the same SQLite
  // transaction.
  Status prepare(TxnId id, const std::vector<Blob>& backups);
  // The same for a version-2 plan: one backup per operation (index i at
  // position i; exists false for a target that was absent), each streamed
  // from the descriptor `open` gives into file_backup and checked against
  // its size and digest as it goes (DOT_E_ARTIFACT_MISMATCH: the file is not
  // what the caller observed, and the transaction stays SEALED).
  Status prepare_files(TxnId id, const std::vector<FileBlob>& backups, const FileOpener& open);
  // The same, each backup made as the store reads it: backup_at(i) for
  // operation i of `count` (at 100,000 operations their list, digests
  // spelled in hex, was 13 MB). Each is judged as it comes, inside the
  // step's SQLite transaction: a bad one rolls the step back.
  Status prepare_files(TxnId id, std::size_t count, const std::function<FileBlob(std::size_t)>& backup_at,
                       const FileOpener& open);
  // Any other legal transition with its event, in one SQLite transaction.
  // Illegal ones (per is_legal_transition, from the state on disk) are
  // DOT_E_RECOVERY_REQUIRED and change nothing. `code`/`detail` go to the event
  // and, when code is set, to the transaction's last error.
  Status transition(TxnId id, State to, std::string_view code = {}, std::string_view detail = {});
  // An event without a state change (e.g. a recovery note).
  Status note(TxnId id, std::string_view code, std::string_view detail);

  // ---- effect ledger ---------------------------------------------------
  // (none | ATTEMPTED | FAILED) -> ATTEMPTED, counting attempts. Only on a
  // COMMITTED transaction with index < its effect count; a pre-capability
  // plan has no ledger (DOT_E_RECOVERY_REQUIRED). SUCCEEDED is final.
  Result<EffectEntry> effect_attempt(TxnId id, std::uint32_t index);
  // ATTEMPTED -> SUCCEEDED | FAILED (code/detail kept for FAILED).
  Status effect_finish(TxnId id, std::uint32_t index, EffectState outcome, std::string_view code = {},
                       std::string_view detail = {});
  Result<std::vector<EffectEntry>> effects(TxnId id);

  // ---- queries ---------------------------------------------------------
  // A plan id or a proposal id, or a prefix of >= kMinIdPrefix hex characters of one
  // that names exactly one row (a sealed row matches by both of its ids), or
  // kRowIdPrefix + the row number (a proposal that ended before it had a
  // proposal id). Unknown: DOT_E_NOT_FOUND kind "unknown"; a prefix of ids
  // of two or more rows: kind "ambiguous", the detail listing them.
  Result<TxnId> find(std::string_view id_or_prefix);
  // Newest first.
  Result<std::vector<TxnSummary>> list(const ListFilter& filter);
  // PREPARED, COMMITTING, COMMITTED, ROLLING_BACK (oldest first).
  Result<std::vector<TxnSummary>> in_flight();
  Result<TxnSummary> summary(TxnId id);
  Result<TxnDetail> detail(TxnId id);
  Result<std::vector<Event>> events(TxnId id);
  // A general-profile proposal's dot.log messages, in the order they came.
  Result<std::vector<LogRecord>> logs(TxnId id);
  Result<std::size_t> count();
  // For every target name any DONE or COMMITTED transaction wrote, the
  // newest such transaction: each plan once, newest first (its text is read
  // with read_plan_text). The store does not parse plans: the operation
  // rows only choose the rows.
  Result<std::vector<AppliedPlan>> applied_plans();
  // The stored text of plan `id` handed to `out` in pieces as it unpacks
  // (never held whole: 30 MB at 100,000 operations), hashed on the way.
  // Errors: no such plan, DOT_E_NOT_FOUND; a text that does not unpack, or
  // whose bytes do not hash to the plan id, DOT_E_RECOVERY_REQUIRED
  // (tampered), found as it streams or at its end: whatever `out` got must
  // then be discarded; `out`'s own error as it is.
  Status read_plan_text(TxnId id, ByteSink& out);

  // ---- maintenance -----------------------------------------------------
  struct CheckReport {
    std::vector<std::string> problems;  // empty: every check holds
    std::size_t transactions = 0;
    std::size_t blobs = 0;
  };
  // Judges one stored plan with the plan model the store does not know: the
  // plan's bytes (already matching their plan_id) with the columns stored
  // beside them (proposal_id, effect_count, operation rows; no blobs), and
  // the store's root id. `dot-core store check` passes core's
  // verify_sealed_plan, the check every load of a plan makes.
  using PlanJudge = Status (*)(const SealedPlan& plan, std::string_view root_id);
  // PRAGMA integrity_check and foreign_key_check, plus our invariants: every
  // event history follows legal transitions and ends in the row's state, the
  // ledger matches each plan's effect count and state, every blob and plan
  // matches its digest (a version-2 plan's files streamed, one chunk at a
  // time, one per writing operation); and, with a judge, every stored plan the judge
  // refuses (one problem per plan, naming each violation). A check that
  // cannot run at all is an error; a violation is a problem in the report.
  Result<CheckReport> check(PlanJudge judge = nullptr);
  struct PruneReport {
    std::size_t pruned = 0;  // transactions whose blobs and events were dropped
  };
  // Drops the blobs (artifacts, backups, streamed files, plugin stderr) and events of all but
  // the newest `keep` finished transactions (is_finished), keeping their
  // summary rows, operations, ledger and plan bytes (so plan ids stay
  // verifiable). Never touches an unfinished one. load_sealed on a pruned
  // transaction is DOT_E_NOT_FOUND (kind "pruned"). Stat-cache entries of
  // paths no plugin owns go too. Then the freed pages are returned to the
  // file system: PRAGMA incremental_vacuum on a store in incremental
  // auto-vacuum mode (every store created since schema 8), otherwise one
  // VACUUM that also switches the store to that mode; and a truncating WAL
  // checkpoint, so the file is smaller when prune returns. Each is one
  // SQLite transaction: a crash leaves the store as before or as after.
  Result<PruneReport> prune(std::size_t keep);

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  Result<SealedPlan> load(TxnId id, bool texts);
  std::unique_ptr<Impl> impl_;
};

}  // namespace dot::store
