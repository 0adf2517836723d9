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
// Limits (docs/spec/dpp-hello.md): the whole invocation, spawn to exit, within
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
// the same error. A plugin that closes its stdin cannot kill the host with
// SIGPIPE: the writes are base's (pipe_io.h), which block it for the write
// and leave the process's disposition alone.
// SIGINT/SIGTERM handling is the caller's: destroying the session (or
// abort()) from the normal path is enough to leave no process behind.
//
// The general profile org.dot.dpp/v1 (docs/spec/dpp-general.md; options.profile):
// the same session with the negotiated limits (options.general_limits: frame
// body, stdout, stderr, deadline, operations, claims, log messages) and the
// general message types (the overloads and *_general calls below). While a
// request is outstanding the plugin may send `dot.log` notifications: each is
// decoded (level, message at most 4096 bytes), counted against
// max_log_messages over the whole invocation, kept with the method it came
// during (logs()) and handed to options.on_log as it arrives. One that comes
// during dot.initialize is held until the echo says whether log was
// negotiated (its last capability). With "batches" negotiated, dot.plan's
// operations and dot.materialize's artifacts may also come as
// dot.operations / dot.artifacts notifications ahead of the result, each
// decoded as it arrives and held with the rest to the negotiated limits;
// plan() and materialize_general() return the whole list (plan() hands
// each batch to its caller instead when given a sink). Any other
// method, a batch during another request, a log or a batch without
// negotiation, a log beyond the limit: DOT_E_PROTOCOL (kinds
// notification_method, log_not_negotiated, batch_not_negotiated,
// log_limit, log_level, log_message). Output after the dot.shutdown response is trailing_output as
// in the hello profile; output present before dot.initialize is written is
// unsolicited; anything read after a request is written belongs to it (core
// writes each request as soon as it has read the previous response). An
// error response fails the session with DOT_E_PLUGIN_ERROR (kind
// error_response, detail `plugin <id> answered <method> with error <C>: <M>`);
// plugin_error() keeps the code, message and data. The deadline is not the
// whole invocation's but the longest the plugin may keep core waiting: it
// starts again at each request written, each frame read and the wait for
// the exit after dot.shutdown (DOT_E_TIMEOUT when it passes), so a plan of
// 100,000 files sent in batches may take longer than deadline_ms in all.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dot/base/process.h"
#include "dot/base/result.h"
#include "dot/base/sandbox.h"
#include "dot/dpp/frame.h"
#include "dot/dpp/general.h"
#include "dot/dpp/messages.h"

namespace dot::dpp {

// What the session enforces on the pipes. The defaults are the hello
// profile's; a general session takes them from its negotiated limits.
struct SessionLimits {
  std::chrono::milliseconds deadline{5000};
  std::size_t stdout_cap = 512 * 1024;
  std::size_t stderr_cap = 8 * 1024;
  std::size_t max_frame_bytes = kMaxBody;
  static SessionLimits of(const general::Limits& limits);
};

enum class Profile : std::uint8_t { Hello, General };

// The largest plugin executable a host runs: `register` pins at most this,
// `dpp conform` seals at most this.
inline constexpr std::size_t kMaxPluginBytes = 64 * 1024 * 1024;

// The resource limits a plugin of `profile` runs under with process
// assurance (core's plan and `dpp conform --require-process-sandbox` alike):
// the hello profile's are SandboxLimits' defaults; the general profile's own
// limits are the binding ones (a staged file may reach max_file_bytes, and
// a plan of max_operations files takes minutes of CPU on a slow disk: the
// hello profile's 64 KiB and 2 s would refuse what the spec allows). The
// general profile's CPU limit is 560 s (SIGXCPU; SIGKILL at 561 s).
SandboxLimits containment_limits(Profile profile);

// One accepted dot.log notification.
struct LogEntry {
  std::string level;
  std::string message;
  Method method = Method::Initialize;  // the request it came during
  bool operator==(const LogEntry&) const = default;
};

// The error response that ended a general session.
struct PluginErrorInfo {
  Method method = Method::Initialize;
  general::ErrorObject error;
};

struct HostSessionOptions {
  // The executable whose digest was checked, executed as is (fexecve): a
  // sealed copy from dot::seal_executable, so that the bytes checked are the
  // bytes run. The caller keeps it open until start() returns.
  int exec_fd = -1;
  // Absolute path of the fresh stage directory: the working directory,
  // DOT_STAGE_ROOT, and the `stage` of dot.materialize.
  std::string stage_dir;
  // Extras for spawn(): argv (default {"dot-plugin"}), keep_fds (an
  // interpreted plugin's sealed script), pre_exec hook and its context (the
  // sandbox), new_session, parent_death_signal. The session itself sets
  // exec_fd, path, env (LANG=C, DOT_STAGE_ROOT, DOT_PLUGIN_ID, then extra_env), cwd and the
  // three stdio pipes.
  SpawnOptions spawn;
  // Environment entries after LANG and DOT_STAGE_ROOT ("KEY=VALUE"): an
  // interpreted plugin's HOME (dot::interpreter_env).
  std::vector<std::string> extra_env;
  // Hello profile: enforced as given. General profile: ignored, replaced by
  // SessionLimits::of(general_limits).
  SessionLimits limits;
  Profile profile = Profile::Hello;
  // General profile: the limits sent in dot.initialize (the params given to
  // initialize() must carry exactly these) and enforced throughout.
  general::Limits general_limits = general::kLimits;
  // General profile: the manifest id, named in a DOT_E_PLUGIN_ERROR detail
  // and, when it is a valid plugin id, given to the plugin as DOT_PLUGIN_ID.
  std::string plugin_id;
  // General profile: called with each dot.log once it is accepted, in order.
  std::function<void(const LogEntry&)> on_log;
  // The limits of the dot::Sandbox installed on `spawn` (process assurance),
  // or none (audit). Only used to say which layer killed a plugin.
  std::optional<SandboxLimits> containment;

  // For `dot-core dpp conform` only (dpp/conformance.h); dot-core's own
  // sessions leave these as they are.
  // Each request is written one byte at a time, each byte once the plugin has
  // read the one before (what is still in the pipe, FIONREAD), so the plugin
  // reads core's frames in as many pieces as a pipe can cut them.
  bool bytewise = false;
  // What is written for each request instead of its frame. Coalesced delivery
  // writes later requests together with the first and returns "" for them:
  // such a request was already asked, so output read before it is its answer,
  // not unsolicited.
  std::function<std::string(Method, std::string frame)> deliver;
  // The deadline instead of the profile's (0: the profile's: limits.deadline
  // for the whole hello invocation, or general_limits.deadline_ms for each
  // wait of a general one).
  std::chrono::milliseconds deadline_override{0};
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

  // The general profile's requests 1 to 3 (validate, shutdown and finish are
  // shared). `params.limits` must equal options.general_limits (else
  // Code::Internal); check the echo with general::check_identity.
  Result<general::InitializeResult> initialize(const general::InitializeParams& params);
  // `digests`: the echo negotiated them, so each write declares sha256 and size.
  // With `take`, the operations are not kept in the result: each batch is
  // handed to it as soon as it is decoded (the result's own operations
  // last), so that a caller building its own records never holds the
  // decoded list whole; the limits still count the whole list. A batch
  // handed on is decoded and within the limits, and nothing else: the
  // session may still fail after it (then the caller discards what it took).
  template <class T>
  using BatchSink = std::function<void(std::vector<T>& batch)>;
  using OperationSink = BatchSink<general::Operation>;
  Result<general::PlanResult> plan(const general::PlanParams& params, bool digests = false, OperationSink take = {});
  // `paths` (digests negotiated): the writes to stage, sent as params.paths
  // (written into the request as they are, never copied). With `take`, the
  // artifacts are handed on batch by batch as plan()'s operations are.
  using ArtifactSink = BatchSink<general::Artifact>;
  Result<general::MaterializeResult> materialize_general(
      std::optional<std::span<const std::string_view>> paths = std::nullopt, ArtifactSink take = {});
  // Request 4; a result other than {valid:true} fails (kind not_valid).
  Status validate();
  // Request 5; likewise.
  Status shutdown();
  // After shutdown: closes stdin, requires EOF on stdout and exit status 0,
  // kills and reaps what is left. Called once.
  Status finish();
  // Kill and reap everything now (idempotent). Later calls fail.
  void abort() noexcept;

  // For `dot-core dpp conform` only. Writes `bytes` as they are (what core
  // itself never sends: a malformed or out-of-order request) before the next
  // request, and reads the one frame the plugin answers with, returned parsed
  // with its envelope unchecked. The session's limits and deadline hold as
  // for a request; the next request is the one that was due.
  Result<json::Document> probe(std::string_view bytes);
  // For `dot-core dpp conform` only: ends the session before dot.shutdown.
  // Closes stdin, requires EOF on stdout with nothing more written (kind
  // trailing_output), no survivor and stderr within its cap, and returns the
  // plugin's exit status, whatever it is.
  Result<ExitStatus> close_early();

  // General profile: whether the echo negotiated log; the accepted dot.log
  // messages in order; the error response that ended the session, if any.
  bool log_negotiated() const noexcept;
  const std::vector<LogEntry>& logs() const noexcept;
  const std::optional<PluginErrorInfo>& plugin_error() const noexcept;

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
