#pragma once
// Process containment for plugins that run under `process` assurance: what the
// kernel enforces around a plugin, not what the plugin promises.
//
// Everything is prepared in the parent (Landlock ruleset descriptor opened and
// filled, seccomp filter compiled by libseccomp and exported to BPF, rlimits
// computed); the child only applies it, through SpawnOptions::pre_exec, with
// raw system calls that are async-signal-safe (and writes its own pid into the
// filter's comparisons that name the plugin). Layers, in the order the child
// applies them: rlimits, capabilities (bounding set, ambient, securebits, then
// all of effective/permitted/inheritable), parent-death signal, no_new_privs,
// Landlock, seccomp. Descriptors: spawn() already leaves only stdio; apply_to()
// refuses to contain a spawn that keeps any other descriptor but an
// interpreted plugin's sealed script.
//
// Failing closed: prepare() returns DOT_E_SANDBOX_UNAVAILABLE naming the
// missing layer whenever the running kernel cannot provide one of them; a
// plugin is then never started. A layer that fails in the child aborts the
// spawn (spawn() reports the errno) and the plugin never runs uncontained.

#include <sys/resource.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dot/base/process.h"
#include "dot/base/result.h"

namespace dot {

// Landlock ABI below which containment is refused: before ABI 3 the kernel
// does not mediate truncate(), so a contained root-owned plugin could still
// truncate any root-owned file it can name.
inline constexpr int kMinLandlockAbi = 3;

// What the running kernel and this process can provide. Each `*_detail` says
// why a layer is missing (or what it is, when present).
struct SandboxSupport {
  int landlock_abi = 0;  // 0: Landlock unavailable
  std::string landlock_detail;
  bool seccomp = false;  // seccomp filter mode with SECCOMP_RET_KILL_PROCESS
  std::string seccomp_detail;
  bool no_new_privs = false;
  std::string no_new_privs_detail;
  // Every capability can be dropped, the bounding set included (as root this
  // needs CAP_SETPCAP; an unprivileged process has nothing to drop that
  // no_new_privs would not already keep from being regained).
  bool capabilities = false;
  std::string capabilities_detail;
  bool rlimits = false;
  std::string rlimits_detail;

  bool landlock() const noexcept { return landlock_abi >= kMinLandlockAbi; }
  bool complete() const noexcept { return landlock() && seccomp && no_new_privs && capabilities && rlimits; }
  // Ok when every layer is present; else DOT_E_SANDBOX_UNAVAILABLE (kind
  // "landlock", "seccomp", "no_new_privs", "capabilities" or "rlimits") naming
  // the first missing layer.
  Status require_complete() const;
};

// Probes the running kernel; cheap (a handful of system calls), no side effects.
SandboxSupport probe_sandbox_support();

// Resource limits, soft = hard (a plugin cannot raise them back), but for the
// CPU: its soft limit sends SIGXCPU, a signal only the kernel's CPU limit
// sends unasked, so the host names the cause from the signal alone. The
// kernel charges CPU time by sampling at ticks while the exit status carries
// the scheduler's exact runtime, and on a loaded virtual machine the two
// differ widely (1.36 s exact at a kill for "2 s" was seen): a cause read from
// the CPU time would be a guess. A plugin that catches SIGXCPU, or raises its
// soft limit, gets SIGKILL at the hard limit one second later.
struct SandboxLimits {
  rlim_t address_space = rlim_t{1} << 30;  // RLIMIT_AS: 1 GiB
  rlim_t cpu_seconds = 2;                  // RLIMIT_CPU soft: SIGXCPU at 2 s of CPU
  rlim_t cpu_hard_seconds = 3;             // RLIMIT_CPU hard: SIGKILL at 3 s
  rlim_t file_size = 64 * 1024;            // RLIMIT_FSIZE: 64 KiB (SIGXFSZ)
  rlim_t open_files = 32;                  // RLIMIT_NOFILE
  rlim_t core_size = 0;                    // RLIMIT_CORE: no core dumps
};

// Why a process ended by a signal, naming the layer that sent it when the
// host can tell from the exit status alone. `limits` is the containment the
// process ran under, or null when it ran uncontained (audit): then no signal
// is blamed on a layer dot-core did not install.
//
//   SIGSYS                         seccomp (kind "seccomp_kill")
//   SIGXFSZ                        RLIMIT_FSIZE ("file_size_limit")
//   SIGXCPU                        RLIMIT_CPU's soft limit ("cpu_limit")
//   SIGKILL with CPU time near     RLIMIT_CPU's hard limit, past a caught
//     the hard limit                 SIGXCPU ("cpu_limit"; a judgement from
//                                    the CPU time, see SandboxLimits)
//   anything else                  "killed" (a crash, the OOM killer...)
//
// Not for a SIGKILL the host sent itself (deadline, interrupt): the caller
// knows that one better.
struct SignalDeath {
  Kind kind;           // see above (rows of base/error_kinds.h)
  std::string signal;  // "SIGSYS (signal 31)"
  std::string cause;   // "seccomp blocked a system call ... (process containment, seccomp layer)"
};
SignalDeath explain_signal_death(const ExitStatus& status, const SandboxLimits* limits);

struct SandboxPolicy {
  // The verified descriptor that will be executed (the one that was hashed:
  // a sealed memfd from seal_executable, or an opened file);
  // SpawnOptions::exec_fd must be this same descriptor.
  int executable_fd = -1;
  // Where it was opened from: resolves $ORIGIN in RUNPATH, names it in errors.
  std::string executable_path;
  // An interpreted plugin's script (a sealed memfd: the executable is then
  // its interpreter), the one descriptor beyond stdio the spawn may keep, as
  // kScriptChildFd (dot/base/plugin_executable.h). -1: none.
  int script_fd = -1;
  // Read-write directory (regular files only: create, write, truncate, remove,
  // list), given by an open descriptor: the rule attaches to that inode, so
  // whatever its path names later (a symlink, another directory) is never
  // granted. -1: none.
  int stage_fd = -1;
  // Folders in the stage too (make and remove them): a general-profile
  // plugin stages nested paths.
  bool stage_folders = false;
  // Read-write directory the plugin keeps from one run to the next (a
  // general plugin's cache): regular files and folders, like a stage with
  // folders, by descriptor for the same reason. -1: none.
  int cache_fd = -1;
  // Read-only directories (list them, read their files, beneath them too),
  // each given by an open descriptor (O_PATH is enough) for the same reason:
  // a general plugin's declared inputs, an interpreter's runtime folders.
  std::vector<int> read_only_dir_fds;
  SandboxLimits limits;
};

// The files a dynamically linked ELF executable needs before main(): its
// interpreter (PT_INTERP) and, transitively, the shared objects its DT_NEEDED
// entries resolve to (DT_RPATH, DT_RUNPATH with $ORIGIN, then the system
// library directories), plus the loader cache. Paths as the loader will open
// them (Landlock rules attach to the file they name, symlinks followed).
struct LoaderFiles {
  std::string interpreter;              // empty for a static executable
  std::vector<std::string> libraries;   // in breadth-first load order
  std::vector<std::string> unresolved;  // DT_NEEDED names not found (the loader will fail on them too)
  std::string loader_cache;             // /etc/ld.so.cache when present
};

// What one ELF object says about dynamic loading, read through `read_at`
// (offset, length, out) -> bytes read, or -1. Refuses anything but a 64-bit
// little-endian ELF for this machine. Errors: DOT_E_POLICY kind "elf".
struct ElfDynamicInfo {
  bool is_elf_executable = false;  // ET_EXEC or ET_DYN
  std::string interpreter;
  std::vector<std::string> needed;
  std::vector<std::string> rpath;    // DT_RPATH entries, split on ':'
  std::vector<std::string> runpath;  // DT_RUNPATH entries, split on ':'
};
using ElfReadAt = std::function<long(std::uint64_t offset, std::size_t length, char* out)>;
Result<ElfDynamicInfo> read_elf_dynamic_info(const ElfReadAt& read_at);

// Resolves everything the dynamic loader will open for the executable behind
// `fd` (opened from `path`). Errors: DOT_E_POLICY kind "elf" when it is not a
// loadable ELF executable for this machine.
Result<LoaderFiles> resolve_loader_files(int fd, const std::string& path);

// Containment prepared in the parent and applied in the child. Movable; must
// outlive the spawn() it was applied to (the child reads it between fork and exec).
class Sandbox {
 public:
  Sandbox();
  ~Sandbox();
  Sandbox(Sandbox&&) noexcept;
  Sandbox& operator=(Sandbox&&) noexcept;
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  // Probes the kernel and prepares every layer for `policy`.
  static Result<Sandbox> prepare(const SandboxPolicy& policy);
  // Same, trusting an earlier probe (doctor, tests that simulate a kernel
  // without a layer). A support that lacks any layer is refused.
  static Result<Sandbox> prepare(const SandboxPolicy& policy, const SandboxSupport& support);

  // Installs the child-side hook on `options`: pre_exec, a new session, the
  // parent-death signal. Refuses (DOT_E_INTERNAL) options that would defeat
  // containment: executing a path instead of the verified descriptor, another
  // descriptor than the policy's (an unset exec_fd, filled in later by the
  // caller, is accepted), or inherited descriptors other than the policy's
  // script_fd as kScriptChildFd.
  Status apply_to(SpawnOptions& options) const;

  int landlock_abi() const noexcept;
  // The files the ruleset lets the plugin read (and, for the first two, execute).
  const LoaderFiles& loader_files() const noexcept;
  // Number of BPF instructions in the exported seccomp filter.
  std::size_t seccomp_instructions() const noexcept;
  // The limits the child gets (the policy's, lowered to our own hard limits).
  SandboxLimits limits() const noexcept;

  struct ChildState;  // what the child reads between fork and exec

 private:
  std::unique_ptr<ChildState> state_;
};

}  // namespace dot
