// A managed root's layout on disk and its exclusive lock (root.h).
#include "dot/store/root.h"
#include "dot/store/error_kinds.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "dot/base/beneath.h"
#include "dot/base/sha256.h"
#include "dot/base/write_access.h"
#include "dot/store/store.h"

namespace dot::store {

std::string plugin_copy_name(std::string_view plugin_id) {
  if (plugin_id == "org.dot.hello") return kPluginName;
  return std::string(kPluginName) + "-" + std::string(plugin_id);
}

std::string plugin_cache_name(std::string_view plugin_id) { return "cache-" + std::string(plugin_id); }

RootLayout RootLayout::for_root(const std::string& dir) {
  std::filesystem::path p(dir);
  std::error_code ec;
  if (p.is_relative()) {
    auto abs = std::filesystem::absolute(p, ec);
    if (!ec) p = abs;
  }
  p = p.lexically_normal();
  std::string root = p.string();
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  RootLayout l;
  l.root = root;
  l.state_dir = root + "/" + kStateDirName;
  l.database = l.state_dir + "/" + kDatabaseName;
  l.lock_file = l.state_dir + "/lock";
  l.plugin_copy = l.state_dir + "/plugin";
  l.stage_dir = l.state_dir + "/stage";
  return l;
}

namespace {

Error io_error(const std::string& path, ErrorKind kind, std::string_view what, int err) {
  return make_error(kind, fmt::format("{}: {}: {}", path, what, std::strerror(err)));
}

Status fsync_dir(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return io_error(path, store::ErrorKind::Io, "cannot open the directory", errno);
  if (::fsync(fd.get()) != 0) return io_error(path, store::ErrorKind::Io, "cannot fsync the directory", errno);
  return {};
}

std::string parent_of(const std::string& path) {
  auto pos = path.find_last_of('/');
  if (pos == std::string::npos) return ".";
  if (pos == 0) return "/";
  return path.substr(0, pos);
}

// Whether an open of `name` beneath `dirfd` that failed with `err` met a
// symlink as `name` itself: ELOOP, or ENOTDIR when O_DIRECTORY was asked.
bool is_symlink_after(int err, int dirfd, std::string_view name) {
  if (err != ELOOP && err != ENOTDIR) return false;
  struct stat st {};
  return ::fstatat(dirfd, std::string(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

}  // namespace

namespace {

// The directory a root is initialized in: made here (0700 whatever the
// umask) when the path did not exist, else an existing directory that only
// its owner, the caller, can write (write_access.h), taken as it is: its
// mode, owner and entries are never changed.
struct RootDirectory {
  UniqueFd fd;
  bool made = false;
};

Status check_existing_root(const std::string& root, int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return io_error(root, store::ErrorKind::Open, "cannot stat the root", errno);
  if (st.st_uid != ::geteuid())
    return make_error(store::ErrorKind::RootOwner,
                      fmt::format("{}: owned by uid {}, not by us (uid {}); a root must be the caller's own folder",
                                  root, st.st_uid, ::geteuid()));
  WriteAccessJudge judge;
  if (auto why = judge.refusal(st.st_mode, st.st_uid, st.st_gid))
    return make_error(
        store::ErrorKind::RootWritable,
        fmt::format("{}: {}; a root must be writable by its owner only (chmod go-w {})", root, *why, root));
  struct stat state {};
  if (::fstatat(fd, kStateDirName, &state, AT_SYMLINK_NOFOLLOW) == 0)
    return make_error(
        store::ErrorKind::Exists,
        fmt::format("{}: already holds {}; it is a managed root already (or the rest of one)", root, kStateDirName));
  return {};
}

Result<RootDirectory> make_or_take_root(const std::string& root) {
  RootDirectory dir;
  if (::mkdir(root.c_str(), 0700) == 0) {
    dir.made = true;
  } else if (errno != EEXIST) {
    return io_error(root, store::ErrorKind::Mkdir, "cannot create the root", errno);
  } else {
    // An existing path: a directory (never through a symlink) or refused.
    struct stat st {};
    if (::lstat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return make_error(store::ErrorKind::Exists,
                        fmt::format("{}: already exists and is not a directory{}; a root is a directory", root,
                                    S_ISLNK(st.st_mode) ? " (a symlink, never followed)" : ""));
  }
  // A folder made here and not usable is taken back (it is still empty).
  auto unmade = [&](Error e) {
    if (dir.made) ::rmdir(root.c_str());
    return e;
  };
  auto fd = beneath::open_root(root);
  if (!fd.ok())
    return unmade(io_error(root, store::ErrorKind::Open, "cannot open the root", beneath::error_errno(fd.error())));
  dir.fd = std::move(*fd);
  if (dir.made) {
    // mkdir honours the umask; a root made here is private whatever it is.
    if (::fchmod(dir.fd.get(), 0700) != 0)
      return unmade(io_error(root, store::ErrorKind::Chmod, "cannot set mode 0700", errno));
  } else {
    DOT_TRY(check_existing_root(root, dir.fd.get()));
  }
  return dir;
}

// Until the store is in place, a failure takes back what init made: a
// half-made root (a state folder without a store) would otherwise block the
// next `init` at this path and read as "not a managed root". A root folder
// that existed before keeps everything but the state folder init made in it.
class UnmakeOnFailure {
 public:
  explicit UnmakeOnFailure(const std::string& root) : root_(root) {}
  UnmakeOnFailure(const UnmakeOnFailure&) = delete;
  UnmakeOnFailure& operator=(const UnmakeOnFailure&) = delete;
  void made_root() { what_ = What::Root; }
  void made_state_folder(int root_fd) {
    if (what_ == What::Nothing) {
      what_ = What::StateFolder;
      root_fd_ = root_fd;
    }
  }
  void disarm() { what_ = What::Nothing; }
  ~UnmakeOnFailure() {
    if (what_ == What::StateFolder) (void)beneath::remove_tree(root_fd_, kStateDirName);
    if (what_ != What::Root) return;
    UniqueFd parent(::open(parent_of(root_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    auto slash = root_.find_last_of('/');
    if (parent && slash != std::string::npos) (void)beneath::remove_tree(parent.get(), root_.substr(slash + 1));
  }

 private:
  enum class What { Nothing, Root, StateFolder };
  const std::string& root_;
  What what_ = What::Nothing;
  int root_fd_ = -1;
};

}  // namespace

Result<InitializedRoot> init_root(const std::string& dir) {
  if (dir.empty()) return make_error(store::ErrorKind::Path, "the root path is empty");
  RootLayout layout = RootLayout::for_root(dir);
  // A root whose store SQLite could not open is refused before anything is
  // made (never a half-made root).
  DOT_TRY(check_database_path_length(layout.database));
  DOT_ASSIGN_OR_RETURN(RootDirectory root, make_or_take_root(layout.root));
  // Declared after `root`: it runs while the root's descriptor is open.
  UnmakeOnFailure unmake(layout.root);
  if (root.made) unmake.made_root();
  // From here on by descriptor: the root is pinned, the state folder made
  // and opened beneath it, the lock file created beneath that.
  if (::mkdirat(root.fd.get(), kStateDirName, 0700) != 0)
    return io_error(layout.state_dir, store::ErrorKind::Mkdir, "cannot create the state folder", errno);
  unmake.made_state_folder(root.fd.get());
  auto state_fd = beneath::open_beneath(root.fd.get(), kStateDirName, O_RDONLY | O_DIRECTORY);
  if (!state_fd.ok())
    return io_error(layout.state_dir, store::ErrorKind::Open, "cannot open the state folder",
                    beneath::error_errno(state_fd.error()));
  if (::fchmod(state_fd->get(), 0700) != 0)
    return io_error(layout.state_dir, store::ErrorKind::Chmod, "cannot set mode 0700", errno);
  {
    UniqueFd fd(::openat(state_fd->get(), kLockName, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd) return io_error(layout.lock_file, store::ErrorKind::LockFile, "cannot create the lock file", errno);
    if (::fsync(fd.get()) != 0)
      return io_error(layout.lock_file, store::ErrorKind::Io, "cannot fsync the lock file", errno);
  }
  DOT_ASSIGN_OR_RETURN(std::string root_id, random_hex32());
  { DOT_ASSIGN_OR_RETURN(Store store, Store::create(layout.database, root_id)); }
  if (::fsync(state_fd->get()) != 0)
    return io_error(layout.state_dir, store::ErrorKind::Io, "cannot fsync the directory", errno);
  if (::fsync(root.fd.get()) != 0)
    return io_error(layout.root, store::ErrorKind::Io, "cannot fsync the directory", errno);
  if (root.made) DOT_TRY(fsync_dir(parent_of(layout.root)));
  unmake.disarm();
  return InitializedRoot{layout, root_id};
}

std::string OpenedRoot::entry_path(std::string_view name) const { return fmt::format("{}/{}", layout.state_dir, name); }

Result<UniqueFd> OpenedRoot::open_entry(std::string_view name, int flags, mode_t mode) const {
  DOT_TRY(beneath::check_entry_name(name));
  auto fd = beneath::open_beneath(state_fd.get(), name, flags, mode);
  if (fd.ok()) return fd;
  int err = beneath::error_errno(fd.error());
  if (is_symlink_after(err, state_fd.get(), name))
    return make_error(store::ErrorKind::Symlink,
                      fmt::format("{} is a symlink (refused, never followed)", entry_path(name)));
  return beneath::errno_error(err, "open", entry_path(name));
}

Result<UniqueFd> OpenedRoot::open_folder_entry(std::string_view name) const {
  DOT_TRY(beneath::check_entry_name(name));
  if (::mkdirat(state_fd.get(), std::string(name).c_str(), 0700) != 0 && errno != EEXIST)
    return beneath::errno_error(errno, "mkdir", entry_path(name));
  return open_entry(name, O_RDONLY | O_DIRECTORY);
}

Result<OpenedRoot> open_root(const std::string& dir) {
  OpenedRoot r;
  r.layout = RootLayout::for_root(dir);
  const RootLayout& layout = r.layout;
  struct stat st {};
  if (::lstat(layout.root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return make_error(store::ErrorKind::Missing,
                      fmt::format("{}: not a directory (create a root with `dot-core init`)", layout.root));
  DOT_ASSIGN_OR_RETURN(r.root_fd, beneath::open_root(layout.root));
  auto state = beneath::open_beneath(r.root_fd.get(), kStateDirName, O_RDONLY | O_DIRECTORY);
  if (!state.ok()) {
    int err = beneath::error_errno(state.error());
    if (is_symlink_after(err, r.root_fd.get(), kStateDirName))
      return make_error(store::ErrorKind::Symlink,
                        fmt::format("{} is a symlink (refused, never followed)", layout.state_dir));
    if (err == ENOENT || err == ENOTDIR)
      return make_error(store::ErrorKind::Missing,
                        fmt::format("{}: no state folder {}; not a managed root (create one with `dot-core init`)",
                                    layout.root, kStateDirName));
    return beneath::errno_error(err, "open", layout.state_dir);
  }
  r.state_fd = std::move(*state);
  if (::fstatat(r.state_fd.get(), kDatabaseName, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return make_error(store::ErrorKind::Missing, fmt::format("{}: no database in the state folder", layout.database));
  // A symlink where an entry of the state folder belongs is refused for every
  // command, before anything is opened. Stage, lock and plugin are reached
  // only through state_fd anyway; SQLite opens its files by path (its unix
  // VFS has no descriptor-relative open), so they are checked here, beneath
  // the descriptor, and SQLite itself is told to refuse symlinks
  // (SQLITE_OPEN_NOFOLLOW) and opens each file O_NOFOLLOW.
  const std::string db = kDatabaseName;
  for (const std::string& name : {db, db + "-wal", db + "-shm", db + "-journal", std::string(kLockName),
                                  std::string(kPluginName), std::string(kStageName)}) {
    if (::fstatat(r.state_fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // absent: fine
    if (S_ISLNK(st.st_mode))
      return make_error(store::ErrorKind::Symlink,
                        fmt::format("{} is a symlink (refused, never followed)", r.entry_path(name)));
    // A FIFO as the WAL would hang SQLite's first read.
    if (name.compare(0, db.size(), db) == 0 && !S_ISREG(st.st_mode))
      return make_error(store::ErrorKind::NotOurs, fmt::format("{}: not a regular file", r.entry_path(name)));
  }
  return r;
}

Status OpenedRoot::confirm_database() const {
  struct stat by_fd {
  }, by_path{};
  if (::fstatat(state_fd.get(), kDatabaseName, &by_fd, AT_SYMLINK_NOFOLLOW) != 0 ||
      ::lstat(layout.database.c_str(), &by_path) != 0 || by_fd.st_dev != by_path.st_dev ||
      by_fd.st_ino != by_path.st_ino)
    return make_error(store::ErrorKind::Replaced,
                      fmt::format("{}: no longer the database in the state folder this command opened (moved or "
                                  "replaced while it was opened)",
                                  layout.database));
  return {};
}

Result<std::string> discover_root(const std::string& start) {
  std::string dir = RootLayout::for_root(start).root;
  for (;;) {
    if (open_root(dir).ok()) return dir;
    if (dir == "/") break;
    dir = parent_of(dir);
  }
  return make_error(store::ErrorKind::NoRoot,
                    fmt::format("no managed root in {} or any parent; pass --root or set DOT_ROOT", start));
}

Result<RootLock> RootLock::acquire(const OpenedRoot& root) {
  const RootLayout& layout = root.layout;
  auto opened = root.open_entry(kLockName, O_RDWR);
  if (!opened.ok()) {
    Error e = std::move(opened).error();
    if (e.code == Code::PathEscape) return e;
    return make_error(store::ErrorKind::LockTimeout, fmt::format("{}: cannot open the lock file: {}", layout.lock_file,
                                                                 std::strerror(beneath::error_errno(e))));
  }
  UniqueFd fd = std::move(*opened);
  // flock locks belong to the open file description, so a second RootLock in
  // the same process conflicts too, which is what a second command would see.
  for (;;) {
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) break;
    int err = errno;
    if (err == EINTR) continue;
    if (err == EWOULDBLOCK)
      return make_error(store::ErrorKind::Locked,
                        fmt::format("{}: the root is locked by another dot-core command", layout.root));
    return make_error(store::ErrorKind::LockTimeout,
                      fmt::format("{}: cannot lock: {}", layout.lock_file, std::strerror(err)));
  }
  return RootLock(std::move(fd));
}

}  // namespace dot::store
