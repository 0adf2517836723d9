#include "dot/core/go_adopt.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include <fmt/format.h>

#include "dot/base/beneath.h"
#include "dot/base/fd.h"
#include "dot/base/sha256.h"
#include "dot/core/target.h"

namespace dot::core::go {
namespace {

// The journal records and the ledger records, as the reference writes them
// (spec/go-roots.md sections 3 and 4; go_root.cpp reads the same bytes).
std::string wal_record(WalState s) { return fmt::format(R"({{"state":"{}"}})", wal_state_name(s)) + "\n"; }
std::string ledger_line(std::string_view plan_id, std::string_view state) {
  return fmt::format(R"({{"index":0,"idempotency_key":"{}","state":"{}"}})",
                     sha256_hex(fmt::format("{}:commit:0", plan_id)), state) +
         "\n";
}
// The reference refuses an append to a journal this close to its 64 KiB
// read limit (section 3), and to a ledger this close (section 4).
constexpr std::size_t kWalAppendLimit = kMaxFileBytes - 128;
constexpr std::size_t kLedgerAppendLimit = kMaxFileBytes - 256;

// One adopt run on a locked reference root: its descriptor, messages naming
// ROOT/..., and the crash points.
class Finisher {
 public:
  Finisher(std::string root, int root_fd, const TestHooks& hooks) : root_(std::move(root)), fd_(root_fd), hooks_(hooks) {}

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
  Status append(int dirfd, std::string_view name, std::string_view rel, std::string_view line, std::size_t limit) const {
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
      return make_error(Code::RecoveryRequired, "journal_full",
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
  // rollback was interrupted (spec/go-roots.md section 6): ROLLING_BACK
  // unless it is already the last record, each slot from the last down to
  // 0 restored through .dot-next-N (or removed when it did not exist
  // before), ROLLED_BACK.
  Status roll_back(const Transaction& t) const {
    DOT_ASSIGN_OR_RETURN(UniqueFd txn, open_dir(fd_, kTxnDir, kTxnDir));
    const std::string wal = fmt::format("{}/wal", kTxnDir);
    if (t.wal.back() != WalState::RollingBack) {
      DOT_TRY(append(txn.get(), "wal", wal, wal_record(WalState::RollingBack), kWalAppendLimit));
      hooks_.reached("adopt.go.rolling_back");
    }
    const auto& ops = t.plan->operations;
    for (std::size_t j = ops.size(); j-- > 0;) {
      const Operation& op = ops[j];
      DOT_ASSIGN_OR_RETURN(ObservedTarget now, observe_target(fd_, op.name));
      if (now.snapshot == op.before) continue;
      if (now.snapshot != op.after)
        return make_error(Code::RecoveryRequired, "concurrent_edit",
                          fmt::format("{}: was edited while adopt rolled the reference's transaction {} back; left "
                                      "as it is (concurrent edit, preserve evidence)",
                                      path(op.name), t.plan_id));
      if (op.before.exists) {
        const std::string next = fmt::format(".dot-next-{}", j);
        if (::unlinkat(fd_, next.c_str(), 0) != 0 && errno != ENOENT) return io(errno, "unlink", next);
        DOT_ASSIGN_OR_RETURN(beneath::CreatedFile f, beneath::create_exclusive(fd_, next, static_cast<mode_t>(op.before.mode)));
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
    DOT_TRY(append(txn.get(), "wal", wal, wal_record(WalState::RolledBack), kWalAppendLimit));
    hooks_.reached("adopt.go.rolled_back");
    return {};
  }

  // The reference's retry-effects (section 4): ATTEMPTED, the root-sync
  // (an fsync of the root), SUCCEEDED; a failed fsync is recorded FAILED.
  Status run_effect(const Transaction& t) const {
    DOT_ASSIGN_OR_RETURN(UniqueFd txn, open_dir(fd_, kTxnDir, kTxnDir));
    const std::string ledger = fmt::format("{}/effects.wal", kTxnDir);
    DOT_TRY(append(txn.get(), "effects.wal", ledger, ledger_line(t.plan_id, "ATTEMPTED"), kLedgerAppendLimit));
    hooks_.reached("adopt.go.effect_attempted");
    int err = hooks_.fault("adopt.go.effect");
    if (err == 0 && ::fsync(fd_) != 0) err = errno;
    if (err != 0) {
      DOT_TRY(append(txn.get(), "effects.wal", ledger, ledger_line(t.plan_id, "FAILED"), kLedgerAppendLimit));
      return make_error(Code::PostCommit, beneath::errno_kind(err),
                        fmt::format("{}: the root-sync effect of the reference's transaction {} failed ({}); recorded "
                                    "FAILED, run adopt again",
                                    root_, t.plan_id, beneath::errno_kind(err)));
    }
    hooks_.reached("adopt.go.effect_ran");
    DOT_TRY(append(txn.get(), "effects.wal", ledger, ledger_line(t.plan_id, "SUCCEEDED"), kLedgerAppendLimit));
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
      return make_error(Code::Conflict, "locked", fmt::format("{}/{}: a reference dot-core command holds this root's lock", root, rel));
    return beneath::errno_error(errno, "flock", fmt::format("{}/{}", root, rel));
  }
  return std::move(*fd);
}

}  // namespace

std::vector<std::string> adopt_crash_points(const Survey& s) {
  std::vector<std::string> out;
  if (!s.active || !s.active->plan) return out;
  const Transaction& t = *s.active;
  if (s.state == "ARCHIVING") {
    if (t.dir == kTxnDir) {
      if (s.has_stage) out.push_back("adopt.go.archive_stage");
      out.push_back("adopt.go.archive_rename");
    }
    out.insert(out.end(), {"adopt.go.archive_durable", "adopt.go.archive_finished"});
  } else if (s.finish == Finish::Effects) {
    out.insert(out.end(), {"adopt.go.effect_attempted", "adopt.go.effect_ran", "adopt.go.effect_succeeded"});
  } else if (s.finish == Finish::AllBefore && s.state != "ROLLED_BACK") {
    if (t.wal.back() != WalState::RollingBack) out.push_back("adopt.go.rolling_back");
    for (auto it = s.to_restore.rbegin(); it != s.to_restore.rend(); ++it) {
      const std::size_t j = *it;
      if (t.plan->operations[j].before.exists) out.push_back(fmt::format("adopt.go.rollback_flushed.{}", j));
      out.push_back(fmt::format("adopt.go.rollback_restored.{}", j));
    }
    out.push_back("adopt.go.rolled_back");
  }
  return out;
}

Result<AdoptResult> adopt(const std::string& dir, const TestHooks& hooks) {
  AdoptResult out;
  // Verified before anything is created (not even the lock): a folder that
  // is not a reference root, or one that is not sound, is left untouched.
  DOT_ASSIGN_OR_RETURN(out.found, survey(dir));
  DOT_ASSIGN_OR_RETURN(UniqueFd root_fd, beneath::open_root(dir));
  DOT_ASSIGN_OR_RETURN(UniqueFd lock, lock_reference(dir, root_fd.get()));
  // Again under the lock: what is finished is what is there now.
  DOT_ASSIGN_OR_RETURN(Survey s, survey(dir, SurveyOptions{.caller_holds_lock = true}));

  Finisher f(dir, root_fd.get(), hooks);
  if (s.state == "ARCHIVING") {
    DOT_TRY(f.finish_archive(s));
    out.steps.push_back(fmt::format("archive of {} completed", s.active->plan_id));
  } else if (s.finish == Finish::Effects) {
    DOT_TRY(f.run_effect(*s.active));
    out.steps.push_back(fmt::format("post-commit effect of {} run again under its idempotency key: COMMITTED", s.active->plan_id));
  } else if (s.finish == Finish::AllBefore && s.state != "ROLLED_BACK") {
    DOT_TRY(f.roll_back(*s.active));
    out.steps.push_back(fmt::format("{} rolled back from {}: ROLLED_BACK, every target as before", s.active->plan_id, s.state));
  }
  DOT_ASSIGN_OR_RETURN(out.finished, survey(dir, SurveyOptions{.caller_holds_lock = true}));
  return out;
}

}  // namespace dot::core::go
