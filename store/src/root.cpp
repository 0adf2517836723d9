#include "dot/store/root.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "dot/base/beneath.h"
#include "dot/base/sha256.h"
#include "dot/store/store.h"

namespace dot::store {

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

Error io_error(const std::string& path, std::string kind, std::string_view what, int err) {
  return make_error(Code::Io, std::move(kind), fmt::format("{}: {}: {}", path, what, std::strerror(err)));
}

Status fsync_dir(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return io_error(path, "io", "cannot open the directory", errno);
  if (::fsync(fd.get()) != 0) return io_error(path, "io", "cannot fsync the directory", errno);
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
  struct stat st{};
  return ::fstatat(dirfd, std::string(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

}  // namespace

Result<InitializedRoot> init_root(const std::string& dir) {
  if (dir.empty()) return make_error(Code::Io, "path", "the root path is empty");
  RootLayout layout = RootLayout::for_root(dir);
  // mkdir fails with EEXIST for any existing path, symlinks included, so an
  // existing directory is never adopted.
  if (::mkdir(layout.root.c_str(), 0700) != 0) {
    int err = errno;
    if (err == EEXIST)
      return make_error(Code::Io, "exists",
                        fmt::format("{}: already exists; a new root must be a path that does not exist", layout.root));
    return io_error(layout.root, "mkdir", "cannot create the root", err);
  }
  // mkdir honours the umask; the root is private whatever it is.
  if (::chmod(layout.root.c_str(), 0700) != 0) return io_error(layout.root, "chmod", "cannot set mode 0700", errno);
  if (::mkdir(layout.state_dir.c_str(), 0700) != 0)
    return io_error(layout.state_dir, "mkdir", "cannot create the state folder", errno);
  if (::chmod(layout.state_dir.c_str(), 0700) != 0)
    return io_error(layout.state_dir, "chmod", "cannot set mode 0700", errno);
  {
    UniqueFd fd(::open(layout.lock_file.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd) return io_error(layout.lock_file, "lock", "cannot create the lock file", errno);
    if (::fsync(fd.get()) != 0) return io_error(layout.lock_file, "io", "cannot fsync the lock file", errno);
  }
  DOT_ASSIGN_OR_RETURN(std::string root_id, random_hex32());
  {
    DOT_ASSIGN_OR_RETURN(Store store, Store::create(layout.database, root_id));
  }
  DOT_TRY(fsync_dir(layout.state_dir));
  DOT_TRY(fsync_dir(layout.root));
  DOT_TRY(fsync_dir(parent_of(layout.root)));
  return InitializedRoot{layout, root_id};
}

std::string OpenedRoot::entry_path(std::string_view name) const {
  return fmt::format("{}/{}", layout.state_dir, name);
}

Result<UniqueFd> OpenedRoot::open_entry(std::string_view name, int flags, mode_t mode) const {
  DOT_TRY(beneath::check_entry_name(name));
  auto fd = beneath::open_beneath(state_fd.get(), name, flags, mode);
  if (fd.ok()) return fd;
  int err = beneath::error_errno(fd.error());
  if (is_symlink_after(err, state_fd.get(), name))
    return make_error(Code::PathEscape, "symlink",
                      fmt::format("{} is a symlink (refused, never followed)", entry_path(name)));
  return beneath::errno_error(err, "open", entry_path(name));
}

Result<OpenedRoot> open_root(const std::string& dir) {
  OpenedRoot r;
  r.layout = RootLayout::for_root(dir);
  const RootLayout& layout = r.layout;
  struct stat st{};
  if (::lstat(layout.root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return make_error(Code::Store, "missing", fmt::format("{}: not a directory (create a root with `dot-core init`)", layout.root));
  DOT_ASSIGN_OR_RETURN(r.root_fd, beneath::open_root(layout.root));
  auto state = beneath::open_beneath(r.root_fd.get(), kStateDirName, O_RDONLY | O_DIRECTORY);
  if (!state.ok()) {
    int err = beneath::error_errno(state.error());
    if (is_symlink_after(err, r.root_fd.get(), kStateDirName))
      return make_error(Code::PathEscape, "symlink",
                        fmt::format("{} is a symlink (refused, never followed)", layout.state_dir));
    if (err == ENOENT || err == ENOTDIR)
      return make_error(Code::Store, "missing",
                        fmt::format("{}: no state folder {}; not a managed root (create one with `dot-core init`)",
                                    layout.root, kStateDirName));
    return beneath::errno_error(err, "open", layout.state_dir);
  }
  r.state_fd = std::move(*state);
  if (::fstatat(r.state_fd.get(), kDatabaseName, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return make_error(Code::Store, "missing", fmt::format("{}: no database in the state folder", layout.database));
  return r;
}

Result<RootLock> RootLock::acquire(const RootLayout& layout) {
  UniqueFd fd(::open(layout.lock_file.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) {
    int err = errno;
    return make_error(Code::Store, "lock", fmt::format("{}: cannot open the lock file: {}", layout.lock_file, std::strerror(err)));
  }
  // flock locks belong to the open file description, so a second RootLock in
  // the same process conflicts too, which is what a second command would see.
  for (;;) {
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) break;
    int err = errno;
    if (err == EINTR) continue;
    if (err == EWOULDBLOCK)
      return make_error(Code::Conflict, "locked",
                        fmt::format("{}: the root is locked by another dot-core command", layout.root));
    return make_error(Code::Store, "lock", fmt::format("{}: cannot lock: {}", layout.lock_file, std::strerror(err)));
  }
  return RootLock(std::move(fd));
}

}  // namespace dot::store
