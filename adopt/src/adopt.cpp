// `dot-core adopt`: finishing a Go-reference root's unfinished work and importing it in place (adopt.h).
#include "dot/adopt/adopt.h"
#include "dot/adopt/error_kinds.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include <fmt/format.h>

#include "dot/base/beneath.h"
#include "dot/base/fd.h"
#include "dot/base/jcs.h"
#include "dot/base/json.h"
#include "dot/base/sha256.h"
#include "dot/base/utf8.h"
#include "dot/core/plan.h"
#include "dot/core/registry.h"
#include "dot/core/target.h"
#include "dot/dpp/hello.h"
#include "dot/store/root.h"
#include "dot/store/store.h"

namespace dot::adopt {

// The engine's plan model, target observation and test hooks, which
// finishing and importing a reference root work with.
using core::observe_target;
using core::ObservedTarget;
using core::Operation;
using core::Plan;
using core::Snapshot;
using core::TestHooks;

namespace {

// The journal and ledger lines adopt appends: the records the survey reads
// (go_root.h, docs/spec/go-roots.md sections 3 and 4), each ended by a newline.
std::string wal_line(WalState s) { return std::string(wal_record(s)) + "\n"; }
std::string ledger_line(std::string_view plan_id, EffectState s) {
  return ledger_record(effect_key(plan_id), s) + "\n";
}
// The reference refuses an append to a journal this close to its 64 KiB
// read limit (section 3), and to a ledger this close (section 4).
constexpr std::size_t kWalAppendLimit = kMaxFileBytes - 128;
constexpr std::size_t kLedgerAppendLimit = kMaxFileBytes - 256;

// One adopt run on a locked reference root: its descriptor, messages naming
// ROOT/..., and the crash points.
class Finisher {
 public:
  Finisher(std::string root, int root_fd, const TestHooks& hooks)
      : root_(std::move(root)), fd_(root_fd), hooks_(hooks) {}

  std::string path(std::string_view rel) const { return fmt::format("{}/{}", root_, rel); }

  Error io(int err, std::string_view call, std::string_view rel) const {
    return beneath::errno_error(err, call, path(rel));
  }

  Result<UniqueFd> open_dir(int dirfd, std::string_view name, std::string_view rel) const {
    auto fd = beneath::open_beneath(dirfd, name, O_RDONLY | O_DIRECTORY);
    if (!fd.ok()) {
      Error e = std::move(fd).error();
      e.detail = fmt::format("{}: {}", path(rel), e.detail);
      return e;
    }
    return std::move(*fd);
  }

  // The reference's record(): a torn tail (bytes after the last LF) is cut
  // off and made durable first, then the line is appended, the file fsync'd
  // and its folder fsync'd. `rel` names the file for messages.
  Status append(int dirfd, std::string_view name, std::string_view rel, std::string_view line,
                std::size_t limit) const {
    auto opened = beneath::open_beneath(dirfd, name, O_RDWR | O_CREAT, 0600);
    if (!opened.ok()) {
      Error e = std::move(opened).error();
      e.detail = fmt::format("{}: {}", path(rel), e.detail);
      return e;
    }
    UniqueFd fd = std::move(*opened);
    // A file we just created honoured the umask; the reference's are 0600.
    if (::fchmod(fd.get(), 0600) != 0) return io(errno, "fchmod", rel);
    DOT_ASSIGN_OR_RETURN(std::string bytes, read_all(fd.get(), kMaxFileBytes + 1, path(rel)));
    if (bytes.size() > limit)
      return make_error(
          adopt::ErrorKind::JournalFull,
          fmt::format("{}: holds {} bytes; the reference appends nothing past {}", path(rel), bytes.size(), limit));
    std::size_t keep = bytes.size();
    if (!bytes.empty() && bytes.back() != '\n') {
      std::size_t nl = bytes.rfind('\n');
      keep = nl == std::string::npos ? 0 : nl + 1;
      if (::ftruncate(fd.get(), static_cast<off_t>(keep)) != 0) return io(errno, "ftruncate", rel);
      DOT_TRY(beneath::fsync_fd(fd.get(), path(rel)));
    }
    if (::lseek(fd.get(), static_cast<off_t>(keep), SEEK_SET) < 0) return io(errno, "lseek", rel);
    DOT_TRY(write_all(fd.get(), line, path(rel)));
    DOT_TRY(beneath::fsync_fd(fd.get(), path(rel)));
    return beneath::fsync_fd(dirfd, path(rel.substr(0, rel.rfind('/'))));
  }

  // The reference's recover of a transaction that did not commit, or whose
  // rollback was interrupted (docs/spec/go-roots.md section 6): ROLLING_BACK
  // unless it is already the last record, each slot from the last down to
  // 0 restored through .dot-next-N (or removed when it did not exist
  // before), ROLLED_BACK.
  Status roll_back(const Transaction& t) const {
    DOT_ASSIGN_OR_RETURN(UniqueFd txn, open_dir(fd_, kTxnDir, kTxnDir));
    const std::string wal = fmt::format("{}/wal", kTxnDir);
    if (t.wal.back() != WalState::RollingBack) {
      DOT_TRY(append(txn.get(), "wal", wal, wal_line(WalState::RollingBack), kWalAppendLimit));
      hooks_.reached("adopt.go.rolling_back");
    }
    const auto& ops = t.plan->operations;
    for (std::size_t j = ops.size(); j-- > 0;) {
      const Operation& op = ops[j];
      DOT_ASSIGN_OR_RETURN(ObservedTarget now, observe_target(fd_, op.name));
      if (now.snapshot == op.before) continue;
      if (now.snapshot != op.after)
        return make_error(adopt::ErrorKind::ConcurrentEdit,
                          fmt::format("{}: was edited while adopt rolled the reference's transaction {} back; left "
                                      "as it is (concurrent edit, preserve evidence)",
                                      path(op.name), t.plan_id));
      if (op.before.exists) {
        const std::string next = fmt::format(".dot-next-{}", j);
        if (::unlinkat(fd_, next.c_str(), 0) != 0 && errno != ENOENT) return io(errno, "unlink", next);
        DOT_ASSIGN_OR_RETURN(beneath::CreatedFile f,
                             beneath::create_exclusive(fd_, next, static_cast<mode_t>(op.before.mode)));
        DOT_TRY(write_all(f.fd.get(), *t.backup_bytes[j], path(next)));
        DOT_TRY(beneath::fsync_fd(f.fd.get(), path(next)));
        f.fd.reset();
        hooks_.reached(fmt::format("adopt.go.rollback_flushed.{}", j));
        DOT_TRY(beneath::rename_entry(fd_, next, op.name));
      } else {
        DOT_TRY(beneath::unlink_entry(fd_, op.name));
      }
      DOT_TRY(beneath::fsync_fd(fd_, root_));
      hooks_.reached(fmt::format("adopt.go.rollback_restored.{}", j));
    }
    DOT_TRY(append(txn.get(), "wal", wal, wal_line(WalState::RolledBack), kWalAppendLimit));
    hooks_.reached("adopt.go.rolled_back");
    return {};
  }

  // The reference's retry-effects (section 4): ATTEMPTED, the root-sync
  // (an fsync of the root), SUCCEEDED; a failed fsync is recorded FAILED.
  Status run_effect(const Transaction& t) const {
    DOT_ASSIGN_OR_RETURN(UniqueFd txn, open_dir(fd_, kTxnDir, kTxnDir));
    const std::string ledger = fmt::format("{}/effects.wal", kTxnDir);
    DOT_TRY(
        append(txn.get(), "effects.wal", ledger, ledger_line(t.plan_id, EffectState::Attempted), kLedgerAppendLimit));
    hooks_.reached("adopt.go.effect_attempted");
    int err = hooks_.fault("adopt.go.effect");
    if (err == 0 && ::fsync(fd_) != 0) err = errno;
    if (err != 0) {
      DOT_TRY(
          append(txn.get(), "effects.wal", ledger, ledger_line(t.plan_id, EffectState::Failed), kLedgerAppendLimit));
      return make_error_as(
          Code::PostCommit, beneath::errno_kind(err),
          fmt::format("{}: the root-sync effect of the reference's transaction {} failed ({}); recorded "
                      "FAILED, run adopt again",
                      root_, t.plan_id, beneath::errno_kind(err)));
    }
    hooks_.reached("adopt.go.effect_ran");
    DOT_TRY(
        append(txn.get(), "effects.wal", ledger, ledger_line(t.plan_id, EffectState::Succeeded), kLedgerAppendLimit));
    hooks_.reached("adopt.go.effect_succeeded");
    return {};
  }

  // The rest of the reference's archive (section 6, steps 5 to 7), from
  // whichever side of its renames the survey found the transaction on.
  Status finish_archive(const Survey& s) const {
    const ArchiveIntent& a = *s.archive;
    if (s.active->dir == kTxnDir) {
      if (s.has_stage) {
        DOT_ASSIGN_OR_RETURN(UniqueFd txn, open_dir(fd_, kTxnDir, kTxnDir));
        if (::renameat2(fd_, std::string(kStageDir).c_str(), txn.get(), "stage", RENAME_NOREPLACE) != 0)
          return io(errno, "rename", kStageDir);
        DOT_TRY(beneath::fsync_fd(txn.get(), path(kTxnDir)));
        DOT_TRY(beneath::fsync_fd(fd_, root_));
        hooks_.reached("adopt.go.archive_stage");
      }
      // The reference made it before it wrote the intent; made again the
      // same way should it be missing.
      if (::mkdirat(fd_, std::string(kHistoryDir).c_str(), 0700) != 0 && errno != EEXIST)
        return io(errno, "mkdir", kHistoryDir);
      DOT_ASSIGN_OR_RETURN(UniqueFd hist, open_dir(fd_, kHistoryDir, kHistoryDir));
      if (::renameat2(fd_, std::string(kTxnDir).c_str(), hist.get(), a.plan_id.c_str(), RENAME_NOREPLACE) != 0)
        return io(errno, "rename", kTxnDir);
      hooks_.reached("adopt.go.archive_rename");
    }
    DOT_ASSIGN_OR_RETURN(UniqueFd hist, open_dir(fd_, kHistoryDir, kHistoryDir));
    DOT_TRY(beneath::fsync_fd(hist.get(), path(kHistoryDir)));
    DOT_TRY(beneath::fsync_fd(fd_, root_));
    hooks_.reached("adopt.go.archive_durable");
    DOT_TRY(beneath::unlink_entry(fd_, kArchiveIntent));
    DOT_TRY(beneath::fsync_fd(fd_, root_));
    hooks_.reached("adopt.go.archive_finished");
    return {};
  }

 private:
  std::string root_;
  int fd_;
  const TestHooks& hooks_;
};

// The reference's lock, as its Open takes it: created 0600 when missing
// (every reference command but init creates it), then an exclusive,
// non-blocking flock for the whole run.
Result<UniqueFd> lock_reference(const std::string& root, int root_fd) {
  const std::string rel(kLockName);
  auto fd = beneath::open_beneath(root_fd, rel, O_RDWR);
  if (!fd.ok() && beneath::error_errno(fd.error()) == ENOENT) {
    auto created = beneath::create_exclusive(root_fd, rel, 0600);
    if (!created.ok()) return std::move(created).error();
    DOT_TRY(beneath::fsync_fd(created->fd.get(), fmt::format("{}/{}", root, rel)));
    DOT_TRY(beneath::fsync_fd(root_fd, root));
    fd = std::move(created->fd);
  }
  if (!fd.ok()) return std::move(fd).error();
  if (::flock(fd->get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK)
      return make_error(adopt::ErrorKind::Locked,
                        fmt::format("{}/{}: a reference dot-core command holds this root's lock", root, rel));
    return beneath::errno_error(errno, "flock", fmt::format("{}/{}", root, rel));
  }
  return std::move(*fd);
}

// ---- what the import covered ------------------------------------------------

// One reference file: where it lies, what it is (kImportedEntriesName's
// keys), and its SHA-256 (empty for anything that is not a regular file of
// at most the reference's size limits: never counted as imported).
struct RefFile {
  std::string rel;
  std::string key;
  std::string sha256;
};

constexpr std::string_view kNoPlan = "-";

// The plan id a transaction folder's plan.json ends in, as the reference's
// writer ends it (`,"plan_id":"<64 hex>"}`); "?" for anything else. Only a
// name: whether its bytes are the ones imported is the hash's to say.
std::string claimed_plan_id(std::string_view bytes) {
  constexpr std::string_view head = R"(,"plan_id":")";
  constexpr std::size_t tail = 64 + 2;  // the id, then "}
  if (bytes.size() < head.size() + tail || bytes.substr(bytes.size() - 2) != R"("})" ||
      bytes.substr(bytes.size() - tail - head.size(), head.size()) != head)
    return "?";
  std::string_view id = bytes.substr(bytes.size() - tail, 64);
  return is_sha256_hex(id) ? std::string(id) : std::string("?");
}

// Every file among the reference's entries (never following a link: a
// symlink is itself an entry, never imported). The reference's folders are
// at most three deep (.dot-history/<id>/stage/<name>); anything deeper is
// an entry of its own, never imported, and not descended into.
class RefWalk {
 public:
  RefWalk(int root_fd, std::string root) : fd_(root_fd), root_(std::move(root)) {}

  // `active_fallback`: the plan id the files of a `.dot-txn` without a
  // plan.json are named by (the import's record of what it held).
  Result<std::vector<RefFile>> run(std::string_view active_fallback, std::string* active_out = nullptr) {
    fallback_ = active_fallback.empty() ? std::string(kNoPlan) : std::string(active_fallback);
    // Which transaction `.dot-txn` holds, first: the root's `.dot-stage` is
    // its stage (the reference's archive moves it in there).
    DOT_ASSIGN_OR_RETURN(beneath::FileObservation txn_dir, beneath::observe_beneath(fd_, kTxnDir));
    root_stage_id_ = std::string(kNoPlan);
    if (txn_dir.type == beneath::FileType::Directory) {
      auto fd = beneath::open_beneath(fd_, kTxnDir, O_RDONLY | O_DIRECTORY);
      if (!fd.ok()) {
        Error e = std::move(fd).error();
        e.detail = fmt::format("{}/{}: {}", root_, kTxnDir, e.detail);
        return e;
      }
      DOT_ASSIGN_OR_RETURN(
          beneath::FileObservation plan,
          beneath::observe_beneath(fd->get(), "plan.json", beneath::ObserveOptions{.keep_content = true}));
      if (plan.type == beneath::FileType::Regular && !plan.too_large)
        active_ = claimed_plan_id(plan.content);
      else if (plan.exists())
        active_ = "?";
      else
        active_ = fallback_;
      root_stage_id_ = active_;
    }
    DOT_ASSIGN_OR_RETURN(std::vector<std::string> top, beneath::list_entries(fd_));
    std::sort(top.begin(), top.end());
    for (const auto& name : top) {
      const bool known = name.rfind(".dot-next-", 0) == 0 || name == kMarkerName || name == kLockName ||
                         name == kPluginName || name == kManifestName || name == kArchiveIntent;
      Status st;
      if (known)
        st = file(fd_, name, name, name);
      else if (name == kStageDir)
        st = folder(fd_, name, name, name, &RefWalk::root_stage);
      else if (name == kTxnDir)
        st = folder(fd_, name, name, name, &RefWalk::active_txn);
      else if (name == kHistoryDir)
        st = folder(fd_, name, name, name, &RefWalk::history);
      DOT_TRY(st);
    }
    if (active_out) *active_out = active_;
    return std::move(out_);
  }

 private:
  // A regular file of at most `max` bytes is hashed; anything else is
  // recorded without a hash.
  Status file(int dir, std::string_view name, std::string rel, std::string key) {
    const std::size_t max = name == kPluginName ? kMaxPluginBytes : kMaxFileBytes;
    auto o = beneath::observe_beneath(dir, name, beneath::ObserveOptions{.max_bytes = max});
    if (!o.ok()) {
      Error e = std::move(o).error();
      e.detail = fmt::format("{}/{}: {}", root_, rel, e.detail);
      return e;
    }
    if (!o->exists()) return {};
    out_.push_back(RefFile{std::move(rel), std::move(key),
                           o->type == beneath::FileType::Regular && !o->too_large ? o->sha256 : std::string()});
    return {};
  }

  // `name` in `dir`: a folder is opened (beneath, no link) and handed to
  // `inside`; anything else is a file, known as `key`.
  using Inside = Status (RefWalk::*)(int dir, const std::string& rel);
  Status folder(int dir, std::string_view name, const std::string& rel, std::string key, Inside inside) {
    auto o = beneath::observe_beneath(dir, name);
    if (!o.ok()) {
      Error e = std::move(o).error();
      e.detail = fmt::format("{}/{}: {}", root_, rel, e.detail);
      return e;
    }
    if (!o->exists()) return {};
    if (o->type != beneath::FileType::Directory) return file(dir, name, rel, std::move(key));
    auto fd = beneath::open_beneath(dir, name, O_RDONLY | O_DIRECTORY);
    if (!fd.ok()) {
      Error e = std::move(fd).error();
      e.detail = fmt::format("{}/{}: {}", root_, rel, e.detail);
      return e;
    }
    return (this->*inside)(fd->get(), rel);
  }

  // A folder where the reference keeps only files: an entry of its own,
  // never imported, not descended into.
  Status stray(int, const std::string& rel) {
    out_.push_back(RefFile{rel, rel, ""});
    return {};
  }

  // A stage: the root's (the active transaction's, `-` with none) or one a
  // transaction folder holds.
  Status root_stage(int dir, const std::string& rel) { return stage(dir, rel, root_stage_id_); }
  Status stage(int dir, const std::string& rel, const std::string& id) {
    DOT_ASSIGN_OR_RETURN(std::vector<std::string> names, beneath::list_entries(dir));
    std::sort(names.begin(), names.end());
    for (const auto& n : names)
      DOT_TRY(folder(dir, n, fmt::format("{}/{}", rel, n), fmt::format("txn/{}/stage/{}", id, n), &RefWalk::stray));
    return {};
  }

  // `.dot-txn`: named by the plan id its plan.json ends in, or, with none,
  // by the fallback (run() worked it out).
  Status active_txn(int dir, const std::string& rel) { return txn(dir, rel, active_); }

  Status history(int dir, const std::string& rel) {
    DOT_ASSIGN_OR_RETURN(std::vector<std::string> ids, beneath::list_entries(dir));
    std::sort(ids.begin(), ids.end());
    for (const auto& id : ids) {
      history_id_ = id;
      DOT_TRY(folder(dir, id, fmt::format("{}/{}", rel, id), fmt::format("{}/{}", rel, id), &RefWalk::generation));
    }
    return {};
  }
  Status generation(int dir, const std::string& rel) { return txn(dir, rel, history_id_); }
  Status txn_stage(int dir, const std::string& rel) { return stage(dir, rel, txn_stage_id_); }

  Status txn(int dir, const std::string& rel, const std::string& id) {
    DOT_ASSIGN_OR_RETURN(std::vector<std::string> names, beneath::list_entries(dir));
    std::sort(names.begin(), names.end());
    for (const auto& n : names) {
      const std::string frel = fmt::format("{}/{}", rel, n);
      if (n == "stage") {
        txn_stage_id_ = id;
        DOT_TRY(folder(dir, n, frel, frel, &RefWalk::txn_stage));
      } else {
        DOT_TRY(folder(dir, n, frel, fmt::format("txn/{}/{}", id, n), &RefWalk::stray));
      }
    }
    return {};
  }

  int fd_;
  std::string root_;
  std::string fallback_;
  std::string active_;      // the id `.dot-txn`'s files were named by (empty: no .dot-txn)
  std::string history_id_;  // the generation being walked
  std::string root_stage_id_, txn_stage_id_;
  std::vector<RefFile> out_;
};

struct EntryRecord {
  std::string active;
  std::vector<std::pair<std::string, std::string>> entries;  // key, sha256; sorted
};

// Keys and ids go into the record as they are: names the reference writes
// (the survey refused any other) and hex only, so canonical JSON writes
// them without an escape.
bool plain(std::string_view k) {
  return std::all_of(k.begin(), k.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
           c == '_' || c == '/' || c == '?';
  });
}

// The record's one form, canonical JSON (its members sorted already:
// active, entries). A key or id that is not plain is refused (kind
// unknown_entry): the import refuses such a file first, and a record
// holding one is not adopt's.
Result<std::string> entry_record_json(const EntryRecord& r) {
  auto unknown = [](std::string_view what) {
    return make_error(adopt::ErrorKind::UnknownEntry,
                      fmt::format("the record of entries would name \"{}\", not a name the reference writes",
                                  shown(what.substr(0, 128))));
  };
  if (!plain(r.active)) return unknown(r.active);
  jcs::Node entries = jcs::Node::array();
  for (const auto& [key, sha256] : r.entries) {
    if (!plain(key)) return unknown(key);
    if (!plain(sha256)) return unknown(sha256);
    jcs::Node pair = jcs::Node::array();
    pair.push(jcs::Node::string(key)).push(jcs::Node::string(sha256));
    entries.push(std::move(pair));
  }
  jcs::Node record = jcs::Node::object();
  record.set("active", jcs::Node::string(r.active)).set("entries", std::move(entries));
  return jcs::encode(record, jcs::Profile::Rfc8785);
}

Result<EntryRecord> parse_entry_record(std::string_view bytes, std::string_view where) {
  auto bad = [&] {
    return make_error(adopt::ErrorKind::AdoptionRecord,
                      fmt::format("{}: is not a record of entries adopt writes", where));
  };
  auto doc = json::parse(bytes);
  if (!doc.ok() || !doc->root().is_object() || doc->root().size() != 2) return bad();
  auto active = doc->root().find("active");
  auto entries = doc->root().find("entries");
  if (!active || !active->is_string() || !entries || !entries->is_array()) return bad();
  EntryRecord r;
  r.active = std::string(active->as_string());
  for (json::Value e : entries->elements()) {
    if (!e.is_array() || e.size() != 2) return bad();
    std::vector<std::string> two;
    for (json::Value v : e.elements()) {
      if (!v.is_string()) return bad();
      two.emplace_back(v.as_string());
    }
    r.entries.emplace_back(std::move(two[0]), std::move(two[1]));
  }
  // The writer's form and order only.
  if (!std::is_sorted(r.entries.begin(), r.entries.end())) return bad();
  auto canonical = entry_record_json(r);
  if (!canonical.ok() || *canonical != bytes) return bad();
  return r;
}

// The record of what an import covers: every reference file now (after
// finishing, under the reference's lock, so exactly what the cleanup will
// find unless the reference runs in between).
Result<EntryRecord> record_entries(int root_fd, const std::string& root) {
  EntryRecord r;
  DOT_ASSIGN_OR_RETURN(std::vector<RefFile> files, RefWalk(root_fd, root).run("", &r.active));
  if (!plain(r.active))
    return make_error(adopt::ErrorKind::UnknownEntry, fmt::format("{}/{}: names an unexpected plan", root, kTxnDir));
  for (auto& f : files) {
    if (f.sha256.empty() || !plain(f.key))
      return make_error(adopt::ErrorKind::UnknownEntry,
                        fmt::format("{}/{}: is not a file the reference writes", root, f.rel));
    r.entries.emplace_back(std::move(f.key), std::move(f.sha256));
  }
  std::sort(r.entries.begin(), r.entries.end());
  return r;
}

// The reference's files now that the import did not cover byte for byte.
Result<std::vector<std::string>> unimported(int root_fd, const std::string& root, const EntryRecord& rec) {
  DOT_ASSIGN_OR_RETURN(std::vector<RefFile> files, RefWalk(root_fd, root).run(rec.active));
  std::vector<std::string> out;
  for (const auto& f : files)
    if (f.sha256.empty() ||
        !std::binary_search(rec.entries.begin(), rec.entries.end(), std::make_pair(f.key, f.sha256)))
      out.push_back(f.rel);
  return out;
}

// ---- the import -------------------------------------------------------------

// The event code of every imported transaction's first event (inspect
// events shows it; docs/spec/transactions.md keeps codes for DOT_E_* names and
// outcome words such as NO_CHANGES).
constexpr std::string_view kAdoptedCode = "ADOPTED";

// The record's one form, canonical JSON (its members sorted already:
// generation, root_id, state, transactions).
Result<std::string> adoption_json(const AdoptionRecord& r) {
  jcs::Node record = jcs::Node::object();
  record.set("generation", jcs::Node::string(std::string(generation_name(r.generation))))
      .set("root_id", jcs::Node::string(r.root_id))
      .set("state", jcs::Node::string(std::string(ref_state_name(r.state))))
      .set("transactions", jcs::Node::integer(static_cast<std::int64_t>(r.transactions)));
  return jcs::encode(record, jcs::Profile::Rfc8785);
}

Result<AdoptionRecord> parse_adoption(std::string_view bytes, std::string_view where) {
  auto bad = [&] {
    return make_error(adopt::ErrorKind::AdoptionRecord,
                      fmt::format("{}: is not an adoption record adopt writes", where));
  };
  auto doc = json::parse(bytes);
  if (!doc.ok() || !doc->root().is_object() || doc->root().size() != 4) return bad();
  AdoptionRecord r;
  std::string generation, state;
  for (auto [key, out] : {std::pair<std::string_view, std::string*>{"generation", &generation},
                          {"root_id", &r.root_id},
                          {"state", &state}}) {
    auto v = doc->root().find(key);
    if (!v || !v->is_string()) return bad();
    *out = std::string(v->as_string());
  }
  // adopt writes only the names of these two enums.
  const std::optional<Generation> g = generation_from_name(generation);
  const std::optional<RefState> s = ref_state_from_name(state);
  if (!g || !s) return bad();
  r.generation = *g;
  r.state = *s;
  auto n = doc->root().find("transactions");
  if (!n || !n->is_number() || !n->is_integer_spelling() || n->number_text().size() > 9 || n->number_text()[0] == '-')
    return bad();
  r.transactions = static_cast<std::size_t>(std::stoul(std::string(n->number_text())));
  if (!is_sha256_hex(r.root_id)) return bad();
  auto canonical = adoption_json(r);
  if (!canonical.ok() || *canonical != bytes) return bad();
  return r;
}

// The order the reference made its transactions in: archived generations
// by when their journal last changed (their names, plan ids, say nothing
// of it; the plan id breaks a tie), then the active one. Only the active
// one's place is certain (the reference archives before it applies again);
// the archived ones' order is a best guess from mtimes, which is why they
// are marked kArchivedCode and never rolled back.
std::vector<const Transaction*> in_order(const Survey& s) {
  std::vector<const Transaction*> out;
  for (const auto& h : s.history) out.push_back(&h);
  std::sort(out.begin(), out.end(), [](const Transaction* a, const Transaction* b) {
    return a->wal_mtime != b->wal_mtime ? a->wal_mtime < b->wal_mtime : a->plan_id < b->plan_id;
  });
  if (s.active) out.push_back(&*s.active);
  return out;
}

// A stage the plugin wrote and no transaction followed: the reference's
// newest status calls it ABANDONED, and so is it recorded (without a plan).
Transaction lone_stage() {
  Transaction t;
  t.dir = std::string(kStageDir);
  t.state = RefState::Abandoned;
  return t;
}

// One reference transaction into the store, through the store's own
// transitions (so every event history is one `store check` accepts): the
// proposal with its document, the seal with the original plan bytes (its
// canonical form, which its plan id hashes) and artifacts, the prepare with
// its backups, then the journal replayed record by record with the effect
// ledger where the reference wrote it (after COMMITTED). A finished
// COMMITTED transaction ends DONE, as dot-core's own do.
// The reference's sealed plan as dot-core stores one: its plan bytes and
// ids, one artifact and one backup per operation, then PREPARED.
Status seal_and_prepare(store::Store& st, store::TxnId id, const Transaction& t) {
  const Plan& plan = *t.plan;
  store::SealInput in;
  in.plan_id = t.plan_id;
  in.proposal_id = t.proposal_id;
  DOT_ASSIGN_OR_RETURN(in.canonical_plan, canonical_bytes(plan));
  if (plan.effects) in.effect_count = static_cast<std::uint32_t>(plan.effects->size());
  std::vector<store::Blob> backups;
  for (std::size_t i = 0; i < plan.operations.size(); ++i) {
    const Operation& op = plan.operations[i];
    in.operations.push_back(store::OperationSummary{op.name, op.before.sha256.hex(), op.after.sha256.hex()});
    store::Blob a;
    a.slot = static_cast<std::uint32_t>(i);
    a.bytes = t.artifact_bytes[i];
    a.sha256 = op.after.sha256.hex();
    in.artifacts.push_back(std::move(a));
    store::Blob b;
    b.slot = static_cast<std::uint32_t>(i);
    b.exists = op.before.exists;
    if (b.exists) {
      b.bytes = *t.backup_bytes[i];
      b.sha256 = op.before.sha256.hex();
    }
    backups.push_back(std::move(b));
  }
  DOT_TRY(st.seal(id, in));
  return st.prepare(id, backups);
}

// The reference's journal after PREPARED, state by state, with its effect
// ledger once COMMITTED; a COMMITTED end is DONE in dot-core.
Status replay_journal(store::Store& st, store::TxnId id, const Transaction& t) {
  store::State now = store::State::Prepared;
  for (std::size_t i = 1; i < t.wal.size(); ++i) {
    switch (t.wal[i]) {
      case WalState::Prepared:
        break;  // only ever first (go_root.cpp checks the succession)
      case WalState::Committing:
        now = store::State::Committing;
        break;
      case WalState::Committed:
        now = store::State::Committed;
        break;
      case WalState::RollingBack:
        // The reference writes ROLLING_BACK again when it resumes a rollback;
        // dot-core's graph has it once.
        if (now == store::State::RollingBack) continue;
        now = store::State::RollingBack;
        break;
      case WalState::RolledBack:
        now = store::State::RolledBack;
        break;
    }
    DOT_TRY(st.transition(id, now));
    if (now != store::State::Committed) continue;
    for (EffectState e : t.ledger) {
      if (e == EffectState::Attempted) {
        DOT_TRY(st.effect_attempt(id, 0));
      } else {
        DOT_TRY(st.effect_finish(
            id, 0, e == EffectState::Succeeded ? store::EffectState::Succeeded : store::EffectState::Failed,
            e == EffectState::Failed ? code_name(Code::PostCommit) : std::string_view(),
            e == EffectState::Failed ? "the reference recorded this attempt FAILED" : ""));
      }
    }
  }
  if (now == store::State::Committed)
    DOT_TRY(st.transition(id, store::State::Done, {},
                          t.plan->pre_capability() ? "adopted: pre-capability transaction, complete without a ledger"
                                                   : "adopted: every post-commit effect SUCCEEDED"));
  return {};
}

Status record_transaction(store::Store& st, const Transaction& t, std::string_view plugin_digest,
                          RefState found_state) {
  store::ProposalStart start;
  start.plugin_id = std::string(dpp::hello::kPluginId);
  start.plugin_digest = t.plan ? t.plan->plugin_digest : std::string(plugin_digest);
  DOT_ASSIGN_OR_RETURN(store::TxnId id, st.begin_proposal(start));
  const char* kind = !t.plan                    ? "no sealed plan"
                     : t.plan->pre_capability() ? "a pre-capability plan (no effects key)"
                                                : "an effects plan";
  DOT_TRY(st.note(id, kAdoptedCode,
                  fmt::format("adopted from the Go reference: {} in reference state {}{}, {}; its ids and plan bytes "
                              "are the reference's",
                              t.dir, ref_state_name(found_state),
                              found_state == t.state ? std::string()
                                                     : fmt::format(" (finished by adopt: {})", ref_state_name(t.state)),
                              kind)));
  if (t.dir.rfind(kHistoryDir, 0) == 0)
    DOT_TRY(st.note(id, kArchivedCode,
                    "archived by the Go reference: kept as evidence, never rolled back (the reference keeps no "
                    "order of its archived generations, and never rolls one back)"));
  if (t.plan) {
    DOT_ASSIGN_OR_RETURN(std::string proposal, proposal_document(*t.plan));
    DOT_TRY(st.set_proposal_id(id, t.proposal_id, proposal));
  }
  if (t.state == RefState::Abandoned) {
    if (t.plan)
      DOT_TRY(
          st.note(id, kAdoptedCode,
                  fmt::format("the reference's plan.json (plan_id {}), never prepared: {}", t.plan_id, t.plan_bytes)));
    store::Abandonment why;
    why.code = std::string(code_name(Code::RecoveryRequired));
    why.detail = fmt::format(
        "adopted from the Go reference: {} never reached a durable PREPARED; its leftovers were "
        "discarded, the targets were never touched",
        t.dir);
    return st.abandon(id, why);
  }
  DOT_TRY(seal_and_prepare(st, id, t));
  return replay_journal(st, id, t);
}

// The reference's entries the cleanup removes, the marker last.
std::vector<std::string> reference_entries(int root_fd) {
  std::vector<std::string> out;
  auto names = beneath::list_entries(root_fd);
  if (names.ok())
    for (const auto& n : *names)
      if (n.rfind(".dot-next-", 0) == 0) out.push_back(n);
  for (std::string_view n : {kStageDir, kArchiveIntent, kTxnDir, kHistoryDir, kManifestName, kPluginName, kLockName})
    out.emplace_back(n);
  return out;
}

class Importer {
 public:
  Importer(std::string root, int root_fd, const TestHooks& hooks)
      : root_(std::move(root)), fd_(root_fd), hooks_(hooks) {}

  std::string path(std::string_view rel) const { return fmt::format("{}/{}", root_, rel); }

  // Builds `.dot-adopting` completely, then renames it `.dot`. Returns the
  // lock of the new state folder, held (dot-core commands wait for the
  // cleanup with DOT_E_CONFLICT).
  Result<UniqueFd> run(const Survey& found, const Survey& s, const EntryRecord& entries, AdoptionRecord& rec) const {
    const std::string tmp(kImportDir);
    // A partial import of an earlier run: never made durable, so dropped.
    DOT_TRY(remove(tmp));
    if (::mkdirat(fd_, tmp.c_str(), 0700) != 0) return beneath::errno_error(errno, "mkdir", path(tmp));
    DOT_ASSIGN_OR_RETURN(UniqueFd dir, beneath::open_beneath(fd_, tmp, O_RDONLY | O_DIRECTORY));
    if (::fchmod(dir.get(), 0700) != 0) return beneath::errno_error(errno, "fchmod", path(tmp));
    const std::string at = path(tmp);

    DOT_ASSIGN_OR_RETURN(beneath::CreatedFile lock, beneath::create_exclusive(dir.get(), store::kLockName, 0600));
    if (::flock(lock.fd.get(), LOCK_EX | LOCK_NB) != 0) return beneath::errno_error(errno, "flock", at + "/lock");
    DOT_TRY(beneath::fsync_fd(lock.fd.get(), at + "/lock"));

    std::string digest;
    // A plugin copy that no longer matches its registration is not pinned:
    // nothing here runs it, and a later plan asks for a fresh register.
    const bool pin_plugin = s.manifest && s.plugin_untrusted.empty();
    if (s.manifest) digest = s.manifest->sha256;
    if (pin_plugin) DOT_TRY(copy_plugin(dir.get(), at, digest));
    rec.root_id = s.root_id;
    rec.generation = found.generation;
    rec.state = found.state;
    {
      store::OpenOptions options;
      options.commit_hook = [this](std::string_view) { hooks_.reached("adopt.import.store"); };
      DOT_ASSIGN_OR_RETURN(store::Store st,
                           store::Store::create(fmt::format("{}/{}", at, store::kDatabaseName), s.root_id, options));
      if (pin_plugin) {
        core::Manifest m;
        m.assurance = s.manifest->assurance;
        m.id = std::string(dpp::hello::kPluginId);
        m.profile = std::string(dpp::hello::kProfile);
        m.protocol = 1;
        m.sha256 = digest;
        store::PluginRecord p;
        p.plugin_id = m.id;
        p.sha256 = digest;
        DOT_ASSIGN_OR_RETURN(p.manifest, encode_manifest(m));
        DOT_TRY(st.register_plugin(p, false));
      }
      std::vector<const Transaction*> all = in_order(s);
      const Transaction stage_only = lone_stage();
      if (!s.active && s.state == RefState::Abandoned) all.push_back(&stage_only);
      for (const Transaction* t : all) {
        // The state the reference left it in, before adopt finished it.
        const bool was_active = found.active && !t->plan_id.empty() && t->plan_id == found.active->plan_id;
        DOT_TRY(record_transaction(st, *t, digest, was_active ? found.state : t->state));
        ++rec.transactions;
      }
    }  // closed: SQLite checkpoints its journal into store.db
    {
      DOT_ASSIGN_OR_RETURN(UniqueFd db, beneath::open_beneath(dir.get(), store::kDatabaseName, O_RDONLY));
      DOT_TRY(beneath::fsync_fd(db.get(), at + "/" + store::kDatabaseName));
      DOT_ASSIGN_OR_RETURN(beneath::CreatedFile e, beneath::create_exclusive(dir.get(), kImportedEntriesName, 0600));
      DOT_ASSIGN_OR_RETURN(std::string entries_json, entry_record_json(entries));
      DOT_TRY(write_all(e.fd.get(), entries_json, at));
      DOT_TRY(beneath::fsync_fd(e.fd.get(), at));
      DOT_ASSIGN_OR_RETURN(beneath::CreatedFile f, beneath::create_exclusive(dir.get(), kAdoptionRecordName, 0600));
      DOT_ASSIGN_OR_RETURN(std::string record_json, adoption_json(rec));
      DOT_TRY(write_all(f.fd.get(), record_json, at));
      DOT_TRY(beneath::fsync_fd(f.fd.get(), at));
    }
    DOT_TRY(beneath::fsync_fd(dir.get(), at));
    hooks_.reached("adopt.import.built");
    // The one durable step of the import.
    if (::renameat2(fd_, tmp.c_str(), fd_, store::kStateDirName, RENAME_NOREPLACE) != 0)
      return beneath::errno_error(errno, "rename", at);
    DOT_TRY(beneath::fsync_fd(fd_, root_));
    hooks_.reached("adopt.import.durable");
    return std::move(lock.fd);
  }

  // The reference's files, the marker last (section "cleanup" above).
  Result<std::size_t> clean_up() const {
    std::size_t removed = 0;
    for (const auto& name : reference_entries(fd_)) {
      DOT_ASSIGN_OR_RETURN(std::size_t n, beneath::remove_tree(fd_, name));
      removed += n;
    }
    DOT_TRY(beneath::fsync_fd(fd_, root_));
    hooks_.reached("adopt.cleanup.files");
    DOT_ASSIGN_OR_RETURN(std::size_t n, beneath::remove_tree(fd_, kMarkerName));
    DOT_TRY(beneath::fsync_fd(fd_, root_));
    hooks_.reached("adopt.cleanup.marker");
    return removed + n;
  }

 private:
  Status remove(std::string_view name) const {
    DOT_ASSIGN_OR_RETURN(std::size_t n, beneath::remove_tree(fd_, name));
    if (n) DOT_TRY(beneath::fsync_fd(fd_, root_));
    return {};
  }

  // The reference's plugin copy, byte for byte, as the pinned copy of
  // org.dot.hello (mode 0500), checked against the manifest's digest again.
  Status copy_plugin(int dir, const std::string& at, const std::string& digest) const {
    DOT_ASSIGN_OR_RETURN(
        beneath::FileObservation o,
        beneath::observe_beneath(fd_, kPluginName,
                                 beneath::ObserveOptions{.max_bytes = kMaxPluginBytes, .keep_content = true}));
    if (o.type != beneath::FileType::Regular || o.sha256 != digest)
      return make_error(
          adopt::ErrorKind::Digest,
          fmt::format("{}: changed while adopt read it (it no longer hashes to {})", path(kPluginName), digest));
    DOT_ASSIGN_OR_RETURN(beneath::CreatedFile f,
                         beneath::create_exclusive(dir, store::plugin_copy_name(dpp::hello::kPluginId), 0500));
    DOT_TRY(write_all(f.fd.get(), o.content, at));
    return beneath::fsync_fd(f.fd.get(), at);
  }

  std::string root_;
  int fd_;
  const TestHooks& hooks_;
};

}  // namespace

std::vector<std::string> adopt_crash_points(const Survey& s) {
  std::vector<std::string> out;
  // The import and the cleanup, whatever the state: the first store commit
  // in the folder being built, the folder complete, the rename that makes it
  // durable, the reference's files gone, the marker gone.
  const std::vector<std::string> import = {"adopt.import.store", "adopt.import.built", "adopt.import.durable",
                                           "adopt.cleanup.files", "adopt.cleanup.marker"};
  if (!s.active || !s.active->plan) {
    out.insert(out.end(), import.begin(), import.end());
    return out;
  }
  const Transaction& t = *s.active;
  if (s.state == RefState::Archiving) {
    if (t.dir == kTxnDir) {
      if (s.has_stage) out.push_back("adopt.go.archive_stage");
      out.push_back("adopt.go.archive_rename");
    }
    out.insert(out.end(), {"adopt.go.archive_durable", "adopt.go.archive_finished"});
  } else if (s.finish == Finish::Effects) {
    out.insert(out.end(), {"adopt.go.effect_attempted", "adopt.go.effect_ran", "adopt.go.effect_succeeded"});
  } else if (s.finish == Finish::AllBefore && s.state != RefState::RolledBack) {
    if (t.wal.back() != WalState::RollingBack) out.push_back("adopt.go.rolling_back");
    for (auto it = s.to_restore.rbegin(); it != s.to_restore.rend(); ++it) {
      const std::size_t j = *it;
      if (t.plan->operations[j].before.exists) out.push_back(fmt::format("adopt.go.rollback_flushed.{}", j));
      out.push_back(fmt::format("adopt.go.rollback_restored.{}", j));
    }
    out.push_back("adopt.go.rolled_back");
  }
  out.insert(out.end(), import.begin(), import.end());
  return out;
}

namespace {
// `.dot/adopted-entries.json`; nullopt when the adoption has none (made by
// an earlier dot-core).
Result<std::optional<EntryRecord>> read_entry_record(int state_fd, const std::string& state_dir) {
  const std::string where = fmt::format("{}/{}", state_dir, kImportedEntriesName);
  auto fd = beneath::open_beneath(state_fd, kImportedEntriesName, O_RDONLY);
  if (!fd.ok()) {
    if (beneath::error_errno(fd.error()) == ENOENT) return std::optional<EntryRecord>();
    return std::move(fd).error();
  }
  DOT_ASSIGN_OR_RETURN(std::string bytes, read_all(fd->get(), 16u << 20, where));
  DOT_ASSIGN_OR_RETURN(EntryRecord r, parse_entry_record(bytes, where));
  return std::optional<EntryRecord>(std::move(r));
}
}  // namespace

Result<std::optional<Adopted>> find_adoption(const std::string& dir) {
  DOT_ASSIGN_OR_RETURN(UniqueFd root_fd, beneath::open_root(dir));
  DOT_ASSIGN_OR_RETURN(beneath::FileObservation state, beneath::observe_beneath(root_fd.get(), store::kStateDirName));
  if (!state.exists()) return std::optional<Adopted>();
  // Only the record is read here: a state folder without one (or without a
  // store) is not an adoption, and the survey says what it is.
  const std::string state_dir = fmt::format("{}/{}", dir, store::kStateDirName);
  if (state.type == beneath::FileType::Symlink)
    return make_error(adopt::ErrorKind::Symlink, fmt::format("{}: is a symlink (refused, never followed)", state_dir));
  if (state.type != beneath::FileType::Directory)
    return make_error(adopt::ErrorKind::DotCoreRoot, fmt::format("{}: is a {}, not dot-core's state folder", state_dir,
                                                                 beneath::file_type_name(state.type)));
  DOT_ASSIGN_OR_RETURN(UniqueFd state_fd,
                       beneath::open_beneath(root_fd.get(), store::kStateDirName, O_RDONLY | O_DIRECTORY));
  auto fd = beneath::open_beneath(state_fd.get(), kAdoptionRecordName, O_RDONLY);
  if (!fd.ok()) {
    if (beneath::error_errno(fd.error()) == ENOENT) return std::optional<Adopted>();
    return std::move(fd).error();
  }
  const std::string where = fmt::format("{}/{}", state_dir, kAdoptionRecordName);
  DOT_ASSIGN_OR_RETURN(std::string bytes, read_all(fd->get(), 4096, where));
  Adopted a;
  DOT_ASSIGN_OR_RETURN(a.record, parse_adoption(bytes, where));
  DOT_ASSIGN_OR_RETURN(
      beneath::FileObservation marker,
      beneath::observe_beneath(root_fd.get(), kMarkerName, beneath::ObserveOptions{.keep_content = true}));
  a.cleanup_pending = marker.exists();
  // The marker left beside the adopted state must be the adopted root's.
  if (a.cleanup_pending && (marker.type != beneath::FileType::Regular ||
                            marker.content != fmt::format("{}{}\n", kMarkerPrefix, a.record.root_id)))
    return make_error(adopt::ErrorKind::NotReferenceRoot,
                      fmt::format("{}/{}: is not the marker of the root adopted into {} (root id {})", dir, kMarkerName,
                                  state_dir, a.record.root_id));
  if (a.cleanup_pending) {
    DOT_ASSIGN_OR_RETURN(std::optional<EntryRecord> rec, read_entry_record(state_fd.get(), state_dir));
    if (rec) {
      DOT_ASSIGN_OR_RETURN(a.not_imported, unimported(root_fd.get(), dir, *rec));
    } else {
      a.entry_record_missing = true;
    }
  }
  return std::optional<Adopted>(std::move(a));
}

Status cleanup_refusal(const std::string& dir, const Adopted& a) {
  if (!a.cleanup_pending) return {};
  if (a.entry_record_missing)
    return make_error(adopt::ErrorKind::NoEntryRecord,
                      fmt::format("{}/{}/{}: is missing: this root was adopted by a dot-core that did not record which "
                                  "reference files it imported, so adopt cannot tell them from files the reference "
                                  "wrote since; nothing was removed (check the reference's files and remove them "
                                  "yourself, {} last)",
                                  dir, store::kStateDirName, kImportedEntriesName, kMarkerName));
  if (a.not_imported.empty()) return {};
  constexpr std::size_t kNamed = 40;
  std::string names;
  for (std::size_t i = 0; i < a.not_imported.size() && i < kNamed; ++i) names += (i ? ", " : "") + a.not_imported[i];
  if (a.not_imported.size() > kNamed) names += fmt::format(" and {} more", a.not_imported.size() - kNamed);
  return make_error(adopt::ErrorKind::NotImported,
                    fmt::format("{}: was adopted into {} (root id {}), but the reference's files beside it are not "
                                "all what adopt imported: the reference was used on this root after the import. "
                                "{} entr{} adopt did not import: {}. adopt removes nothing it did not import: "
                                "nothing was changed. Keep them: the reference wrote them (its transactions may hold "
                                "backups of your files); finish with them in the reference before removing its files",
                                dir, store::kStateDirName, a.record.root_id, a.not_imported.size(),
                                a.not_imported.size() == 1 ? "y" : "ies", names));
}

Result<AdoptResult> adopt(const std::string& dir, const TestHooks& hooks) {
  AdoptResult out;
  DOT_ASSIGN_OR_RETURN(std::optional<Adopted> adopted, find_adoption(dir));
  if (adopted) {
    out.record = adopted->record;
    if (!adopted->cleanup_pending) {
      out.outcome = AdoptOutcome::AlreadyAdopted;
      return out;
    }
    // Refused before anything is taken or created (not even a lock)...
    DOT_TRY(cleanup_refusal(dir, *adopted));
    // ...and judged again under both locks, dot-core's and the reference's,
    // so that neither side adds anything between the comparison and the
    // removal.
    DOT_ASSIGN_OR_RETURN(store::OpenedRoot opened, store::open_root(dir));
    DOT_ASSIGN_OR_RETURN(store::RootLock lock, store::RootLock::acquire(opened));
    DOT_ASSIGN_OR_RETURN(UniqueFd ref_lock, lock_reference(dir, opened.root_fd.get()));
    DOT_ASSIGN_OR_RETURN(std::optional<Adopted> again, find_adoption(dir));
    if (!again || !again->cleanup_pending)
      return make_error(adopt::ErrorKind::Changed,
                        fmt::format("{}: changed while adopt looked at it; run adopt again", dir));
    DOT_TRY(cleanup_refusal(dir, *again));
    DOT_ASSIGN_OR_RETURN(out.removed, Importer(dir, opened.root_fd.get(), hooks).clean_up());
    out.outcome = AdoptOutcome::CleanupFinished;
    return out;
  }
  // Verified before anything is created (not even the lock): a folder that
  // is not a reference root, or one that is not sound, is left untouched.
  DOT_ASSIGN_OR_RETURN(out.found, survey(dir));
  if (out.found.has_dot_core_state)
    return make_error(
        adopt::ErrorKind::DotCoreRoot,
        fmt::format("{}/{}: dot-core's state folder is already there and was not made by adopt; a root is "
                    "either the reference's or dot-core's (nothing was changed)",
                    dir, store::kStateDirName));
  DOT_ASSIGN_OR_RETURN(UniqueFd root_fd, beneath::open_root(dir));
  DOT_ASSIGN_OR_RETURN(UniqueFd lock, lock_reference(dir, root_fd.get()));
  // Again under the lock: what is finished is what is there now.
  DOT_ASSIGN_OR_RETURN(Survey s, survey(dir, SurveyOptions{.caller_holds_lock = true}));

  Finisher f(dir, root_fd.get(), hooks);
  if (s.state == RefState::Archiving) {
    DOT_TRY(f.finish_archive(s));
    out.steps.push_back(fmt::format("archive of {} completed", s.active->plan_id));
  } else if (s.finish == Finish::Effects) {
    DOT_TRY(f.run_effect(*s.active));
    out.steps.push_back(
        fmt::format("post-commit effect of {} run again under its idempotency key: COMMITTED", s.active->plan_id));
  } else if (s.finish == Finish::AllBefore && s.state != RefState::RolledBack) {
    DOT_TRY(f.roll_back(*s.active));
    out.steps.push_back(fmt::format("{} rolled back from {}: ROLLED_BACK, every target as before", s.active->plan_id,
                                    ref_state_name(s.state)));
  } else if (s.finish == Finish::Discard) {
    out.steps.push_back("leftovers that never reached a durable PREPARED: recorded ABANDONED, then discarded");
  }
  DOT_ASSIGN_OR_RETURN(out.finished, survey(dir, SurveyOptions{.caller_holds_lock = true}));
  out.plugin_not_registered = out.finished.plugin_untrusted;
  // Every reference file as the cleanup will find it, unless the reference
  // runs before the cleanup ends (a kill in between): what the next adopt
  // compares the root with before it removes anything.
  DOT_ASSIGN_OR_RETURN(EntryRecord entries, record_entries(root_fd.get(), dir));

  Importer imp(dir, root_fd.get(), hooks);
  DOT_ASSIGN_OR_RETURN(UniqueFd state_lock, imp.run(out.found, out.finished, entries, out.record));
  DOT_ASSIGN_OR_RETURN(out.removed, imp.clean_up());
  out.outcome = AdoptOutcome::Adopted;
  return out;
}

}  // namespace dot::adopt
