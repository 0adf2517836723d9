// Root-confined file operations through openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) (beneath.h).
#include "dot/base/beneath.h"
#include "dot/base/error_kinds.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fmt/format.h>

#include "dot/base/racy_time.h"
#include "dot/base/sha256.h"

namespace dot::beneath {
namespace {

constexpr std::uint64_t kResolveFlags = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;

int sys_openat2(int dirfd, const std::string& path, int flags, mode_t mode, std::uint64_t extra_resolve = 0) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags);
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
  how.resolve = kResolveFlags | extra_resolve;
  for (;;) {
    long fd = ::syscall(SYS_openat2, dirfd, path.c_str(), &how, sizeof how);
    if (fd >= 0) return static_cast<int>(fd);
    // EAGAIN: the kernel saw a concurrent rename and refuses to guess.
    if (errno == EINTR || errno == EAGAIN) continue;
    return -1;
  }
}

FileObservation from_stat(const struct stat& st) {
  FileObservation o;
  o.type = file_type(st.st_mode);
  o.uid = st.st_uid;
  o.gid = st.st_gid;
  o.mode = st.st_mode & 07777;
  o.nlink = st.st_nlink;
  o.size = static_cast<std::uint64_t>(st.st_size);
  o.dev = st.st_dev;
  o.ino = st.st_ino;
  o.mtime_ns = nanoseconds_of(st.st_mtim);
  o.ctime_ns = nanoseconds_of(st.st_ctim);
  return o;
}

}  // namespace

Kind errno_kind(int err) { return base::ErrnoKind{err}; }

Error errno_error(int err, std::string_view call, std::string_view what) {
  std::string detail;
  if (err == ELOOP)
    detail = fmt::format("{} {}: a symlink is on the way (refused, never followed)", call, what);
  else if (err == EXDEV)
    detail = fmt::format("{} {}: the path leaves the root", call, what);
  else
    detail = fmt::format("{} {}: {} ({})", call, what, std::strerror(err), errno_kind(err));
  return make_error(errno_kind(err), std::move(detail));
}

int error_errno(const Error& error) noexcept { return base::errno_of(error.kind); }

std::string path_in_detail(std::string_view path) {
  std::string shown;
  for (char c : path) {
    if (c == '\0')
      shown += "\\0";
    else if (c == '\n')
      shown += "\\n";
    else
      shown += c;
  }
  return shown;
}

Status check_relative_path(std::string_view path) {
  auto bad = [&](std::string_view why) {
    return make_error(base::ErrorKind::Path, fmt::format("path \"{}\" {}", path_in_detail(path), why));
  };
  if (path.empty()) return bad("is empty");
  if (path.front() == '/') return bad("is absolute");
  if (path.find('\0') != std::string_view::npos) return bad("contains NUL");
  if (path.find('\n') != std::string_view::npos) return bad("contains a newline");
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view comp = path.substr(start, end - start);
    if (comp.empty()) return bad("has an empty component");
    if (comp == "." || comp == "..") return bad("has a \".\" or \"..\" component");
    start = end + 1;
  }
  return {};
}

Status check_entry_name(std::string_view name) {
  DOT_TRY(check_relative_path(name));
  if (name.find('/') != std::string_view::npos)
    return make_error(base::ErrorKind::Path, fmt::format("\"{}\" is not a single entry name", name));
  return {};
}

Result<UniqueFd> open_root(const std::string& path) {
  if (path.empty()) return make_error(base::ErrnoKind{ENOENT}, "the root path is empty");
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ELOOP || err == ENOTDIR) {
      struct stat st {};
      if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
        return make_error(base::ErrorKind::Symlink,
                          fmt::format("root {} is a symlink (refused, never followed)", path));
    }
    return errno_error(err, "open root", path);
  }
  return UniqueFd(fd);
}

Result<UniqueFd> open_beneath(int dirfd, std::string_view relpath, int flags, mode_t mode) {
  DOT_TRY(check_relative_path(relpath));
  std::string p(relpath);
  int fd = sys_openat2(dirfd, p, flags | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return errno_error(errno, "open", p);
  return UniqueFd(fd);
}

FileType file_type(mode_t st_mode) noexcept {
  switch (st_mode & S_IFMT) {
    case S_IFREG:
      return FileType::Regular;
    case S_IFDIR:
      return FileType::Directory;
    case S_IFLNK:
      return FileType::Symlink;
    case S_IFIFO:
      return FileType::Fifo;
    case S_IFSOCK:
      return FileType::Socket;
    case S_IFCHR:
      return FileType::CharDevice;
    case S_IFBLK:
      return FileType::BlockDevice;
    default:
      return FileType::Other;
  }
}

std::string_view file_type_name(FileType type) noexcept {
  switch (type) {
    case FileType::Absent:
      return "absent";
    case FileType::Regular:
      return "regular file";
    case FileType::Directory:
      return "directory";
    case FileType::Symlink:
      return "symlink";
    case FileType::Fifo:
      return "FIFO";
    case FileType::Socket:
      return "socket";
    case FileType::CharDevice:
      return "character device";
    case FileType::BlockDevice:
      return "block device";
    case FileType::Other:
      return "special file";
  }
  return "unknown";
}

Result<FileObservation> observe_fd(int fd, const ObserveOptions& options) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return errno_error(errno, "fstat", "an opened file");
  FileObservation o = from_stat(st);
  if (o.type != FileType::Regular) return o;
  if (o.size > options.max_bytes) {
    o.too_large = true;
    return o;
  }
  // Read through the descriptor, not st_size: the bytes hashed are the bytes
  // that are there, and growth past the limit while we read is still caught.
  if (!options.keep_content) {
    // Only the digest: streamed through one bounded buffer, so observing a
    // file of max_bytes never holds max_bytes.
    constexpr std::size_t kChunk = 64 * 1024;
    std::string buf(std::min<std::size_t>(kChunk, options.max_bytes + 1), '\0');
    Sha256 hash;
    std::uint64_t have = 0;
    for (;;) {
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), options.max_bytes + 1 - have));
      if (want == 0) break;
      ssize_t n = ::pread(fd, buf.data(), want, static_cast<off_t>(have));
      if (n < 0) {
        if (errno == EINTR) continue;
        return errno_error(errno, "read", "an opened file");
      }
      if (n == 0) break;
      hash.update(std::string_view(buf.data(), static_cast<std::size_t>(n)));
      have += static_cast<std::uint64_t>(n);
    }
    o.size = have;
    if (have > options.max_bytes) {
      o.too_large = true;
      return o;
    }
    o.sha256 = to_hex(hash.finish());
    return o;
  }
  // The buffer starts at the size fstat gave (plus the byte that shows a
  // file grown past the limit) and grows only while the file does, up to
  // max_bytes + 1: a 60-byte file observed under a 16 MiB limit does not
  // allocate and zero 16 MiB (that was a quarter of an adopt's CPU time).
  const std::size_t cap = options.max_bytes + 1;
  std::string content(static_cast<std::size_t>(o.size) + 1, '\0');
  std::size_t have = 0;
  for (;;) {
    if (have == content.size()) {
      if (have == cap) break;
      content.resize(std::min(cap, 2 * have));
    }
    ssize_t n = ::pread(fd, content.data() + have, content.size() - have, static_cast<off_t>(have));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error(errno, "read", "an opened file");
    }
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  if (have > options.max_bytes) {
    o.too_large = true;
    o.size = have;
    return o;
  }
  content.resize(have);
  o.size = have;
  o.sha256 = sha256_hex(content);
  if (options.keep_content) o.content = std::move(content);
  return o;
}

Result<FileObservation> observe_beneath(int dirfd, std::string_view relpath, const ObserveOptions& options) {
  DOT_TRY(check_relative_path(relpath));
  std::string p(relpath);
  // One open, and everything is judged from that descriptor: the name is
  // never resolved twice, so nothing swapped in between (a FIFO, a device)
  // is opened. O_NONBLOCK: a FIFO does not wait for a writer; O_NOCTTY: a
  // terminal never becomes ours; observe_fd reads regular files only.
  int fd = sys_openat2(dirfd, p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0);
  if (fd >= 0) {
    UniqueFd opened(fd);
    return observe_fd(opened.get(), options);
  }
  int err = errno;
  if (err == ENOENT) return FileObservation{};
  // ELOOP is a symlink, as the last component or on the way; ENXIO and
  // friends a socket or a device without a driver. O_PATH | O_NOFOLLOW tells
  // which without opening anything for I/O (a final symlink is opened as
  // itself); a symlink on the way stays PathEscape.
  int pfd = sys_openat2(dirfd, p, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
  if (pfd < 0) {
    if (errno == ENOENT) return FileObservation{};
    return errno_error(errno, "open", p);
  }
  UniqueFd path_fd(pfd);
  struct stat st {};
  if (::fstat(path_fd.get(), &st) != 0) return errno_error(errno, "fstat", p);
  if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISFIFO(st.st_mode)) return errno_error(err, "open", p);
  FileObservation o = from_stat(st);
  if (o.type == FileType::Symlink) {
    // The text of the link this descriptor holds (an empty name reads the
    // O_PATH descriptor's own link): the same entry that was stat'ed.
    std::string text(kMaxLinkTextBytes + 1, '\0');
    ssize_t n = ::readlinkat(path_fd.get(), "", text.data(), text.size());
    if (n < 0) return errno_error(errno, "readlink", p);
    o.too_large = static_cast<std::size_t>(n) > kMaxLinkTextBytes;
    text.resize(std::min(static_cast<std::size_t>(n), kMaxLinkTextBytes));
    if (!o.too_large) o.link_text = std::move(text);
  }
  return o;
}

std::optional<FileObservation> FolderStat::stat(std::string_view relpath) {
  if (!check_relative_path(relpath).ok()) return std::nullopt;
  const auto slash = relpath.rfind('/');
  const std::string_view folder = slash == std::string_view::npos ? std::string_view() : relpath.substr(0, slash);
  if (!opened_ || folder != folder_) {
    opened_ = true;
    folder_.assign(folder);
    folder_fd_.reset(folder.empty() ? -1
                                    : sys_openat2(root_fd_, folder_, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0));
  }
  const int fd = folder.empty() ? root_fd_ : folder_fd_.get();
  if (fd < 0) return std::nullopt;
  const std::string leaf(slash == std::string_view::npos ? relpath : relpath.substr(slash + 1));
  struct stat st {};
  if (::fstatat(fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  return from_stat(st);
}

Result<CreatedFile> create_exclusive(int dirfd, std::string_view name, mode_t mode) {
  DOT_TRY(check_entry_name(name));
  std::string n(name);
  int fd = ::openat(dirfd, n.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return errno_error(errno, "create", n);
  UniqueFd owned(fd);
  if (::fchmod(owned.get(), mode) != 0) {
    int err = errno;
    ::unlinkat(dirfd, n.c_str(), 0);
    return errno_error(err, "chmod", n);
  }
  return CreatedFile{std::move(owned), std::move(n)};
}

namespace {
constexpr std::size_t kTempSuffixDigits = 32;
}  // namespace

Result<CreatedFile> create_temp(int dirfd, std::string_view prefix, mode_t mode) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    DOT_ASSIGN_OR_RETURN(std::string suffix, random_hex32());
    auto created = create_exclusive(dirfd, std::string(prefix) + suffix.substr(0, kTempSuffixDigits), mode);
    if (created.ok() || error_errno(created.error()) != EEXIST) return created;
  }
  return make_error(base::ErrnoKind{EEXIST},
                    fmt::format("cannot create a temp file {}*: names keep colliding", prefix));
}

bool is_temp_name(std::string_view name, std::string_view prefix) noexcept {
  return name.size() == prefix.size() + kTempSuffixDigits && name.substr(0, prefix.size()) == prefix &&
         is_lower_hex(name.substr(prefix.size()));
}

Status rename_entry(int dirfd, std::string_view from, std::string_view to, bool no_replace) {
  DOT_TRY(check_entry_name(from));
  DOT_TRY(check_entry_name(to));
  std::string f(from), t(to);
  if (::renameat2(dirfd, f.c_str(), dirfd, t.c_str(), no_replace ? RENAME_NOREPLACE : 0) != 0)
    return errno_error(errno, "rename", fmt::format("{} to {}", f, t));
  return {};
}

Status unlink_entry(int dirfd, std::string_view name) {
  DOT_TRY(check_entry_name(name));
  std::string n(name);
  if (::unlinkat(dirfd, n.c_str(), 0) != 0) return errno_error(errno, "unlink", n);
  return {};
}

Status fsync_fd(int fd, std::string_view what) {
  for (;;) {
    if (::fsync(fd) == 0) return {};
    // EINTR means it did not run; anything else is final: after a failed
    // fsync the page cache may already have dropped the dirty pages.
    if (errno != EINTR) return errno_error(errno, "fsync", what);
  }
}

Result<std::vector<std::string>> list_entries(int dirfd) {
  int dup = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dup < 0) return errno_error(errno, "open", "a directory to list it");
  DIR* dir = ::fdopendir(dup);
  if (!dir) {
    int err = errno;
    ::close(dup);
    return errno_error(err, "list", "a directory");
  }
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    struct dirent* ent = ::readdir(dir);
    if (!ent) break;
    std::string_view n(ent->d_name);
    if (n != "." && n != "..") names.emplace_back(n);
  }
  int err = errno;
  ::closedir(dir);
  if (err != 0) return errno_error(err, "list", "a directory");
  return names;
}

namespace {

// One directory on the way down from the entry remove_tree started at: what
// it is (device and inode, as first seen), its name in the level above, and
// the entries still to remove. Only names are kept per level, never a
// descriptor: the walk holds one directory open whatever the depth.
struct Level {
  dev_t dev = 0;
  ino_t ino = 0;
  std::string name;
  std::vector<std::string> pending;
  std::size_t next = 0;
  int relists = 0;
};

// A directory that gains entries while it is emptied is listed again this
// many times, then left in place (something keeps writing into it).
constexpr int kMaxRelists = 8;

// The path below where the removal started, for errors: a hostile tree may be
// thousands of folders deep, so a long one is cut in the middle.
std::string shown_path(const std::vector<Level>& levels, std::string_view child = {}) {
  std::string p;
  for (const Level& l : levels) {
    if (!p.empty()) p += '/';
    p += l.name;
  }
  if (!child.empty()) (p += '/') += child;
  constexpr std::size_t kKeep = 120;
  if (p.size() > 2 * kKeep + 5)
    p = fmt::format("{}/.../{} ({} folders deep)", p.substr(0, kKeep), p.substr(p.size() - kKeep),
                    levels.size() + (child.empty() ? 0 : 1));
  return p;
}

Error with_path(Error e, const std::string& shown) {
  e.detail = fmt::format("remove {}: {}", shown, e.detail);
  return e;
}

// Opens directory `name` of `parent_fd` to empty it, as itself (no symlink,
// no other mount: RESOLVE_NO_XDEV) and only when it is still the directory
// `seen` described. A directory of ours that we may not list or unlink in
// (a plugin made it 0000 or 0500) is given u+rwx first, through the opened
// descriptor, never by name. Gone meanwhile: an invalid descriptor.
Result<UniqueFd> open_to_empty(int parent_fd, const std::string& name, const struct stat& seen,
                               const std::string& shown) {
  int pfd = sys_openat2(parent_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0, RESOLVE_NO_XDEV);
  if (pfd < 0) {
    if (errno == ENOENT) return UniqueFd();
    return errno_error(errno, "open", shown);
  }
  UniqueFd path_fd(pfd);
  struct stat opened {};
  if (::fstat(path_fd.get(), &opened) != 0) return errno_error(errno, "fstat", shown);
  // Emptied is only the directory that was looked at: one renamed into its
  // place in between is left alone.
  if (opened.st_dev != seen.st_dev || opened.st_ino != seen.st_ino)
    return make_error(base::ErrorKind::Replaced,
                      fmt::format("remove {}: replaced while it was removed (left in place)", shown));
  if ((opened.st_mode & 0700) != 0700 && opened.st_uid == ::geteuid()) {
    // chmod(2) on the descriptor's /proc link reaches exactly this inode
    // (fchmod refuses an O_PATH descriptor).
    const std::string link = fmt::format("/proc/self/fd/{}", path_fd.get());
    if (::chmod(link.c_str(), (opened.st_mode | 0700) & 07777) != 0) return errno_error(errno, "chmod", shown);
  }
  int fd = ::openat(path_fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno_error(errno, "open", shown);
  return UniqueFd(fd);
}

// The directory of `levels` that `cur` (the deepest) sits in, reached with
// ".." and accepted only when it is the directory recorded on the way down:
// a folder moved elsewhere meanwhile never leads the walk out of the tree.
Result<UniqueFd> open_parent(int cur, const Level& parent, const std::string& shown) {
  int fd = ::openat(cur, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno_error(errno, "open the parent of", shown);
  UniqueFd up(fd);
  struct stat st {};
  if (::fstat(up.get(), &st) != 0) return errno_error(errno, "fstat the parent of", shown);
  if (st.st_dev != parent.dev || st.st_ino != parent.ino)
    return make_error(base::ErrorKind::Moved,
                      fmt::format("remove {}: moved out of the tree being removed (left in place)", shown));
  return up;
}

// The depth-first walk of remove_tree, without recursion: `levels` is the
// way down from the top to the directory open on `cur`, the only one held
// open; `dirfd` holds the top.
struct TreeWalk {
  int dirfd = -1;
  std::vector<Level> levels;
  UniqueFd cur;
  std::size_t removed = 0;
};

// The deepest level's next entry: a non-directory is unlinked, a directory
// becomes the deepest level (listed, to be emptied next).
Status remove_next_entry(TreeWalk& w) {
  Level& level = w.levels.back();
  const std::string child = level.pending[level.next++];
  struct stat st {};
  if (::fstatat(w.cur.get(), child.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return {};
    return errno_error(errno, "stat", shown_path(w.levels, child));
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(w.cur.get(), child.c_str(), 0) != 0) {
      if (errno == ENOENT) return {};
      return errno_error(errno, "unlink", shown_path(w.levels, child));
    }
    ++w.removed;
    return {};
  }
  DOT_ASSIGN_OR_RETURN(UniqueFd sub, open_to_empty(w.cur.get(), child, st, shown_path(w.levels, child)));
  if (!sub.valid()) return {};
  auto children = list_entries(sub.get());
  if (!children.ok()) return with_path(std::move(children).error(), shown_path(w.levels, child));
  w.levels.push_back(Level{st.st_dev, st.st_ino, child, std::move(*children), 0, 0});
  w.cur = std::move(sub);
  return {};
}

// Every entry the deepest level listed is gone: the directory itself goes,
// from its parent (`dirfd` for the top, never reached through ".."), or is
// listed again when something was added meanwhile.
Status remove_deepest_level(TreeWalk& w) {
  Level& level = w.levels.back();
  UniqueFd up;
  int parent = w.dirfd;
  if (w.levels.size() > 1) {
    DOT_ASSIGN_OR_RETURN(up, open_parent(w.cur.get(), w.levels[w.levels.size() - 2], shown_path(w.levels)));
    parent = up.get();
  }
  struct stat st {};
  bool gone = false;
  if (::fstatat(parent, level.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT) return errno_error(errno, "stat", shown_path(w.levels));
    gone = true;
  } else if (st.st_dev != level.dev || st.st_ino != level.ino) {
    return make_error(base::ErrorKind::Replaced,
                      fmt::format("remove {}: replaced while it was removed (left in place)", shown_path(w.levels)));
  } else if (::unlinkat(parent, level.name.c_str(), AT_REMOVEDIR) != 0) {
    const int err = errno;
    if (err == ENOTEMPTY || err == EEXIST) {
      // Something was added meanwhile: listed again, a bounded number of times.
      if (level.relists >= kMaxRelists)
        return make_error(
            base::ErrorKind::Changing,
            fmt::format("remove {}: entries keep appearing while it is removed (left in place)", shown_path(w.levels)));
      auto again = list_entries(w.cur.get());
      if (!again.ok()) return with_path(std::move(again).error(), shown_path(w.levels));
      level.pending = std::move(*again);
      level.next = 0;
      ++level.relists;
      return {};
    }
    if (err != ENOENT) return errno_error(err, "remove directory", shown_path(w.levels));
    gone = true;
  }
  if (!gone) ++w.removed;
  w.levels.pop_back();
  w.cur = std::move(up);
  return {};
}

}  // namespace

Result<std::size_t> remove_tree(int dirfd, std::string_view name) {
  DOT_TRY(check_entry_name(name));
  const std::string top(name);
  struct stat seen {};
  if (::fstatat(dirfd, top.c_str(), &seen, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return std::size_t{0};
    return errno_error(errno, "stat", top);
  }
  if (!S_ISDIR(seen.st_mode)) {
    // unlinkat never follows a symlink: the link goes, not what it names.
    if (::unlinkat(dirfd, top.c_str(), 0) != 0) {
      if (errno == ENOENT) return std::size_t{0};
      return errno_error(errno, "unlink", top);
    }
    return std::size_t{1};
  }
  TreeWalk w;
  w.dirfd = dirfd;
  DOT_ASSIGN_OR_RETURN(w.cur, open_to_empty(dirfd, top, seen, top));
  if (!w.cur.valid()) return std::size_t{0};
  auto children = list_entries(w.cur.get());
  if (!children.ok()) return with_path(std::move(children).error(), top);
  w.levels.push_back(Level{seen.st_dev, seen.st_ino, top, std::move(*children), 0, 0});
  while (!w.levels.empty()) {
    const Level& level = w.levels.back();
    DOT_TRY(level.next < level.pending.size() ? remove_next_entry(w) : remove_deepest_level(w));
  }
  return w.removed;
}

}  // namespace dot::beneath
