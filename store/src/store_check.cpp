// `store check` (SQLite's own checks plus our invariants) and `store prune`.
#include <map>

#include <fmt/format.h>

#include "dot/base/sha256.h"
#include "file_blobs.h"
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

}  // namespace

Result<Store::CheckReport> Store::check(PlanJudge judge) {
  auto& db = impl_->db;
  CheckReport report;
  auto problem = [&](std::string p) { report.problems.push_back(std::move(p)); };
  DOT_ASSIGN_OR_RETURN(auto snapshot, detail::ReadTxn::begin(db));
  {
    DOT_ASSIGN_OR_RETURN(auto s, db.prepare("PRAGMA integrity_check"));
    for (;;) {
      DOT_ASSIGN_OR_RETURN(bool row, s.step());
      if (!row) break;
      std::string line = s.text(0);
      if (line != "ok") problem("integrity_check: " + line);
    }
  }
  {
    DOT_ASSIGN_OR_RETURN(auto s, db.prepare("PRAGMA foreign_key_check"));
    for (;;) {
      DOT_ASSIGN_OR_RETURN(bool row, s.step());
      if (!row) break;
      problem(
          fmt::format("foreign_key_check: table {} row {} points at a missing {} row", s.text(0), s.i64(1), s.text(2)));
    }
  }
  {
    DOT_ASSIGN_OR_RETURN(auto s, db.prepare("SELECT count(*) FROM root WHERE length(root_id) = 64"));
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row || s.i64(0) != 1) problem("the root row is missing");
  }
  DOT_ASSIGN_OR_RETURN(std::string root_id, db.query_text("SELECT root_id FROM root", "reading the root id"));
  // Event histories, one pass over the event table in (txn, seq) order.
  std::map<TxnId, State> last_event;
  {
    DOT_ASSIGN_OR_RETURN(auto s, db.prepare("SELECT txn_id, seq, state FROM event ORDER BY txn_id, seq"));
    TxnId current = -1;
    State prev = State::Proposing;
    for (;;) {
      DOT_ASSIGN_OR_RETURN(bool row, s.step());
      if (!row) break;
      TxnId id = s.i64(0);
      auto st = state_from_name(s.text(2));
      if (!st) {
        problem(fmt::format("event {}: unknown state \"{}\"", s.i64(1), s.text(2)));
        continue;
      }
      if (id != current) {
        current = id;
        if (*st != State::Proposing)
          problem(fmt::format("transaction {}: history starts at {}, not PROPOSING", id, state_name(*st)));
      } else if (*st != prev && !is_legal_transition(prev, *st)) {
        problem(fmt::format("transaction {}: event {} goes from {} to {}, an illegal transition", id, s.i64(1),
                            state_name(prev), state_name(*st)));
      }
      prev = *st;
      last_event[id] = *st;
    }
  }
  // Per transaction: state matches history, plan bytes match plan id, blobs.
  DOT_ASSIGN_OR_RETURN(
      auto s,
      db.prepare(
          "SELECT txn.id, txn.state, txn.plan_id, txn.pruned, txn.operation_count, plan.canonical, plan.effect_count, "
          "plan.txn_id IS NOT NULL, txn.proposal_id, txn.proposal, plan.streamed FROM txn LEFT JOIN plan ON "
          "plan.txn_id = txn.id "
          "ORDER BY txn.id"));
  for (;;) {
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    ++report.transactions;
    TxnId id = s.i64(0);
    std::string plan_id = s.text(2);
    std::string who = row_name(id, plan_id);
    auto st = state_from_name(s.text(1));
    if (!st) {
      problem(fmt::format("{}: unknown state \"{}\"", who, s.text(1)));
      continue;
    }
    bool pruned = s.i64(3) != 0;
    auto ops = static_cast<std::size_t>(s.i64(4));
    auto ev = last_event.find(id);
    if (ev == last_event.end()) {
      if (!pruned) problem(fmt::format("{}: no events", who));
    } else if (ev->second != *st) {
      problem(fmt::format("{}: state {} but its last event says {}", who, state_name(*st), state_name(ev->second)));
    }
    if (pruned && !is_finished(*st)) problem(fmt::format("{}: pruned while {}", who, state_name(*st)));
    // A kept proposal document is what its proposal id is the hash of.
    if (!s.is_null(9) && sha256_hex(s.blob(9)) != s.text(8))
      problem(fmt::format("{}: the stored proposal document hashes to {}, not to the proposal id", who,
                          sha256_hex(s.blob(9))));
    bool plan_row = s.i64(7) != 0;
    if (has_plan(*st) != plan_row) {
      problem(fmt::format("{}: {} {} a plan row", who, state_name(*st), plan_row ? "has" : "lacks"));
      continue;
    }
    if (!plan_row) continue;
    std::string digest = sha256_hex(s.blob(5));
    if (digest != plan_id) problem(fmt::format("{}: the stored plan bytes hash to {}", who, digest));
    std::optional<std::int64_t> effect_count;
    if (!s.is_null(6)) effect_count = s.i64(6);
    // The plan itself, judged by the layer that knows the plan model.
    if (judge && digest == plan_id) {
      SealedPlan sealed;
      sealed.id = id;
      sealed.state = *st;
      sealed.plan_id = plan_id;
      sealed.proposal_id = s.text(8);
      sealed.canonical_plan = s.blob(5);
      sealed.streamed = s.i64(10) != 0;
      sealed.proposal_document = s.blob(9);
      if (effect_count) sealed.effect_count = static_cast<std::uint32_t>(*effect_count);
      DOT_ASSIGN_OR_RETURN(sealed.operations, read_operations(db, id));
      if (auto verdict = judge(sealed, root_id); !verdict.ok())
        problem(fmt::format("{}: {}", who, verdict.error().message()));
    }

    // Blobs.
    auto blob_check = [&](const char* sql, std::string_view table, bool presence, std::size_t& n) -> Status {
      DOT_ASSIGN_OR_RETURN(auto b, db.prepare(sql));
      b.bind(1, id);
      n = 0;
      for (;;) {
        DOT_ASSIGN_OR_RETURN(bool r, b.step());
        if (!r) break;
        ++n;
        ++report.blobs;
        bool present = presence ? b.i64(3) != 0 : true;
        if (present && sha256_hex(b.blob(1)) != b.text(2))
          problem(fmt::format("{}: {} slot {} does not match its digest", who, table, b.i64(0)));
        if (!present && (!b.blob(1).empty() || !b.text(2).empty()))
          problem(fmt::format("{}: {} slot {} is absent but has bytes", who, table, b.i64(0)));
        if (static_cast<std::size_t>(b.i64(0)) >= ops)
          problem(fmt::format("{}: {} slot {} beyond its {} operations", who, table, b.i64(0), ops));
      }
      return {};
    };
    std::size_t artifacts = 0, backups = 0;
    DOT_TRY(blob_check("SELECT slot, bytes, sha256 FROM artifact WHERE txn_id = ?1", "artifact", false, artifacts));
    DOT_TRY(blob_check("SELECT slot, bytes, sha256, present FROM backup WHERE txn_id = ?1", "backup", true, backups));
    const bool streamed = s.i64(10) != 0;
    std::size_t files = 0, file_backups = 0;
    DOT_TRY(check_files(db, id, who, ops, FileKind::Artifact, streamed && !pruned, files, report, problem));
    DOT_TRY(check_files(db, id, who, ops, FileKind::Backup, false, file_backups, report, problem));
    if (!streamed && (files != 0 || file_backups != 0))
      problem(fmt::format("{}: a version-1 plan has streamed files", who));
    if (streamed) {
      if (artifacts != 0 || backups != 0) problem(fmt::format("{}: a streamed plan has version-1 blobs", who));
      // Artifacts are the writing operations only (checked in check_files);
      // backups, once there, one per operation as in version 1.
      artifacts = ops;
      backups = file_backups;
    }
    if (!pruned && artifacts != ops) problem(fmt::format("{}: {} artifacts for {} operations", who, artifacts, ops));
    bool needs_backups = *st != State::Sealed && *st != State::Discarded && *st != State::Stale;
    if (!pruned && needs_backups && backups != ops)
      problem(fmt::format("{}: {} is past PREPARED but has {} backups for {} operations", who, state_name(*st), backups,
                          ops));
    if (!needs_backups && backups != 0) problem(fmt::format("{}: {} but has backups", who, state_name(*st)));

    // Ledger.
    DOT_ASSIGN_OR_RETURN(auto e,
                         db.prepare("SELECT idx, state, idempotency_key FROM effect WHERE txn_id = ?1 ORDER BY idx"));
    e.bind(1, id);
    std::int64_t succeeded = 0;
    for (;;) {
      DOT_ASSIGN_OR_RETURN(bool r, e.step());
      if (!r) break;
      std::int64_t idx = e.i64(0);
      if (!effect_count) {
        problem(fmt::format("{}: a pre-capability plan has a ledger row (effect {})", who, idx));
        continue;
      }
      if (idx >= *effect_count)
        problem(fmt::format("{}: ledger row for effect {} of a plan with {}", who, idx, *effect_count));
      if (!may_have_ledger(*st))
        problem(fmt::format("{}: {} but has a ledger row (effect {})", who, state_name(*st), idx));
      if (e.text(2) != effect_idempotency_key(plan_id, static_cast<std::uint32_t>(idx)))
        problem(fmt::format("{}: effect {} has a wrong idempotency key", who, idx));
      if (e.text(1) == "SUCCEEDED") ++succeeded;
    }
    if (*st == State::Done && effect_count && succeeded != *effect_count)
      problem(fmt::format("{}: DONE with {} of {} effects succeeded", who, succeeded, *effect_count));
  }
  // path_owner is derived_owner kept current: any row one has and the
  // other lacks is drift (a forged row, or a change that bypassed transition()).
  {
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
      problem(owners.text(0) == "kept"
                  ? fmt::format("path owner: \"{}\" is kept as owned by {} (transaction {}), which the committed "
                                "operations do not say",
                                owners.text(1), owners.text(2), owners.i64(3))
                  : fmt::format("path owner: \"{}\" is owned by {} (transaction {}) by the committed operations, "
                                "but not kept so",
                                owners.text(1), owners.text(2), owners.i64(3)));
    }
  }
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
        db.prepare("SELECT id, pruned FROM txn WHERE state IN ('DONE','ROLLED_BACK','DISCARDED','STALE','ABANDONED') "
                   "ORDER BY id DESC LIMIT -1 OFFSET ?1"));
    s.bind(1, static_cast<std::int64_t>(keep));
    for (;;) {
      DOT_ASSIGN_OR_RETURN(bool row, s.step());
      if (!row) break;
      if (s.i64(1) == 0) victims.push_back(s.i64(0));
    }
  }
  for (TxnId id : victims) {
    DOT_ASSIGN_OR_RETURN(auto a, db.prepare("DELETE FROM artifact WHERE txn_id = ?1"));
    DOT_TRY(a.bind(1, id).run());
    DOT_ASSIGN_OR_RETURN(auto b, db.prepare("DELETE FROM backup WHERE txn_id = ?1"));
    DOT_TRY(b.bind(1, id).run());
    DOT_ASSIGN_OR_RETURN(auto fa, db.prepare("DELETE FROM file_artifact WHERE txn_id = ?1"));
    DOT_TRY(fa.bind(1, id).run());
    DOT_ASSIGN_OR_RETURN(auto fb, db.prepare("DELETE FROM file_backup WHERE txn_id = ?1"));
    DOT_TRY(fb.bind(1, id).run());
    DOT_ASSIGN_OR_RETURN(auto lg, db.prepare("DELETE FROM proposal_log WHERE txn_id = ?1"));
    DOT_TRY(lg.bind(1, id).run());
    DOT_ASSIGN_OR_RETURN(auto e, db.prepare("DELETE FROM event WHERE txn_id = ?1"));
    DOT_TRY(e.bind(1, id).run());
    DOT_ASSIGN_OR_RETURN(
        auto t, db.prepare("UPDATE txn SET plugin_stderr = NULL, stderr_truncated = 0, pruned = 1 WHERE id = ?1"));
    DOT_TRY(t.bind(1, id).run());
  }
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
