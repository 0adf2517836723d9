#pragma once
// WorkerSession: one Metewand worker process and its protocol session.
//
// The worker gets two dedicated pipes (requests to it on the descriptor named
// by METEWAND_PROTOCOL_READ_FD, responses from it on METEWAND_PROTOCOL_WRITE_FD),
// stdin from /dev/null, stdout and stderr as log streams drained concurrently
// with a byte cap each, its own process group, and nothing else inherited.
// Every phase (hello, each operation, shutdown) has its own deadline; any
// framing error, timeout, closed stream, malformed response or failed reset
// kills the worker and makes the session unusable. A worker failure response
// (other than to reset or shutdown) is typed and leaves the session usable.
// Shutdown is the final request for every role: its phase is the `shutdown`
// request, its acknowledgment and the worker's clean exit, all within the
// shutdown deadline; then the whole group is killed and reaped. The
// destructor kills and reaps on every other path.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/error.h"
#include "dot/base/jcs.h"
#include "dot/base/plugin_child.h"
#include "dot/base/process.h"
#include "dot/base/stream_capture.h"
#include "dot/metewand/correlation.h"
#include "dot/metewand/error_kinds.h"
#include "dot/metewand/expected.h"
#include "dot/metewand/frame_error.h"
#include "dot/metewand/frame_reader.h"
#include "dot/metewand/hello.h"
#include "dot/metewand/message.h"
#include "dot/metewand/operations.h"

namespace dot::metewand {

inline constexpr std::string_view kReadFdVariable = "METEWAND_PROTOCOL_READ_FD";
inline constexpr std::string_view kWriteFdVariable = "METEWAND_PROTOCOL_WRITE_FD";

// One phase per method (the public protocol's phases), plus Start (spawning).
enum class Phase : std::uint8_t { Start, Hello, Materialize, Prepare, Execute, Reset, Evaluate, Shutdown };
std::string_view phase_name(Phase phase) noexcept;  // "start", "hello", "materialize", ...
std::optional<Phase> phase_from_name(std::string_view name) noexcept;
Phase phase_of(Method method) noexcept;

// A resolved deadline for every phase: none is implicit, none unbounded
// (start() refuses one that is not positive).
struct PhaseTimeouts {
  std::chrono::milliseconds hello{5000};
  std::chrono::milliseconds materialize{30000};
  std::chrono::milliseconds prepare{30000};
  std::chrono::milliseconds execute{30000};
  std::chrono::milliseconds reset{30000};
  std::chrono::milliseconds evaluate{30000};
  std::chrono::milliseconds shutdown{2000};

  std::chrono::milliseconds of(Phase phase) const noexcept;  // Start: hello's
  void set_all(std::chrono::milliseconds limit) noexcept;
};

struct WorkerCommand {
  std::vector<std::string> argv;  // argv[0] is the worker's name for itself
  std::string path;               // exactly one of path / exec_fd (see SpawnOptions)
  int exec_fd = -1;
  std::vector<std::string> env;  // the exact environment; the two fd variables are added
  std::string cwd;
};

struct SessionOptions {
  WorkerCommand command;
  PhaseTimeouts timeouts;
  std::size_t log_cap = 64 * 1024;  // per stream: the first log_cap bytes are kept
  int child_read_fd = 3;            // where the worker reads requests
  int child_write_fd = 4;           // where the worker writes responses
};

struct SessionError {
  enum class Kind : std::uint8_t {
    Spawn,             // the worker could not be started, or the options are invalid (detail)
    Io,                // writing a request failed (detail)
    Timeout,           // the phase's deadline passed
    Frame,             // frame
    Correlation,       // correlation
    Message,           // message (InvalidMessage, or an unencodable request)
    Handshake,         // handshake
    WorkerFailure,     // failure: the worker answered with a failure response
    ProtocolClosed,    // clean end of the protocol stream while a response was due
    UnsuccessfulExit,  // the worker exited non-zero or by a signal at shutdown (status)
    SessionUnusable,   // an earlier error discarded the worker
    // Refused locally, before a request id is used; the session stays usable:
    InvalidRole,            // the negotiated role does not take this method
    CapabilityNotSelected,  // execute without one_shot selected at hello
    NotNegotiated,          // an operation before a successful hello
  };
  Kind kind = Kind::Spawn;
  Phase phase = Phase::Start;
  std::string detail;
  std::optional<FrameError> frame;
  std::optional<CorrelationError> correlation;
  std::optional<MessageError> message_error;
  std::optional<HandshakeError> handshake;
  std::optional<WorkerFailure> failure;
  ExitStatus status;
  std::chrono::milliseconds limit{0};  // Timeout

  // The typed name: the FrameError, correlation, message or handshake variant
  // ("LineTooLong", "MismatchedRequestId", "WorkerIdentityMismatch"), the
  // worker's failure code ("operation_failed"), or the session's own kind
  // ("Timeout", "ProtocolClosed", "UnsuccessfulExit", "Spawn", "Io",
  // "InvalidRole", "CapabilityNotSelected", "NotNegotiated").
  std::string name() const;
  // The row behind name(): the variant's, the failure code's or the session's own.
  ErrorKind error_kind() const;
  std::string message() const;
  // kind = name(), detail = "<name>: <message> (phase P)"; codes: Timeout ->
  // DOT_E_TIMEOUT, Handshake -> DOT_E_PLUGIN_IDENTITY, Spawn -> DOT_E_IO,
  // everything else DOT_E_PROTOCOL.
  Error to_error() const;
};

class WorkerSession {
 public:
  // Spawns the worker. Nothing is sent yet.
  static Expected<WorkerSession, SessionError> start(const SessionOptions& options);

  WorkerSession(WorkerSession&&) noexcept;
  WorkerSession& operator=(WorkerSession&&) noexcept;
  ~WorkerSession();  // kills and reaps the worker's group if still running

  // Sends the hello request (id from the tracker) and validates the reply.
  // A worker failure reply is SessionError::WorkerFailure and leaves the
  // session usable; every other error discards the worker.
  Expected<NegotiatedSession, SessionError> hello(WorkerRole role, std::string worker_id,
                                                  std::span<const Capability> selected = {});

  // One operation of the negotiated role (not hello, not shutdown) under its
  // phase's deadline. Refused locally without using a request id (the
  // session stays usable): SessionUnusable, NotNegotiated, InvalidRole,
  // CapabilityNotSelected (execute), Message (params not the method's shape,
  // or unencodable). Then: WorkerFailure (typed, with its phase; usable
  // unless the method is reset), or an error that discards the worker
  // (Timeout, Frame, Correlation, Message, ProtocolClosed, Io).
  Expected<OperationSuccess, SessionError> request(Method method, jcs::Node params = jcs::Node::object());

  // One raw request/response exchange under `phase`'s deadline, for probing
  // a worker (conformance): encodes `request` (its "id" is set from the
  // tracker), sends it, reads one frame and correlates it. No shape checks.
  Expected<ParsedFrame, SessionError> exchange(Phase phase, jcs::Node request);

  // The shutdown phase, within one deadline (`limit`, default the options'):
  // after a hello was sent, the `shutdown` request and its acknowledgment
  // (a failure reply is WorkerFailure); then the request pipe is closed, the
  // protocol stream watched (any further frame is ExtraResponse, or
  // InvalidRequestId without a string id) until the worker exits; then its
  // group is killed and reaped. Returns the exit status; non-zero is
  // UnsuccessfulExit; no exit in time is Timeout. Every path ends the process.
  Expected<ExitStatus, SessionError> shutdown(std::optional<std::chrono::milliseconds> limit = std::nullopt);

  // Conformance probing of a worker's reader: writes `bytes` (any bytes, not
  // a message) under the shutdown deadline, closes the request stream, then
  // waits for the worker to exit within that deadline, keeping every line it
  // still sends (up to the first framing error). The group is then killed
  // and reaped; the session is over either way.
  struct Probe {
    std::vector<std::string> lines;         // complete lines received, LF stripped
    std::optional<FrameError> frame_error;  // the worker's stream broke the framing
    std::optional<ExitStatus> exit;         // nullopt: it did not exit in time
  };
  Probe probe_raw(std::string_view bytes);

  // The last request line sent and response line received (LF stripped).
  const std::string& last_request() const noexcept;
  const std::string& last_response() const noexcept;

  // Kills and reaps the worker's group now (idempotent).
  void discard();

  bool usable() const noexcept;
  bool running() const noexcept;  // not yet reaped
  pid_t pid() const noexcept;
  // What the worker wrote on stdout and stderr (bytes(), truncated(), total()).
  const StreamCapture& stdout_log() const noexcept;
  const StreamCapture& stderr_log() const noexcept;
  const std::optional<NegotiatedSession>& negotiated() const noexcept;

  struct State;

 private:
  explicit WorkerSession(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

}  // namespace dot::metewand
