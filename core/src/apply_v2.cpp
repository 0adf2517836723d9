// Apply and rollback of version-2 plans (docs/spec/dpp-general.md "Apply,
// rollback, recover"; docs/spec/transactions.md): the same journal and state
// machine as the hello profile (applier.cpp, recovery.cpp), over any number
// of operations in nested folders, with durability batched where it is
// sound (docs/engine.md, "Apply of a version-2 plan"):
//
//   before-checks (STALE) -> PREPARED (backups streamed into the store) ->
//   created folders -> every temp file -> syncfs -> COMMITTING -> renames
//   and removals -> one fsync per touched folder -> COMMITTED -> effects.
//
// Every journal record follows the data it names: PREPARED holds the
// backups in its own SQLite transaction; COMMITTING is written only once
// every temp file is durable; COMMITTED only once every folder is. Every
// path is reached through descriptors beneath the root, never through a
// symlink; no file's bytes are ever held whole (they stream between the
// store and the temp file in bounded chunks).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "apply_internal.h"
#include "dot/base/beneath.h"
#include "dot/base/utf8.h"
#include "dot/core/error_kinds.h"
#include "dot/core/rollback.h"
#include "dot/dpp/general.h"

namespace dot::core {
namespace {

// The target policy's size bound: the profile's max_file_bytes, as at plan.
constexpr std::uint64_t kMaxFileBytes = dpp::general::kLimits.max_file_bytes;

std::string quoted(std::string_view path) { return fmt::format("\"{}\"", shown(path.substr(0, 512))); }

std::string_view leaf_of(std::string_view path) noexcept {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// An I/O failure of a commit step is DOT_E_COMMIT; a symlink stays
// DOT_E_PATH_ESCAPE, a changed target DOT_E_CONFLICT.
Error as_commit(Error e) {
  if (e.code == Code::Io) e.code = Code::Commit;
  return e;
}

// Folders beneath the root, each opened by descriptor (never through a
// symlink), the last one kept: operations come in path order, so the files
// of one folder mostly come together.
class FolderCache {
 public:
  explicit FolderCache(int root_fd) : root_fd_(root_fd) {}
  Result<int> open(std::string_view folder) {
    if (folder.empty()) return root_fd_;
    if (fd_.valid() && folder == name_) return fd_.get();
    fd_.reset();
    DOT_ASSIGN_OR_RETURN(fd_, beneath::open_beneath(root_fd_, folder, O_RDONLY | O_DIRECTORY));
    name_ = folder;
    return fd_.get();
  }
  void forget() noexcept { fd_.reset(); }

 private:
  int root_fd_;
  UniqueFd fd_;
  std::string name_;
};

// Duplicates a descriptor (its open file description, and with it the
// point from which syncfs reports writeback errors, is shared).
Result<UniqueFd> dup_fd(int fd, std::string_view what) {
  int d = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (d < 0) return commit_error(errno, "dup", what);
  return UniqueFd(d);
}

// Every file system a temp file went to, by device, each with a descriptor
// of a folder on it opened BEFORE the first temp file there was written:
// syncfs reports the writeback errors of its file system that happened
// since the descriptor it is given was opened (Linux 5.8 and later), so a
// descriptor opened afterwards could miss the failure of a temp file's
// writeback. A folder beneath the root may be another mount, hence one per
// device.
using FileSystems = std::map<dev_t, UniqueFd>;

Status note_file_system(int dir_fd, std::string_view folder, FileSystems& file_systems) {
  struct stat st {};
  const std::string_view what = folder.empty() ? std::string_view(".") : folder;
  if (::fstat(dir_fd, &st) != 0) return commit_error(errno, "fstat", what);
  if (file_systems.contains(st.st_dev)) return {};
  DOT_ASSIGN_OR_RETURN(UniqueFd d, dup_fd(dir_fd, what));
  file_systems.emplace(st.st_dev, std::move(d));
  return {};
}

// syncfs reports writeback errors since Linux 5.8; before, it returned 0
// whatever happened, and batching would hide a lost write. There each temp
// file is fsynced on its own instead (stream_temp).
bool syncfs_reports_errors() {
  struct utsname u {};
  if (::uname(&u) != 0) return false;
  unsigned major = 0, minor = 0;
  if (std::sscanf(u.release, "%u.%u", &major, &minor) != 2) return false;
  return major > 5 || (major == 5 && minor >= 8);
}

// One syncfs per file system: every temp file written there (data, inode
// and the folder entries of its journal) durable at once, any writeback
// error since the folder was opened reported and never retried.
Status sync_file_systems(const FileSystems& file_systems, const TestHooks& hooks, const std::string& fault_point) {
  if (int err = hooks.fault(fault_point)) return commit_error(err, "syncfs", "the root's file system");
  for (const auto& [dev, fd] : file_systems) {
    (void)dev;
    if (::syncfs(fd.get()) != 0) return commit_error(errno, "syncfs", "the root's file system");
  }
  return {};
}

// Writes every byte it is given to a temp file (write(2), EINTR retried).
class TempSink final : public ByteSink {
 public:
  TempSink(int fd, std::string_view path) : fd_(fd), path_(path) {}
  Status write(std::string_view bytes) override {
    while (!bytes.empty()) {
      ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return commit_error(n < 0 ? errno : EIO, "write", path_);
      bytes.remove_prefix(static_cast<std::size_t>(n));
      written_ += static_cast<std::uint64_t>(n);
    }
    return {};
  }
  std::uint64_t written() const noexcept { return written_; }

 private:
  int fd_;
  std::string_view path_;
  std::uint64_t written_ = 0;
};

// Temp file `temp` (a temp_name of this plan) in the folder open on
// `dir_fd` holding the stored file `index` of `kind` (verified as it
// streams), with the owner and mode of `want`. Not synced unless `fsync_each` (a kernel whose syncfs cannot be
// trusted): the caller makes all temp files durable at once. On every
// failure the temp file is gone.
Result<std::string> stream_temp(Root& root, store::TxnId txn, store::FileKind kind, std::size_t index, int dir_fd,
                                const std::string& temp, const Snapshot& want, std::string_view path,
                                const std::string& fault_point, bool fsync_each, std::uint64_t* bytes = nullptr) {
  auto created = create_own_temp(dir_fd, temp);
  if (!created.ok()) return as_commit(std::move(created).error());
  auto fail = [&](Error e) -> Error {
    ::unlinkat(dir_fd, temp.c_str(), 0);
    return e;
  };
  if (int err = root.hooks().fault(fault_point)) return fail(commit_error(err, "write", path));
  TempSink sink(created->fd.get(), path);
  if (auto s = root.store().read_file(txn, kind, static_cast<std::uint32_t>(index), sink); !s.ok())
    return fail(std::move(s).error());
  if (bytes) *bytes = sink.written();
  if (auto s = set_owner_and_mode(created->fd.get(), want, path); !s.ok()) return fail(std::move(s).error());
  if (fsync_each) {
    if (int err = root.hooks().fault(fault_point + "_fsync")) return fail(commit_error(err, "fsync", path));
    if (auto s = beneath::fsync_fd(created->fd.get(), path); !s.ok()) return fail(as_commit(std::move(s).error()));
  }
  return temp;
}

// Temp symlink `temp` in the folder open on `dir_fd` holding want.link_text
// (a link's after, or the before rollback restores), owned as `want` says.
// A link has no data of its own to sync: with `fsync_each` its folder is
// fsynced; otherwise syncfs makes it durable with the temp files.
Result<std::string> link_temp(const TestHooks& hooks, int dir_fd, const std::string& temp, const Snapshot& want,
                              std::string_view path, const std::string& fault_point, bool fsync_each) {
  if (int err = hooks.fault(fault_point)) return commit_error(err, "symlink", path);
  if (auto s = create_own_temp_link(dir_fd, temp, want); !s.ok()) return as_commit(std::move(s).error());
  if (fsync_each) {
    if (int err = hooks.fault(fault_point + "_fsync")) {
      ::unlinkat(dir_fd, temp.c_str(), 0);
      return commit_error(err, "fsync", path);
    }
    if (auto s = beneath::fsync_fd(dir_fd, path); !s.ok()) {
      ::unlinkat(dir_fd, temp.c_str(), 0);
      return as_commit(std::move(s).error());
    }
  }
  return temp;
}

// The re-check before a rename or removal: the target, looked at through
// its folder's descriptor, still passes the policy and equals `expected`.
Status recheck(int dir_fd, std::string_view path, const Snapshot& expected, WriteAccessJudge& judge) {
  auto o = beneath::observe_beneath(dir_fd, leaf_of(path), {.max_bytes = kMaxFileBytes});
  if (!o.ok()) {
    Error e = std::move(o).error();
    if (e.code == Code::Io) e.code = Code::Conflict;
    return e;
  }
  if (auto s = check_path_target_policy(path, *o, kMaxFileBytes, judge); !s.ok()) {
    Error e = std::move(s).error();
    if (e.code != Code::PathEscape) {
      e.code = Code::Conflict;
      e.detail = fmt::format("target {} changed since it was observed: {}", quoted(path), e.detail);
    }
    return e;
  }
  if (snapshot_of(*o) != expected)
    return make_error(core::ErrorKind::Changed, fmt::format("target {} changed since it was observed", quoted(path)));
  return {};
}

// Step 3: every target and every parent as the plan saw them, and the
// folders apply creates still exactly the missing ones. Fills the size of
// each operation's backup (0 for an absent target): the rest of its
// description is the operation's `before`.
Status check_befores(int root_fd, const PlanV2& plan, std::vector<std::uint64_t>& backup_sizes,
                     WriteAccessJudge& judge) {
  ParentFolders parents;
  for (std::size_t i = 0; i < plan.operations.size(); ++i) {
    const PathOperation& op = plan.operations[i];
    auto t = observe_path_target(root_fd, op.path, kMaxFileBytes, 0, parents, judge);
    if (!t.ok()) {
      Error e = std::move(t).error();
      if (e.code != Code::PathEscape) {
        e.code = Code::Conflict;
        e.detail = fmt::format("target {} changed since it was observed at plan time: {}", quoted(op.path), e.detail);
      }
      return e;
    }
    if (t->snapshot != op.before)
      return make_error(core::ErrorKind::Changed,
                        fmt::format("target {} changed since it was observed at plan time", quoted(op.path)));
    backup_sizes.push_back(op.before.exists ? t->size : 0);
  }
  std::set<std::string, std::less<>> existing;
  for (const auto& [folder, exists] : parents)
    if (exists) existing.insert(folder);
  FolderModes modes;
  for (const auto& folder : plan.directories) modes.emplace(folder.path, folder.mode);
  if (derive_directories(plan.operations, existing, modes) != plan.directories)
    return make_error(core::ErrorKind::Folders,
                      "the folders apply would create are no longer the ones the plan lists (a folder appeared or "
                      "went away since it was observed)");
  return {};
}

// How the store reads a target into its backup: opened beneath the root as
// itself (no symlink anywhere, never a FIFO or device), a regular file with
// one link; the store checks its size and digest as it streams. A symlink
// `before` is backed up as its text, read from the link itself.
Result<UniqueFd> open_for_backup(int root_fd, std::string_view path, const Snapshot& before) {
  if (before.is_link()) {
    DOT_ASSIGN_OR_RETURN(beneath::FileObservation o, beneath::observe_beneath(root_fd, path, {.max_bytes = 0}));
    if (o.type != beneath::FileType::Symlink || o.too_large)
      return make_error(core::ErrorKind::Changed, fmt::format("target {} changed since it was observed", quoted(path)));
    return text_fd(o.link_text, path);
  }
  DOT_ASSIGN_OR_RETURN(UniqueFd fd, beneath::open_beneath(root_fd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return beneath::errno_error(errno, "fstat", path);
  if (!S_ISREG(st.st_mode) || st.st_nlink != 1)
    return make_error(core::ErrorKind::Changed, fmt::format("target {} changed since it was observed", quoted(path)));
  return fd;
}

// Makes created folder `folder` (its mode exactly, whatever the umask).
// `created` says whether the mkdir itself happened.
Status make_folder(FolderCache& folders, const Folder& folder, const TestHooks& hooks, const std::string& point,
                   bool& created) {
  created = false;
  auto parent = folders.open(parent_folder(folder.path));
  if (!parent.ok()) return as_commit(std::move(parent).error());
  const std::string leaf(leaf_of(folder.path));
  if (int err = hooks.fault(point + ".mkdir")) return commit_error(err, "mkdir", folder.path);
  if (::mkdirat(*parent, leaf.c_str(), static_cast<mode_t>(folder.mode)) != 0) {
    if (errno == EEXIST)
      return make_error(core::ErrorKind::Changed,
                        fmt::format("folder {} appeared since it was observed", quoted(folder.path)));
    return commit_error(errno, "mkdir", folder.path);
  }
  created = true;
  DOT_ASSIGN_OR_RETURN(UniqueFd made, beneath::open_beneath(*parent, leaf, O_RDONLY | O_DIRECTORY));
  struct stat st {};
  if (::fstat(made.get(), &st) != 0) return commit_error(errno, "fstat", folder.path);
  if ((st.st_mode & 07777) != folder.mode && ::fchmod(made.get(), static_cast<mode_t>(folder.mode)) != 0)
    return commit_error(errno, "chmod", folder.path);
  return {};
}

// Opens folder `folder` beneath the root ("" is the root itself); a folder
// that is gone (or no longer one) is nullopt.
Result<std::optional<UniqueFd>> open_existing_folder(int root_fd, const std::string& folder) {
  if (folder.empty()) {
    DOT_ASSIGN_OR_RETURN(UniqueFd d, dup_fd(root_fd, "the root directory"));
    return std::optional<UniqueFd>(std::move(d));
  }
  auto dir = beneath::open_beneath(root_fd, folder, O_RDONLY | O_DIRECTORY);
  if (dir.ok()) return std::optional<UniqueFd>(std::move(dir).value());
  const int err = beneath::error_errno(dir.error());
  if (err == ENOENT || err == ENOTDIR) return std::optional<UniqueFd>();
  return std::move(dir).error();
}

Status fsync_folder(int root_fd, const std::string& folder, const TestHooks& hooks, const std::string& fault_point,
                    bool& existed) {
  DOT_ASSIGN_OR_RETURN(auto dir, open_existing_folder(root_fd, folder));
  existed = dir.has_value();
  if (!existed) return {};
  const std::string what = folder.empty() ? std::string("the root directory") : folder;
  if (int err = hooks.fault(fault_point)) return commit_error(err, "fsync", what);
  if (auto s = beneath::fsync_fd(dir->get(), what); !s.ok()) return as_commit(std::move(s).error());
  return {};
}

}  // namespace

SyncTargets sync_targets(const PlanV2& plan) {
  SyncTargets t;
  t.files.reserve(plan.operations.size());
  for (const auto& op : plan.operations) t.files.push_back(op.path);
  t.folders = touched_folders(plan);
  return t;
}

namespace {

// One apply of a version-2 plan, as named passes in the order they happen.
// Before PREPARED a failure leaves the plan SEALED or STALE; after it, every
// failure rolls back what this apply did (`so_far_`) before it returns.
class ApplyRun {
 public:
  ApplyRun(Root& root, const LoadedPlanV2& lp, InterruptGuard* interrupt, const ProgressFn& progress)
      : progress_(progress),
        root_(root),
        lp_(lp),
        plan_(lp.plan),
        ops_(lp.plan.operations),
        txn_(lp.sealed.id),
        plan_id_(lp.sealed.plan_id),
        interrupt_(interrupt),
        folders_(root.root_fd()),
        so_far_{std::vector<bool>(plan_.directories.size()), std::vector<bool>(ops_.size())} {}

  Result<ApplyOutcome> run() {
    DOT_TRY(check_befores_or_stale());
    DOT_TRY(prepare());
    if (auto s = create_folders(); !s.ok()) return fail(std::move(s).error());
    if (auto s = write_temps(); !s.ok()) return fail(std::move(s).error());
    DOT_TRY(root_.store().transition(txn_, store::State::Committing));
    if (auto s = replace_targets(); !s.ok()) return failed_commit(std::move(s).error());
    if (auto s = sync_folders(); !s.ok()) return fail(std::move(s).error());
    DOT_TRY(root_.store().transition(txn_, store::State::Committed));
    // Step 6: effects, then DONE.
    DOT_TRY(run_effects(root_, txn_, plan_id_, plan_.effects, sync_targets(plan_)));
    return ApplyOutcome{txn_, plan_id_, store::State::Done, ops_.size()};
  }

 private:
  Result<ApplyOutcome> fail(Error cause) {
    DOT_TRY(roll_back(root_, txn_, lp_, cause, &so_far_));
    cause.detail += "; the transaction was rolled back (ROLLED_BACK), no target is half-written";
    return cause;
  }
  // A signal seen between two replacements stops at a safe point (recover
  // finishes it); any other failure of the pass rolls back.
  Result<ApplyOutcome> failed_commit(Error e) {
    if (interrupted_) return e;
    return fail(std::move(e));
  }

  // Step 3: every target and parent still as observed, else STALE.
  Status check_befores_or_stale() {
    backup_sizes_.reserve(ops_.size());
    if (auto s = check_befores(root_.root_fd(), plan_, backup_sizes_, judge_); !s.ok())
      return make_stale(root_, txn_, std::move(s).error());
    return {};
  }

  // Step 4: the backups, streamed from the targets into the store, and
  // PREPARED in the same SQLite transaction, before anything changes. A
  // target that changes while it is read fails the step: still SEALED, STALE.
  Status prepare() {
    const int root_fd = root_.root_fd();
    auto opener = [&](const store::FileBlob& b) {
      return open_for_backup(root_fd, ops_[b.index].path, ops_[b.index].before);
    };
    // Each backup's description made as the store reads it, from the
    // operation's `before` (a list of them, digests in hex, was 13 MB at
    // 100,000 operations).
    auto backup_at = [&](std::size_t i) {
      const Snapshot& before = ops_[i].before;
      return store::FileBlob{static_cast<std::uint32_t>(i), before.exists, backup_sizes_[i], before.sha256.hex()};
    };
    if (auto s = root_.store().prepare_files(txn_, ops_.size(), backup_at, opener); !s.ok()) {
      Error e = std::move(s).error();
      if (e.code == Code::Store || e.code == Code::Internal || e.code == Code::RecoveryRequired) return e;
      if (e.code != Code::PathEscape) e.code = Code::Conflict;
      return make_stale(root_, txn_, std::move(e));
    }
    if (interrupt_ && interrupt_->interrupted())
      return interrupted_error(root_, interrupt_->signal(), plan_id_, store::State::Prepared);
    return {};
  }

  // The created folders, parents first.
  Status create_folders() {
    for (std::size_t f = 0; f < plan_.directories.size(); ++f) {
      const std::string p = fmt::format("apply.folder{}", f);
      bool created = false;
      Status made = make_folder(folders_, plan_.directories[f], root_.hooks(), p, created);
      so_far_.folders[f] = created;
      DOT_TRY(made);
      root_.hooks().reached(p + ".created");
    }
    return {};
  }

  // Every temp file beside its target, from its stored artifact, and every
  // temp link (its text is the plan's, which the artifact matched at load);
  // then all of them made durable at once.
  Status write_temps() {
    FileSystems file_systems;
    const bool fsync_each = !syncfs_reports_errors();
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      const PathOperation& op = ops_[i];
      if (op.action == Action::Remove) continue;
      const std::string p = fmt::format("apply.op{}", i);
      auto dir = folders_.open(parent_folder(op.path));
      if (!dir.ok()) return as_commit(std::move(dir).error());
      DOT_TRY(note_file_system(*dir, parent_folder(op.path), file_systems));
      const std::string temp = temp_name(plan_id_, TempPhase::Apply, i);
      std::uint64_t bytes = 0;
      auto written = op.action == Action::Link
                         ? link_temp(root_.hooks(), *dir, temp, op.after, op.path, p + ".write", fsync_each)
                         : stream_temp(root_, txn_, store::FileKind::Artifact, i, *dir, temp, op.after, op.path,
                                       p + ".write", fsync_each, &bytes);
      if (!written.ok()) return std::move(written).error();
      root_.hooks().reached(p + ".temp_written");
      report_written(bytes);
    }
    DOT_TRY(sync_file_systems(file_systems, root_.hooks(), "apply.syncfs"));
    root_.hooks().reached("apply.temps_synced");
    return {};
  }

  // Progress after a file of `bytes` was written beside its target.
  void report_written(std::uint64_t bytes) {
    if (!progress_) return;
    written_.bytes += bytes;
    if (written_.total == 0)
      for (const PathOperation& op : ops_) written_.total += op.action == Action::Write ? 1 : 0;
    ++written_.done;
    progress_(written_);
  }

  // Step 5: COMMITTING names durable temp files; then each target,
  // re-checked, replaced (one rename) or removed.
  Status replace_targets() {
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if (interrupt_ && interrupt_->interrupted()) {
        interrupted_ = true;
        return interrupted_error(root_, interrupt_->signal(), plan_id_, store::State::Committing);
      }
      DOT_TRY(replace_target(i));
      so_far_.operations[i] = true;
      root_.hooks().reached(fmt::format("apply.op{}", i) +
                            (ops_[i].action != Action::Remove ? ".renamed" : ".removed"));
    }
    folders_.forget();
    return {};
  }

  Status replace_target(std::size_t i) {
    const PathOperation& op = ops_[i];
    const TestHooks& hooks = root_.hooks();
    const std::string p = fmt::format("apply.op{}", i);
    auto dir = folders_.open(parent_folder(op.path));
    if (!dir.ok()) return as_commit(std::move(dir).error());
    DOT_TRY(recheck(*dir, op.path, op.before, judge_));
    const std::string_view leaf = leaf_of(op.path);
    Status changed;
    if (op.action != Action::Remove) {
      if (int err = hooks.fault(p + ".rename")) {
        changed = commit_error(err, "rename", op.path);
      } else {
        // An absent target must still be absent at the rename itself.
        // Its temp file, named as write_temps named it (never kept: 100,000 names).
        changed = beneath::rename_entry(*dir, temp_name(plan_id_, TempPhase::Apply, i), leaf, !op.before.exists);
      }
    } else if (int err = hooks.fault(p + ".unlink")) {
      changed = commit_error(err, "unlink", op.path);
    } else {
      changed = beneath::unlink_entry(*dir, leaf);
    }
    if (changed.ok()) return {};
    Error e = std::move(changed).error();
    const int err = beneath::error_errno(e);
    if (err == EEXIST || err == ENOENT) {
      e.code = Code::Conflict;
      e.detail =
          fmt::format("target {} {} since it was observed", quoted(op.path), err == EEXIST ? "appeared" : "went away");
    }
    return as_commit(std::move(e));
  }

  // Every folder whose entries changed, made durable (then COMMITTED).
  Status sync_folders() {
    const std::vector<std::string> touched = touched_folders(plan_);
    for (std::size_t j = 0; j < touched.size(); ++j) {
      const std::string p = fmt::format("apply.dir{}", j);
      bool existed = false;
      DOT_TRY(fsync_folder(root_.root_fd(), touched[j], root_.hooks(), p + ".fsync", existed));
      if (!existed)
        return make_error(core::ErrorKind::Changed,
                          fmt::format("folder {} went away during apply", quoted(touched[j])));
      root_.hooks().reached(p + ".synced");
    }
    return {};
  }

  const ProgressFn& progress_;
  Progress written_;
  Root& root_;
  const LoadedPlanV2& lp_;
  const PlanV2& plan_;
  const std::vector<PathOperation>& ops_;
  const store::TxnId txn_;
  const std::string& plan_id_;
  InterruptGuard* interrupt_;
  FolderCache folders_;
  WriteAccessJudge judge_;  // one account-database lookup per group for the whole apply
  AppliedSoFar so_far_;
  std::vector<std::uint64_t> backup_sizes_;  // per operation, from check_befores
  bool interrupted_ = false;
};

}  // namespace

Result<ApplyOutcome> apply_plan_v2(Root& root, const LoadedPlanV2& lp, InterruptGuard* interrupt,
                                   const ProgressFn& progress) {
  return ApplyRun(root, lp, interrupt, progress).run();
}

Status check_still_after(Root& root, const LoadedPlanV2& lp) {
  for (const PathOperation& op : lp.plan.operations) {
    auto o = beneath::observe_beneath(root.root_fd(), op.path, {.max_bytes = kMaxFileBytes});
    const bool same =
        o.ok() && (o->type == beneath::FileType::Regular || o->type == beneath::FileType::Symlink || !o->exists()) &&
        !o->too_large && snapshot_of(*o) == op.after;
    if (!same)
      return make_error(core::ErrorKind::Changed,
                        fmt::format("target {} no longer equals what plan {} wrote; nothing was rolled back",
                                    quoted(op.path), lp.sealed.plan_id));
  }
  return {};
}

namespace {

// Temp files of an interrupted commit (or of a rollback, interrupted):
// exactly the names this plan's journal derives, each in its target's
// folder; a file merely named like a temp file is never touched.
void remove_plan_temps(int root_fd, const PlanV2& plan, const std::string& plan_id, TempCleanup* cleanup) {
  // The operations of each folder by index; their names are made one folder
  // at a time (two names for each of 100,000 operations were 19 MB).
  std::map<std::string, std::vector<std::size_t>, std::less<>> by_folder;
  for (std::size_t i = 0; i < plan.operations.size(); ++i) {
    const std::string_view folder = parent_folder(plan.operations[i].path);
    auto at = by_folder.find(folder);
    if (at == by_folder.end()) at = by_folder.emplace(std::string(folder), std::vector<std::size_t>()).first;
    at->second.push_back(i);
  }
  std::vector<std::string> names;
  for (const auto& [folder, indices] : by_folder) {
    names.clear();
    for (std::size_t i : indices)
      for (TempPhase phase : {TempPhase::Apply, TempPhase::Rollback}) names.push_back(temp_name(plan_id, phase, i));
    auto dir = open_existing_folder(root_fd, folder);
    if (!dir.ok()) {
      if (cleanup) cleanup->left_alone.push_back({folder, fmt::format("cannot be opened: {}", dir.error().detail)});
      continue;
    }
    if (!*dir) continue;
    TempCleanup found;
    remove_own_temps((*dir)->get(), folder, names, found);
    if (!cleanup) continue;
    cleanup->removed += found.removed;
    for (auto& left : found.left_alone) cleanup->left_alone.push_back(std::move(left));
  }
}

// Each target a rollback walks: at its before (left as it is), at its after
// (restored: its index, in reverse operation order) or neither (left as
// evidence: its path in `edited`).
std::vector<std::size_t> targets_to_restore(int root_fd, const std::vector<PathOperation>& ops,
                                            const AppliedSoFar* so_far, std::vector<std::string>& edited) {
  std::vector<std::size_t> restores;
  for (std::size_t i = ops.size(); i-- > 0;) {
    if (so_far && !so_far->operations[i]) continue;
    const PathOperation& op = ops[i];
    auto o = beneath::observe_beneath(root_fd, op.path, {.max_bytes = kMaxFileBytes});
    if (!o.ok()) {
      edited.push_back(op.path);  // a symlink or a file on the way: not ours
      continue;
    }
    const Snapshot now = snapshot_of(*o);
    const bool plain =
        ((o->type == beneath::FileType::Regular || o->type == beneath::FileType::Symlink) && !o->too_large) ||
        !o->exists();
    if (plain && now == op.before) continue;
    if (!plain || now != op.after) {
      edited.push_back(op.path);
      continue;
    }
    restores.push_back(i);
  }
  return restores;
}

// The folders apply created, deepest first (descending byte order puts a
// folder before its parent), each only when empty.
Status remove_created_folders(int root_fd, const PlanV2& plan, const AppliedSoFar* so_far, const TestHooks& hooks) {
  for (std::size_t f = plan.directories.size(); f-- > 0;) {
    if (so_far && !so_far->folders[f]) continue;
    const std::string& path = plan.directories[f].path;
    auto parent = open_existing_folder(root_fd, std::string(parent_folder(path)));
    if (!parent.ok()) return std::move(parent).error();
    if (!*parent) continue;  // its parent is gone, so is it
    const std::string leaf(leaf_of(path));
    if (::unlinkat((*parent)->get(), leaf.c_str(), AT_REMOVEDIR) != 0) {
      const int err = errno;
      // Gone already, holding someone's files, or no longer a folder: left.
      if (err == ENOENT || err == ENOTEMPTY || err == EEXIST || err == ENOTDIR) continue;
      return beneath::errno_error(err, "rmdir", path);
    }
    hooks.reached(fmt::format("rollback.folder{}.removed", f));
  }
  return {};
}

// A temp file from each backup of `restores` beside its target (a link's:
// its text, which the plan's before holds; the stored backup matched it at
// load), all made durable at once. Index -> temp name.
Result<std::map<std::size_t, std::string>> write_rollback_temps(Root& root, store::TxnId txn, const LoadedPlanV2& lp,
                                                                const std::vector<std::size_t>& restores,
                                                                FolderCache& folders) {
  const TestHooks& hooks = root.hooks();
  FileSystems file_systems;
  const bool fsync_each = !syncfs_reports_errors();
  std::map<std::size_t, std::string> temps;
  for (std::size_t i : restores) {
    const PathOperation& op = lp.plan.operations[i];
    if (!op.before.exists) continue;
    const std::string p = fmt::format("rollback.op{}", i);
    DOT_ASSIGN_OR_RETURN(int dir, folders.open(parent_folder(op.path)));
    DOT_TRY(note_file_system(dir, parent_folder(op.path), file_systems));
    const std::string name = temp_name(lp.sealed.plan_id, TempPhase::Rollback, i);
    auto temp = op.before.is_link() ? link_temp(hooks, dir, name, op.before, op.path, p + ".write", fsync_each)
                                    : stream_temp(root, txn, store::FileKind::Backup, i, dir, name, op.before, op.path,
                                                  p + ".write", fsync_each);
    if (!temp.ok()) return std::move(temp).error();
    temps[i] = std::move(temp).value();
    hooks.reached(p + ".temp_written");
  }
  if (!temps.empty()) {
    DOT_TRY(sync_file_systems(file_systems, hooks, "rollback.syncfs"));
    hooks.reached("rollback.temps_synced");
  }
  return temps;
}

}  // namespace

Status roll_back(Root& root, store::TxnId txn, const LoadedPlanV2& lp, const Error& why, const AppliedSoFar* so_far,
                 TempCleanup* cleanup) {
  store::Store& st = root.store();
  const TestHooks& hooks = root.hooks();
  const int root_fd = root.root_fd();
  const PlanV2& plan = lp.plan;
  const auto& ops = plan.operations;
  const std::string& plan_id = lp.sealed.plan_id;
  DOT_ASSIGN_OR_RETURN(store::TxnSummary summary, st.summary(txn));
  if (summary.state != store::State::RollingBack)
    DOT_TRY(st.transition(txn, store::State::RollingBack, event_code(why), why.message()));
  // Anything that stops the walk leaves it ROLLING_BACK, for recover.
  auto stuck = [&](Error e) -> Status {
    if (e.code != Code::RecoveryRequired) {
      e.detail = fmt::format("rolling back {} failed: {}", plan_id, e.detail);
      e.code = Code::RecoveryRequired;
    }
    (void)st.note(txn, code_name(e.code), e.message());
    return e;
  };
  const std::vector<std::string> touched = touched_folders(plan);
  remove_plan_temps(root_fd, plan, plan_id, cleanup);
  std::vector<std::string> edited;
  const std::vector<std::size_t> restores = targets_to_restore(root_fd, ops, so_far, edited);

  FolderCache folders(root_fd);
  auto written = write_rollback_temps(root, txn, lp, restores, folders);
  if (!written.ok()) return stuck(std::move(written).error());
  std::map<std::size_t, std::string>& temps = *written;

  // The renames back and the removals of what apply created.
  for (std::size_t i : restores) {
    const PathOperation& op = ops[i];
    auto dir = folders.open(parent_folder(op.path));
    if (!dir.ok()) return stuck(std::move(dir).error());
    const std::string_view leaf = leaf_of(op.path);
    if (op.before.exists) {
      // A removed target must still be absent when its backup comes back.
      if (auto s = beneath::rename_entry(*dir, temps[i], leaf, !op.after.exists); !s.ok()) {
        ::unlinkat(*dir, temps[i].c_str(), 0);
        if (beneath::error_errno(s.error()) != EEXIST) return stuck(s.error());
        edited.push_back(op.path);
        continue;
      }
    } else if (auto s = beneath::unlink_entry(*dir, leaf); !s.ok() && beneath::error_errno(s.error()) != ENOENT) {
      return stuck(s.error());
    }
    hooks.reached(fmt::format("rollback.op{}.restored", i));
  }
  folders.forget();

  if (auto s = remove_created_folders(root_fd, plan, so_far, hooks); !s.ok()) return stuck(s.error());

  // Every touched folder still there, made durable.
  for (std::size_t j = 0; j < touched.size(); ++j) {
    const std::string p = fmt::format("rollback.dir{}", j);
    bool existed = false;
    if (auto s = fsync_folder(root_fd, touched[j], hooks, p + ".fsync", existed); !s.ok()) return stuck(s.error());
    if (existed) hooks.reached(p + ".synced");
  }

  if (!edited.empty()) {
    std::string names;
    for (std::size_t k = 0; k < edited.size() && k < 8; ++k) names += (k ? ", " : "") + quoted(edited[k]);
    if (edited.size() > 8) names += fmt::format(" and {} more", edited.size() - 8);
    return stuck(make_error(core::ErrorKind::ConcurrentEdit,
                            fmt::format("rolling back {}: {} equal neither their before nor their after snapshot: "
                                        "left untouched (someone else edited them; resolve by hand), every other "
                                        "target restored",
                                        plan_id, names)));
  }
  return st.transition(txn, store::State::RolledBack, event_code(why), why.message());
}

}  // namespace dot::core
