// Reading the store: lookups, lists, details, and the verified load of a
// sealed plan.
#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "dot/base/sha256.h"
#include "dot/store/error_kinds.h"
#include "file_blobs.h"
#include "packed_document.h"
#include "store_impl.h"

namespace dot::store {

Result<TxnSummary> read_summary(const std::string& db_path, detail::Stmt& s) {
  TxnSummary t;
  t.id = s.i64(0);
  std::string name = s.text(1);
  auto st = state_from_name(name);
  if (!st)
    return make_error(store::ErrorKind::State,
                      fmt::format("{}: transaction {} has unknown state \"{}\"", db_path, t.id, name));
  t.state = *st;
  s.columns(2, t.plan_id, t.proposal_id, t.plugin_id, t.created_at_ms, t.updated_at_ms, t.code);
  t.operation_count = static_cast<std::uint32_t>(s.i64(8));
  if (!s.is_null(9)) t.effect_count = static_cast<std::uint32_t>(s.i64(9));
  t.pruned = s.i64(10) != 0;
  t.effect_failed = s.i64(11) != 0;
  return t;
}

Result<TxnId> Store::find(std::string_view id_or_prefix) {
  // "txn-N": the row itself, for a proposal that ended before it had a
  // proposal id (inspect list prints it for such rows).
  if (id_or_prefix.substr(0, kRowIdPrefix.size()) == kRowIdPrefix) {
    std::string_view digits = id_or_prefix.substr(kRowIdPrefix.size());
    TxnId row = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), row);
    if (digits.empty() || digits[0] == '0' || ec != std::errc() || end != digits.data() + digits.size() || row <= 0)
      return make_error(store::ErrorKind::Id,
                        fmt::format("\"{}\" is not a transaction number ({}N, N from 1)", id_or_prefix, kRowIdPrefix));
    DOT_ASSIGN_OR_RETURN(TxnSummary t, summary(row));
    return t.id;
  }
  std::string key(id_or_prefix);
  std::transform(key.begin(), key.end(), key.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (key.size() < kMinIdPrefix || key.size() > 64 || !is_lower_hex(key))
    return make_error(store::ErrorKind::Id,
                      fmt::format("\"{}\" is not a plan or proposal id, a hex prefix of one of at least {} characters, "
                                  "or {}N",
                                  id_or_prefix, kMinIdPrefix, kRowIdPrefix));
  // Every stored id is lowercase hex, so [key, key + "g") is exactly the set
  // of ids starting with key, and each unique index answers it. A key names
  // one row, through its plan id or its proposal id (a sealed row matches by
  // both), or it is refused: never a silent pick between two rows.
  std::string upper = key + "g";
  DOT_ASSIGN_OR_RETURN(
      auto s, impl_->db.query(
                  "SELECT id, state, plan_id, proposal_id FROM txn WHERE plan_id >= ?1 AND plan_id < ?2 "
                  "UNION SELECT id, state, plan_id, proposal_id FROM txn WHERE proposal_id >= ?1 AND proposal_id < ?2 "
                  "ORDER BY id DESC LIMIT 6",
                  key, upper));
  struct Match {
    TxnId id;
    std::string state, plan_id, proposal_id;
  };
  std::vector<Match> matches;
  for (;;) {
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    matches.push_back({s.i64(0), s.text(1), s.text(2), s.text(3)});
  }
  if (matches.size() == 1) return matches[0].id;
  if (matches.empty())
    return make_error(store::ErrorKind::Unknown, fmt::format("no plan or proposal with id \"{}\"", key));
  // Enough of each id to tell them apart, so the user can paste one.
  std::size_t shown = std::min<std::size_t>(64, std::max<std::size_t>(16, key.size() + 4));
  std::string candidates;
  for (std::size_t i = 0; i < matches.size() && i < 5; ++i) {
    const Match& m = matches[i];
    bool by_plan = m.plan_id.compare(0, key.size(), key) == 0;
    candidates += fmt::format("{}{} {} ({})", i ? ", " : "", by_plan ? "plan" : "proposal",
                              (by_plan ? m.plan_id : m.proposal_id).substr(0, shown), m.state);
  }
  if (matches.size() > 5) candidates += ", ...";
  return make_error(store::ErrorKind::Ambiguous,
                    fmt::format("\"{}\" is a prefix of more than one id: {}", key, candidates));
}

namespace {

Result<std::vector<TxnSummary>> collect(const std::string& db_path, detail::Stmt& s) {
  std::vector<TxnSummary> out;
  for (;;) {
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    DOT_ASSIGN_OR_RETURN(TxnSummary t, read_summary(db_path, s));
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

Result<std::vector<TxnSummary>> Store::list(const ListFilter& filter) {
  std::int64_t limit = filter.limit == 0 ? -1 : static_cast<std::int64_t>(filter.limit);
  if (filter.state) {
    DOT_ASSIGN_OR_RETURN(
        auto s, impl_->db.prepare("SELECT " DOT_STORE_SUMMARY_COLUMNS "FROM txn LEFT JOIN plan ON plan.txn_id = txn.id "
                                  "WHERE txn.state = ?1 ORDER BY txn.id DESC LIMIT ?2"));
    s.bind(1, state_name(*filter.state)).bind(2, limit);
    return collect(path(), s);
  }
  DOT_ASSIGN_OR_RETURN(
      auto s, impl_->db.prepare("SELECT " DOT_STORE_SUMMARY_COLUMNS "FROM txn LEFT JOIN plan ON plan.txn_id = txn.id "
                                "ORDER BY txn.id DESC LIMIT ?1"));
  s.bind(1, limit);
  return collect(path(), s);
}

Result<std::vector<TxnSummary>> Store::in_flight() {
  DOT_ASSIGN_OR_RETURN(
      auto s,
      impl_->db.prepare("SELECT " DOT_STORE_SUMMARY_COLUMNS "FROM txn LEFT JOIN plan ON plan.txn_id = txn.id "
                        "WHERE txn.state IN ('PREPARED','COMMITTING','COMMITTED','ROLLING_BACK') ORDER BY txn.id"));
  return collect(path(), s);
}

Result<TxnSummary> Store::summary(TxnId id) {
  DOT_ASSIGN_OR_RETURN(auto s, impl_->db.prepare("SELECT " DOT_STORE_SUMMARY_COLUMNS
                                                 "FROM txn LEFT JOIN plan ON plan.txn_id = txn.id WHERE txn.id = ?1"));
  s.bind(1, id);
  DOT_ASSIGN_OR_RETURN(bool row, s.step());
  if (!row) return make_error(store::ErrorKind::Unknown, fmt::format("no transaction {}", id));
  return read_summary(path(), s);
}

Result<std::size_t> Store::count() {
  DOT_ASSIGN_OR_RETURN(auto s, impl_->db.prepare("SELECT count(*) FROM txn"));
  DOT_ASSIGN_OR_RETURN(bool row, s.step());
  return row ? static_cast<std::size_t>(s.i64(0)) : 0;
}

Result<std::vector<AppliedPlan>> Store::applied_plans() {
  // The txn_by_state index yields the DONE and COMMITTED rows; each one's
  // operations are a primary-key range.
  DOT_ASSIGN_OR_RETURN(
      auto s,
      impl_->db.prepare("SELECT txn.id, txn.plan_id, plan.streamed FROM txn JOIN plan ON plan.txn_id = "
                        "txn.id WHERE txn.id IN ("
                        "SELECT max(operation.txn_id) FROM txn JOIN operation ON operation.txn_id = txn.id "
                        "WHERE txn.state IN ('DONE','COMMITTED') GROUP BY operation.name) ORDER BY txn.id DESC"));
  std::vector<AppliedPlan> out;
  for (;;) {
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    out.push_back(AppliedPlan{.id = s.i64(0), .plan_id = s.text(1), .streamed = s.i64(2) != 0});
  }
  return out;
}

namespace {

// Hands the text on as it comes, hashing it.
class HashingSink final : public ByteSink {
 public:
  explicit HashingSink(ByteSink& out) : out_(out) {}
  Status write(std::string_view bytes) override {
    hash_.update(bytes);
    return out_.write(bytes);
  }
  std::string hex() { return to_hex(hash_.finish()); }

 private:
  ByteSink& out_;
  Sha256 hash_;
};

// A stored document (packed or not) handed to `out` as it unpacks; a value
// that does not unpack is tampered, named by `who`; `out`'s own error as it is.
Status unpack_stored(std::string_view stored, ByteSink& out, const std::string& who) {
  auto unpacked = detail::unpack_document_to(stored, kMaxProposalBytes, out);
  if (unpacked.ok() || !unpacked.error().is(store::ErrorKind::PackedDocument)) return unpacked;
  return make_error(store::ErrorKind::Tampered, fmt::format("{}: {}", who, unpacked.error().detail));
}

}  // namespace

Status Store::read_plan_text(TxnId id, ByteSink& out) {
  DOT_ASSIGN_OR_RETURN(auto s, impl_->db.query("SELECT txn.plan_id, plan.canonical FROM txn JOIN plan ON "
                                               "plan.txn_id = txn.id WHERE txn.id = ?1",
                                               id));
  DOT_ASSIGN_OR_RETURN(bool row, s.step());
  if (!row) return make_error(store::ErrorKind::Unknown, fmt::format("no sealed plan {}", id));
  const std::string plan_id = s.text(0);
  HashingSink hashed(out);
  DOT_TRY(unpack_stored(s.blob_view(1), hashed, fmt::format("{}: {}: the plan text", path(), row_name(id, plan_id))));
  const std::string digest = hashed.hex();
  if (digest != plan_id)
    return make_error(store::ErrorKind::Tampered,
                      fmt::format("{}: {}: the stored plan bytes hash to {}, not to the plan id", path(),
                                  row_name(id, plan_id), digest));
  return {};
}

Result<std::vector<Event>> Store::events(TxnId id) {
  DOT_ASSIGN_OR_RETURN(
      auto s, impl_->db.query("SELECT seq, state, at_ms, code, detail FROM event WHERE txn_id = ?1 ORDER BY seq", id));
  std::vector<Event> out;
  for (;;) {
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    Event e;
    e.seq = s.i64(0);
    std::string name = s.text(1);
    auto st = state_from_name(name);
    if (!st)
      return make_error(store::ErrorKind::State,
                        fmt::format("{}: event {} has unknown state \"{}\"", path(), e.seq, name));
    e.state = *st;
    e.at_ms = s.i64(2);
    e.code = s.text(3);
    e.detail = s.text(4);
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::vector<EffectEntry>> Store::effects(TxnId id) {
  DOT_ASSIGN_OR_RETURN(
      auto s, impl_->db.query("SELECT idx, state, idempotency_key, attempts, updated_at_ms, code, detail FROM effect "
                              "WHERE txn_id = ?1 ORDER BY idx",
                              id));
  std::vector<EffectEntry> out;
  for (;;) {
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    EffectEntry e;
    e.index = static_cast<std::uint32_t>(s.i64(0));
    std::string name = s.text(1);
    auto st = effect_state_from_name(name);
    if (!st)
      return make_error(
          store::ErrorKind::EffectState,
          fmt::format("{}: transaction {} effect {} has unknown state \"{}\"", path(), id, e.index, name));
    e.state = *st;
    e.idempotency_key = s.text(2);
    e.attempts = static_cast<std::uint32_t>(s.i64(3));
    e.updated_at_ms = s.i64(4);
    e.code = s.text(5);
    e.detail = s.text(6);
    out.push_back(std::move(e));
  }
  return out;
}

// The operation rows of `id` in slot order, one at a time (views valid for
// the call).
Status each_operation_row(detail::Db& db, TxnId id, const Store::OperationRowFn& each) {
  DOT_ASSIGN_OR_RETURN(
      auto s, db.query("SELECT name, before_sha256, after_sha256 FROM operation WHERE txn_id = ?1 ORDER BY slot", id));
  for (;;) {
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) return {};
    DOT_TRY(each(OperationRowView{s.text_view(0), s.text_view(1), s.text_view(2)}));
  }
}

Result<std::vector<OperationSummary>> read_operations(detail::Db& db, TxnId id) {
  std::vector<OperationSummary> out;
  DOT_TRY(each_operation_row(db, id, [&out](const OperationRowView& row) {
    out.push_back({std::string(row.name), std::string(row.before_sha256), std::string(row.after_sha256)});
    return Status{};
  }));
  return out;
}

Result<TxnDetail> Store::detail(TxnId id) {
  auto& db = impl_->db;
  DOT_ASSIGN_OR_RETURN(auto snapshot, detail::ReadTxn::begin(db));
  TxnDetail d;
  {
    // The summary columns and the detail columns in one statement: every
    // statement a short-lived `inspect show` prepares costs it ~100 K
    // instructions of SQL compilation (docs/startup.md).
    DOT_ASSIGN_OR_RETURN(
        auto s,
        db.prepare("SELECT " DOT_STORE_SUMMARY_COLUMNS ", "
                   "txn.plugin_digest, txn.created_at_ms, txn.finished_at_ms, txn.error_detail, txn.plugin_stderr, "
                   "txn.stderr_truncated, plan.canonical, "
                   "EXISTS (SELECT 1 FROM backup WHERE backup.txn_id = txn.id) OR "
                   "EXISTS (SELECT 1 FROM file_backup WHERE file_backup.txn_id = txn.id), txn.proposal, plan.streamed "
                   "FROM txn LEFT JOIN plan ON plan.txn_id = txn.id WHERE txn.id = ?1"));
    s.bind(1, id);
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) return make_error(store::ErrorKind::Unknown, fmt::format("no transaction {}", id));
    DOT_ASSIGN_OR_RETURN(d.summary, read_summary(path(), s));
    constexpr int k = kSummaryColumnCount;
    d.plugin_digest = s.text(k + 0);
    d.started_at_ms = s.i64(k + 1);
    d.finished_at_ms = s.is_null(k + 2) ? 0 : s.i64(k + 2);
    d.detail = s.text(k + 3);
    d.plugin_stderr = s.blob(k + 4);
    d.plugin_stderr_truncated = s.i64(k + 5) != 0;
    // A plan text or proposal document that does not unpack is shown as
    // stored: it then hashes to something else than its id, and is
    // reported unverified.
    std::string stored_plan = s.blob(k + 6);
    auto plan_text = detail::unpack_document(stored_plan, kMaxProposalBytes);
    d.canonical_plan = plan_text.ok() ? std::move(plan_text).value() : std::move(stored_plan);
    d.has_backups = s.i64(k + 7) != 0;
    std::string stored = s.blob(k + 8);
    auto unpacked = detail::unpack_document(stored, kMaxProposalBytes);
    d.proposal_document = unpacked.ok() ? std::move(unpacked).value() : std::move(stored);
    d.streamed = !s.is_null(k + 9) && s.i64(k + 9) != 0;
  }
  DOT_ASSIGN_OR_RETURN(d.operations, read_operations(db, id));
  DOT_ASSIGN_OR_RETURN(d.effects, effects(id));
  DOT_ASSIGN_OR_RETURN(d.events, events(id));
  DOT_ASSIGN_OR_RETURN(d.logs, logs(id));
  return d;
}

Result<std::vector<LogRecord>> Store::logs(TxnId id) {
  DOT_ASSIGN_OR_RETURN(
      auto s, impl_->db.query("SELECT level, method, message FROM proposal_log WHERE txn_id = ?1 ORDER BY seq", id));
  std::vector<LogRecord> out;
  for (;;) {
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    out.push_back(LogRecord{s.text(0), s.blob(2), s.text(1)});
  }
  return out;
}

namespace {

Result<std::vector<Blob>> read_blobs(detail::Db& db, const char* sql, TxnId id, bool with_presence,
                                     std::string_view table, const std::string& who) {
  DOT_ASSIGN_OR_RETURN(auto s, db.prepare(sql));
  s.bind(1, id);
  std::vector<Blob> out;
  for (;;) {
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    Blob b;
    b.slot = static_cast<std::uint32_t>(s.i64(0));
    b.bytes = s.blob(1);
    b.sha256 = s.text(2);
    b.exists = with_presence ? s.i64(3) != 0 : true;
    if (b.slot != out.size())
      return make_error(store::ErrorKind::Tampered, fmt::format("{}: {} slot {} is missing", who, table, out.size()));
    if (b.exists) {
      std::string digest = sha256_hex(b.bytes);
      if (digest != b.sha256)
        return make_error(store::ErrorKind::Tampered,
                          fmt::format("{}: {} row for slot {} hashes to {}, not its stored {}", who, table, b.slot,
                                      digest, b.sha256));
    } else if (!b.bytes.empty() || !b.sha256.empty()) {
      return make_error(store::ErrorKind::Tampered,
                        fmt::format("{}: {} row for slot {} is absent but has bytes", who, table, b.slot));
    }
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace

namespace {

// A version-2 plan's files against its operation rows (metadata only: the
// bytes are verified as read_file streams them): one artifact per operation
// with an after digest, carrying it; backups, once there, one per operation.
// A version-2 plan's files' metadata, each checked against its operation
// row as the rows stream (never listed), and the rows counted.
Status load_streamed_files(detail::Db& db, SealedPlan& p, std::size_t operations, const std::string& who) {
  auto tampered = [&](std::string why) {
    return make_error(store::ErrorKind::Tampered, fmt::format("{}: {}", who, why));
  };
  DOT_ASSIGN_OR_RETURN(auto artifacts, detail::stored_files(db, p.id, FileKind::Artifact));
  DOT_ASSIGN_OR_RETURN(auto backups, detail::stored_files(db, p.id, FileKind::Backup));
  p.files.reserve(artifacts.size());
  for (auto& f : artifacts) p.files.push_back(std::move(f.blob));
  artifacts = {};
  p.file_backups.reserve(backups.size());
  for (auto& f : backups) p.file_backups.push_back(std::move(f.blob));
  backups = {};
  if (!detail::check_file_shapes(p.files, operations, FileKind::Artifact, who).ok() ||
      !detail::check_file_shapes(p.file_backups, operations, FileKind::Backup, who).ok())
    return tampered("its stored files break the file rules");
  std::size_t i = 0, next = 0;
  DOT_TRY(each_operation_row(db, p.id, [&](const OperationRowView& row) -> Status {
    const bool has_file = next < p.files.size() && p.files[next].index == i;
    if (row.after_sha256.empty() == has_file || (has_file && p.files[next].sha256 != row.after_sha256))
      return tampered(fmt::format("operation {} and its stored artifact disagree", i));
    if (has_file) ++next;
    ++i;
    return {};
  }));
  if (i != operations) return tampered(fmt::format("{} operation rows for {} operations", i, operations));
  if (next != p.files.size()) return tampered(fmt::format("stored artifact {} has no operation", next));
  if (!p.file_backups.empty() && p.file_backups.size() != operations)
    return tampered(fmt::format("{} backups for {} operations", p.file_backups.size(), operations));
  return {};
}

}  // namespace

Status Store::read_proposal_document(TxnId id, ByteSink& out) {
  DOT_ASSIGN_OR_RETURN(auto s, impl_->db.query("SELECT plan_id, proposal FROM txn WHERE id = ?1", id));
  DOT_ASSIGN_OR_RETURN(bool row, s.step());
  if (!row) return make_error(store::ErrorKind::Unknown, fmt::format("no transaction {}", id));
  return unpack_stored(s.blob_view(1), out, fmt::format("{}: {}", path(), row_name(id, s.text(0))));
}

Status Store::read_operation_rows(TxnId id, const OperationRowFn& each) {
  return each_operation_row(impl_->db, id, each);
}

Status Store::read_file(TxnId id, FileKind kind, std::uint32_t index, ByteSink& out) {
  auto& db = impl_->db;
  DOT_ASSIGN_OR_RETURN(auto snapshot, detail::ReadTxn::begin(db));
  DOT_ASSIGN_OR_RETURN(auto file, detail::stored_file(db, id, kind, index));
  const std::string who = fmt::format("{}: transaction {}", path(), id);
  if (file) {
    const detail::StoredFile& f = *file;
    DOT_ASSIGN_OR_RETURN(detail::StreamedBlob got, detail::stream_blob(db, detail::file_table(kind), f.rowid, &out));
    if (got.length != f.blob.size || (f.blob.exists && got.sha256 != f.blob.sha256) ||
        (!f.blob.exists && got.length != 0))
      return make_error(
          store::ErrorKind::Tampered,
          fmt::format("{}: stored {} {} has {} bytes hashing to {}, not its {} bytes {}", who,
                      detail::file_kind_name(kind), index, got.length, got.sha256, f.blob.size, f.blob.sha256));
    return {};
  }
  return make_error(store::ErrorKind::NoFile,
                    fmt::format("{} has no stored {} for operation {}", who, detail::file_kind_name(kind), index));
}

Result<SealedPlan> Store::load_sealed(TxnId id) { return load(id, true); }

Result<SealedPlan> Store::load_sealed_without_texts(TxnId id) { return load(id, false); }

Result<SealedPlan> Store::load(TxnId id, bool texts) {
  auto& db = impl_->db;
  DOT_ASSIGN_OR_RETURN(auto snapshot, detail::ReadTxn::begin(db));
  DOT_ASSIGN_OR_RETURN(TxnSummary t, summary(id));
  std::string who = fmt::format("{}: {}", path(), row_name(id, t.plan_id));
  SealedPlan p{.id = id,
               .state = t.state,
               .plan_id = t.plan_id,
               .proposal_id = t.proposal_id,
               .effect_count = t.effect_count,
               .operation_count = t.operation_count};
  if (t.state == State::Proposing || t.state == State::Abandoned)
    return make_error(store::ErrorKind::NotSealed,
                      fmt::format("{} is {}, not a sealed plan", who, state_name(t.state)));
  if (t.pruned) return make_error(store::ErrorKind::Pruned, fmt::format("{}: its blobs were pruned", who));
  {
    DOT_ASSIGN_OR_RETURN(auto s, db.query("SELECT streamed FROM plan WHERE txn_id = ?1", id));
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) return make_error(store::ErrorKind::Tampered, fmt::format("{}: the plan row is missing", who));
    p.streamed = s.i64(0) != 0;
  }
  // A version-2 plan loaded without its texts: they are read as they
  // stream, and checked there.
  texts = texts || !p.streamed;
  if (texts) {
    DOT_ASSIGN_OR_RETURN(auto s, db.query("SELECT plan.canonical, txn.proposal FROM plan JOIN txn ON txn.id = "
                                          "plan.txn_id WHERE plan.txn_id = ?1",
                                          id));
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) return make_error(store::ErrorKind::Tampered, fmt::format("{}: the plan row is missing", who));
    auto text = detail::unpack_document(s.blob_view(0), kMaxProposalBytes);  // a large one is packed
    if (!text.ok())
      return make_error(store::ErrorKind::Tampered, fmt::format("{}: the plan text: {}", who, text.error().detail));
    p.canonical_plan = std::move(text).value();
    std::string digest = sha256_hex(p.canonical_plan);
    if (p.plan_id.size() != 64 || digest != p.plan_id)
      return make_error(store::ErrorKind::Tampered,
                        fmt::format("{}: the stored plan bytes hash to {}, not to the plan id", who, digest));
    auto unpacked = detail::unpack_document(s.blob_view(1), kMaxProposalBytes);
    if (!unpacked.ok())
      return make_error(store::ErrorKind::Tampered, fmt::format("{}: {}", who, unpacked.error().detail));
    p.proposal_document = std::move(unpacked).value();
    DOT_ASSIGN_OR_RETURN(p.operations, read_operations(db, id));
    if (p.operations.size() != t.operation_count)
      return make_error(store::ErrorKind::Tampered, fmt::format("{}: {} operation rows for {} operations", who,
                                                                p.operations.size(), t.operation_count));
  }
  // The ledger of either plan version: rows only for effects the plan has,
  // each under the idempotency key derived from the plan id.
  DOT_ASSIGN_OR_RETURN(p.effects, effects(id));
  if (!p.effect_count && !p.effects.empty())
    return make_error(store::ErrorKind::Tampered, fmt::format("{}: a pre-capability plan has effect ledger rows", who));
  for (const auto& e : p.effects) {
    if (p.effect_count && e.index >= *p.effect_count)
      return make_error(store::ErrorKind::Tampered,
                        fmt::format("{}: ledger row for effect {} of {}", who, e.index, *p.effect_count));
    if (e.idempotency_key != effect_idempotency_key(p.plan_id, e.index))
      return make_error(store::ErrorKind::Tampered,
                        fmt::format("{}: effect {} has a wrong idempotency key", who, e.index));
  }
  if (p.streamed) {
    DOT_TRY(load_streamed_files(db, p, t.operation_count, who));
    // Without its texts, the artifacts' metadata are checked, not kept:
    // read_file finds each one by its index (100,000 of them are 13 MB).
    if (!texts) p.files = {};
    return p;
  }
  DOT_ASSIGN_OR_RETURN(
      p.artifacts, read_blobs(db, "SELECT slot, bytes, sha256 FROM artifact WHERE txn_id = ?1 ORDER BY slot", id, false,
                              "artifact", who));
  if (p.artifacts.size() != t.operation_count)
    return make_error(store::ErrorKind::Tampered,
                      fmt::format("{}: {} artifacts for {} operations", who, p.artifacts.size(), t.operation_count));
  for (std::size_t i = 0; i < p.artifacts.size(); ++i)
    if (p.artifacts[i].sha256 != p.operations[i].after_sha256)
      return make_error(store::ErrorKind::Tampered,
                        fmt::format("{}: artifact {} is not the operation's after digest", who, i));
  DOT_ASSIGN_OR_RETURN(
      p.backups, read_blobs(db, "SELECT slot, bytes, sha256, present FROM backup WHERE txn_id = ?1 ORDER BY slot", id,
                            true, "backup", who));
  if (!p.backups.empty() && p.backups.size() != t.operation_count)
    return make_error(store::ErrorKind::Tampered,
                      fmt::format("{}: {} backups for {} operations", who, p.backups.size(), t.operation_count));
  return p;
}

}  // namespace dot::store
