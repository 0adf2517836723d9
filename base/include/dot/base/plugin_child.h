#pragma once
// PluginChild: one protocol peer running as a child process, the one session
// every host in the project builds on (the DPP plugin host, the ADPP client,
// the Metewand worker session). It owns the process and everything around its
// protocol stream; the protocols keep only their framing, codec and state:
//
//   spawn       from a path or a sealed descriptor (SpawnOptions, with any
//               sandbox hook), the protocol on stdin/stdout or on a pipe pair
//               the child finds at fixed descriptor numbers
//   deadline    one absolute point per exchange (set_deadline); every write,
//               read and wait below ends there with THE timeout error
//               (dot::timeout_error: Code::Timeout, kind "timeout")
//   write       the request, whole; a child that no longer reads is Code::Io
//               "closed" (never SIGPIPE)
//   read        buffered reads of the protocol output, as many bytes as the
//               caller has room for, waiting with poll (never a sleep); an
//               optional output cap stops one byte past it
//   logs        stderr (and stdout when the protocol has its own pipes)
//               drained whenever anything waits, kept within its cap
//   end         close the input, wait for the exit, kill and reap the group,
//               count survivors, sweep orphans (the child subreaper), and say
//               which signal killed the child and which layer sent it
//
// Errors are the base layer's (pipe_io.h): callers put them in their
// protocol's words. The destructor kills and reaps on every path.

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "dot/base/deadline.h"
#include "dot/base/fd.h"
#include "dot/base/pipe_io.h"
#include "dot/base/process.h"
#include "dot/base/result.h"
#include "dot/base/sandbox.h"
#include "dot/base/stream_capture.h"

namespace dot {

struct PluginChildOptions {
  // What to run: argv, path or exec_fd, env, cwd, the pre-exec hook (the
  // sandbox), new_session, parent_death_signal. The stdio modes and keep_fds
  // are the session's own (below).
  SpawnOptions spawn;
  // Names the child in errors: "<name>'s stdout" ("the plugin").
  std::string name = "the plugin";
  // The protocol on a pipe pair instead of stdin/stdout: {the descriptor the
  // child reads requests from, the one it writes responses to}. Its stdin is
  // then /dev/null and its stdout a log like stderr (stdout_log_cap).
  std::optional<std::pair<int, int>> protocol_fds;
  std::size_t stderr_cap = 8 * 1024;
  StreamCapture::Keep stderr_keep = StreamCapture::Keep::First;
  std::size_t stdout_log_cap = 64 * 1024;
  // How many bytes of protocol output the child may write; reads stop one
  // byte past it (over_output_cap()). 0: no cap.
  std::uint64_t output_cap = 0;
  // The input pipe holds one page, so write_paced() can wait, without
  // polling on a timer, until the child has read each byte.
  bool paced_input = false;
  // Become a child subreaper before the spawn (become_child_subreaper) and
  // kill and reap every orphan in kill_survivors() and kill_all(), which the
  // destructor runs: a setsid grandchild is killed too. The subreaper flag
  // stays set, as with OrphanSweep.
  bool sweep_orphans = false;
};

class PluginChild {
 public:
  // Errors: Code::Io from spawn() or the pipes, "subreaper" from the sweep.
  static Result<PluginChild> spawn(PluginChildOptions options);

  PluginChild() = default;
  PluginChild(PluginChild&& o) noexcept;
  PluginChild& operator=(PluginChild&& o) noexcept;
  PluginChild(const PluginChild&) = delete;
  PluginChild& operator=(const PluginChild&) = delete;
  ~PluginChild() { kill_all(); }

  void set_deadline(Deadline deadline) noexcept { deadline_ = deadline; }
  Deadline deadline() const noexcept { return deadline_; }
  bool deadline_passed() const noexcept { return Clock::now() >= deadline_; }

  // Writes every byte before the deadline (pipe_io.h's errors; "closed" once
  // the child no longer reads, and after close_input()).
  Status write(std::string_view bytes);
  // Writes one byte at a time, each once the child has read the one before
  // (or has exited, or closed its input: the rest is not written). Needs
  // paced_input.
  Status write_paced(std::string_view bytes);
  // Closes our end of the child's input: it reads end of stream.
  void close_input() noexcept { input_.reset(); }
  bool input_open() const noexcept { return input_.valid(); }

  // Reads at most `max` (>= 1) bytes of protocol output as soon as some are
  // there: how many, 0 at its end (and after the cap's extra byte).
  Result<std::size_t> read(char* buf, std::size_t max);
  // Reads what is waiting now, without waiting: how many, 0 when nothing is
  // (output_ended() tells the end apart).
  Result<std::size_t> read_now(char* buf, std::size_t max);
  // Whether a read would not block: output, its end, or an error is waiting.
  bool output_waiting() const noexcept;
  bool output_ended() const noexcept { return output_ended_ || !output_; }
  std::uint64_t output_total() const noexcept { return output_total_; }
  bool over_output_cap() const noexcept { return cap_ != 0 && output_total_ > cap_; }

  // Waits until the output is readable (when `watch_output`) or the child
  // exited: true, false at the deadline. Drains the logs meanwhile.
  Result<bool> wait_output_or_exit(bool watch_output);
  // The exit status once the child has exited (reaped), nullopt at the
  // deadline; the logs are drained meanwhile. The child is left alone.
  std::optional<ExitStatus> wait_exit();
  std::optional<ExitStatus> try_wait() { return child_.try_wait(); }

  // After the child exited: SIGKILLs what is left of its group and every
  // orphan (when sweeping); how many of them were still running.
  std::size_t kill_survivors();
  // Kills the group and reaps the child; its status. The streams stay open.
  ExitStatus kill_and_reap() { return child_.kill_and_reap(); }
  // Kills and reaps the group (the orphans too when sweeping), reads what
  // the logs hold for up to `log_grace`, closes every stream. Idempotent.
  void kill_all(std::chrono::milliseconds log_grace = std::chrono::milliseconds(0)) noexcept;
  bool killed() const noexcept { return killed_; }

  // The child's death by a signal the host did not send (a seccomp kill, an
  // rlimit, a crash), explained with the containment that was installed
  // (nullptr: none). A child whose output just ended gets a short grace to
  // finish dying: the kernel closes its descriptors before it can be reaped.
  std::optional<SignalDeath> signal_death(bool output_just_ended, const SandboxLimits* containment);

  // Reads the logs until each has ended or `until` passes.
  void drain_logs_until(Deadline until) { drain_until(logs(), until); }
  Captures logs() noexcept { return Captures(captures_, ncaptures_); }
  const StreamCapture& stderr_log() const noexcept { return err_; }
  const StreamCapture& stdout_log() const noexcept { return out_; }

  pid_t pid() const noexcept { return child_.pid(); }
  bool reaped() const noexcept { return child_.reaped(); }
  bool running() const noexcept { return child_.pid() > 0 && !child_.reaped(); }

 private:
  int output_fd() const noexcept { return output_ended_ ? -1 : output_.get(); }
  Result<std::size_t> take(std::size_t n);
  std::size_t room(std::size_t max) const noexcept;
  void point_captures() noexcept;

  ChildProcess child_;
  UniqueFd input_;   // the child's requests: its stdin, or our end of its request pipe
  UniqueFd output_;  // its responses
  StreamCapture err_, out_;
  StreamCapture* captures_[2] = {nullptr, nullptr};
  std::size_t ncaptures_ = 0;
  std::string input_what_, output_what_;  // the protocol streams' names in errors
  Deadline deadline_{};
  std::uint64_t cap_ = 0;
  std::uint64_t output_total_ = 0;
  bool output_ended_ = false;
  bool sweep_ = false;  // kill_orphans() in kill_survivors() and kill_all()
  bool killed_ = false;
};

}  // namespace dot
