#pragma once
// Root-confined file operations. Every path below a managed root is resolved
// with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
// relative to a directory descriptor opened once, so a symlink anywhere on the
// way, a ".." that climbs out, or the root itself being swapped after it was
// opened can never redirect a read or a write outside it. Final components
// are opened O_NOFOLLOW, and a target is observed from the descriptor that
// was opened (fstat + read on the same fd), never re-opened by path.
//
// Errors carry Code::PathEscape (kind "symlink" or "escape") when resolution
// would leave the root or cross a symlink, otherwise Code::Io with the errno
// name as kind ("ENOENT", "ENOSPC", ...), so callers can tell the two apart.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/fd.h"
#include "dot/base/result.h"

namespace dot::beneath {

// "ENOENT", "EIO"...: the kind used for errno-carrying errors.
Kind errno_kind(int err);
// An Error for a failed system call on `what`: PathEscape for ELOOP/EXDEV,
// otherwise Code::Io; the detail names the call, the path and strerror.
Error errno_error(int err, std::string_view call, std::string_view what);
// The errno an error built by errno_error() carries, or 0.
int error_errno(const Error& error) noexcept;

// A relative path that may be handed to the functions below: non-empty, not
// absolute, no NUL, no newline, no empty, "." or ".." component. Violations
// are Code::PathEscape naming the path.
Status check_relative_path(std::string_view path);
// A single directory entry name (check_relative_path and no '/').
Status check_entry_name(std::string_view name);
// A path as the detail of a refused path shows it: NUL as \0 and a newline
// as \n, so that the reason it was refused can be seen; every other byte as
// it is (check_relative_path, and core's slot names).
std::string path_in_detail(std::string_view path);

// Opens the root directory itself (O_RDONLY | O_DIRECTORY | O_NOFOLLOW): the
// last component may not be a symlink. The descriptor pins that directory for
// the rest of the command, whatever later happens to the path.
Result<UniqueFd> open_root(const std::string& path);

// openat2 beneath `dirfd` with symlinks refused on every component. `flags`
// are open(2) flags; O_CLOEXEC and O_NOFOLLOW are always added.
Result<UniqueFd> open_beneath(int dirfd, std::string_view relpath, int flags, mode_t mode = 0);

// File type of an observation.
enum class FileType : std::uint8_t {
  Absent,
  Regular,
  Directory,
  Symlink,
  Fifo,
  Socket,
  CharDevice,
  BlockDevice,
  Other
};
std::string_view file_type_name(FileType type) noexcept;
// The type an st_mode says.
FileType file_type(mode_t st_mode) noexcept;

// What a file is, as seen through one opened descriptor.
struct FileObservation {
  FileType type = FileType::Absent;
  bool exists() const noexcept { return type != FileType::Absent; }
  uid_t uid = 0;
  gid_t gid = 0;
  mode_t mode = 0;  // permission bits only (st_mode & 07777)
  nlink_t nlink = 0;
  std::uint64_t size = 0;  // st_size
  dev_t dev = 0;
  ino_t ino = 0;
  std::int64_t mtime_ns = 0;  // st_mtim and st_ctim in nanoseconds since the epoch
  std::int64_t ctime_ns = 0;
  // Lowercase hex SHA-256 of the content; set for regular files of at most
  // the size limit given to observe_*, empty otherwise.
  std::string sha256;
  // The content itself when asked for (same condition as sha256).
  std::string content;
  // True when a regular file was larger than the limit (not hashed), or a
  // symlink's text did not fit kMaxLinkTextBytes.
  bool too_large = false;
  // A symlink's own text (readlinkat on the link itself, never followed):
  // set by observe_beneath for FileType::Symlink, empty otherwise.
  std::string link_text;
};

// The longest symlink text Linux resolves (PATH_MAX less its NUL).
inline constexpr std::size_t kMaxLinkTextBytes = 4095;

struct ObserveOptions {
  std::size_t max_bytes = 64 * 1024;
  bool keep_content = false;
};

// Observes an already opened descriptor: fstat, then (regular files only)
// pread from offset 0 up to max_bytes + 1 and hash.
Result<FileObservation> observe_fd(int fd, const ObserveOptions& options = {});

// Observes `relpath` beneath `dirfd` without following any symlink: it is
// opened once (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY) and judged from
// that descriptor only, never re-opened by name. An absent file is an
// observation with type Absent; a symlink as the last component is
// FileType::Symlink (not an error) with its link_text read from the link
// itself; a symlink on the way is PathEscape.
// Devices, FIFOs and directories are reported by type and never read.
Result<FileObservation> observe_beneath(int dirfd, std::string_view relpath, const ObserveOptions& options = {});

// The stat of many paths beneath one root, each with a single fstatat
// (AT_SYMLINK_NOFOLLOW) in its folder, the folder opened once for
// consecutive paths in it (O_PATH, beneath the root, no symlink on the way):
// what a stat cache needs to know that a file has not changed, without
// opening it. Paths in sorted order share their folders. Nothing here is
// read, so nothing is judged either: nullopt for whatever a stat cannot
// answer alone (a folder that cannot be opened, a symlink on the way, a
// name with no entry, a path check_relative_path refuses), which the
// caller observes with observe_beneath, and which says why.
class FolderStat {
 public:
  explicit FolderStat(int root_fd) : root_fd_(root_fd) {}
  std::optional<FileObservation> stat(std::string_view relpath);
  int root_fd() const noexcept { return root_fd_; }

 private:
  int root_fd_;
  bool opened_ = false;
  std::string folder_;  // the folder of the last path ("": the root itself)
  UniqueFd folder_fd_;  // -1 when it could not be opened
};

// An exclusively created file in a directory: O_CREAT | O_EXCL | O_NOFOLLOW,
// mode set exactly (umask does not apply).
struct CreatedFile {
  UniqueFd fd;
  std::string name;
};
// Creates `name` (a single entry name) in `dirfd`.
Result<CreatedFile> create_exclusive(int dirfd, std::string_view name, mode_t mode);
// Creates "<prefix><32 random hex>" in `dirfd`; retries a few times on EEXIST.
Result<CreatedFile> create_temp(int dirfd, std::string_view prefix, mode_t mode);
// True for exactly the names create_temp makes with `prefix`: the prefix and
// 32 lowercase hex digits, nothing else.
bool is_temp_name(std::string_view name, std::string_view prefix) noexcept;

// renameat2 within one directory; both names are single entries. With
// no_replace the rename fails (EEXIST) when `to` exists.
Status rename_entry(int dirfd, std::string_view from, std::string_view to, bool no_replace = false);
// unlinkat of a single entry (not a directory). ENOENT is reported as an error;
// callers that tolerate it check error_errno().
Status unlink_entry(int dirfd, std::string_view name);
// fsync (data and metadata); EINTR retried, any other error returned, never ignored.
Status fsync_fd(int fd, std::string_view what);

// The entry names of the directory open on `dirfd` ("." and ".." left out),
// read through a duplicate so `dirfd`'s own offset is untouched.
Result<std::vector<std::string>> list_entries(int dirfd);

// Removes the entry `name` of `dirfd` (a single entry name) and, when it is a
// directory, everything below it, whatever the depth, by descriptor only:
// the walk is iterative and holds one directory open at a time (never one
// per level, never recursion a hostile depth could exhaust); every directory
// is opened beneath its parent's descriptor (openat2, no symlink, no other
// mount) and checked to be the one that was looked at; the way back up is
// ".." checked against the directory recorded on the way down, so nothing
// outside `dirfd` is reached whatever is renamed meanwhile; a symlink is
// removed as itself and never followed. A directory of ours without u+rwx is
// given it (through its descriptor) so that it can be emptied. An absent
// `name` removes nothing. Returns how many entries went, `name` included.
// Errors: Code::Io (errno kind), Code::PathEscape (a mount point inside),
// Code::Conflict kind "replaced" or "moved" (a directory swapped or moved
// out of the tree meanwhile) or "changing" (entries keep appearing); what is
// left is left in place.
Result<std::size_t> remove_tree(int dirfd, std::string_view name);

}  // namespace dot::beneath
