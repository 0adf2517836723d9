// `store check` (SQLite's own checks plus our invariants) and `store prune`.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dot/base/sha256.h"
#include "file_blobs.h"
#include "packed_document.h"
#include "store_impl.h"

namespace dot::store {
namespace {

bool has_plan(State s) { return s != State::Proposing && s != State::Abandoned; }

// States whose transaction may own ledger rows: only a commit runs effects,
// and a committed transaction can later be rolled back.
bool may_have_ledger(State s) {
  return s == State::Committed || s == State::Done || s == State::RollingBack || s == State::RolledBack;
}

// A transaction's streamed files, each streamed through and hashed (one
// chunk in memory at a time): length and digest as the row says, indexes
// ascending and within the plan, artifacts exactly the operations with an
// after digest (the digest theirs) when `match_operations`.
template <class Problem>
Status check_files(detail::Db& db, TxnId id, const std::string& who, std::size_t ops, FileKind kind,
                   bool match_operations, std::size_t& count, Store::CheckReport& report, Problem&& problem) {
  DOT_ASSIGN_OR_RETURN(auto files, detail::stored_files(db, id, kind));
  count = files.size();
  const std::string_view what = detail::file_kind_name(kind);
  std::vector<FileBlob> blobs;
  for (const auto& f : files) {
    ++report.blobs;
    blobs.push_back(f.blob);
    DOT_ASSIGN_OR_RETURN(detail::StreamedBlob got, detail::stream_blob(db, detail::file_table(kind), f.rowid, nullptr));
    if (got.length != f.blob.size)
      problem(fmt::format("{}: {} {} holds {} bytes, not its {}", who, what, f.blob.index, got.length, f.blob.size));
    else if (f.blob.exists && got.sha256 != f.blob.sha256)
      problem(fmt::format("{}: {} {} does not match its digest", who, what, f.blob.index));
  }
  if (auto shapes = detail::check_file_shapes(blobs, ops, kind, who); !shapes.ok()) problem(shapes.error().detail);
  if (!match_operations) return {};
  DOT_ASSIGN_OR_RETURN(auto rows, read_operations(db, id));
  std::size_t next = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const bool has_file = next < files.size() && files[next].blob.index == i;
    if (rows[i].after_sha256.empty() == has_file || (has_file && files[next].blob.sha256 != rows[i].after_sha256))
      problem(fmt::format("{}: operation {} and its artifact disagree", who, i));
    if (has_file) ++next;
  }
  return {};
}

// What `store check` found so far.
using Problems = std::vector<std::string>;

// SQLite's own checks and the one root row.
Status check_database(detail::Db& db, Problems& problems) {
  {
    DOT_ASSIGN_OR_RETURN(auto s, db.prepare("PRAGMA integrity_check"));
    for (;;) {
      DOT_ASSIGN_OR_RETURN(bool row, s.step());
      if (!row) break;
      std::string line = s.text(0);
      if (line != "ok") problems.push_back("integrity_check: " + line);
    }
  }
  {
    DOT_ASSIGN_OR_RETURN(auto s, db.prepare("PRAGMA foreign_key_check"));
    for (;;) {
      DOT_ASSIGN_OR_RETURN(bool row, s.step());
      if (!row) break;
      problems.push_back(
          fmt::format("foreign_key_check: table {} row {} points at a missing {} row", s.text(0), s.i64(1), s.text(2)));
    }
  }
  DOT_ASSIGN_OR_RETURN(auto s, db.prepare("SELECT count(*) FROM root WHERE length(root_id) = 64"));
  DOT_ASSIGN_OR_RETURN(bool row, s.step());
  if (!row || s.i64(0) != 1) problems.push_back("the root row is missing");
  return {};
}

// Event histories, one pass over the event table in (txn, seq) order: each
// starts at PROPOSING and moves by legal transitions. The last state of each.
Result<std::map<TxnId, State>> check_histories(detail::Db& db, Problems& problems) {
  std::map<TxnId, State> last_event;
  DOT_ASSIGN_OR_RETURN(auto s, db.prepare("SELECT txn_id, seq, state FROM event ORDER BY txn_id, seq"));
  TxnId current = -1;
  State prev = State::Proposing;
  for (;;) {
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    TxnId id = s.i64(0);
    auto st = state_from_name(s.text(2));
    if (!st) {
      problems.push_back(fmt::format("event {}: unknown state \"{}\"", s.i64(1), s.text(2)));
      continue;
    }
    if (id != current) {
      current = id;
      if (*st != State::Proposing)
        problems.push_back(fmt::format("transaction {}: history starts at {}, not PROPOSING", id, state_name(*st)));
    } else if (*st != prev && !is_legal_transition(prev, *st)) {
      problems.push_back(fmt::format("transaction {}: event {} goes from {} to {}, an illegal transition", id, s.i64(1),
                                     state_name(prev), state_name(*st)));
    }
    prev = *st;
    last_event[id] = *st;
  }
  return last_event;
}

// One transaction row with its plan row (when there is one).
struct TxnRow {
  TxnId id = 0;
  State state = State::Proposing;
  std::string plan_id, who;
  bool pruned = false;
  std::size_t ops = 0;
  bool plan_row = false;
  std::string canonical;
  std::optional<std::int64_t> effect_count;
  std::string proposal_id;
  std::optional<std::string> proposal;
  bool streamed = false;
};

constexpr const char* kTxnRowsSql =
    "SELECT txn.id, txn.state, txn.plan_id, txn.pruned, txn.operation_count, plan.canonical, plan.effect_count, "
    "plan.txn_id IS NOT NULL, txn.proposal_id, txn.proposal, plan.streamed FROM txn LEFT JOIN plan ON "
    "plan.txn_id = txn.id "
    "ORDER BY txn.id";

// The row under `s` (kTxnRowsSql); nullopt, with the problem, when its state is unknown.
std::optional<TxnRow> txn_row(const detail::Stmt& s, Problems& problems) {
  TxnRow t;
  t.id = s.i64(0);
  t.plan_id = s.text(2);
  t.who = row_name(t.id, t.plan_id);
  auto st = state_from_name(s.text(1));
  if (!st) {
    problems.push_back(fmt::format("{}: unknown state \"{}\"", t.who, s.text(1)));
    return std::nullopt;
  }
  t.state = *st;
  t.pruned = s.i64(3) != 0;
  t.ops = static_cast<std::size_t>(s.i64(4));
  {  // a large plan text is stored packed (kPackedPlanBytes)
    std::string stored = s.blob(5);
    auto text = detail::unpack_document(stored, kMaxProposalBytes);
    if (text.ok()) {
      t.canonical = std::move(text).value();
    } else {
      problems.push_back(fmt::format("{}: the plan text: {}", t.who, text.error().detail));
      t.canonical = std::move(stored);
    }
  }
  if (!s.is_null(6)) t.effect_count = s.i64(6);
  t.plan_row = s.i64(7) != 0;
  t.proposal_id = s.text(8);
  if (!s.is_null(9)) {
    auto unpacked = detail::unpack_document(s.blob(9), kMaxProposalBytes);
    if (unpacked.ok())
      t.proposal = std::move(unpacked).value();
    else
      problems.push_back(fmt::format("{}: {}", t.who, unpacked.error().detail));
  }
  t.streamed = s.i64(10) != 0;
  return t;
}

// The row's state against its history, pruning, the kept proposal document
// and the presence of a plan row; false when the plan row is not as the
// state says (nothing more is checked then).
bool check_txn_state(const TxnRow& t, const std::map<TxnId, State>& last_event, Problems& problems) {
  auto ev = last_event.find(t.id);
  if (ev == last_event.end()) {
    if (!t.pruned) problems.push_back(fmt::format("{}: no events", t.who));
  } else if (ev->second != t.state) {
    problems.push_back(
        fmt::format("{}: state {} but its last event says {}", t.who, state_name(t.state), state_name(ev->second)));
  }
  if (t.pruned && !is_finished(t.state))
    problems.push_back(fmt::format("{}: pruned while {}", t.who, state_name(t.state)));
  // A kept proposal document is what its proposal id is the hash of.
  if (t.proposal && sha256_hex(*t.proposal) != t.proposal_id)
    problems.push_back(fmt::format("{}: the stored proposal document hashes to {}, not to the proposal id", t.who,
                                   sha256_hex(*t.proposal)));
  if (has_plan(t.state) != t.plan_row) {
    problems.push_back(fmt::format("{}: {} {} a plan row", t.who, state_name(t.state), t.plan_row ? "has" : "lacks"));
    return false;
  }
  return true;
}

// The plan bytes against the plan id, then the plan itself, judged by the
// layer that knows the plan model.
Status check_plan(detail::Db& db, const TxnRow& t, Store::PlanJudge judge, const std::string& root_id,
                  Problems& problems) {
  std::string digest = sha256_hex(t.canonical);
  if (digest != t.plan_id) problems.push_back(fmt::format("{}: the stored plan bytes hash to {}", t.who, digest));
  if (!judge || digest != t.plan_id) return {};
  SealedPlan sealed{.id = t.id,
                    .state = t.state,
                    .plan_id = t.plan_id,
                    .proposal_id = t.proposal_id,
                    .canonical_plan = t.canonical,
                    .streamed = t.streamed,
                    .proposal_document = t.proposal.value_or(std::string()),
                    .pruned = t.pruned};
  if (t.effect_count) sealed.effect_count = static_cast<std::uint32_t>(*t.effect_count);
  DOT_ASSIGN_OR_RETURN(sealed.operations, read_operations(db, t.id));
  if (auto verdict = judge(sealed, root_id); !verdict.ok())
    problems.push_back(fmt::format("{}: {}", t.who, verdict.error().message()));
  return {};
}

// The version-1 blobs of one table (artifact, backup): each digest, presence
// and slot; `n` counts them.
Status check_slot_blobs(detail::Db& db, const TxnRow& t, const char* sql, std::string_view table, bool presence,
                        std::size_t& n, Store::CheckReport& report, Problems& problems) {
  DOT_ASSIGN_OR_RETURN(auto b, db.prepare(sql));
  b.bind(1, t.id);
  n = 0;
  for (;;) {
    DOT_ASSIGN_OR_RETURN(bool r, b.step());
    if (!r) break;
    ++n;
    ++report.blobs;
    bool present = presence ? b.i64(3) != 0 : true;
    if (present && sha256_hex(b.blob(1)) != b.text(2))
      problems.push_back(fmt::format("{}: {} slot {} does not match its digest", t.who, table, b.i64(0)));
    if (!present && (!b.blob(1).empty() || !b.text(2).empty()))
      problems.push_back(fmt::format("{}: {} slot {} is absent but has bytes", t.who, table, b.i64(0)));
    if (static_cast<std::size_t>(b.i64(0)) >= t.ops)
      problems.push_back(fmt::format("{}: {} slot {} beyond its {} operations", t.who, table, b.i64(0), t.ops));
  }
  return {};
}

// Artifacts and backups, version-1 blobs or streamed files: each intact, as
// many as the state requires.
Status check_txn_blobs(detail::Db& db, const TxnRow& t, Store::CheckReport& report, Problems& problems) {
  auto problem = [&](std::string p) { problems.push_back(std::move(p)); };
  std::size_t artifacts = 0, backups = 0;
  DOT_TRY(check_slot_blobs(db, t, "SELECT slot, bytes, sha256 FROM artifact WHERE txn_id = ?1", "artifact", false,
                           artifacts, report, problems));
  DOT_TRY(check_slot_blobs(db, t, "SELECT slot, bytes, sha256, present FROM backup WHERE txn_id = ?1", "backup", true,
                           backups, report, problems));
  std::size_t files = 0, file_backups = 0;
  DOT_TRY(check_files(db, t.id, t.who, t.ops, FileKind::Artifact, t.streamed && !t.pruned, files, report, problem));
  DOT_TRY(check_files(db, t.id, t.who, t.ops, FileKind::Backup, false, file_backups, report, problem));
  if (!t.streamed && (files != 0 || file_backups != 0))
    problem(fmt::format("{}: a version-1 plan has streamed files", t.who));
  if (t.streamed) {
    if (artifacts != 0 || backups != 0) problem(fmt::format("{}: a streamed plan has version-1 blobs", t.who));
    // Artifacts are the writing operations only (checked in check_files);
    // backups, once there, one per operation as in version 1.
    artifacts = t.ops;
    backups = file_backups;
  }
  if (!t.pruned && artifacts != t.ops)
    problem(fmt::format("{}: {} artifacts for {} operations", t.who, artifacts, t.ops));
  bool needs_backups = t.state != State::Sealed && t.state != State::Discarded && t.state != State::Stale;
  if (!t.pruned && needs_backups && backups != t.ops)
    problem(fmt::format("{}: {} is past PREPARED but has {} backups for {} operations", t.who, state_name(t.state),
                        backups, t.ops));
  if (!needs_backups && backups != 0) problem(fmt::format("{}: {} but has backups", t.who, state_name(t.state)));
  return {};
}

// The effect ledger: rows only for plans with effects, in states that ran
// them, with the right idempotency keys; DONE has every effect succeeded.
Status check_txn_ledger(detail::Db& db, const TxnRow& t, Problems& problems) {
  DOT_ASSIGN_OR_RETURN(auto e,
                       db.query("SELECT idx, state, idempotency_key FROM effect WHERE txn_id = ?1 ORDER BY idx", t.id));
  std::int64_t succeeded = 0;
  for (;;) {
    DOT_ASSIGN_OR_RETURN(bool r, e.step());
    if (!r) break;
    std::int64_t idx = e.i64(0);
    if (!t.effect_count) {
      problems.push_back(fmt::format("{}: a pre-capability plan has a ledger row (effect {})", t.who, idx));
      continue;
    }
    if (idx >= *t.effect_count)
      problems.push_back(fmt::format("{}: ledger row for effect {} of a plan with {}", t.who, idx, *t.effect_count));
    if (!may_have_ledger(t.state))
      problems.push_back(fmt::format("{}: {} but has a ledger row (effect {})", t.who, state_name(t.state), idx));
    if (e.text(2) != effect_idempotency_key(t.plan_id, static_cast<std::uint32_t>(idx)))
      problems.push_back(fmt::format("{}: effect {} has a wrong idempotency key", t.who, idx));
    if (e.text(1) == "SUCCEEDED") ++succeeded;
  }
  if (t.state == State::Done && t.effect_count && succeeded != *t.effect_count)
    problems.push_back(fmt::format("{}: DONE with {} of {} effects succeeded", t.who, succeeded, *t.effect_count));
  return {};
}

// path_owner is derived_owner kept current: any row one has and the other
// lacks is drift (a forged row, or a change that bypassed transition()).
Status check_path_owners(detail::Db& db, Problems& problems) {
  DOT_ASSIGN_OR_RETURN(
      auto owners,
      db.prepare(
          "SELECT 'kept', path, plugin_id, txn_id FROM (SELECT path, plugin_id, txn_id FROM path_owner EXCEPT "
          "SELECT path, plugin_id, txn_id FROM derived_owner) UNION ALL "
          "SELECT 'derived', path, plugin_id, txn_id FROM (SELECT path, plugin_id, txn_id FROM derived_owner EXCEPT "
          "SELECT path, plugin_id, txn_id FROM path_owner) ORDER BY 2, 1"));
  for (;;) {
    DOT_ASSIGN_OR_RETURN(bool row, owners.step());
    if (!row) break;
    problems.push_back(owners.text(0) == "kept"
                           ? fmt::format("path owner: \"{}\" is kept as owned by {} (transaction {}), which the "
                                         "committed operations do not say",
                                         owners.text(1), owners.text(2), owners.i64(3))
                           : fmt::format("path owner: \"{}\" is owned by {} (transaction {}) by the committed "
                                         "operations, but not kept so",
                                         owners.text(1), owners.text(2), owners.i64(3)));
  }
  return {};
}

}  // namespace

Result<Store::CheckReport> Store::check(PlanJudge judge) {
  auto& db = impl_->db;
  CheckReport report;
  DOT_ASSIGN_OR_RETURN(auto snapshot, detail::ReadTxn::begin(db));
  DOT_TRY(check_database(db, report.problems));
  DOT_ASSIGN_OR_RETURN(std::string root_id, db.query_text("SELECT root_id FROM root", "reading the root id"));
  DOT_ASSIGN_OR_RETURN(auto last_event, check_histories(db, report.problems));
  // Per transaction: state matches history, plan bytes match plan id, blobs, ledger.
  DOT_ASSIGN_OR_RETURN(auto s, db.prepare(kTxnRowsSql));
  for (;;) {
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    ++report.transactions;
    std::optional<TxnRow> t = txn_row(s, report.problems);
    if (!t || !check_txn_state(*t, last_event, report.problems) || !t->plan_row) continue;
    DOT_TRY(check_plan(db, *t, judge, root_id, report.problems));
    DOT_TRY(check_txn_blobs(db, *t, report, report.problems));
    DOT_TRY(check_txn_ledger(db, *t, report.problems));
  }
  DOT_TRY(check_path_owners(db, report.problems));
  return report;
}

namespace {

// The pages prune freed, given back to the file system. A store in
// incremental auto-vacuum mode (2) moves its last pages into the free ones
// and truncates; an older store is rebuilt once by VACUUM, which also puts
// it in that mode. Both are SQLite transactions of their own (a crash
// leaves the store whole, before or after), and both keep every row and
// value (no invariant of the store depends on a page's place or a rowid).
// The truncating checkpoint then writes the WAL back, so the file itself
// shrinks now rather than at the last close.
Status return_free_pages(detail::Db& db) {
  DOT_ASSIGN_OR_RETURN(std::int64_t mode, db.query_int("PRAGMA auto_vacuum", "reading the auto-vacuum mode"));
  if (mode == 2) {
    DOT_TRY(db.exec("PRAGMA incremental_vacuum", "returning free pages"));
  } else {
    DOT_TRY(db.exec("PRAGMA auto_vacuum = INCREMENTAL", "setting incremental auto-vacuum"));
    DOT_TRY(db.exec("VACUUM", "rebuilding the store (VACUUM)"));
  }
  return db.exec("PRAGMA wal_checkpoint(TRUNCATE)", "checkpointing the WAL");
}

}  // namespace

Result<Store::PruneReport> Store::prune(std::size_t keep) {
  DOT_TRY(impl_->writable());
  auto& db = impl_->db;
  DOT_ASSIGN_OR_RETURN(auto txn, detail::WriteTxn::begin(db));
  std::vector<TxnId> victims;
  {
    DOT_ASSIGN_OR_RETURN(
        auto s,
        db.query("SELECT id, pruned FROM txn WHERE state IN ('DONE','ROLLED_BACK','DISCARDED','STALE','ABANDONED') "
                 "ORDER BY id DESC LIMIT -1 OFFSET ?1",
                 keep));
    for (;;) {
      DOT_ASSIGN_OR_RETURN(bool row, s.step());
      if (!row) break;
      if (s.i64(1) == 0) victims.push_back(s.i64(0));
    }
  }
  // What a pruned transaction no longer keeps, in this order; the txn row
  // stays, marked pruned.
  static constexpr const char* kPrune[] = {
      "DELETE FROM artifact WHERE txn_id = ?1",
      "DELETE FROM backup WHERE txn_id = ?1",
      "DELETE FROM file_artifact WHERE txn_id = ?1",
      "DELETE FROM file_backup WHERE txn_id = ?1",
      "DELETE FROM proposal_log WHERE txn_id = ?1",
      "DELETE FROM event WHERE txn_id = ?1",
      "UPDATE txn SET plugin_stderr = NULL, stderr_truncated = 0, pruned = 1 WHERE id = ?1",
  };
  for (TxnId id : victims)
    for (const char* sql : kPrune) DOT_TRY(db.run(sql, id));
  // The proposal document of every pruned row goes too (its id stays): at
  // 100,000 paths it is megabytes, kept for every sealed plan. One statement
  // for the rows just pruned and for those an earlier prune kept it for.
  DOT_TRY(db.exec("UPDATE txn SET proposal = NULL WHERE pruned = 1 AND proposal IS NOT NULL",
                  "dropping the proposal documents of pruned transactions"));
  // Cached stats of paths no plugin owns any more (removed, or never applied).
  DOT_TRY(db.exec("DELETE FROM stat_cache WHERE path NOT IN (SELECT path FROM path_owner)",
                  "dropping stale stat-cache rows"));
  DOT_TRY(txn.commit());
  impl_->fire("store.prune");
  DOT_TRY(return_free_pages(db));
  impl_->fire("store.prune.vacuum");
  return PruneReport{victims.size()};
}

}  // namespace dot::store
