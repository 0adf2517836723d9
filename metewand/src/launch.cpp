// How dot-core starts a Metewand worker: resolved, sealed, hashed, exact environment (launch.h).
#include "dot/metewand/launch.h"
#include "dot/metewand/error_kinds.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "dot/base/orphan_sweep.h"
#include "dot/base/path_search.h"
#include "dot/metewand/worker_session.h"

namespace dot::metewand {

Result<ResolvedWorker> resolve_worker(const std::string& name) {
  ResolvedWorker w;
  DOT_ASSIGN_OR_RETURN(w.path, find_executable(name));
  DOT_ASSIGN_OR_RETURN(w.exe, seal_executable_file(w.path, fmt::format("worker {}", w.path), kMaxSealedWorkerBytes));
  w.identity = worker_identity_from_digest(w.exe.sha256);
  return w;
}

bool SessionReport::ok() const noexcept {
  return std::all_of(phases.begin(), phases.end(), [](const PhaseRecord& p) { return p.ok(); });
}

namespace {

// The environment a worker gets, and the sealed copy it runs from.
SessionOptions launch_options(const ResolvedWorker& worker, const std::vector<std::string>& command) {
  SessionOptions so;
  so.command.argv = command;
  so.command.exec_fd = worker.exe.fd.get();
  so.command.env = {"PATH=/usr/local/bin:/usr/bin:/bin"};
  return so;
}

}  // namespace

Result<SessionReport> run_session(const SessionRun& run) {
  using std::chrono::milliseconds;
  if (run.command.empty()) return make_error(metewand::ErrorKind::Worker, "no worker command given");
  DOT_ASSIGN_OR_RETURN(ResolvedWorker worker, resolve_worker(run.command.front()));
  SessionReport report;
  report.worker_path = worker.path;
  report.worker_id = run.worker_id.empty() ? worker.identity : run.worker_id;
  if (!is_worker_identity(report.worker_id))
    return make_error(
        metewand::ErrorKind::WorkerId,
        fmt::format("--worker-id {} is not mw1-resolved-worker- and 64 lowercase hex digits", report.worker_id));
  SessionOptions so = launch_options(worker, run.command);
  so.timeouts = run.timeouts;
  auto sweep = OrphanSweep::begin();
  if (!sweep.ok()) return std::move(sweep).error();
  auto session = WorkerSession::start(so);
  if (!session.ok()) return session.error().to_error();

  auto timed = [&](PhaseRecord record, auto&& body) {
    auto t0 = Clock::now();
    body(record);
    record.took = std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
    record.request = session->last_request();
    record.response = session->last_response();
    report.phases.push_back(std::move(record));
    return report.phases.back().ok();
  };
  PhaseRecord hello;
  hello.phase = Phase::Hello;
  bool go_on = timed(hello, [&](PhaseRecord& r) {
    auto n = session->hello(run.role, report.worker_id, run.selected);
    if (n.ok())
      r.negotiated = std::move(n).value();
    else
      r.error = n.error();
  });
  // A request as a plain reference: clang 14 cannot capture a structured binding.
  for (const auto& request : run.requests) {
    if (!go_on) break;
    PhaseRecord op;
    op.phase = phase_of(request.first);
    go_on = timed(op, [&](PhaseRecord& r) {
      auto done = session->request(request.first, request.second);
      if (done.ok())
        r.success = std::move(done).value();
      else
        r.error = done.error();
    });
  }
  if (session->usable()) {
    PhaseRecord shut;
    shut.phase = Phase::Shutdown;
    timed(shut, [&](PhaseRecord& r) {
      auto st = session->shutdown();
      if (st.ok())
        r.exit = *st;
      else
        r.error = st.error();
    });
  }
  session->discard();
  sweep->sweep();
  return report;
}

Result<NegotiatedSession> hello_worker(const HelloRun& run) {
  using std::chrono::milliseconds;
  if (run.command.empty()) return make_error(metewand::ErrorKind::Worker, "no worker command given");
  DOT_ASSIGN_OR_RETURN(ResolvedWorker worker, resolve_worker(run.command.front()));
  std::string worker_id = run.worker_id.empty() ? worker.identity : run.worker_id;
  if (!is_worker_identity(worker_id))
    return make_error(metewand::ErrorKind::WorkerId,
                      fmt::format("--worker-id {} is not mw1-resolved-worker- and 64 lowercase hex digits", worker_id));

  auto started = Clock::now();
  SessionOptions so;
  so.command.argv = run.command;
  so.command.exec_fd = worker.exe.fd.get();
  so.command.env = {"PATH=/usr/local/bin:/usr/bin:/bin"};
  so.timeouts.hello = run.timeout;
  so.timeouts.shutdown = run.timeout;

  // Declared before the session: it sweeps after the session is gone.
  auto sweep = OrphanSweep::begin();
  if (!sweep.ok()) return std::move(sweep).error();
  auto session = WorkerSession::start(so);
  if (!session.ok()) return session.error().to_error();
  auto negotiated = session->hello(run.role, worker_id, run.selected);
  std::optional<SessionError> failure;
  if (!negotiated.ok()) failure = negotiated.error();
  if (session->usable()) {
    auto left = run.timeout - std::chrono::duration_cast<milliseconds>(Clock::now() - started);
    auto done = session->shutdown(std::max(left, milliseconds(200)));
    if (!done.ok() && !failure) failure = done.error();
  }
  session->discard();
  sweep->sweep();
  if (failure) return failure->to_error();
  return std::move(negotiated).value();
}

}  // namespace dot::metewand
