#pragma once
// A managed root on disk and its exclusive lock.
//
// ARCHITECTURE.md places Root in core; the layout and the lock live here
// instead because `dot-core init` (a store command) creates them and every
// command needs the same paths. Policy (what a root id binds, which commands
// lock) stays in core. Layout (docs/store.md):
//
//   DIR/                 0700, the managed files
//   DIR/.dot/            0700, our hidden state folder
//   DIR/.dot/store.db    the SQLite journal (plus store.db-wal, store.db-shm)
//   DIR/.dot/lock        flock(2) target of the root's exclusive lock
//   DIR/.dot/plugin      the pinned copy of org.dot.hello (core, `register`)
//   DIR/.dot/plugin-ID   the pinned copy of every other plugin id
//   DIR/.dot/stage/      per-plan stage directories (core, `plan`)

#include <string>
#include <string_view>

#include "dot/base/fd.h"
#include "dot/base/result.h"

namespace dot::store {

struct RootLayout {
  std::string root;         // DIR as given (made absolute)
  std::string state_dir;    // DIR/.dot
  std::string database;     // DIR/.dot/store.db
  std::string lock_file;    // DIR/.dot/lock
  std::string plugin_copy;  // DIR/.dot/plugin
  std::string stage_dir;    // DIR/.dot/stage

  // Pure path arithmetic; nothing is touched. A relative `dir` is resolved
  // against the current directory (not through symlinks).
  static RootLayout for_root(const std::string& dir);
};

inline constexpr const char* kStateDirName = ".dot";
inline constexpr const char* kDatabaseName = "store.db";
inline constexpr const char* kLockName = "lock";
inline constexpr const char* kPluginName = "plugin";
inline constexpr const char* kStageName = "stage";

// The state-folder entry holding the pinned copy of plugin `plugin_id` (an
// id core already checked: lowercase letters, digits, '-' and '.'):
// kPluginName for org.dot.hello, as every root before several plugins per
// root has it, "plugin-" + id for any other. Never "plugin.new-...", the
// prefix of the copies being written.
std::string plugin_copy_name(std::string_view plugin_id);
// The name of a general plugin's cache folder in the state folder:
// "cache-" + id (docs/spec/dpp-general.md, "The plugin's cache").
std::string plugin_cache_name(std::string_view plugin_id);

// Creates a new managed root: DIR (0700; an existing path of any kind is
// refused with DOT_E_IO kind "exists"), DIR/.dot (0700), the lock file (0600)
// and the database with a fresh random root id. The database appears
// atomically (written beside, fsync'd, renamed), so a crash leaves either no
// database or a complete one. Returns the layout and the root id.
struct InitializedRoot {
  RootLayout layout;
  std::string root_id;  // 64 lowercase hex (32 random bytes)
};
Result<InitializedRoot> init_root(const std::string& dir);

// A managed root opened for one command by descriptor: the root directory
// (never through a symlink) and its state folder opened once beneath it.
// Everything in the state folder is then reached from state_fd with openat2
// (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) or *at calls that never follow a
// symlink, so renaming or relinking paths later cannot redirect us.
struct OpenedRoot {
  RootLayout layout;
  UniqueFd root_fd;   // DIR
  UniqueFd state_fd;  // DIR/.dot

  // DIR/.dot/NAME, for messages.
  std::string entry_path(std::string_view name) const;
  // Opens the state-folder entry `name` (one entry name) beneath state_fd;
  // `flags` are open(2) flags (O_NOFOLLOW and O_CLOEXEC are added). A
  // symlink there is DOT_E_PATH_ESCAPE naming DIR/.dot/NAME; other failures
  // are DOT_E_IO with the errno name as kind (beneath::error_errno works).
  Result<UniqueFd> open_entry(std::string_view name, int flags, mode_t mode = 0) const;
  // The state-folder entry `name` as a folder (made 0700 when missing),
  // opened as open_entry opens it: the stage folder, a plugin's cache.
  Result<UniqueFd> open_folder_entry(std::string_view name) const;
  // After SQLite opened DIR/.dot/store.db by path: that path still leads to
  // the database beneath state_fd (same inode). DOT_E_PATH_ESCAPE otherwise.
  Status confirm_database() const;
};

// Opens DIR as a managed root without opening the database. DOT_E_STORE
// naming what is missing (no directory, no state folder, no database);
// DOT_E_PATH_ESCAPE naming the entry when the state folder, or any entry of
// it (store.db and its -wal, -shm and -journal, lock, plugin, stage), is a
// symlink; DOT_E_STORE "not_ours" when a database file is not a regular file.
Result<OpenedRoot> open_root(const std::string& dir);

// The managed root a command run in `start` (an absolute, physical
// directory: getcwd) works on when none is named: `start` itself or its
// nearest ancestor that open_root accepts, like git finds its repository.
// The walk stops at "/". A symlinked state folder never marks a root
// (open_root refuses it), and no symlink is followed on the way up.
// DOT_E_STORE kind "no_root" when none is found. Returns the root directory.
Result<std::string> discover_root(const std::string& start);

// The root's exclusive lock: flock(LOCK_EX | LOCK_NB) on DIR/.dot/lock
// (opened beneath the state folder's descriptor; a symlink is
// DOT_E_PATH_ESCAPE), held
// until destruction. A second holder (any process, or another RootLock in
// this one) gets DOT_E_CONFLICT at once; it never waits. Read-only commands
// never take it. The descriptor is close-on-exec, so plugins never inherit it.
class RootLock {
 public:
  static Result<RootLock> acquire(const OpenedRoot& root);
  RootLock(RootLock&&) noexcept = default;
  RootLock& operator=(RootLock&&) noexcept = default;
  bool held() const noexcept { return fd_.valid(); }

 private:
  explicit RootLock(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

}  // namespace dot::store
