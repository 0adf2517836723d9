#pragma once
// How dot-core starts a Metewand worker, in one place (the CLI only parses
// options and prints): the worker named by a path or a bare name (searched on
// PATH, absolute entries only: dot::find_executable) is opened once, copied
// into a sealed memory file and hashed (dot::seal_executable_file); a `#!`
// script is refused, since its interpreter would read the file again by path
// and run bytes nobody hashed. The sealed copy is what runs, with the exact
// environment PATH=/usr/local/bin:/usr/bin:/bin. The identity defaults to
// mw1-resolved-worker- + the digest of the sealed bytes.
//
// The host becomes a child subreaper for the run (dot::OrphanSweep), so a
// descendant that left the worker's process group (setsid) is re-parented
// here and killed with the other orphans before hello_worker returns: nothing
// the worker started outlives the call.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dot/base/result.h"
#include "dot/base/sealed_executable.h"
#include "dot/metewand/hello.h"
#include "dot/metewand/worker_session.h"

namespace dot::metewand {

// A worker is copied into memory to be sealed before it runs: the copy is capped.
inline constexpr std::uint64_t kMaxSealedWorkerBytes = 256ULL << 20;

struct ResolvedWorker {
  std::string path;      // what the name resolved to
  SealedExecutable exe;  // the sealed copy; exe.fd is what runs
  std::string identity;  // mw1-resolved-worker- + exe.sha256
};

// Errors: Code::Io (kind "not_found", "not_regular", or the open/read/seal
// failure), Code::Policy kind "script".
Result<ResolvedWorker> resolve_worker(const std::string& name);

struct HelloRun {
  std::vector<std::string> command;  // WORKER [ARGS...]
  WorkerRole role = WorkerRole::Implementation;
  std::string worker_id;  // empty: the resolved identity
  std::vector<Capability> selected;
  // Bounds the handshake, then the worker's exit (what is left of it, at
  // least 200 ms so a clean exit fits).
  std::chrono::milliseconds timeout{5000};
};

// One phase of a session as it happened.
struct PhaseRecord {
  Phase phase = Phase::Hello;
  std::string request;   // the line sent, LF stripped ("" when none was sent)
  std::string response;  // the line received, LF stripped ("" when none)
  std::chrono::milliseconds took{0};
  std::optional<SessionError> error;
  std::optional<NegotiatedSession> negotiated;  // hello
  std::optional<OperationSuccess> success;      // an operation
  std::optional<ExitStatus> exit;               // shutdown
  bool ok() const noexcept { return !error.has_value(); }
};

struct SessionRun {
  std::vector<std::string> command;  // WORKER [ARGS...]
  WorkerRole role = WorkerRole::Implementation;
  std::string worker_id;  // empty: the resolved identity
  std::vector<Capability> selected;
  // In order, after hello; shutdown follows them (not listed here).
  std::vector<std::pair<Method, jcs::Node>> requests;
  PhaseTimeouts timeouts;
};

struct SessionReport {
  std::string worker_path;
  std::string worker_id;
  std::vector<PhaseRecord> phases;
  bool ok() const noexcept;  // every phase ok
};

// One whole version-1 session: hello, the requests in order (an error stops
// them: after a worker failure the session goes on to shutdown, after any
// other error the worker is gone), then shutdown whenever the session is
// still usable. Every phase is recorded, failed ones included. Errors only
// when the worker cannot be resolved or started: resolve_worker's, or
// Code::Validation kind "worker_id".
Result<SessionReport> run_session(const SessionRun& run);

// Resolves and seals the worker, runs the hello handshake and a clean
// shutdown, and leaves no process behind. Errors: resolve_worker's;
// Code::Validation kind "worker_id" for a malformed `worker_id`; otherwise the
// session's typed error (SessionError::to_error()).
Result<NegotiatedSession> hello_worker(const HelloRun& run);

}  // namespace dot::metewand
