#pragma once
// Spawning and owning child processes: exec from a path or from an already
// opened descriptor, an exact environment, stdio pipes, an own process group,
// every other descriptor closed, and a ChildProcess that kills and reaps its
// group on every path (RAII).

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "dot/base/fd.h"
#include "dot/base/result.h"

namespace dot {

using Clock = std::chrono::steady_clock;

enum class StdioMode { Pipe, DevNull, Inherit };

struct SpawnOptions {
  // argv[0] is what the child sees as its name.
  std::vector<std::string> argv;
  // Exactly one of: a path to execve, or an open descriptor to fexecve (the
  // descriptor that was hashed is the one executed; nothing is re-opened).
  std::string path;
  int exec_fd = -1;
  // The exact environment ("KEY=VALUE"); nothing is inherited.
  std::vector<std::string> env;
  // Working directory of the child; empty keeps ours.
  std::string cwd;
  StdioMode stdin_mode = StdioMode::Pipe;
  StdioMode stdout_mode = StdioMode::Pipe;
  StdioMode stderr_mode = StdioMode::Pipe;
  // Further descriptors the child keeps: parent fd -> child fd number.
  std::vector<std::pair<int, int>> keep_fds;
  bool new_process_group = true;    // setpgid(0,0)
  bool new_session = false;         // setsid() (implies a new group)
  bool parent_death_signal = true;  // PR_SET_PDEATHSIG(SIGKILL)
  // Runs in the child after the descriptors are arranged, just before exec.
  // Must be async-signal-safe. Returns 0 or an errno value; on failure the
  // child exits 127 and spawn() reports `pre_exec_what` with that errno.
  int (*pre_exec)(void* ctx) = nullptr;
  void* pre_exec_ctx = nullptr;
  const char* pre_exec_what = "pre-exec set-up";
};

struct ExitStatus {
  int code = -1;   // exit code when exited normally, else -1
  int signal = 0;  // terminating signal, else 0
  // User + system CPU time the process used (wait4's rusage): tells a kill by
  // the CPU rlimit (SIGKILL at the hard limit) from any other SIGKILL.
  std::chrono::microseconds cpu_time{0};
  bool exited() const noexcept { return signal == 0 && code >= 0; }
  bool success() const noexcept { return exited() && code == 0; }
  std::string describe() const;  // "exit 3", "killed by signal 9"
};

class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();  // kill_group() + reap, if still owned
  ChildProcess(ChildProcess&&) noexcept;
  ChildProcess& operator=(ChildProcess&&) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const noexcept { return pid_; }
  int pidfd() const noexcept { return pidfd_.get(); }
  UniqueFd& stdin_fd() noexcept { return stdin_; }
  UniqueFd& stdout_fd() noexcept { return stdout_; }
  UniqueFd& stderr_fd() noexcept { return stderr_; }

  // SIGKILL to the whole process group (or the pid when it has none).
  void kill_group() noexcept;
  void signal_group(int sig) noexcept;
  // Non-blocking: the status once the child has exited (reaps it).
  std::optional<ExitStatus> try_wait();
  // Waits until the child exits or the deadline passes (then nullopt; the child is untouched).
  std::optional<ExitStatus> wait_until(Clock::time_point deadline);
  // Kill the group and reap; returns the status. Idempotent.
  ExitStatus kill_and_reap();
  // True while some process is still in the child's process group (the
  // leader, or descendants that stayed in the group). False without a group.
  bool group_alive() const noexcept;
  bool reaped() const noexcept { return reaped_; }

 private:
  friend Result<ChildProcess> spawn(const SpawnOptions&);
  pid_t pid_ = -1;
  bool own_group_ = false;
  bool reaped_ = false;
  ExitStatus status_;
  UniqueFd pidfd_, stdin_, stdout_, stderr_;
};

// Errors: Code::Io naming the stage that failed ("exec", "chdir", pre_exec_what...).
Result<ChildProcess> spawn(const SpawnOptions& options);

// Make this process a child subreaper, so orphaned descendants (a grandchild
// that called setsid) are re-parented to us and can be found and reaped.
// Idempotent.
Status become_child_subreaper();

// An orphan is a child of this process that no live ChildProcess owns: a
// descendant of a spawned program that was re-parented to us (subreaper) when
// its own parent died. Every ChildProcess made by spawn() is registered from
// fork until it is reaped, so orphans are told apart from children that
// another ChildProcess (another session, another thread) still owns. Children
// made by other means (system(), posix_spawn) would count as orphans: in a
// host that sweeps orphans, spawn every child through spawn().

// Pids of this process's current children (every thread's), owned or not.
std::vector<pid_t> list_children();
// Reap every already-exited orphan (non-blocking); never touches a child that
// a ChildProcess owns.
void reap_orphans();
// SIGKILL and reap every orphan, then the orphans' own children that were
// re-parented to us when they died, until none is left (bounded rounds).
// Returns how many of them were still running (not zombies) when found.
std::size_t kill_orphans();

}  // namespace dot
