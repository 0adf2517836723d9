// One target under the root: observed under the target policy, committed and restored (target.h).
#include "dot/core/target.h"
#include "dot/core/error_kinds.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "dot/base/sha256.h"
#include "dot/base/utf8.h"
#include "dot/core/plan_v2.h"
#include "dot/core/stat_cache.h"

namespace dot::core {

using beneath::FileObservation;
using beneath::FileType;

Error commit_error(int err, std::string_view step, std::string_view name) {
  Error e = beneath::errno_error(err, step, name);
  if (e.code == Code::Io) e.code = Code::Commit;
  return e;
}

Status set_owner_and_mode(int fd, const Snapshot& want, std::string_view name) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return commit_error(errno, "fstat", name);
  if (st.st_gid != static_cast<gid_t>(want.gid) || st.st_uid != static_cast<uid_t>(want.uid)) {
    if (::fchown(fd, static_cast<uid_t>(want.uid), static_cast<gid_t>(want.gid)) != 0)
      return commit_error(errno, "chown", name);
  }
  if ((st.st_mode & 07777) != want.mode && ::fchmod(fd, static_cast<mode_t>(want.mode)) != 0)
    return commit_error(errno, "chmod", name);
  return {};
}

std::string temp_name(std::string_view plan_id, TempPhase phase, std::size_t index) {
  const std::string seed = fmt::format("dot-core temp{}{}{}{}{}{}", '\0', plan_id, '\0',
                                       phase == TempPhase::Apply ? "apply" : "rollback", '\0', index);
  return std::string(kTempPrefix) + sha256_hex(seed).substr(0, 32);
}

Result<beneath::CreatedFile> create_own_temp(int dir_fd, const std::string& name) {
  auto created = beneath::create_exclusive(dir_fd, name, 0600);
  if (created.ok() || beneath::error_errno(created.error()) != EEXIST) return created;
  struct stat st {};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return created;
  if (::unlinkat(dir_fd, name.c_str(), 0) != 0 && errno != ENOENT) return beneath::errno_error(errno, "unlink", name);
  return beneath::create_exclusive(dir_fd, name, 0600);
}

Status create_own_temp_link(int dir_fd, const std::string& name, const Snapshot& want) {
  DOT_TRY(beneath::check_entry_name(name));
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (::symlinkat(want.link_text.c_str(), dir_fd, name.c_str()) == 0) break;
    const int err = errno;
    struct stat st {};
    // The same plan's leftover (a file or a link under its journal's name)
    // goes; anything else under that name stays and is EEXIST.
    if (err != EEXIST || attempt > 0 || ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
      return commit_error(err, "symlink", name);
    if (::unlinkat(dir_fd, name.c_str(), 0) != 0 && errno != ENOENT) return commit_error(errno, "unlink", name);
  }
  struct stat st {};
  auto fail = [&](int err, std::string_view step) -> Error {
    ::unlinkat(dir_fd, name.c_str(), 0);
    return commit_error(err, step, name);
  };
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return fail(errno, "lstat");
  if (!S_ISLNK(st.st_mode)) return fail(EEXIST, "symlink");
  if ((st.st_uid != want.uid || st.st_gid != want.gid) &&
      ::fchownat(dir_fd, name.c_str(), static_cast<uid_t>(want.uid), static_cast<gid_t>(want.gid),
                 AT_SYMLINK_NOFOLLOW) != 0)
    return fail(errno, "chown");
  return {};
}

Result<UniqueFd> text_fd(std::string_view bytes, std::string_view what) {
  UniqueFd fd(::memfd_create("dot-core-text", MFD_CLOEXEC));
  if (!fd.valid()) return beneath::errno_error(errno, "memfd_create", what);
  for (std::string_view rest = bytes; !rest.empty();) {
    ssize_t n = ::write(fd.get(), rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return beneath::errno_error(n < 0 ? errno : EIO, "write", what);
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  if (::lseek(fd.get(), 0, SEEK_SET) != 0) return beneath::errno_error(errno, "lseek", what);
  return fd;
}

namespace {

// Writes a complete replacement for `name` into temp file `temp` beside it
// and fsyncs it; on any failure the temp file is gone.
Result<std::string> write_temp(int root_fd, const std::string& temp, std::string_view name, std::string_view bytes,
                               const Snapshot& want, const TestHooks& hooks, const std::string& write_point,
                               const std::string& fsync_point) {
  auto created = create_own_temp(root_fd, temp);
  if (!created.ok()) {
    Error e = std::move(created).error();
    if (e.code == Code::Io) e.code = Code::Commit;
    return e;
  }
  auto fail = [&](Error e) -> Error {
    ::unlinkat(root_fd, temp.c_str(), 0);
    return e;
  };
  if (int err = hooks.fault(write_point)) return fail(commit_error(err, "write", temp));
  for (std::string_view rest = bytes; !rest.empty();) {
    ssize_t n = ::write(created->fd.get(), rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(commit_error(n < 0 ? errno : EIO, "write", temp));
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  if (auto s = set_owner_and_mode(created->fd.get(), want, temp); !s.ok()) return fail(std::move(s).error());
  if (int err = hooks.fault(fsync_point)) return fail(commit_error(err, "fsync", temp));
  if (auto s = beneath::fsync_fd(created->fd.get(), temp); !s.ok()) {
    Error e = std::move(s).error();
    if (e.code == Code::Io) e.code = Code::Commit;
    return fail(std::move(e));
  }
  (void)name;
  return temp;
}

Status sync_root(int root_fd, const TestHooks& hooks, const std::string& point) {
  if (int err = hooks.fault(point)) return commit_error(err, "fsync", "the root directory");
  if (auto st = beneath::fsync_fd(root_fd, "the root directory"); !st.ok()) {
    Error e = std::move(st).error();
    if (e.code == Code::Io) e.code = Code::Commit;
    return e;
  }
  return {};
}

}  // namespace

Snapshot snapshot_of(const FileObservation& o) {
  if (!o.exists()) return Snapshot::absent();
  if (o.type == FileType::Symlink) return link_snapshot(o.link_text, o.uid, o.gid);
  return Snapshot{.exists = true,
                  .mode = static_cast<std::uint16_t>(o.mode),  // st_mode & 07777 (observe)
                  .sha256 = Sha256Digest::from_hex_or_none(o.sha256),
                  .gid = o.gid,
                  .uid = o.uid};
}

Status check_target_policy(std::string_view name, const FileObservation& o) {
  if (!o.exists()) return {};
  auto refuse = [&](std::string why) {
    return make_error(core::ErrorKind::Target, fmt::format("target {} {}", name, why));
  };
  if (o.type == FileType::Symlink)
    return make_error(core::ErrorKind::Symlink, fmt::format("target {} is a symlink (never followed)", name));
  if (o.type != FileType::Regular)
    return refuse(fmt::format("is a {}, not a regular file", beneath::file_type_name(o.type)));
  if (o.nlink != 1) return refuse(fmt::format("has {} hard links (must be exactly 1)", o.nlink));
  DOT_TRY(check_snapshot_policy(name, snapshot_of(o)));
  if (o.too_large || o.size > kMaxTargetBytes) return refuse(fmt::format("is larger than {} bytes", kMaxTargetBytes));
  return {};
}

Result<ObservedTarget> observe_target(int root_fd, std::string_view name) {
  DOT_TRY(check_slot_name(name));
  DOT_ASSIGN_OR_RETURN(FileObservation o,
                       beneath::observe_beneath(root_fd, name, {.max_bytes = kMaxTargetBytes, .keep_content = true}));
  DOT_TRY(check_target_policy(name, o));
  ObservedTarget t;
  t.snapshot = snapshot_of(o);
  t.content = std::move(o.content);
  return t;
}

namespace {

std::string path_shown(std::string_view path) { return fmt::format("\"{}\"", shown(path.substr(0, 512))); }

Status check_parent_policy(std::string_view folder, const FileObservation& o, WriteAccessJudge& judge) {
  auto refuse = [&](std::string why) {
    return make_error(core::ErrorKind::Parent, fmt::format("parent folder {} {}", path_shown(folder), why));
  };
  if (o.type == FileType::Symlink)
    return make_error(core::ErrorKind::Symlink,
                      fmt::format("parent folder {} is a symlink (never followed)", path_shown(folder)));
  if (o.type != FileType::Directory)
    return refuse(fmt::format("is a {}, not a folder", beneath::file_type_name(o.type)));
  if (o.uid != ::geteuid()) return refuse(fmt::format("is owned by uid {}, not by us (uid {})", o.uid, ::geteuid()));
  if (auto why = judge.refusal(static_cast<mode_t>(o.mode), static_cast<uid_t>(o.uid), static_cast<gid_t>(o.gid)))
    return refuse(fmt::format("is writable by more than its owner ({})", *why));
  return {};
}

// An existing parent folder that holds a state folder of its own is another
// managed root: its files are its own root's, never this one's.
Status check_not_nested_root(int root_fd, std::string_view folder) {
  DOT_ASSIGN_OR_RETURN(UniqueFd dir, beneath::open_beneath(root_fd, folder, O_RDONLY | O_DIRECTORY));
  const std::string state(dpp::kHostStateFolder);
  struct stat st {};
  if (::fstatat(dir.get(), state.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return {};
    return beneath::errno_error(errno, "fstatat", fmt::format("{}/{}", folder, state));
  }
  if (!S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) return {};
  return make_error(core::ErrorKind::NestedRoot,
                    fmt::format("parent folder {} holds its own {}: it is another managed root, and its files are "
                                "managed there, never from this root",
                                path_shown(folder), state));
}

}  // namespace

Status check_path_target_policy(std::string_view path, const FileObservation& o, std::uint64_t max_file_bytes,
                                WriteAccessJudge& judge) {
  if (!o.exists()) return {};
  auto refuse = [&](std::string why) {
    return make_error(core::ErrorKind::Target, fmt::format("target {} {}", path_shown(path), why));
  };
  if (o.type == FileType::Symlink) {
    // A link is data here: its own text, never followed.
    if (o.nlink != 1) return refuse(fmt::format("is a symlink with {} hard links (must be exactly 1)", o.nlink));
    if (o.too_large || o.link_text.empty())
      return refuse(fmt::format("is a symlink whose text is empty or longer than {} bytes", kMaxLinkTextBytes));
    if (auto s = dpp::check_link_text(path, o.link_text); !s.ok())
      return refuse(fmt::format("is a symlink whose text is not valid UTF-8"));
    return check_path_snapshot_policy(path, snapshot_of(o), judge);
  }
  if (o.type == FileType::Directory) return refuse("is a folder, not a regular file");
  if (o.type != FileType::Regular)
    return refuse(fmt::format("is a {}, not a regular file", beneath::file_type_name(o.type)));
  if (o.nlink != 1) return refuse(fmt::format("has {} hard links (must be exactly 1)", o.nlink));
  DOT_TRY(check_path_snapshot_policy(path, snapshot_of(o), judge));
  if (o.too_large || o.size > max_file_bytes)
    return refuse(fmt::format("is larger than max_file_bytes {}", max_file_bytes));
  return {};
}

Result<PathTarget> observe_path_target(int root_fd, std::string_view path, std::uint64_t max_file_bytes,
                                       std::size_t keep_bytes, ParentFolders& parents, WriteAccessJudge& judge,
                                       StatCache* cache) {
  PathTarget t;
  for (std::size_t slash = path.find('/'); slash != std::string_view::npos; slash = path.find('/', slash + 1)) {
    std::string_view folder = path.substr(0, slash);
    auto known = parents.find(folder);
    bool exists = false;
    if (known != parents.end()) {
      exists = known->second;
    } else {
      // Its own parents were judged first (this loop), so a symlink on the
      // way is already refused; only the folder itself is looked at here.
      DOT_ASSIGN_OR_RETURN(FileObservation o, beneath::observe_beneath(root_fd, folder, {.max_bytes = 0}));
      exists = o.exists();
      if (exists) {
        DOT_TRY(check_parent_policy(folder, o, judge));
        DOT_TRY(check_not_nested_root(root_fd, folder));
      }
      parents.emplace(std::string(folder), exists);
    }
    // Below a missing folder nothing exists (and nothing is looked up).
    if (!exists) {
      for (std::size_t s = path.find('/', slash + 1); s != std::string_view::npos; s = path.find('/', s + 1))
        parents.emplace(std::string(path.substr(0, s)), false);
      t.snapshot = Snapshot::absent();
      return t;
    }
  }
  // Small files are read once with their bytes; a larger one is hashed
  // streaming (observe_fd keeps no bytes then).
  FileObservation o;
  if (keep_bytes > 0) {
    DOT_ASSIGN_OR_RETURN(o, beneath::observe_beneath(root_fd, path, {.max_bytes = keep_bytes, .keep_content = true}));
  }
  if (keep_bytes == 0 && cache) {
    DOT_ASSIGN_OR_RETURN(o, cache->observe(root_fd, path, max_file_bytes));
  } else if (keep_bytes == 0 || o.too_large) {
    DOT_ASSIGN_OR_RETURN(o, beneath::observe_beneath(root_fd, path, {.max_bytes = max_file_bytes}));
  }
  DOT_TRY(check_path_target_policy(path, o, max_file_bytes, judge));
  t.snapshot = snapshot_of(o);
  t.size = o.size;  // a symlink's: its text's length
  if (o.type == FileType::Regular && !o.too_large && o.size <= keep_bytes) t.content = std::move(o.content);
  return t;
}

Status recheck_target(int root_fd, std::string_view name, const Snapshot& expected) {
  auto o = beneath::observe_beneath(root_fd, name, {.max_bytes = kMaxTargetBytes});
  if (!o.ok()) {
    Error e = std::move(o).error();
    if (e.code == Code::Io) e.code = Code::Conflict;
    return e;
  }
  if (auto s = check_target_policy(name, *o); !s.ok()) {
    Error e = std::move(s).error();
    if (e.code != Code::PathEscape) {
      e.code = Code::Conflict;
      e.detail = fmt::format("target {} changed since it was observed: {}", name, e.detail);
    }
    return e;
  }
  if (snapshot_of(*o) != expected)
    return make_error(core::ErrorKind::Changed, fmt::format("target {} changed since it was observed", name));
  return {};
}

Status commit_slot(int root_fd, std::string_view plan_id, std::size_t slot, const Operation& op, std::string_view bytes,
                   const TestHooks& hooks, bool& renamed) {
  renamed = false;
  const std::string p = fmt::format("commit.slot{}", slot);
  DOT_ASSIGN_OR_RETURN(std::string temp, write_temp(root_fd, temp_name(plan_id, TempPhase::Apply, slot), op.name, bytes,
                                                    op.after, hooks, p + ".write", p + ".fsync"));
  hooks.reached(p + ".temp_synced");
  if (auto s = recheck_target(root_fd, op.name, op.before); !s.ok()) {
    ::unlinkat(root_fd, temp.c_str(), 0);
    return s;
  }
  if (int err = hooks.fault(p + ".rename")) {
    ::unlinkat(root_fd, temp.c_str(), 0);
    return commit_error(err, "rename", op.name);
  }
  // An absent target must still be absent at the rename itself, not only at
  // the re-check: RENAME_NOREPLACE closes that window.
  if (auto s = beneath::rename_entry(root_fd, temp, op.name, !op.before.exists); !s.ok()) {
    ::unlinkat(root_fd, temp.c_str(), 0);
    Error e = std::move(s).error();
    if (beneath::error_errno(e) == EEXIST) {
      e.code = Code::Conflict;
      e.detail = fmt::format("target {} appeared since it was observed", op.name);
    } else if (e.code == Code::Io) {
      e.code = Code::Commit;
    }
    return e;
  }
  renamed = true;
  hooks.reached(p + ".renamed");
  DOT_TRY(sync_root(root_fd, hooks, p + ".dirsync"));
  hooks.reached(p + ".dir_synced");
  return {};
}

Result<RestoreOutcome> restore_slot(int root_fd, std::string_view plan_id, std::size_t slot, const Operation& op,
                                    const std::optional<std::string>& backup, const TestHooks& hooks) {
  const std::string p = fmt::format("rollback.slot{}", slot);
  auto o = beneath::observe_beneath(root_fd, op.name, {.max_bytes = kMaxTargetBytes});
  if (!o.ok()) {
    Error e = std::move(o).error();
    return make_error_as(Code::RecoveryRequired, e.kind,
                         fmt::format("cannot observe target {} to roll it back: {}", op.name, e.detail));
  }
  Snapshot now = snapshot_of(*o);
  bool plain = o->type == FileType::Regular || o->type == FileType::Absent;
  if (plain && now == op.before) return RestoreOutcome::AlreadyBefore;
  if (!plain || now != op.after)
    return make_error(core::ErrorKind::ConcurrentEdit,
                      fmt::format("target {} equals neither its before nor its after snapshot: left untouched "
                                  "(someone else edited it; resolve by hand)",
                                  op.name));
  if (op.before.exists) {
    if (!backup) return make_error(core::ErrorKind::MissingBackup, fmt::format("no backup of {}", op.name));
    DOT_ASSIGN_OR_RETURN(std::string temp, write_temp(root_fd, temp_name(plan_id, TempPhase::Rollback, slot), op.name,
                                                      *backup, op.before, hooks, p + ".write", p + ".fsync"));
    if (auto s = beneath::rename_entry(root_fd, temp, op.name); !s.ok()) {
      ::unlinkat(root_fd, temp.c_str(), 0);
      return s.error();
    }
  } else {
    DOT_TRY(beneath::unlink_entry(root_fd, op.name));
  }
  hooks.reached(p + ".restored");
  DOT_TRY(sync_root(root_fd, hooks, p + ".dirsync"));
  hooks.reached(p + ".dir_synced");
  return RestoreOutcome::Restored;
}

void remove_own_temps(int dir_fd, std::string_view folder, const std::vector<std::string>& names, TempCleanup& out) {
  auto shown_name = [&](std::string_view n) {
    return folder.empty() ? std::string(n) : fmt::format("{}/{}", folder, n);
  };
  bool removed = false;
  for (const auto& n : names) {
    auto leave = [&](std::string why) { out.left_alone.push_back({shown_name(n), std::move(why)}); };
    struct stat st {};
    if (::fstatat(dir_fd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) leave(fmt::format("cannot be examined: {}", std::strerror(errno)));
      continue;
    }
    // A regular file or a symlink: the temp files and links apply and
    // rollback make under these names.
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
      leave(fmt::format("a {}, not a temp file", beneath::file_type_name(beneath::file_type(st.st_mode))));
      continue;
    }
    if (::unlinkat(dir_fd, n.c_str(), 0) != 0) {
      if (errno != ENOENT) leave(fmt::format("cannot be removed: {}", std::strerror(errno)));
      continue;
    }
    removed = true;
    ++out.removed;
  }
  if (removed)
    if (auto s = beneath::fsync_fd(dir_fd, "a folder"); !s.ok())
      out.left_alone.push_back({folder.empty() ? std::string(".") : std::string(folder),
                                fmt::format("the removals may not be durable: {}", s.error().detail)});
}

}  // namespace dot::core
