#include "dot/adpp/conformance.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "dot/adpp/client.h"
#include "dot/adpp/frame.h"
#include "dot/adpp/messages.h"

namespace dot::adpp {
namespace {

using std::chrono::milliseconds;

struct Outcome {
  bool passed = false;
  std::string detail;
};
Outcome pass(std::string detail = {}) { return {true, std::move(detail)}; }
Outcome fail(std::string detail) { return {false, std::move(detail)}; }

// Raised out of a case when the provider cannot be started at all: every case
// would fail the same way, so the suite stops with that error instead.
struct SpawnFailure {
  Error error;
};

class Case {
 public:
  Case(const std::vector<std::string>& argv, const ConformanceOptions& options) : argv_(argv), options_(options) {}

  ProviderProcess launch() {
    LaunchOptions lo;
    auto p = ProviderProcess::launch(argv_, lo);
    if (!p.ok()) throw SpawnFailure{std::move(p).error()};
    return std::move(p).value();
  }
  Clock::time_point deadline() const { return Clock::now() + options_.window; }
  milliseconds window() const { return options_.window; }
  milliseconds grace() const { return std::min(options_.exit_grace, options_.window); }

 private:
  const std::vector<std::string>& argv_;
  const ConformanceOptions& options_;
};

std::string seconds(milliseconds ms) { return fmt::format("{:.3g} s", static_cast<double>(ms.count()) / 1000.0); }

bool documented_exit(const ExitStatus& s) { return s.exited() && (s.code == 0 || s.code == 2 || s.code == 3); }

std::string with_stderr(std::string detail, const ProviderProcess& p) {
  std::string tail = p.stderr_tail();
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
  auto nl = tail.rfind('\n');
  if (nl != std::string::npos) tail.erase(0, nl + 1);
  if (tail.size() > 160) tail = tail.substr(tail.size() - 160);
  if (!tail.empty()) detail += fmt::format(" (stderr: {})", tail);
  return detail;
}

pb::Request hello_request(std::uint64_t id, std::string_view version = kProtocolVersion) {
  pb::Request r;
  r.set_request_id(id);
  auto* h = r.mutable_hello();
  h->set_protocol_version(std::string(version));
  h->set_client_name("dot-core-conform");
  h->set_client_version("1");
  return r;
}

std::string frame_of(const pb::Request& r) {
  auto f = encode_frame(r);
  return f.ok() ? std::move(f).value() : std::string{};
}

// Send, read, and check correlation/status/payload; the error says what broke.
Result<pb::Response> exchange(ProviderProcess& p, const pb::Request& req, Clock::time_point deadline) {
  DOT_TRY(p.send(req, deadline));
  DOT_ASSIGN_OR_RETURN(pb::Response resp, p.read_response(deadline));
  DOT_TRY(check_response(req, resp));
  return resp;
}

std::string describe_read_error(const Error& e, milliseconds window) {
  if (e.kind == "timeout") return fmt::format("hang: no complete response within {}", seconds(window));
  if (e.kind == "length") return fmt::format("over-cap response: {}", e.message());
  if (e.kind == "parse") return fmt::format("unparseable response: {}", e.message());
  return e.message();
}

// Ends a case that went well so far: stdin closed, nothing more on stdout,
// an exit with a documented code in the window.
Outcome finish(Case& c, ProviderProcess& p, std::string detail, bool require_zero = false) {
  p.close_stdin();
  auto deadline = c.deadline();
  auto rest = p.read_to_eof(deadline);
  if (!rest.ok()) return fail(fmt::format("stdout still open {} after stdin was closed", seconds(c.window())));
  if (*rest > 0) return fail(with_stderr(fmt::format("{} bytes of unsolicited output on stdout", *rest), p));
  auto st = p.wait_exit(deadline);
  if (!st) return fail(fmt::format("did not exit within {} after stdin was closed", seconds(c.window())));
  if (!documented_exit(*st) || (require_zero && st->code != 0))
    return fail(with_stderr(fmt::format("{} after stdin was closed, expected exit {}", st->describe(),
                                        require_zero ? "0" : "0, 2 or 3"), p));
  return pass(std::move(detail));
}

// The profile's "controlled" reaction to malformed input.
Outcome controlled(Case& c, ProviderProcess& p, Clock::time_point deadline) {
  auto resp = p.read_response(deadline);
  if (resp.ok()) {
    int code = resp->status().code();
    if (!is_defined_error(code))
      return fail(fmt::format("answered malformed input with {}", status_code_name(code)));
    auto st = p.wait_exit(Clock::now() + c.grace());
    if (!st) return pass(fmt::format("answered {}", status_code_name(code)));
    if (!documented_exit(*st))
      return fail(with_stderr(fmt::format("answered {}, then {}", status_code_name(code), st->describe()), p));
    return pass(fmt::format("answered {}, then exit {}", status_code_name(code), st->code));
  }
  const Error& e = resp.error();
  if (e.kind != "closed") return fail(with_stderr(describe_read_error(e, c.window()), p));
  auto st = p.wait_exit(deadline);
  if (!st) return fail(fmt::format("hang: closed stdout but did not exit within {}", seconds(c.window())));
  if (!documented_exit(*st)) return fail(with_stderr(fmt::format("{}, not one of 0, 2, 3", st->describe()), p));
  return pass(fmt::format("exit {}", st->code));
}

Outcome expect_hello_ok(const Result<pb::Response>& r, std::uint64_t id, milliseconds window) {
  if (!r.ok()) return fail(describe_read_error(r.error(), window));
  if (r->status().code() != pb::Status::CODE_OK)
    return fail(fmt::format("Hello {} answered {} {}", id, status_code_name(r->status().code()),
                            r->status().message()));
  if (r->hello().protocol_version() != kProtocolVersion)
    return fail(fmt::format("Hello {} answered protocol_version \"{}\"", id, r->hello().protocol_version()));
  return pass();
}

Result<pb::Response> read_checked(ProviderProcess& p, const pb::Request& req, Clock::time_point deadline) {
  DOT_ASSIGN_OR_RETURN(pb::Response resp, p.read_response(deadline));
  DOT_TRY(check_response(req, resp));
  return resp;
}

// A provider after a successful Hello, for the semantic cases.
struct Session {
  ProviderProcess p;
  pb::HelloResponse hello;
  std::uint64_t next_id = 2;
};
Result<Session> open_session(Case& c) {
  Session s{c.launch(), {}, 2};
  auto req = hello_request(1);
  DOT_ASSIGN_OR_RETURN(pb::Response r, exchange(s.p, req, c.deadline()));
  if (r.status().code() != pb::Status::CODE_OK)
    return make_error(Code::Protocol, "status", fmt::format("Hello answered {}", status_code_name(r.status().code())));
  s.hello = r.hello();
  return s;
}
Result<pb::Response> ask(Case& c, Session& s, pb::Request req) {
  req.set_request_id(s.next_id++);
  return exchange(s.p, req, c.deadline());
}
Outcome expect_code(const Result<pb::Response>& r, std::initializer_list<pb::Status::Code> codes, std::string_view what,
                    milliseconds window) {
  if (!r.ok()) return fail(fmt::format("{}: {}", what, describe_read_error(r.error(), window)));
  int code = r->status().code();
  for (auto want : codes)
    if (code == want) return pass(status_code_name(code));
  std::string wanted;
  for (auto want : codes) wanted += (wanted.empty() ? "" : " or ") + status_code_name(want);
  return fail(fmt::format("{} answered {} ({}), expected {}", what, status_code_name(code), r->status().message(),
                          wanted));
}

pb::Request list_request() {
  pb::Request r;
  r.mutable_list_devices()->set_include_health(true);
  return r;
}

// --- the framed-stdio cases ---------------------------------------------

Outcome case_hello_metadata(Case& c) {
  auto p = c.launch();
  auto r = exchange(p, hello_request(1), c.deadline());
  Outcome o = expect_hello_ok(r, 1, c.window());
  if (!o.passed) return fail(with_stderr(o.detail, p));
  Status meta = check_hello_metadata(r->hello());
  if (!meta.ok()) return fail(meta.error().detail);
  const auto& m = r->hello().metadata();
  return finish(c, p, fmt::format("supports_wait_ready={}", m.at(std::string(kMetaSupportsWaitReady))));
}

Outcome malformed(Case& c, std::string_view bytes, bool close_stdin) {
  auto p = c.launch();
  auto deadline = c.deadline();
  Status w = p.write(bytes, deadline);
  // A provider may legitimately exit before taking all of it.
  if (!w.ok() && w.error().kind != "closed") return fail(w.error().message());
  if (close_stdin) p.close_stdin();
  return controlled(c, p, deadline);
}

Outcome case_oversized_prefix(Case& c) { return malformed(c, std::string_view("\x00\x00\x20\x00", 4), false); }
Outcome case_zero_length(Case& c) { return malformed(c, std::string_view("\x00\x00\x00\x00", 4), false); }
Outcome case_truncated(Case& c) { return malformed(c, std::string_view("\x40\x00\x00\x00", 4), true); }
Outcome case_garbage_payload(Case& c) {
  // 0xFF bytes: a varint tag that never ends, so no protobuf parser can take it.
  std::string bytes("\x1c\x00\x00\x00", 4);
  bytes.append(28, '\xff');
  return malformed(c, bytes, false);
}

Outcome case_trailing_garbage(Case& c) {
  auto p = c.launch();
  auto deadline = c.deadline();
  auto hello = hello_request(1);
  std::string bytes = frame_of(hello);
  bytes.append("\x07\x00\x00\x00garbage", 11);
  Status w = p.write(bytes, deadline);
  if (!w.ok() && w.error().kind != "closed") return fail(w.error().message());
  Outcome first = expect_hello_ok(read_checked(p, hello, deadline), 1, c.window());
  if (!first.passed) return fail(with_stderr("before the garbage: " + first.detail, p));
  Outcome o = controlled(c, p, deadline);
  if (o.passed) o.detail = "Hello OK, then " + o.detail;
  return o;
}

Outcome case_fragmented(Case& c) {
  auto p = c.launch();
  auto deadline = c.deadline();
  auto hello = hello_request(1);
  std::string bytes = frame_of(hello);
  std::size_t half = bytes.size() / 2;
  if (Status w = p.write(std::string_view(bytes).substr(0, half), deadline); !w.ok()) return fail(w.error().message());
  std::this_thread::sleep_for(milliseconds(50));
  if (Status w = p.write(std::string_view(bytes).substr(half), deadline); !w.ok()) return fail(w.error().message());
  Outcome o = expect_hello_ok(read_checked(p, hello, deadline), 1, c.window());
  if (!o.passed) return fail(with_stderr(o.detail, p));
  return finish(c, p, "OK after two writes 50 ms apart");
}

Outcome case_coalesced(Case& c) {
  auto p = c.launch();
  auto deadline = c.deadline();
  auto h1 = hello_request(1), h2 = hello_request(2);
  if (Status w = p.write(frame_of(h1) + frame_of(h2), deadline); !w.ok()) return fail(w.error().message());
  Outcome o1 = expect_hello_ok(read_checked(p, h1, deadline), 1, c.window());
  if (!o1.passed) return fail(with_stderr(o1.detail, p));
  Outcome o2 = expect_hello_ok(read_checked(p, h2, deadline), 2, c.window());
  if (!o2.passed) return fail(with_stderr(o2.detail, p));
  return finish(c, p, "both answered in order");
}

// --- core semantic checks -------------------------------------------------

Outcome case_hello_unsupported_version(Case& c) {
  auto p = c.launch();
  auto r = exchange(p, hello_request(1, "v999"), c.deadline());
  Outcome o = expect_code(r, {pb::Status::CODE_FAILED_PRECONDITION, pb::Status::CODE_UNIMPLEMENTED},
                          "Hello with protocol_version \"v999\"", c.window());
  if (!o.passed) return fail(with_stderr(o.detail, p));
  return finish(c, p, o.detail);
}

Outcome case_hello_repeated(Case& c) {
  auto p = c.launch();
  for (std::uint64_t id : {1u, 2u}) {
    Outcome o = expect_hello_ok(exchange(p, hello_request(id), c.deadline()), id, c.window());
    if (!o.passed) return fail(with_stderr(o.detail, p));
  }
  return finish(c, p, "second Hello OK");
}

Outcome case_request_id_64bit(Case& c) {
  auto p = c.launch();
  // Above 2^63 and 2^53: an id squeezed through a signed or double type breaks.
  const std::uint64_t ids[] = {0xFEDCBA9876543210ull, 0xFFFFFFFFFFFFFFFFull};
  Outcome o = expect_hello_ok(exchange(p, hello_request(ids[0]), c.deadline()), ids[0], c.window());
  if (!o.passed) return fail(with_stderr(o.detail, p));
  pb::Request health;
  health.set_request_id(ids[1]);
  health.mutable_get_health();
  auto r = exchange(p, health, c.deadline());
  if (!r.ok()) return fail(with_stderr(describe_read_error(r.error(), c.window()), p));
  return finish(c, p, "ids 18364758544493064720 and 18446744073709551615 echoed");
}

Outcome case_unknown_fields(Case& c) {
  auto p = c.launch();
  auto hello = hello_request(1);
  std::string payload;
  hello.SerializeToString(&payload);
  // Field 999 (varint 1) and field 998 (string "future"): fields a later
  // protocol revision might add, which a v1 provider must skip.
  payload.append("\xb8\x3e\x01", 3);
  payload.append("\xb2\x3e\x06" "future", 9);
  std::string bytes(4, '\0');
  write_prefix(bytes.data(), static_cast<std::uint32_t>(payload.size()));
  bytes += payload;
  auto deadline = c.deadline();
  if (Status w = p.write(bytes, deadline); !w.ok()) return fail(w.error().message());
  Outcome o = expect_hello_ok(read_checked(p, hello, deadline), 1, c.window());
  if (!o.passed) return fail(with_stderr(o.detail, p));
  return finish(c, p, "Hello with unknown fields answered OK");
}

Outcome case_list_devices(Case& c) {
  auto s = open_session(c);
  if (!s.ok()) return fail(describe_read_error(s.error(), c.window()));
  auto r = ask(c, *s, list_request());
  Outcome o = expect_code(r, {pb::Status::CODE_OK}, "ListDevices", c.window());
  if (!o.passed) return fail(with_stderr(o.detail, s->p));
  std::set<std::string> ids;
  for (const auto& d : r->list_devices().devices()) {
    if (d.device_id().empty()) return fail("a listed device has an empty device_id");
    if (!ids.insert(d.device_id()).second) return fail(fmt::format("device_id \"{}\" is listed twice", d.device_id()));
  }
  return finish(c, s->p, fmt::format("{} devices", ids.size()));
}

Outcome case_describe_devices(Case& c) {
  auto s = open_session(c);
  if (!s.ok()) return fail(describe_read_error(s.error(), c.window()));
  auto list = ask(c, *s, list_request());
  Outcome o = expect_code(list, {pb::Status::CODE_OK}, "ListDevices", c.window());
  if (!o.passed) return fail(o.detail);
  std::size_t n = 0;
  for (const auto& d : list->list_devices().devices()) {
    if (++n > 16) break;
    pb::Request req;
    req.mutable_describe_device()->set_device_id(d.device_id());
    auto r = ask(c, *s, req);
    Outcome od = expect_code(r, {pb::Status::CODE_OK}, fmt::format("DescribeDevice \"{}\"", d.device_id()), c.window());
    if (!od.passed) return fail(od.detail);
    if (r->describe_device().device().device_id() != d.device_id())
      return fail(fmt::format("DescribeDevice \"{}\" describes \"{}\"", d.device_id(),
                              r->describe_device().device().device_id()));
    std::set<std::uint32_t> fids;
    for (const auto& f : r->describe_device().capabilities().functions()) {
      if (f.function_id() == 0) return fail(fmt::format("device \"{}\": function \"{}\" has id 0", d.device_id(), f.name()));
      if (!fids.insert(f.function_id()).second)
        return fail(fmt::format("device \"{}\": function id {} appears twice", d.device_id(), f.function_id()));
    }
    std::set<std::string> sids;
    for (const auto& sig : r->describe_device().capabilities().signals())
      if (!sids.insert(sig.signal_id()).second)
        return fail(fmt::format("device \"{}\": signal \"{}\" appears twice", d.device_id(), sig.signal_id()));
  }
  return finish(c, s->p, fmt::format("{} devices described", std::min<std::size_t>(n, 16)));
}

constexpr std::string_view kNoSuchDevice = "dot-core-conformance-no-such-device";

Outcome case_describe_unknown_device(Case& c) {
  auto s = open_session(c);
  if (!s.ok()) return fail(describe_read_error(s.error(), c.window()));
  pb::Request req;
  req.mutable_describe_device()->set_device_id(std::string(kNoSuchDevice));
  Outcome o = expect_code(ask(c, *s, req), {pb::Status::CODE_NOT_FOUND}, "DescribeDevice of an unknown device",
                          c.window());
  if (!o.passed) return fail(o.detail);
  return finish(c, s->p, o.detail);
}

Outcome case_read_signals_unknown_device(Case& c) {
  auto s = open_session(c);
  if (!s.ok()) return fail(describe_read_error(s.error(), c.window()));
  pb::Request req;
  req.mutable_read_signals()->set_device_id(std::string(kNoSuchDevice));
  Outcome o = expect_code(ask(c, *s, req), {pb::Status::CODE_NOT_FOUND}, "ReadSignals of an unknown device",
                          c.window());
  if (!o.passed) return fail(o.detail);
  return finish(c, s->p, o.detail);
}

Outcome case_read_signals(Case& c) {
  auto s = open_session(c);
  if (!s.ok()) return fail(describe_read_error(s.error(), c.window()));
  auto list = ask(c, *s, list_request());
  Outcome o = expect_code(list, {pb::Status::CODE_OK}, "ListDevices", c.window());
  if (!o.passed) return fail(o.detail);
  for (const auto& d : list->list_devices().devices()) {
    pb::Request dreq;
    dreq.mutable_describe_device()->set_device_id(d.device_id());
    auto desc = ask(c, *s, dreq);
    Outcome od = expect_code(desc, {pb::Status::CODE_OK}, "DescribeDevice", c.window());
    if (!od.passed) return fail(od.detail);
    const auto& signals = desc->describe_device().capabilities().signals();
    if (signals.empty()) continue;
    pb::Request req;
    req.mutable_read_signals()->set_device_id(d.device_id());
    req.mutable_read_signals()->add_signal_ids(signals[0].signal_id());
    auto r = ask(c, *s, req);
    Outcome orr = expect_code(r, {pb::Status::CODE_OK}, fmt::format("ReadSignals \"{}\"", d.device_id()), c.window());
    if (!orr.passed) return fail(orr.detail);
    const auto& values = r->read_signals().values();
    if (values.size() != 1 || values[0].signal_id() != signals[0].signal_id())
      return fail(fmt::format("ReadSignals \"{}\" [\"{}\"] returned {} values", d.device_id(), signals[0].signal_id(),
                              values.size()));
    req.set_request_id(0);
    req.mutable_read_signals()->add_signal_ids("dot-core-conformance-no-such-signal");
    auto unknown = ask(c, *s, req);
    if (!unknown.ok()) return fail(describe_read_error(unknown.error(), c.window()));
    return finish(c, s->p, fmt::format("\"{}\".\"{}\" read; an unknown signal id answered {}", d.device_id(),
                                       signals[0].signal_id(), status_code_name(unknown->status().code())));
  }
  return finish(c, s->p, "no device declares a signal: nothing to read");
}

Outcome case_call_unknown_function(Case& c) {
  auto s = open_session(c);
  if (!s.ok()) return fail(describe_read_error(s.error(), c.window()));
  auto list = ask(c, *s, list_request());
  Outcome o = expect_code(list, {pb::Status::CODE_OK}, "ListDevices", c.window());
  if (!o.passed) return fail(o.detail);
  pb::Request req;
  auto* call = req.mutable_call();
  if (list->list_devices().devices().empty()) {
    call->set_device_id(std::string(kNoSuchDevice));
  } else {
    call->set_device_id(list->list_devices().devices(0).device_id());
  }
  call->set_function_id(0x7FFFFFF0u);
  call->set_function_name("dot_core_conformance_no_such_function");
  Outcome oc = expect_code(ask(c, *s, req), {pb::Status::CODE_NOT_FOUND}, "Call of an unknown function", c.window());
  if (!oc.passed) return fail(oc.detail);
  pb::Request unknown_device;
  unknown_device.mutable_call()->set_device_id(std::string(kNoSuchDevice));
  unknown_device.mutable_call()->set_function_id(1);
  Outcome od = expect_code(ask(c, *s, unknown_device), {pb::Status::CODE_NOT_FOUND}, "Call on an unknown device",
                           c.window());
  if (!od.passed) return fail(od.detail);
  return finish(c, s->p, "NOT_FOUND for an unknown function and an unknown device");
}

Outcome case_get_health(Case& c) {
  auto s = open_session(c);
  if (!s.ok()) return fail(describe_read_error(s.error(), c.window()));
  pb::Request req;
  req.mutable_get_health();
  auto r = ask(c, *s, req);
  Outcome o = expect_code(r, {pb::Status::CODE_OK}, "GetHealth", c.window());
  if (!o.passed) return fail(o.detail);
  return finish(c, s->p,
                fmt::format("provider {}", pb::ProviderHealth::State_Name(r->get_health().provider().state())));
}

Outcome case_wait_ready(Case& c) {
  auto s = open_session(c);
  if (!s.ok()) return fail(describe_read_error(s.error(), c.window()));
  const auto& meta = s->hello.metadata();
  auto it = meta.find(std::string(kMetaSupportsWaitReady));
  bool supported = it != meta.end() && it->second == "true";
  pb::Request req;
  req.mutable_wait_ready()->set_max_wait_ms_hint(static_cast<std::uint32_t>(c.window().count()));
  auto r = ask(c, *s, req);
  if (!r.ok()) return fail(describe_read_error(r.error(), c.window()));
  int code = r->status().code();
  if (supported && code != pb::Status::CODE_OK)
    return fail(fmt::format("supports_wait_ready=true but WaitReady answered {} {}", status_code_name(code),
                            r->status().message()));
  if (!supported && code == pb::Status::CODE_OK)
    return fail("supports_wait_ready=false but WaitReady answered CODE_OK");
  std::string detail = supported ? "ready" : fmt::format("not supported: {}", status_code_name(code));
  if (supported) {
    const auto& diag = r->wait_ready().diagnostics();
    if (auto d = diag.find("init_time_ms"); d != diag.end()) detail += fmt::format(", init_time_ms={}", d->second);
  }
  return finish(c, s->p, detail);
}

Outcome case_eof_exit(Case& c) {
  auto s = open_session(c);
  if (!s.ok()) return fail(describe_read_error(s.error(), c.window()));
  return finish(c, s->p, "exit 0 on stdin EOF", /*require_zero=*/true);
}

struct CaseDef {
  std::string_view name;
  Outcome (*run)(Case&);
};

constexpr CaseDef kCases[] = {
    {"hello_metadata", case_hello_metadata},
    {"oversized_prefix", case_oversized_prefix},
    {"zero_length", case_zero_length},
    {"truncated", case_truncated},
    {"garbage_payload", case_garbage_payload},
    {"trailing_garbage", case_trailing_garbage},
    {"fragmented", case_fragmented},
    {"coalesced", case_coalesced},
    {"hello_unsupported_version", case_hello_unsupported_version},
    {"hello_repeated", case_hello_repeated},
    {"request_id_64bit", case_request_id_64bit},
    {"unknown_fields", case_unknown_fields},
    {"list_devices", case_list_devices},
    {"describe_devices", case_describe_devices},
    {"describe_unknown_device", case_describe_unknown_device},
    {"read_signals", case_read_signals},
    {"read_signals_unknown_device", case_read_signals_unknown_device},
    {"call_unknown_function", case_call_unknown_function},
    {"get_health", case_get_health},
    {"wait_ready", case_wait_ready},
    {"eof_exit", case_eof_exit},
};

}  // namespace

std::size_t ConformanceReport::passed() const noexcept {
  return static_cast<std::size_t>(std::count_if(cases.begin(), cases.end(), [](const auto& c) { return c.passed; }));
}
std::size_t ConformanceReport::failed() const noexcept { return cases.size() - passed(); }

std::vector<std::string_view> conformance_case_names() {
  std::vector<std::string_view> names;
  for (const auto& c : kCases) names.push_back(c.name);
  return names;
}

Result<ConformanceReport> run_conformance(const std::vector<std::string>& argv, const ConformanceOptions& options) {
  if (argv.empty()) return make_error(Code::Internal, "spawn", "no provider command given");
  std::vector<const CaseDef*> selected;
  for (const auto& name : options.only) {
    auto it = std::find_if(std::begin(kCases), std::end(kCases), [&](const CaseDef& c) { return c.name == name; });
    if (it == std::end(kCases)) return make_error(Code::NotFound, "case", fmt::format("no conformance case \"{}\"", name));
  }
  for (const auto& c : kCases)
    if (options.only.empty() || std::find(options.only.begin(), options.only.end(), c.name) != options.only.end())
      selected.push_back(&c);

  ConformanceReport report;
  report.cases.resize(selected.size());
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  std::optional<Error> spawn_error;
  auto worker = [&] {
    for (;;) {
      std::size_t i = next.fetch_add(1);
      if (i >= selected.size()) return;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (spawn_error) return;
      }
      CaseResult& out = report.cases[i];
      out.name = std::string(selected[i]->name);
      auto start = Clock::now();
      Case c(argv, options);
      try {
        Outcome o = selected[i]->run(c);
        out.passed = o.passed;
        out.detail = std::move(o.detail);
      } catch (SpawnFailure& f) {
        std::lock_guard<std::mutex> lock(mu);
        if (!spawn_error) spawn_error = std::move(f.error);
      } catch (const std::exception& e) {
        out.passed = false;
        out.detail = fmt::format("internal error: {}", e.what());
      }
      out.elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
    }
  };
  unsigned jobs = std::max(1u, std::min<unsigned>(options.jobs, static_cast<unsigned>(selected.size())));
  std::vector<std::thread> threads;
  threads.reserve(jobs);
  // Every thread is joined before we return, whatever happened in a case.
  for (unsigned j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  if (spawn_error) return std::move(*spawn_error);
  return report;
}

}  // namespace dot::adpp
