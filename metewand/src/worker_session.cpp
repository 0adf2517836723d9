// WorkerSession (worker_session.h): the Metewand protocol's state machine
// over one dot::PluginChild (the process, its pipes, deadlines and logs).
#include "dot/metewand/worker_session.h"
#include "dot/base/error_kinds.h"
#include "dot/metewand/error_kinds.h"

#include <algorithm>

#include <fmt/format.h>

namespace dot::metewand {
namespace {

using std::chrono::milliseconds;

}  // namespace

constexpr std::string_view kPhaseNames[] = {"start",   "hello", "materialize", "prepare",
                                            "execute", "reset", "evaluate",    "shutdown"};

std::string_view phase_name(Phase phase) noexcept { return kPhaseNames[static_cast<std::size_t>(phase)]; }

std::optional<Phase> phase_from_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i < std::size(kPhaseNames); ++i)
    if (kPhaseNames[i] == name) return static_cast<Phase>(i);
  return std::nullopt;
}

Phase phase_of(Method method) noexcept {
  switch (method) {
    case Method::Hello:
      return Phase::Hello;
    case Method::Materialize:
      return Phase::Materialize;
    case Method::Prepare:
      return Phase::Prepare;
    case Method::Execute:
      return Phase::Execute;
    case Method::Reset:
      return Phase::Reset;
    case Method::Evaluate:
      return Phase::Evaluate;
    case Method::Shutdown:
      return Phase::Shutdown;
  }
  return Phase::Shutdown;
}

milliseconds PhaseTimeouts::of(Phase phase) const noexcept {
  switch (phase) {
    case Phase::Start:
    case Phase::Hello:
      return hello;
    case Phase::Materialize:
      return materialize;
    case Phase::Prepare:
      return prepare;
    case Phase::Execute:
      return execute;
    case Phase::Reset:
      return reset;
    case Phase::Evaluate:
      return evaluate;
    case Phase::Shutdown:
      return shutdown;
  }
  return hello;
}

void PhaseTimeouts::set_all(milliseconds limit) noexcept {
  hello = materialize = prepare = execute = reset = evaluate = shutdown = limit;
}

ErrorKind SessionError::error_kind() const {
  switch (kind) {
    case Kind::Frame:
      return frame ? frame->error_kind() : ErrorKind::Frame;
    case Kind::Correlation:
      return correlation ? correlation->error_kind() : ErrorKind::Correlation;
    case Kind::Message:
      return message_error ? message_error->error_kind() : ErrorKind::InvalidMessage;
    case Kind::Handshake:
      return handshake ? handshake->error_kind() : ErrorKind::Handshake;
    case Kind::WorkerFailure: {
      // The code is the worker's word, decoded against kFailureCodes.
      auto k = failure ? failure_kind(failure->code) : std::nullopt;
      return k ? *k : ErrorKind::WorkerFailure;
    }
    case Kind::Spawn:
      return ErrorKind::Spawn;
    case Kind::Io:
      return ErrorKind::Io;
    case Kind::Timeout:
      return ErrorKind::SessionTimeout;
    case Kind::ProtocolClosed:
      return ErrorKind::ProtocolClosed;
    case Kind::UnsuccessfulExit:
      return ErrorKind::UnsuccessfulExit;
    case Kind::SessionUnusable:
      return ErrorKind::SessionUnusable;
    case Kind::InvalidRole:
      return ErrorKind::InvalidRole;
    case Kind::CapabilityNotSelected:
      return ErrorKind::CapabilityNotSelected;
    case Kind::NotNegotiated:
      return ErrorKind::NotNegotiated;
  }
  return ErrorKind::SessionUnusable;
}

std::string SessionError::name() const { return std::string(dot::Kind(error_kind()).name()); }

std::string SessionError::message() const {
  switch (kind) {
    case Kind::Frame:
      return frame ? frame->message() : detail;
    case Kind::Correlation:
      return correlation ? correlation->message() : detail;
    case Kind::Message:
      return message_error ? message_error->message() : detail;
    case Kind::Handshake:
      return handshake ? handshake->message() : detail;
    case Kind::WorkerFailure:
      return failure ? fmt::format("the worker failed: {}", failure->message) : detail;
    case Kind::Timeout:
      return fmt::format("the worker did not finish the {} phase within {} ms", phase_name(phase), limit.count());
    case Kind::ProtocolClosed:
      return "the worker closed its protocol stream before answering";
    case Kind::UnsuccessfulExit:
      return fmt::format("the worker ended with {}", status.describe());
    case Kind::SessionUnusable:
      return "an earlier error discarded the worker";
    case Kind::InvalidRole:
    case Kind::CapabilityNotSelected:
    case Kind::NotNegotiated:
    case Kind::Spawn:
    case Kind::Io:
      return detail;
  }
  return detail;
}

Error SessionError::to_error() const {
  Code code = Code::Protocol;
  if (kind == Kind::Timeout)
    code = Code::Timeout;
  else if (kind == Kind::Handshake)
    code = Code::PluginIdentity;
  else if (kind == Kind::Spawn)
    code = Code::Io;
  else if (kind == Kind::InvalidRole || kind == Kind::CapabilityNotSelected || kind == Kind::NotNegotiated)
    code = Code::Validation;
  const dot::Kind k = error_kind();
  // The session's code over the variant's row (a frame's Io read past the
  // deadline is still the session's protocol failure here, as before).
  return make_error_as(code, k, fmt::format("{}: {} (phase {})", k.name(), message(), phase_name(phase)));
}

// The protocol stream as a ByteSource: waits for it under the current
// phase's deadline and drains the log streams while it waits.
class SessionSource final : public ByteSource {
 public:
  explicit SessionSource(WorkerSession::State* state) : s_(state) {}
  Result<std::size_t> read(char* buffer, std::size_t capacity) override;

 private:
  WorkerSession::State* s_;
};

struct WorkerSession::State {
  SessionOptions options;
  // The worker, its request and response pipes, its stdout and stderr logs,
  // and the current phase's deadline.
  PluginChild child;
  milliseconds phase_limit{0};
  Phase phase = Phase::Start;
  SessionSource source{this};
  std::unique_ptr<FrameReader> reader;
  RequestTracker tracker;
  bool usable = true;
  bool hello_sent = false;
  std::optional<NegotiatedSession> negotiated;
  std::string last_request, last_response;

  // Waits for the protocol stream (when `watch_stream`) or the worker's
  // exit until the deadline, draining the logs meanwhile. False once the
  // deadline passed.
  bool wait_for(bool watch_stream) {
    auto r = child.wait_output_or_exit(watch_stream);
    return r.ok() && *r;
  }

  Expected<ParsedFrame, SessionError> round_trip(jcs::Node message);

  void begin_phase(Phase p, milliseconds limit) {
    phase = p;
    phase_limit = limit;
    child.set_deadline(Clock::now() + limit);
  }

  // Shortens the deadline to at most `grace` from now.
  void cut_deadline(milliseconds grace) { child.set_deadline(std::min(child.deadline(), Clock::now() + grace)); }

  SessionError error(SessionError::Kind kind) const {
    SessionError e;
    e.kind = kind;
    e.phase = phase;
    e.limit = phase_limit;
    return e;
  }

  SessionError frame_error(FrameError f) const {
    if (f.kind == FrameError::Kind::Io && f.io_code == Code::Timeout) return error(SessionError::Kind::Timeout);
    SessionError e = error(SessionError::Kind::Frame);
    e.frame = std::move(f);
    return e;
  }

  // An error that ends the session: the worker is discarded first.
  SessionError failed(SessionError e) {
    discard();
    return e;
  }
  SessionError failed(CorrelationError c) {
    SessionError e = error(SessionError::Kind::Correlation);
    e.correlation = std::move(c);
    return failed(std::move(e));
  }
  SessionError failed(MessageError m) {
    SessionError e = error(SessionError::Kind::Message);
    e.message_error = std::move(m);
    return failed(std::move(e));
  }
  // A worker failure reply; it discards the worker when `fatal`.
  SessionError worker_failure(WorkerFailure f, bool fatal) {
    SessionError e = error(SessionError::Kind::WorkerFailure);
    e.failure = std::move(f);
    if (fatal) discard();
    return e;
  }

  Expected<Done, SessionError> write_request(std::string_view bytes) {
    Status w = child.write(bytes);
    if (w.ok()) return Done{};
    if (w.error().code == Code::Timeout) return error(SessionError::Kind::Timeout);
    SessionError e = error(SessionError::Kind::Io);
    e.detail = w.error().is(base::ErrorKind::Closed) ? std::string("the worker closed its request stream")
                                                     : fmt::format("cannot write the request: {}", w.error().detail);
    return e;
  }

  void discard() {
    usable = false;
    // Whatever the group wrote before it died is still worth keeping.
    child.kill_all(milliseconds(100));
  }
};

Result<std::size_t> SessionSource::read(char* buffer, std::size_t capacity) {
  auto n = s_->child.read(buffer, capacity);
  if (!n.ok() && n.error().code == Code::Timeout)
    return timeout_error(
        fmt::format("no response within the {} phase's {} ms", phase_name(s_->phase), s_->phase_limit.count()));
  return n;
}

WorkerSession::WorkerSession(std::unique_ptr<State> state) : s_(std::move(state)) {}
WorkerSession::WorkerSession(WorkerSession&&) noexcept = default;
WorkerSession& WorkerSession::operator=(WorkerSession&& o) noexcept {
  if (this != &o) {
    if (s_) s_->discard();
    s_ = std::move(o.s_);
  }
  return *this;
}
WorkerSession::~WorkerSession() {
  if (s_) s_->discard();
}

Expected<WorkerSession, SessionError> WorkerSession::start(const SessionOptions& options) {
  auto state = std::make_unique<State>();
  state->options = options;
  auto fail = [&](std::string detail) {
    SessionError e;
    e.kind = SessionError::Kind::Spawn;
    e.phase = Phase::Start;
    e.detail = std::move(detail);
    return e;
  };
  for (Phase p : {Phase::Hello, Phase::Materialize, Phase::Prepare, Phase::Execute, Phase::Reset, Phase::Evaluate,
                  Phase::Shutdown})
    if (options.timeouts.of(p) <= milliseconds(0))
      return fail(fmt::format("the {} phase has no positive deadline", phase_name(p)));
  PluginChildOptions co;
  co.name = "the worker";
  co.protocol_fds = {options.child_read_fd, options.child_write_fd};
  co.stderr_cap = co.stdout_log_cap = options.log_cap;
  co.stderr_keep = StreamCapture::Keep::First;
  SpawnOptions& so = co.spawn;
  so.argv = options.command.argv;
  so.path = options.command.path;
  so.exec_fd = options.command.exec_fd;
  so.env = options.command.env;
  so.env.push_back(fmt::format("{}={}", kReadFdVariable, options.child_read_fd));
  so.env.push_back(fmt::format("{}={}", kWriteFdVariable, options.child_write_fd));
  so.cwd = options.command.cwd;
  so.new_process_group = true;
  auto child = PluginChild::spawn(std::move(co));
  if (!child.ok()) return fail(child.error().message());
  state->child = std::move(child).value();
  state->reader = std::make_unique<FrameReader>(state->source);
  return WorkerSession(std::move(state));
}

// Sends `request` with the next id and reads its correlated response, under
// the deadline already set. Every error discards the worker.
Expected<ParsedFrame, SessionError> WorkerSession::State::round_trip(jcs::Node message) {
  auto id = tracker.begin_request();
  if (!id.ok()) return failed(std::move(id).error());
  message.set("id", jcs::Node::string(*id));
  auto line = encode_message(message);
  if (!line.ok()) return failed(std::move(line).error());
  last_request.assign(*line, 0, line->size() - 1);
  last_response.clear();
  auto wrote = write_request(*line);
  if (!wrote.ok()) return failed(std::move(wrote).error());
  auto frame = reader->read_frame();
  if (!frame.ok()) return failed(frame_error(std::move(frame).error()));
  if (!frame->has_value()) return failed(error(SessionError::Kind::ProtocolClosed));
  ParsedFrame parsed = std::move(**frame);
  last_response = std::string(parsed.document.source());
  auto rid = response_id(parsed.document.root());
  Expected<Done, CorrelationError> correlated =
      rid ? tracker.complete_response(*rid) : Expected<Done, CorrelationError>(CorrelationError{});
  if (!correlated.ok()) return failed(std::move(correlated).error());
  return parsed;
}

Expected<ParsedFrame, SessionError> WorkerSession::exchange(Phase phase, jcs::Node request) {
  State& s = *s_;
  if (!s.usable) return s.error(SessionError::Kind::SessionUnusable);
  s.begin_phase(phase, s.options.timeouts.of(phase));
  if (phase == Phase::Hello) s.hello_sent = true;
  return s.round_trip(std::move(request));
}

Expected<OperationSuccess, SessionError> WorkerSession::request(Method method, jcs::Node params) {
  State& s = *s_;
  const Phase phase = phase_of(method);
  auto local = [&](SessionError::Kind kind, std::string detail) {
    SessionError e;
    e.kind = kind;
    e.phase = phase;
    e.detail = std::move(detail);
    return e;
  };
  s.last_request.clear();
  s.last_response.clear();
  if (!s.usable) return local(SessionError::Kind::SessionUnusable, {});
  if (method == Method::Hello || method == Method::Shutdown)
    return local(SessionError::Kind::InvalidRole,
                 fmt::format("{} has its own call (hello(), shutdown())", method_name(method)));
  if (!s.negotiated)
    return local(SessionError::Kind::NotNegotiated, fmt::format("{} before a successful hello", method_name(method)));
  const WorkerRole role = s.negotiated->role;
  if (!role_accepts(role, method))
    return local(SessionError::Kind::InvalidRole,
                 fmt::format("the {} role does not take {}", role_name(role), method_name(method)));
  if (method == Method::Execute && std::find(s.negotiated->selected.begin(), s.negotiated->selected.end(),
                                             Capability::OneShot) == s.negotiated->selected.end())
    return local(SessionError::Kind::CapabilityNotSelected, "execute needs one_shot selected at hello");
  // The request is checked by the decoder a worker would use, so a request
  // we send is one the public schema admits; a bad one uses no id.
  OperationRequest request;
  request.method = method;
  request.id = "0";
  request.params = std::move(params);
  {
    auto bytes = encode_message(request.to_node());
    std::optional<MessageError> bad;
    if (!bytes.ok()) {
      bad = std::move(bytes).error();
    } else {
      auto doc = json::parse(*bytes);
      if (!doc.ok())
        bad = invalid_message(doc.error());
      else if (auto decoded = decode_operation_request(doc->root()); !decoded.ok())
        bad = std::move(decoded).error();
    }
    if (bad) {
      SessionError e = local(SessionError::Kind::Message, {});
      e.message_error = std::move(bad);
      return e;
    }
  }
  s.begin_phase(phase, s.options.timeouts.of(phase));
  auto frame = s.round_trip(request.to_node());
  if (!frame.ok()) return std::move(frame).error();
  auto reply = decode_operation_reply(method, frame->document.root());
  if (!reply.ok()) return s.failed(std::move(reply).error());
  // A worker that could not reset cannot promise clean state: discarded.
  if (auto* failure = std::get_if<WorkerFailure>(&*reply))
    return s.worker_failure(std::move(*failure), method == Method::Reset);
  return std::get<OperationSuccess>(std::move(*reply));
}

Expected<NegotiatedSession, SessionError> WorkerSession::hello(WorkerRole role, std::string worker_id,
                                                               std::span<const Capability> selected) {
  State& s = *s_;
  HelloRequest request;
  request.role = role;
  request.worker_id = std::move(worker_id);
  // exchange() sets the id from the tracker; once the reply is correlated
  // its id is the request's.
  auto frame = exchange(Phase::Hello, request.to_node());
  if (!frame.ok()) return std::move(frame).error();
  json::Value root = frame->document.root();
  request.id = std::string(*response_id(root));
  auto reply = decode_hello_reply(root);
  if (!reply.ok()) return s.failed(std::move(reply).error());
  if (auto* failure = std::get_if<WorkerFailure>(&*reply)) return s.worker_failure(std::move(*failure), false);
  auto negotiated = validate_hello_response(request, std::get<HelloResponse>(*reply), selected);
  if (!negotiated.ok()) {
    SessionError e = s.error(SessionError::Kind::Handshake);
    e.handshake = std::move(negotiated).error();
    return s.failed(std::move(e));
  }
  s.negotiated = *negotiated;
  return std::move(negotiated).value();
}

Expected<ExitStatus, SessionError> WorkerSession::shutdown(std::optional<milliseconds> limit) {
  State& s = *s_;
  s.last_request.clear();
  s.last_response.clear();
  if (!s.usable) {
    s.discard();
    return s.error(SessionError::Kind::SessionUnusable);
  }
  s.begin_phase(Phase::Shutdown, limit.value_or(s.options.timeouts.shutdown));
  // After a hello, `shutdown` is the final request for every role; its
  // acknowledgment counts against the same deadline as the exit. A worker
  // that never got a hello only needs its request stream closed.
  if (s.hello_sent) {
    OperationRequest request;
    request.method = Method::Shutdown;
    auto frame = s.round_trip(request.to_node());
    if (!frame.ok()) return std::move(frame).error();
    auto reply = decode_operation_reply(Method::Shutdown, frame->document.root());
    if (!reply.ok()) return s.failed(std::move(reply).error());
    if (auto* failure = std::get_if<WorkerFailure>(&*reply)) return s.worker_failure(std::move(*failure), true);
  }
  s.child.close_input();
  bool protocol_ended = false;
  // Anything the worker still says is a response nobody asked for.
  auto read_leftover = [&]() -> std::optional<SessionError> {
    auto frame = s.reader->read_frame();
    if (!frame.ok()) return s.frame_error(std::move(frame).error());
    if (!frame->has_value()) {
      protocol_ended = true;
      return std::nullopt;
    }
    auto rid = response_id((*frame)->document.root());
    CorrelationError c;
    if (rid) {
      auto done = s.tracker.complete_response(*rid);
      c = done.ok() ? CorrelationError{CorrelationError::Kind::ExtraResponse, {}, std::string(*rid)}
                    : std::move(done).error();
    }
    SessionError e = s.error(SessionError::Kind::Correlation);
    e.correlation = std::move(c);
    return e;
  };
  // Wait for the worker to exit, watching the protocol stream meanwhile. A
  // descendant may hold the stream open, so its end is not waited for here.
  std::optional<ExitStatus> status;
  while (!(status = s.child.try_wait())) {
    if (!s.wait_for(!protocol_ended)) break;
    if (protocol_ended) continue;
    if (s.child.output_waiting()) {
      if (auto e = read_leftover()) return s.failed(std::move(*e));
    }
  }
  if (status) {
    // The group goes with its leader; what it wrote is still read. A process
    // that left the group may hold the stream open: a short grace, then the
    // stream is left alone (a host sweeps such orphans; see kill_orphans).
    s.child.kill_and_reap();
    s.cut_deadline(milliseconds(100));
    while (!protocol_ended) {
      if (auto e = read_leftover()) {
        if (e->kind == SessionError::Kind::Timeout) break;
        return s.failed(std::move(*e));
      }
    }
  }
  if (!status) return s.failed(s.error(SessionError::Kind::Timeout));
  s.usable = false;
  s.child.drain_logs_until(std::min(s.child.deadline(), Clock::now() + milliseconds(200)));
  s.discard();
  if (!status->success()) {
    SessionError e = s.error(SessionError::Kind::UnsuccessfulExit);
    e.status = *status;
    return e;
  }
  return *status;
}

WorkerSession::Probe WorkerSession::probe_raw(std::string_view bytes) {
  State& s = *s_;
  Probe out;
  if (!s.usable) return out;
  s.begin_phase(Phase::Shutdown, s.options.timeouts.shutdown);
  // A worker that stops reading (and exits) fails this write: that is an
  // answer too, so the outcome is what follows.
  (void)s.write_request(bytes);
  s.child.close_input();
  bool stream_open = true;
  std::optional<ExitStatus> status;
  while (!(status = s.child.try_wait())) {
    if (!s.wait_for(stream_open)) break;
    while (stream_open && s.child.output_waiting()) {
      auto line = s.reader->next_line();
      if (!line.ok()) {
        // A timed-out read is the deadline, not the worker's framing.
        if (line.error().kind != FrameError::Kind::Io) out.frame_error = std::move(line).error();
        stream_open = false;
      } else if (!line->has_value()) {
        stream_open = false;
      } else {
        out.lines.emplace_back((*line)->bytes);
      }
    }
  }
  if (status) {
    // What it wrote before exiting is still read, briefly.
    s.cut_deadline(milliseconds(100));
    while (stream_open) {
      auto line = s.reader->next_line();
      if (!line.ok()) {
        if (line.error().kind != FrameError::Kind::Io) out.frame_error = std::move(line).error();
        break;
      }
      if (!line->has_value()) break;
      out.lines.emplace_back((*line)->bytes);
    }
  }
  out.exit = status;
  s.discard();
  return out;
}

void WorkerSession::discard() {
  if (s_) s_->discard();
}

bool WorkerSession::usable() const noexcept { return s_ && s_->usable; }
bool WorkerSession::running() const noexcept { return s_ && s_->child.running(); }
pid_t WorkerSession::pid() const noexcept { return s_ ? s_->child.pid() : -1; }
const StreamCapture& WorkerSession::stdout_log() const noexcept { return s_->child.stdout_log(); }
const StreamCapture& WorkerSession::stderr_log() const noexcept { return s_->child.stderr_log(); }
const std::optional<NegotiatedSession>& WorkerSession::negotiated() const noexcept { return s_->negotiated; }
const std::string& WorkerSession::last_request() const noexcept { return s_->last_request; }
const std::string& WorkerSession::last_response() const noexcept { return s_->last_response; }

}  // namespace dot::metewand
