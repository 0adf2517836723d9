// The host side of one DPP plugin invocation, one call at a time (host_session.h).
#include "dot/dpp/host_session.h"
#include "dot/dpp/error_kinds.h"

#include <optional>
#include <utility>

#include <fmt/format.h>

#include "dot/base/plugin_child.h"

#include "dot/dpp/body.h"
#include "dot/dpp/frame.h"
#include "dot/dpp/jsonrpc.h"
#include "fields.h"

namespace dot::dpp {
namespace {

enum class Phase : std::uint8_t { Initialize, Plan, Materialize, Validate, Shutdown, Finish, Ended, Failed };

Error protocol(ErrorKind kind, std::string detail) { return make_error(kind, std::move(detail)); }

}  // namespace

struct HostSession::Impl {
  // The plugin's stdout as a byte source: waits with the session deadline,
  // drains stderr while it waits (a plugin blocked on a full stderr pipe must
  // not deadlock us), and enforces the stdout cap at the exact byte.
  class Stdout final : public ByteSource {
   public:
    explicit Stdout(Impl& s) : s_(s) {}
    Result<std::size_t> read(char* buf, std::size_t max) override { return s_.read_stdout(buf, max); }

   private:
    Impl& s_;
  };

  explicit Impl(HostSessionOptions o) : opts(std::move(o)) {}

  HostSessionOptions opts;
  // The process, its pipes and the session deadline. Its stderr keeps the
  // first stderr_cap bytes; one more fails the session.
  PluginChild child;
  Phase phase = Phase::Initialize;
  std::optional<Error> failure;
  Stdout source{*this};
  FrameReader reader{source, opts.limits.max_frame_bytes};
  std::string waiting_for = "dot.initialize";
  // General profile.
  bool log_negotiated = false;
  std::vector<LogEntry> logs;
  // "batches" negotiated: the dot.operations / dot.artifacts batches read
  // while dot.plan / dot.materialize is outstanding, until its result.
  bool batches_negotiated = false;
  bool plan_digests = false;
  general::Batched<general::Operation> operation_batches;
  HostSession::OperationSink take_operations;  // plan()'s sink, while dot.plan is outstanding
  general::Batched<general::Artifact> artifact_batches;
  HostSession::ArtifactSink take_artifacts;  // materialize_general()'s sink, while dot.materialize is outstanding
  std::optional<PluginErrorInfo> plugin_error;

  bool general() const noexcept { return opts.profile == Profile::General; }

  Error timeout() {
    return timeout_error(
        fmt::format("the plugin passed its {} ms deadline waiting for {}{}; dot-core killed its "
                    "process group with SIGKILL",
                    opts.limits.deadline.count(), waiting_for, general() ? " (it sent nothing for that long)" : ""));
  }

  // A wait for the plugin begins: core is about to write a request, has
  // read a frame, or waits for the exit. The general profile's deadline is
  // the longest the plugin may keep core waiting (docs/spec/dpp-general.md,
  // "The run"), so its clock starts again: a plan of 100,000 files may take
  // longer than that as a whole and still send a frame every few seconds.
  // The hello profile's deadline is the whole run's. Returns whether the
  // deadline has already passed (only ever the hello profile's).
  bool begin_wait() {
    if (!general()) return child.deadline_passed();
    child.set_deadline(Clock::now() + opts.limits.deadline);
    return false;
  }

  // The failure as the plugin's death by a signal, when that is what it was:
  // the signal (and the layer that sent it) explains more than the closed pipe
  // it left behind. Deadline and host errors are the host's own doing.
  Error attribute_death(Error e) {
    if (e.code == Code::Timeout || e.code == Code::Internal) return e;
    auto d = child.signal_death(e.is(dpp::ErrorKind::Eof) || e.is(dpp::ErrorKind::EarlyEof),
                                opts.containment ? &*opts.containment : nullptr);
    if (!d) return e;
    return make_error(d->kind, fmt::format("the plugin was killed by {} while core waited for {}: {}", d->signal,
                                           waiting_for, d->cause));
  }

  Error stderr_limit() {
    return protocol(dpp::ErrorKind::StderrLimit,
                    fmt::format("the plugin wrote more than {} bytes on stderr", opts.limits.stderr_cap));
  }

  // The base layer's errors in this protocol's words: the deadline is the
  // session's (dot-core killed the group), the log limit is stderr's.
  Error local(Error e) {
    if (e.code == Code::Timeout) return timeout();
    if (e.is(base::ErrorKind::CaptureLimit)) return stderr_limit();
    return e;
  }

  Result<std::size_t> read_stdout(char* buf, std::size_t max) {
    auto n = child.read(buf, max);
    if (!n.ok()) return local(std::move(n).error());
    if (child.over_output_cap())
      return protocol(dpp::ErrorKind::StdoutLimit,
                      fmt::format("the plugin wrote more than {} bytes on stdout", opts.limits.stdout_cap));
    return n;
  }

  // Output the plugin wrote before it was asked (the reader holds none after
  // a valid frame, so any byte that is already readable is unsolicited).
  Status check_unsolicited() {
    Error unsolicited = protocol(dpp::ErrorKind::Unsolicited,
                                 fmt::format("the plugin wrote output before it was sent {}", waiting_for));
    if (reader.buffered() != 0) return unsolicited;
    if (!child.output_waiting()) return {};
    char buf[4096];
    auto n = child.read_now(buf, sizeof buf);
    if (n.ok() && *n > 0) return unsolicited;
    return {};
  }

  // Each request whole, or (conformance) one byte at a time, each once the
  // plugin has read the one before.
  Status write_stdin(std::string_view bytes) {
    Status w = opts.bytewise ? child.write_paced(bytes) : child.write(bytes);
    // The plugin no longer reads its stdin (it closed it, or it exited).
    // Whether the write or the plugin's exit came first is a race; the
    // verdict must not be. So a refused write is not a verdict: the caller
    // reads what the plugin left on stdout exactly as after a delivered
    // request (an answer, garbage, or EOF followed by its exit status).
    if (w.ok() || w.error().is(base::ErrorKind::Closed)) return {};
    return local(std::move(w).error());
  }

  // Kills the group, reaps it and every orphan, collects what stderr still
  // holds. Safe to call more than once.
  void kill_all() noexcept { child.kill_all(); }

  Error fail(Error e) {
    if (!failure) {
      e = attribute_death(std::move(e));
      failure = e;
    }
    phase = Phase::Failed;
    kill_all();
    return e;
  }

  // A session method may be called in its phase and for its profile only
  // (`prof` empty: either profile).
  Status expect_phase(Phase p, Method m, std::optional<Profile> prof = std::nullopt) {
    if (phase == Phase::Failed) return *failure;
    if (prof && *prof != opts.profile)
      return make_error(dpp::ErrorKind::ProfileMisuse,
                        fmt::format("dpp session: {} called with the other profile's types", method_name(m)));
    if (phase != p)
      return make_error(dpp::ErrorKind::OrderMisuse,
                        fmt::format("dpp session: {} called out of order", method_name(m)));
    return {};
  }

  // A batch of the list request `m` answers ("batches" negotiated): its
  // own method during its own request only, decoded and counted with the
  // batches before it.
  Status accept_batch(Method m, const general::Reply& reply) {
    const bool operations = reply.method == general::kOperationsMethod;
    // The request first: during dot.initialize negotiation is not settled,
    // and a batch is out of place there whatever the echo will say.
    if (m != (operations ? Method::Plan : Method::Materialize))
      return protocol(dpp::ErrorKind::NotificationMethod,
                      fmt::format("the plugin sent {} during {}; it belongs to {}", reply.method, waiting_for,
                                  operations ? "dot.plan" : "dot.materialize"));
    if (!batches_negotiated)
      return protocol(
          dpp::ErrorKind::BatchNotNegotiated,
          fmt::format("the plugin sent {} during {} without negotiating batches", reply.method, waiting_for));
    Status st = operations ? general::decode_operations_batch(reply.params, opts.general_limits, plan_digests,
                                                              operation_batches)
                           : general::decode_artifacts_batch(reply.params, opts.general_limits, artifact_batches);
    if (!st.ok()) {
      Error e = st.error();
      e.detail = fmt::format("{} during {}: {}", reply.method, waiting_for, e.detail);
      return e;
    }
    if (operations && take_operations) hand_on(operation_batches, take_operations);
    if (!operations && take_artifacts) hand_on(artifact_batches, take_artifacts);
    return {};
  }

  // The batch read so far to the caller's sink, counted as handed on; the
  // list keeps its capacity for the next batch.
  template <class T>
  static void hand_on(general::Batched<T>& batches, const HostSession::BatchSink<T>& take) {
    take(batches.items);
    batches.handed_on += batches.items.size();
    batches.items.clear();
  }

  // A notification read while `m` is outstanding (general profile): dot.log,
  // or a batch.
  Status accept_notification(Method m, const general::Reply& reply) {
    if (reply.method == general::kOperationsMethod || reply.method == general::kArtifactsMethod)
      return accept_batch(m, reply);
    if (reply.method != general::kLogMethod)
      return protocol(dpp::ErrorKind::NotificationMethod,
                      fmt::format("the plugin sent a \"{}\" notification during {}; only dot.log and the "
                                  "batches of the list it answers are allowed",
                                  fields::excerpt(reply.method), waiting_for));
    // During dot.initialize negotiation is not settled yet: initialize()
    // decides once the echo is read.
    if (m != Method::Initialize && !log_negotiated)
      return protocol(dpp::ErrorKind::LogNotNegotiated,
                      fmt::format("the plugin sent dot.log during {} without negotiating log", waiting_for));
    auto log = general::decode_log_params(reply.params);
    if (!log.ok()) {
      Error e = log.error();
      e.detail = fmt::format("dot.log during {}: {}", waiting_for, e.detail);
      return e;
    }
    if (logs.size() >= opts.general_limits.max_log_messages)
      return protocol(dpp::ErrorKind::LogLimit,
                      fmt::format("the plugin sent more than {} dot.log messages (the negotiated "
                                  "max_log_messages) during {}",
                                  opts.general_limits.max_log_messages, waiting_for));
    logs.push_back(LogEntry{std::move(log->level), std::move(log->message), m});
    if (m != Method::Initialize && opts.on_log) opts.on_log(logs.back());
    return {};
  }

  Error plugin_error_of(Method m, general::ErrorObject e) {
    Error out = make_error(
        dpp::ErrorKind::ErrorResponse,
        fmt::format("plugin {} answered {} with error {}: {}", opts.plugin_id, method_name(m), e.code, e.message));
    plugin_error = PluginErrorInfo{m, std::move(e)};
    return out;
  }

  // One request/response exchange; the result's JSON lives in `doc`.
  Result<json::Value> call(Method m, const jcs::Node& params, json::Document& doc) {
    waiting_for = std::string(method_name(m));
    if (begin_wait()) return fail(timeout());
    {
      // The request's bytes go once written, before the answer is read (a
      // dot.plan naming 100,000 managed paths of 64 bytes is 7 MB, twice).
      auto body = encode_request(method_id(m), m, params);
      if (!body.ok()) return fail(body.error());
      auto frame_bytes = encode_frame(*body, opts.limits.max_frame_bytes);
      std::string().swap(*body);
      if (!frame_bytes.ok()) return fail(frame_bytes.error());
      std::string bytes = opts.deliver ? opts.deliver(m, std::move(*frame_bytes)) : std::move(*frame_bytes);
      const bool sent_ahead = opts.deliver && bytes.empty();
      // In the general profile whatever is read after a request is written
      // belongs to it, so only the window before dot.initialize is checked.
      if (!sent_ahead && (!general() || m == Method::Initialize)) {
        if (auto st = check_unsolicited(); !st.ok()) return fail(st.error());
      }
      if (auto st = write_stdin(bytes); !st.ok()) return fail(st.error());
    }
    for (;;) {
      auto frame = reader.next();
      if (!frame.ok()) {
        Error e = frame.error();
        if (e.code == Code::Protocol && e.is(dpp::ErrorKind::EarlyEof))
          e.detail = fmt::format("{} (in the response to {})", e.detail, waiting_for);
        return fail(std::move(e));
      }
      if (!frame->has_value())
        return fail(
            protocol(dpp::ErrorKind::Eof, fmt::format("the plugin closed stdout without answering {}", waiting_for)));
      auto parsed = parse_body((*frame)->body, (*frame)->body_offset, opts.limits.max_frame_bytes);
      if (!parsed.ok()) return fail(parsed.error());
      doc = std::move(parsed).value();
      if (!general()) {
        auto result = decode_response(doc, method_id(m), m);
        if (!result.ok()) return fail(result.error());
        return result;
      }
      auto reply = general::decode_reply(doc, method_id(m), m);
      if (!reply.ok()) return fail(reply.error());
      switch (reply->kind) {
        case general::Reply::Kind::Result:
          return reply->result;
        case general::Reply::Kind::Error:
          return fail(plugin_error_of(m, std::move(reply->error)));
        case general::Reply::Kind::Notification:
          if (auto st = accept_notification(m, *reply); !st.ok()) return fail(st.error());
          (void)begin_wait();  // general only: the clock starts again, nothing has passed
          break;
      }
    }
  }

  template <typename T>
  Result<T> checked(Result<T> r) {
    if (!r.ok()) {
      Error e = r.error();
      e.detail = fmt::format("{} result: {}", waiting_for, e.detail);
      return fail(std::move(e));
    }
    return r;
  }

  Status expect_valid(Result<ValidatedResult> r) {
    auto v = checked(std::move(r));
    if (!v.ok()) return v.error();
    if (!v->valid)
      return fail(
          protocol(dpp::ErrorKind::NotValid, fmt::format("the plugin answered {} with valid:false", waiting_for)));
    return {};
  }

  Status finish_session() {
    waiting_for = "the end of the plugin's stdout after dot.shutdown";
    DOT_ASSIGN_OR_RETURN(ExitStatus status, close_and_reap("its dot.shutdown response"));
    if (!status.success())
      return fail(protocol(
          dpp::ErrorKind::ExitStatus,
          fmt::format("the plugin ended with {} after a clean session; exit 0 is required", status.describe())));
    return {};
  }

  // Closes stdin; then stdout must reach EOF with nothing more written after
  // `after` (trailing output), the plugin exit leaving no survivor, and
  // stderr stay within its cap. Its exit status, whatever it is.
  Result<ExitStatus> close_and_reap(std::string_view after) {
    child.close_input();
    if (begin_wait()) return fail(timeout());
    const std::string trailing = fmt::format("the plugin wrote output after {}", after);
    // Trailing output: any byte after the shutdown response.
    if (reader.buffered() != 0) return fail(protocol(dpp::ErrorKind::TrailingOutput, trailing));
    std::optional<ExitStatus> status;
    std::size_t survivors = 0;
    while (!child.output_ended() || !status) {
      if (child.deadline_passed()) return fail(timeout());
      auto ready = child.wait_output_or_exit(true);
      if (!ready.ok()) return fail(local(std::move(ready).error()));
      if (!child.output_ended()) {
        const std::uint64_t at = child.output_total();
        char buf[4096];
        auto got = child.read_now(buf, sizeof buf);
        if (got.ok() && *got > 0) return fail(make_parse_error(dpp::ErrorKind::TrailingOutput, at, trailing));
      }
      if (!status) {
        status = child.try_wait();
        // Running leftovers (a setsid grandchild holding stdout open, too)
        // are survivors.
        if (status) survivors += child.kill_survivors();
      }
    }
    // Once everything is dead, stderr reaches EOF: keep the rest of it.
    child.drain_logs_until(child.deadline());
    if (child.stderr_log().over_limit()) return fail(stderr_limit());
    if (survivors != 0)
      return fail(protocol(dpp::ErrorKind::Survivor, fmt::format("the plugin left {} process{} running after it exited",
                                                                 survivors, survivors == 1 ? "" : "es")));
    kill_all();
    phase = Phase::Ended;
    return *status;
  }

  Result<json::Document> probe(std::string_view bytes) {
    waiting_for = "the answer to a request core itself never sends";
    if (begin_wait()) return fail(timeout());
    if (auto st = write_stdin(bytes); !st.ok()) return fail(st.error());
    auto frame = reader.next();
    if (!frame.ok()) return fail(frame.error());
    if (!frame->has_value())
      return fail(protocol(dpp::ErrorKind::Eof, fmt::format("the plugin closed stdout without {}", waiting_for)));
    auto parsed = parse_body((*frame)->body, (*frame)->body_offset, opts.limits.max_frame_bytes);
    if (!parsed.ok()) return fail(parsed.error());
    return parsed;
  }
};

HostSession::HostSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HostSession::HostSession(HostSession&&) noexcept = default;
HostSession& HostSession::operator=(HostSession&& o) noexcept {
  if (this != &o) {
    abort();
    impl_ = std::move(o.impl_);
  }
  return *this;
}
HostSession::~HostSession() { abort(); }

Result<HostSession> HostSession::start(HostSessionOptions options) {
  if (options.exec_fd < 0) return make_error(dpp::ErrorKind::Options, "dpp session: no executable descriptor");
  if (options.stage_dir.empty() || options.stage_dir[0] != '/')
    return make_error(dpp::ErrorKind::Options, "dpp session: the stage directory must be an absolute path");

  if (options.profile == Profile::General) options.limits = SessionLimits::of(options.general_limits);
  if (options.deadline_override.count() > 0) options.limits.deadline = options.deadline_override;
  auto impl = std::make_unique<Impl>(std::move(options));
  const HostSessionOptions& o = impl->opts;
  PluginChildOptions co;
  co.spawn = o.spawn;
  SpawnOptions& so = co.spawn;
  if (so.argv.empty()) so.argv = {"dot-plugin"};
  so.path.clear();
  so.exec_fd = o.exec_fd;
  so.env = {"LANG=C", "DOT_STAGE_ROOT=" + o.stage_dir};
  // The id the plugin runs under, for a plugin registered under several
  // (dot-mirror): what it echoes. Not in the params, whose members a strict
  // plugin checks (docs/spec/dpp-general.md, "Transport").
  if (o.profile == Profile::General && general::check_plugin_id(o.plugin_id).ok())
    so.env.push_back("DOT_PLUGIN_ID=" + o.plugin_id);
  so.env.insert(so.env.end(), o.extra_env.begin(), o.extra_env.end());
  so.cwd = o.stage_dir;
  if (!so.new_session) so.new_process_group = true;
  co.name = "the plugin";
  co.stderr_cap = o.limits.stderr_cap;
  co.stderr_keep = StreamCapture::Keep::FirstOrFail;
  co.output_cap = o.limits.stdout_cap;
  co.paced_input = o.bytewise;
  co.sweep_orphans = true;  // before the spawn: a setsid grandchild comes back to us

  const Deadline deadline = Clock::now() + o.limits.deadline;
  DOT_ASSIGN_OR_RETURN(impl->child, PluginChild::spawn(std::move(co)));
  impl->child.set_deadline(deadline);
  return HostSession(std::move(impl));
}

Result<InitializeResult> HostSession::initialize(const InitializeParams& params) {
  DOT_TRY(impl_->expect_phase(Phase::Initialize, Method::Initialize, Profile::Hello));
  json::Document doc;
  DOT_ASSIGN_OR_RETURN(json::Value v, impl_->call(Method::Initialize, to_node(params), doc));
  auto r = impl_->checked(decode_initialize_result(v));
  if (r.ok()) impl_->phase = Phase::Plan;
  return r;
}

Result<PlanResult> HostSession::plan() {
  DOT_TRY(impl_->expect_phase(Phase::Plan, Method::Plan, Profile::Hello));
  json::Document doc;
  DOT_ASSIGN_OR_RETURN(json::Value v, impl_->call(Method::Plan, jcs::Node::object(), doc));
  auto r = impl_->checked(decode_plan_result(v));
  if (r.ok()) impl_->phase = Phase::Materialize;
  return r;
}

Result<MaterializeResult> HostSession::materialize() {
  DOT_TRY(impl_->expect_phase(Phase::Materialize, Method::Materialize, Profile::Hello));
  json::Document doc;
  DOT_ASSIGN_OR_RETURN(json::Value v,
                       impl_->call(Method::Materialize, to_node(MaterializeParams{impl_->opts.stage_dir}), doc));
  auto r = impl_->checked(decode_materialize_result(v));
  if (r.ok()) impl_->phase = Phase::Validate;
  return r;
}

Result<general::InitializeResult> HostSession::initialize(const general::InitializeParams& params) {
  DOT_TRY(impl_->expect_phase(Phase::Initialize, Method::Initialize, Profile::General));
  if (params.limits != impl_->opts.general_limits)
    return make_error(dpp::ErrorKind::LimitsMisuse, "dpp session: dot.initialize must send the session's limits");
  json::Document doc;
  DOT_ASSIGN_OR_RETURN(json::Value v, impl_->call(Method::Initialize, general::to_node(params), doc));
  auto r = impl_->checked(general::decode_initialize_result(v));
  if (!r.ok()) return r;
  // Negotiated: core offered log and the echo carries it after the first
  // four (a wrong echo otherwise fails general::check_identity anyway).
  const auto& offered = params.capabilities;
  const auto& echoed = r->capabilities;
  impl_->log_negotiated = std::find(offered.begin(), offered.end(), general::kLogCapability) != offered.end() &&
                          echoed.size() >= 5 && echoed[4] == general::kLogCapability;
  // Where "batches" stands in the echo is general::check_identity's to judge.
  impl_->batches_negotiated = std::find(offered.begin(), offered.end(), general::kBatchesCapability) != offered.end() &&
                              echoed.size() > 4 &&
                              std::find(echoed.begin() + 4, echoed.end(), general::kBatchesCapability) != echoed.end();
  if (!impl_->logs.empty()) {
    if (!impl_->log_negotiated)
      return impl_->fail(protocol(dpp::ErrorKind::LogNotNegotiated,
                                  "the plugin sent dot.log during dot.initialize without negotiating log"));
    if (impl_->opts.on_log)
      for (const LogEntry& e : impl_->logs) impl_->opts.on_log(e);
  }
  impl_->phase = Phase::Plan;
  return r;
}

Result<general::PlanResult> HostSession::plan(const general::PlanParams& params, bool digests, OperationSink take) {
  DOT_TRY(impl_->expect_phase(Phase::Plan, Method::Plan, Profile::General));
  json::Document doc;
  impl_->plan_digests = digests;
  impl_->take_operations = std::move(take);
  auto v = impl_->call(Method::Plan, general::plan_params_node(params), doc);
  OperationSink sink = std::exchange(impl_->take_operations, {});
  if (!v.ok()) return std::move(v).error();
  auto r = impl_->checked(general::decode_plan_result(*v, impl_->opts.general_limits, digests,
                                                      std::exchange(impl_->operation_batches, {})));
  if (!r.ok()) return r;
  if (sink) {
    general::Batched<general::Operation> last{std::move(r->operations)};
    Impl::hand_on(last, sink);
  }
  impl_->phase = Phase::Materialize;
  return r;
}

Result<general::MaterializeResult> HostSession::materialize_general(
    std::optional<std::span<const std::string_view>> paths, ArtifactSink take) {
  DOT_TRY(impl_->expect_phase(Phase::Materialize, Method::Materialize, Profile::General));
  json::Document doc;
  impl_->take_artifacts = std::move(take);
  auto v = impl_->call(Method::Materialize, general::materialize_params_node(paths, impl_->opts.stage_dir), doc);
  ArtifactSink sink = std::exchange(impl_->take_artifacts, {});
  if (!v.ok()) return std::move(v).error();
  auto r = impl_->checked(
      general::decode_materialize_result(*v, impl_->opts.general_limits, std::exchange(impl_->artifact_batches, {})));
  if (!r.ok()) return r;
  if (sink) {
    general::Batched<general::Artifact> last{std::move(r->artifacts)};
    Impl::hand_on(last, sink);
  }
  impl_->phase = Phase::Validate;
  return r;
}

Status HostSession::validate() {
  DOT_TRY(impl_->expect_phase(Phase::Validate, Method::Validate));
  json::Document doc;
  DOT_ASSIGN_OR_RETURN(json::Value v, impl_->call(Method::Validate, jcs::Node::object(), doc));
  DOT_TRY(impl_->expect_valid(decode_validated_result(v)));
  impl_->phase = Phase::Shutdown;
  return {};
}

Status HostSession::shutdown() {
  DOT_TRY(impl_->expect_phase(Phase::Shutdown, Method::Shutdown));
  json::Document doc;
  DOT_ASSIGN_OR_RETURN(json::Value v, impl_->call(Method::Shutdown, jcs::Node::object(), doc));
  DOT_TRY(impl_->expect_valid(decode_validated_result(v)));
  impl_->phase = Phase::Finish;
  return {};
}

Status HostSession::finish() {
  if (impl_->phase == Phase::Failed) return *impl_->failure;
  if (impl_->phase != Phase::Finish)
    return make_error(dpp::ErrorKind::OrderMisuse, "dpp session: finish() called before a successful dot.shutdown");
  return impl_->finish_session();
}

Result<json::Document> HostSession::probe(std::string_view bytes) {
  if (impl_->phase == Phase::Failed) return *impl_->failure;
  if (impl_->phase == Phase::Finish || impl_->phase == Phase::Ended)
    return make_error(dpp::ErrorKind::OrderMisuse, "dpp session: probe() after dot.shutdown");
  return impl_->probe(bytes);
}

Result<ExitStatus> HostSession::close_early() {
  if (impl_->phase == Phase::Failed) return *impl_->failure;
  if (impl_->phase == Phase::Finish || impl_->phase == Phase::Ended)
    return make_error(dpp::ErrorKind::OrderMisuse, "dpp session: close_early() after dot.shutdown; use finish()");
  impl_->waiting_for = "the end of the plugin's stdout after stdin was closed before dot.shutdown";
  return impl_->close_and_reap("core closed its stdin before dot.shutdown");
}

void HostSession::abort() noexcept {
  if (!impl_) return;
  if (impl_->phase != Phase::Ended && impl_->phase != Phase::Failed) {
    impl_->failure = make_error(dpp::ErrorKind::Aborted, "dpp session: aborted by the host");
    impl_->phase = Phase::Failed;
  }
  impl_->kill_all();
}

bool HostSession::log_negotiated() const noexcept { return impl_->log_negotiated; }
const std::vector<LogEntry>& HostSession::logs() const noexcept { return impl_->logs; }
const std::optional<PluginErrorInfo>& HostSession::plugin_error() const noexcept { return impl_->plugin_error; }

SessionLimits SessionLimits::of(const general::Limits& l) {
  SessionLimits s;
  s.deadline = std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(l.deadline_ms));
  s.stdout_cap = static_cast<std::size_t>(l.max_stdout_bytes);
  s.stderr_cap = static_cast<std::size_t>(l.max_stderr_bytes);
  s.max_frame_bytes = static_cast<std::size_t>(l.max_frame_bytes);
  return s;
}

const std::string& HostSession::stderr_bytes() const noexcept { return impl_->child.stderr_log().bytes(); }
std::uint64_t HostSession::stdout_bytes() const noexcept { return impl_->child.output_total(); }
pid_t HostSession::pid() const noexcept { return impl_->child.pid(); }
bool HostSession::ended() const noexcept { return impl_->phase == Phase::Ended || impl_->phase == Phase::Failed; }

namespace {
constexpr std::uint64_t kCpuMsPerOperation = 5;
}  // namespace

SandboxLimits containment_limits(Profile profile) {
  SandboxLimits limits;
  if (profile == Profile::General) {
    const general::Limits& g = general::kLimits;
    limits.file_size = g.max_file_bytes;
    // The deadline bounds each wait, not the run (begin_wait), so the CPU
    // a run may use is the largest run's: the deadline's worth once, and
    // kCpuMsPerOperation for each of max_operations files. Staging one costs
    // about 0.25 ms here, nearly all of it the kernel's file creation; twenty
    // times that leaves room for a slower machine. 560 s: what stops a stuck
    // plugin is the deadline; this stops one that computes for ever while it
    // keeps talking.
    limits.cpu_seconds = g.deadline_ms / 1000 + g.max_operations * kCpuMsPerOperation / 1000;
    limits.cpu_hard_seconds = limits.cpu_seconds + 1;
  }
  return limits;
}

}  // namespace dot::dpp
