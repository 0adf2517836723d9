#pragma once
// The host side of one plugin invocation, driven one call at a time by its
// caller (core::Planner), so policy checks run in between:
//
//   auto s = HostSession::start(opts);            // spawn from the hashed fd
//   auto echo = s->initialize(hello::initialize_params("audit", nonce));
//   hello::check_identity(sent, *echo, manifest_id);   // before dot.plan
//   auto plan = s->plan();  hello::check_hello_allowlists(*plan);
//   auto arts = s->materialize();  ... core verifies the staged files ...
//   s->validate();  s->shutdown();
//   s->finish();                                  // stdin closed, EOF, exit 0
//
// Limits (spec/dpp-hello.md): the whole invocation, spawn to exit, within
// 5 s (DOT_E_TIMEOUT); stdout at most 512 KiB; stderr kept, at most 8 KiB
// (more fails the session); ids 1..5 in order, one request outstanding; output
// the plugin writes before it is asked is "unsolicited"; after the shutdown
// response any byte on stdout is "trailing_output"; exit status 0 required; a
// process left running after the plugin exited is a "survivor". Every failure
// other than DOT_E_TIMEOUT is DOT_E_PROTOCOL (kinds in docs/dpp.md).
//
// One misbehaviour gets one verdict on every schedule: a request the plugin
// no longer reads (its stdin closed, or it already exited: the write fails
// with EPIPE) is not itself an error, the session reads the plugin's stdout
// as after any request. A plugin that exits without answering is "eof" (then
// its exit status is consulted, below) whether it died before or after the
// request reached its pipe; one that closed stdin but keeps stdout open and
// silent reaches the deadline.
//
// A plugin that dies of a signal it did not get from the host (a seccomp kill,
// an rlimit, a crash) is reported as that death, not as the symptom the
// protocol saw (a closed stdout, a closed stdin, a non-zero exit): kinds
// "seccomp_kill", "cpu_limit", "file_size_limit" or "killed", the detail
// naming the signal and, under containment, the layer that sent it
// (dot::explain_signal_death). At the deadline the host itself SIGKILLs the
// group: DOT_E_TIMEOUT says so.
//
// On any error, on abort() and in the destructor the plugin's process group is
// SIGKILLed and reaped, and so is every orphan re-parented to this process (the
// host is made a child subreaper by start(), so a grandchild that called setsid
// is found too). After a failed call the session is dead: later calls return
// the same error. start() also sets SIGPIPE to ignored in this process if it
// was at its default (a plugin that closes its stdin must not kill the host).
// SIGINT/SIGTERM handling is the caller's: destroying the session (or
// abort()) from the normal path is enough to leave no process behind.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "dot/base/process.h"
#include "dot/base/result.h"
#include "dot/base/sandbox.h"
#include "dot/dpp/messages.h"

namespace dot::dpp {

struct SessionLimits {
  std::chrono::milliseconds deadline{5000};
  std::size_t stdout_cap = 512 * 1024;
  std::size_t stderr_cap = 8 * 1024;
};

struct HostSessionOptions {
  // The executable whose digest was checked, executed as is (fexecve): a
  // sealed copy from dot::seal_executable, so that the bytes checked are the
  // bytes run. The caller keeps it open until start() returns.
  int exec_fd = -1;
  // Absolute path of the fresh stage directory: the working directory,
  // DOT_STAGE_ROOT, and the `stage` of dot.materialize.
  std::string stage_dir;
  // Extras for spawn(): argv (default {"dot-plugin"}), pre_exec hook and its
  // context (the sandbox), new_session, parent_death_signal. The session
  // itself sets exec_fd, path, env (exactly LANG=C and DOT_STAGE_ROOT), cwd,
  // the three stdio pipes and keep_fds (none).
  SpawnOptions spawn;
  SessionLimits limits;
  // The limits of the dot::Sandbox installed on `spawn` (process assurance),
  // or none (audit). Only used to say which layer killed a plugin.
  std::optional<SandboxLimits> containment;
};

class HostSession {
 public:
  // Spawns the plugin. Errors: Code::Internal for bad options, Code::Io when
  // the process cannot be started (the message names the failing step).
  static Result<HostSession> start(HostSessionOptions options);

  HostSession(HostSession&&) noexcept;
  HostSession& operator=(HostSession&&) noexcept;
  HostSession(const HostSession&) = delete;
  HostSession& operator=(const HostSession&) = delete;
  ~HostSession();  // abort()

  // Request 1. Keep `params` to check the echo with hello::check_identity.
  Result<InitializeResult> initialize(const InitializeParams& params);
  // Request 2.
  Result<PlanResult> plan();
  // Request 3, {stage: options.stage_dir}.
  Result<MaterializeResult> materialize();
  // Request 4; a result other than {valid:true} fails (kind not_valid).
  Status validate();
  // Request 5; likewise.
  Status shutdown();
  // After shutdown: closes stdin, requires EOF on stdout and exit status 0,
  // kills and reaps what is left. Called once.
  Status finish();
  // Kill and reap everything now (idempotent). Later calls fail.
  void abort() noexcept;

  // What the plugin wrote on stderr (at most stderr_cap bytes).
  const std::string& stderr_bytes() const noexcept;
  // Bytes read from the plugin's stdout so far.
  std::uint64_t stdout_bytes() const noexcept;
  pid_t pid() const noexcept;
  // True once the process and its group are reaped (finish or abort).
  bool ended() const noexcept;

  struct Impl;

 private:
  explicit HostSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace dot::dpp
