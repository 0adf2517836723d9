// `dot-core adpp conform`: the profile and semantics suites, one fresh provider per case (conformance.h).
#include "dot/adpp/conformance.h"
#include "dot/adpp/error_kinds.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "dot/adpp/client.h"
#include "dot/adpp/frame.h"
#include "dot/adpp/messages.h"
#include "dot/adpp/postscript.h"
#include "dot/base/orphan_sweep.h"

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

// One case's run: its options and the one provider process it starts. The
// case owns the process so that the runner can say, after any failure, how the
// provider ended (see annotate): a case never has to remember to.
class Case {
 public:
  Case(const std::vector<std::string>& argv, const ConformanceOptions& options) : argv_(argv), options_(options) {}

  ProviderProcess& launch() {
    auto p = ProviderProcess::launch(argv_, LaunchOptions{});
    if (!p.ok()) throw SpawnFailure{std::move(p).error()};
    process_.emplace(std::move(p).value());
    return *process_;
  }
  // The provider's exit status, for a detail that states it itself (so
  // annotate does not state it twice).
  std::optional<ExitStatus> wait_exit(Clock::time_point deadline) {
    auto st = process_->wait_exit(deadline);
    if (st) exit_stated_ = true;
    return st;
  }
  Clock::time_point deadline() const { return Clock::now() + options_.window; }
  milliseconds window() const { return options_.window; }
  milliseconds grace() const { return std::min(options_.exit_grace, options_.window); }

  // The one place a failed case's detail gets how the provider ended
  // (provider_postscript): a case never has to remember to.
  std::string annotate(std::string detail) {
    if (process_) detail += provider_postscript(*process_, grace(), exit_stated_);
    return detail;
  }

 private:
  const std::vector<std::string>& argv_;
  const ConformanceOptions& options_;
  std::optional<ProviderProcess> process_;
  bool exit_stated_ = false;
};

std::string seconds(milliseconds ms) { return fmt::format("{:.3g} s", static_cast<double>(ms.count()) / 1000.0); }

bool documented_exit(const ExitStatus& s) { return s.exited() && (s.code == 0 || s.code == 2 || s.code == 3); }

pb::Request hello_request(std::uint64_t id, std::string_view version = kProtocolVersion) {
  pb::Request r;
  r.set_request_id(id);
  auto* h = r.mutable_hello();
  h->set_protocol_version(std::string(version));
  h->set_client_name("dot-core-conform");
  h->set_client_version("1");
  return r;
}

// A Hello whose serialized Request is exactly `size` bytes (client_name
// carries the padding). Near 1 MiB every length varint is 3 bytes wide, so
// the first correction is exact; the loop only guards that arithmetic.
pb::Request padded_hello(std::uint64_t id, std::size_t size) {
  pb::Request r = hello_request(id);
  for (int round = 0; round < 4; ++round) {
    auto now = static_cast<long long>(r.ByteSizeLong());
    if (now == static_cast<long long>(size)) break;
    auto name = static_cast<long long>(r.hello().client_name().size()) + static_cast<long long>(size) - now;
    r.mutable_hello()->set_client_name(std::string(static_cast<std::size_t>(std::max(0LL, name)), 'p'));
  }
  return r;
}

// A frame around any payload size (the codec refuses over-cap frames, which
// is what some cases must send).
std::string raw_frame(const pb::Request& r) {
  std::string payload = r.SerializeAsString();
  std::string bytes(kPrefixBytes, '\0');
  write_prefix(bytes.data(), static_cast<std::uint32_t>(payload.size()));
  return bytes + payload;
}

// Send, read, and check correlation/status/payload; the error says what broke.
Result<pb::Response> exchange(ProviderProcess& p, const pb::Request& req, Clock::time_point deadline) {
  DOT_TRY(p.send(req, deadline));
  DOT_ASSIGN_OR_RETURN(pb::Response resp, p.read_response(deadline));
  DOT_TRY(check_response(req, resp));
  return resp;
}

std::string describe_read_error(const Error& e, milliseconds window) {
  if (e.code == Code::Timeout) return fmt::format("hang: no complete response within {}", seconds(window));
  if (e.is(ErrorKind::Length)) return fmt::format("over-cap response: {}", e.message());
  if (e.is(ErrorKind::Parse)) return fmt::format("unparseable response: {}", e.message());
  return e.message();
}

// A write the provider may cut short by exiting (or, for a frame it must
// refuse unread, by not reading): only other errors fail the case.
bool write_refused(const Status& w) {
  return !w.ok() && !w.error().is(ErrorKind::Closed) && w.error().code != Code::Timeout;
}

// Ends a case that went well so far: stdin closed, nothing more on stdout,
// an exit with a documented code in the window.
Outcome finish(Case& c, ProviderProcess& p, std::string detail, bool require_zero = false) {
  p.close_stdin();
  auto deadline = c.deadline();
  auto rest = p.read_to_eof(deadline);
  if (!rest.ok()) return fail(fmt::format("stdout still open {} after stdin was closed", seconds(c.window())));
  if (*rest > 0) return fail(fmt::format("{} bytes of unsolicited output on stdout", *rest));
  auto st = c.wait_exit(deadline);
  if (!st) return fail(fmt::format("did not exit within {} after stdin was closed", seconds(c.window())));
  if (!documented_exit(*st) || (require_zero && st->code != 0))
    return fail(
        fmt::format("{} after stdin was closed, expected exit {}", st->describe(), require_zero ? "0" : "0, 2 or 3"));
  return pass(std::move(detail));
}

// The profile's "controlled" reaction to malformed input.
Outcome controlled(Case& c, ProviderProcess& p, Clock::time_point deadline) {
  auto resp = p.read_response(deadline);
  if (resp.ok()) {
    int code = resp->status().code();
    if (!is_defined_error(code)) return fail(fmt::format("answered malformed input with {}", status_code_name(code)));
    auto st = c.wait_exit(Clock::now() + c.grace());
    if (!st) return pass(fmt::format("answered {}", status_code_name(code)));
    if (!documented_exit(*st)) return fail(fmt::format("answered {}, then {}", status_code_name(code), st->describe()));
    return pass(fmt::format("answered {}, then exit {}", status_code_name(code), st->code));
  }
  const Error& e = resp.error();
  if (!e.is(ErrorKind::Closed)) return fail(describe_read_error(e, c.window()));
  auto st = c.wait_exit(deadline);
  if (!st) return fail(fmt::format("hang: closed stdout but did not exit within {}", seconds(c.window())));
  if (!documented_exit(*st)) return fail(fmt::format("{}, not one of 0, 2, 3", st->describe()));
  return pass(fmt::format("exit {}", st->code));
}

Outcome expect_hello_ok(const Result<pb::Response>& r, std::uint64_t id, milliseconds window) {
  if (!r.ok()) return fail(describe_read_error(r.error(), window));
  if (r->status().code() != pb::Status::CODE_OK)
    return fail(
        fmt::format("Hello {} answered {} {}", id, status_code_name(r->status().code()), r->status().message()));
  if (r->hello().protocol_version() != kProtocolVersion)
    return fail(fmt::format("Hello {} answered protocol_version \"{}\"", id, r->hello().protocol_version()));
  return pass();
}

Result<pb::Response> read_checked(ProviderProcess& p, const pb::Request& req, Clock::time_point deadline) {
  DOT_ASSIGN_OR_RETURN(pb::Response resp, p.read_response(deadline));
  DOT_TRY(check_response(req, resp));
  return resp;
}

Outcome expect_code(const Result<pb::Response>& r, std::initializer_list<pb::Status::Code> codes, std::string_view what,
                    milliseconds window) {
  if (!r.ok()) return fail(fmt::format("{}: {}", what, describe_read_error(r.error(), window)));
  int code = r->status().code();
  for (auto want : codes)
    if (code == want) return pass(status_code_name(code));
  std::string wanted;
  for (auto want : codes) wanted += (wanted.empty() ? "" : " or ") + status_code_name(want);
  return fail(
      fmt::format("{} answered {} ({}), expected {}", what, status_code_name(code), r->status().message(), wanted));
}

// A provider after a successful Hello, for the semantic cases.
struct Session {
  Case& c;
  ProviderProcess& p;
  pb::HelloResponse hello;
  std::uint64_t next_id = 2;

  explicit Session(Case& kase) : c(kase), p(kase.launch()) {}
  Outcome open() {
    auto r = exchange(p, hello_request(1), c.deadline());
    Outcome o = expect_hello_ok(r, 1, c.window());
    if (o.passed) hello = r->hello();
    return o;
  }
  Result<pb::Response> ask(pb::Request req) {
    req.set_request_id(next_id++);
    return exchange(p, req, c.deadline());
  }
  // Asks and requires one of `codes`.
  // Asks and requires one of `codes`; the response lands in *out when given.
  Outcome expect(pb::Request req, std::initializer_list<pb::Status::Code> codes, std::string_view what,
                 pb::Response* out = nullptr) {
    auto r = ask(std::move(req));
    Outcome o = expect_code(r, codes, what, c.window());
    if (out != nullptr && r.ok()) *out = std::move(r).value();
    return o;
  }
};

pb::Request list_request() {
  pb::Request r;
  r.mutable_list_devices()->set_include_health(true);
  return r;
}
pb::Request describe_request(const std::string& device_id) {
  pb::Request r;
  r.mutable_describe_device()->set_device_id(device_id);
  return r;
}

// --- the framed-stdio profile -------------------------------------------

Outcome case_hello_metadata(Case& c) {
  auto& p = c.launch();
  auto r = exchange(p, hello_request(1), c.deadline());
  Outcome o = expect_hello_ok(r, 1, c.window());
  if (!o.passed) return o;
  Status meta = check_hello_metadata(r->hello());
  if (!meta.ok()) return fail(meta.error().detail);
  const auto& m = r->hello().metadata();
  return finish(c, p, fmt::format("supports_wait_ready={}", m.at(std::string(kMetaSupportsWaitReady))));
}

Outcome malformed(Case& c, std::string_view bytes, bool close_stdin) {
  auto& p = c.launch();
  auto deadline = c.deadline();
  Status w = p.write(bytes, deadline);
  // A provider may legitimately exit before taking all of it.
  if (!w.ok() && !w.error().is(ErrorKind::Closed)) return fail(w.error().message());
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

// The cap from our side: a frame of exactly 1 MiB is within it and must be
// served like any other.
Outcome case_max_frame_request(Case& c) {
  auto& p = c.launch();
  auto deadline = c.deadline();
  auto hello = padded_hello(1, kMaxFrameBytes);
  if (hello.ByteSizeLong() != kMaxFrameBytes) return fail("internal: cannot pad a Hello to 1048576 bytes");
  Status w = p.write(raw_frame(hello), deadline);
  if (!w.ok() && !w.error().is(ErrorKind::Closed))
    return fail(fmt::format("writing the 1048576-byte frame: {}", w.error().message()));
  auto r = p.read_response(deadline);
  if (r.ok() && r->status().code() != pb::Status::CODE_OK)
    return fail(fmt::format("a frame of exactly 1048576 bytes (the cap) was answered {} {}",
                            status_code_name(r->status().code()), r->status().message()));
  if (r.ok()) {
    if (Status ok = check_response(hello, *r); !ok.ok()) return fail(ok.error().message());
  }
  Outcome o = expect_hello_ok(r, 1, c.window());
  if (!o.passed) return fail("a frame of exactly 1048576 bytes: " + o.detail);
  return finish(c, p, "a Hello of exactly 1048576 bytes answered OK");
}

// One byte over the cap: the provider must refuse it (controlled), not serve
// it. The payload is a valid Hello, so a provider that reads it anyway shows
// it by answering OK. The provider must not read the payload, so the write
// may stall on a full pipe: it gets half the window (a provider that reads
// it all, however slowly, is then seen answering, not mistaken for a hang),
// then the answer is read.
Outcome case_over_cap_request(Case& c) {
  auto& p = c.launch();
  auto hello = padded_hello(1, std::size_t{kMaxFrameBytes} + 1);
  Status w = p.write(raw_frame(hello), Clock::now() + c.window() / 2);
  if (write_refused(w)) return fail(w.error().message());
  auto deadline = c.deadline();
  return controlled(c, p, deadline);
}

Outcome case_trailing_garbage(Case& c) {
  auto& p = c.launch();
  auto deadline = c.deadline();
  auto hello = hello_request(1);
  std::string bytes = raw_frame(hello);
  bytes.append("\x07\x00\x00\x00garbage", 11);
  Status w = p.write(bytes, deadline);
  if (!w.ok() && !w.error().is(ErrorKind::Closed)) return fail(w.error().message());
  Outcome first = expect_hello_ok(read_checked(p, hello, deadline), 1, c.window());
  if (!first.passed) return fail("before the garbage: " + first.detail);
  Outcome o = controlled(c, p, deadline);
  if (o.passed) o.detail = "Hello OK, then " + o.detail;
  return o;
}

Outcome case_fragmented(Case& c) {
  auto& p = c.launch();
  auto deadline = c.deadline();
  auto hello = hello_request(1);
  std::string bytes = raw_frame(hello);
  std::size_t half = bytes.size() / 2;
  if (Status w = p.write(std::string_view(bytes).substr(0, half), deadline); !w.ok()) return fail(w.error().message());
  std::this_thread::sleep_for(milliseconds(50));
  if (Status w = p.write(std::string_view(bytes).substr(half), deadline); !w.ok()) return fail(w.error().message());
  Outcome o = expect_hello_ok(read_checked(p, hello, deadline), 1, c.window());
  if (!o.passed) return o;
  return finish(c, p, "OK after two writes 50 ms apart");
}

// Two Hellos in one write. Responses may come in any order (semantics §4:
// clients correlate by request_id and must not assume ordering), so each
// answer is matched to its request by id.
Outcome case_coalesced(Case& c) {
  auto& p = c.launch();
  auto deadline = c.deadline();
  const pb::Request sent[2] = {hello_request(1), hello_request(2)};
  if (Status w = p.write(raw_frame(sent[0]) + raw_frame(sent[1]), deadline); !w.ok()) return fail(w.error().message());
  bool answered[2] = {false, false};
  std::string order;
  for (int n = 0; n < 2; ++n) {
    auto r = p.read_response(deadline);
    if (!r.ok()) return fail(fmt::format("after {} of 2 answers: {}", n, describe_read_error(r.error(), c.window())));
    std::uint64_t id = r->request_id();
    if (id != 1 && id != 2) return fail(fmt::format("answer {} carries request_id {}, sent were 1 and 2", n + 1, id));
    if (answered[id - 1]) return fail(fmt::format("request_id {} answered twice", id));
    answered[id - 1] = true;
    order += (order.empty() ? "" : ", ") + std::to_string(id);
    if (Status ok = check_response(sent[id - 1], *r); !ok.ok()) return fail(ok.error().message());
    Outcome o = expect_hello_ok(r, id, c.window());
    if (!o.passed) return o;
  }
  return finish(c, p, fmt::format("both answered (ids {})", order));
}

Outcome case_hello_unsupported_version(Case& c) {
  auto& p = c.launch();
  auto r = exchange(p, hello_request(1, "v999"), c.deadline());
  Outcome o = expect_code(r, {pb::Status::CODE_FAILED_PRECONDITION, pb::Status::CODE_UNIMPLEMENTED},
                          "Hello with protocol_version \"v999\"", c.window());
  if (!o.passed) return o;
  return finish(c, p, o.detail);
}

Outcome case_hello_repeated(Case& c) {
  auto& p = c.launch();
  for (std::uint64_t id : {1u, 2u}) {
    Outcome o = expect_hello_ok(exchange(p, hello_request(id), c.deadline()), id, c.window());
    if (!o.passed) return o;
  }
  return finish(c, p, "second Hello OK");
}

Outcome case_request_id_64bit(Case& c) {
  auto& p = c.launch();
  // Above 2^63 and 2^53: an id squeezed through a signed or double type breaks.
  const std::uint64_t ids[] = {0xFEDCBA9876543210ull, 0xFFFFFFFFFFFFFFFFull};
  Outcome o = expect_hello_ok(exchange(p, hello_request(ids[0]), c.deadline()), ids[0], c.window());
  if (!o.passed) return o;
  pb::Request health;
  health.set_request_id(ids[1]);
  health.mutable_get_health();
  auto r = exchange(p, health, c.deadline());
  if (!r.ok()) return fail(fmt::format("GetHealth {}: {}", ids[1], describe_read_error(r.error(), c.window())));
  return finish(c, p, "ids 18364758544493064720 and 18446744073709551615 echoed");
}

Outcome case_unknown_fields(Case& c) {
  auto& p = c.launch();
  auto hello = hello_request(1);
  std::string payload;
  hello.SerializeToString(&payload);
  // Field 999 (varint 1) and field 998 (string "future"): fields a later
  // protocol revision might add, which a v1 provider must skip.
  payload.append("\xb8\x3e\x01", 3);
  payload.append(
      "\xb2\x3e\x06"
      "future",
      9);
  std::string bytes(kPrefixBytes, '\0');
  write_prefix(bytes.data(), static_cast<std::uint32_t>(payload.size()));
  bytes += payload;
  auto deadline = c.deadline();
  if (Status w = p.write(bytes, deadline); !w.ok()) return fail(w.error().message());
  Outcome o = expect_hello_ok(read_checked(p, hello, deadline), 1, c.window());
  if (!o.passed) return o;
  return finish(c, p, "Hello with unknown fields answered OK");
}

Outcome case_eof_exit(Case& c) {
  Session s(c);
  if (Outcome o = s.open(); !o.passed) return o;
  return finish(c, s.p, "exit 0 on stdin EOF", /*require_zero=*/true);
}

// --- the device semantics of ADPP v1 ---------------------------------------

constexpr std::string_view kNoSuchDevice = "dot-core-conformance-no-such-device";
constexpr std::string_view kNoSuchSignal = "dot-core-conformance-no-such-signal";

// Lists the devices; on success `devices` holds the response.
Outcome listed(Session& s, pb::ListDevicesResponse& devices) {
  pb::Response r;
  Outcome o = s.expect(list_request(), {pb::Status::CODE_OK}, "ListDevices", &r);
  if (o.passed) devices = r.list_devices();
  return o;
}

// The first listed device that declares a signal, with its capabilities.
struct SignalSource {
  std::string device_id;
  pb::CapabilitySet capabilities;
};
Outcome first_with_signal(Session& s, std::optional<SignalSource>& found) {
  pb::ListDevicesResponse list;
  if (Outcome o = listed(s, list); !o.passed) return o;
  for (const auto& d : list.devices()) {
    pb::Response desc;
    Outcome od = s.expect(describe_request(d.device_id()), {pb::Status::CODE_OK},
                          fmt::format("DescribeDevice \"{}\"", d.device_id()), &desc);
    if (!od.passed) return od;
    if (desc.describe_device().capabilities().signals().empty()) continue;
    found = SignalSource{d.device_id(), desc.describe_device().capabilities()};
    break;
  }
  return pass();
}

pb::Request read_request(const std::string& device_id, std::initializer_list<std::string_view> signals) {
  pb::Request r;
  r.mutable_read_signals()->set_device_id(device_id);
  for (auto id : signals) r.mutable_read_signals()->add_signal_ids(std::string(id));
  return r;
}

Outcome case_list_devices(Case& c) {
  Session s(c);
  if (Outcome o = s.open(); !o.passed) return o;
  pb::ListDevicesResponse list;
  if (Outcome o = listed(s, list); !o.passed) return o;
  std::set<std::string> ids;
  for (const auto& d : list.devices()) {
    if (d.device_id().empty()) return fail("a listed device has an empty device_id");
    if (!ids.insert(d.device_id()).second) return fail(fmt::format("device_id \"{}\" is listed twice", d.device_id()));
  }
  return finish(c, s.p, fmt::format("{} devices", ids.size()));
}

Outcome case_describe_devices(Case& c) {
  Session s(c);
  if (Outcome o = s.open(); !o.passed) return o;
  pb::ListDevicesResponse list;
  if (Outcome o = listed(s, list); !o.passed) return o;
  std::size_t n = 0;
  for (const auto& d : list.devices()) {
    if (++n > 16) break;
    pb::Response r;
    Outcome od = s.expect(describe_request(d.device_id()), {pb::Status::CODE_OK},
                          fmt::format("DescribeDevice \"{}\"", d.device_id()), &r);
    if (!od.passed) return od;
    if (r.describe_device().device().device_id() != d.device_id())
      return fail(fmt::format("DescribeDevice \"{}\" describes \"{}\"", d.device_id(),
                              r.describe_device().device().device_id()));
    std::set<std::uint32_t> fids;
    for (const auto& f : r.describe_device().capabilities().functions()) {
      if (f.function_id() == 0)
        return fail(fmt::format("device \"{}\": function \"{}\" has id 0", d.device_id(), f.name()));
      if (!fids.insert(f.function_id()).second)
        return fail(fmt::format("device \"{}\": function id {} appears twice", d.device_id(), f.function_id()));
    }
    std::set<std::string> sids;
    for (const auto& sig : r.describe_device().capabilities().signals())
      if (!sids.insert(sig.signal_id()).second)
        return fail(fmt::format("device \"{}\": signal \"{}\" appears twice", d.device_id(), sig.signal_id()));
  }
  return finish(c, s.p, fmt::format("{} devices described", std::min<std::size_t>(n, 16)));
}

Outcome case_describe_unknown_device(Case& c) {
  Session s(c);
  if (Outcome o = s.open(); !o.passed) return o;
  Outcome o = s.expect(describe_request(std::string(kNoSuchDevice)), {pb::Status::CODE_NOT_FOUND},
                       "DescribeDevice of an unknown device");
  if (!o.passed) return o;
  return finish(c, s.p, o.detail);
}

Outcome case_read_signals(Case& c) {
  Session s(c);
  if (Outcome o = s.open(); !o.passed) return o;
  std::optional<SignalSource> src;
  if (Outcome o = first_with_signal(s, src); !o.passed) return o;
  if (!src) return finish(c, s.p, "no device declares a signal: nothing to read");
  const std::string& sid = src->capabilities.signals(0).signal_id();
  pb::Response r;
  Outcome o = s.expect(read_request(src->device_id, {sid}), {pb::Status::CODE_OK},
                       fmt::format("ReadSignals \"{}\" [\"{}\"]", src->device_id, sid), &r);
  if (!o.passed) return o;
  const auto& values = r.read_signals().values();
  if (values.size() != 1 || values[0].signal_id() != sid)
    return fail(fmt::format("ReadSignals \"{}\" [\"{}\"] returned {} values", src->device_id, sid, values.size()));
  return finish(c, s.p, fmt::format("\"{}\".\"{}\" read", src->device_id, sid));
}

// Semantics §7.4: a provider either fails a read naming an unknown signal
// with NOT_FOUND, or answers OK leaving that signal out. An OK answer that
// invents a value for it is wrong either way.
Outcome case_read_signals_unknown_signal(Case& c) {
  Session s(c);
  if (Outcome o = s.open(); !o.passed) return o;
  std::optional<SignalSource> src;
  if (Outcome o = first_with_signal(s, src); !o.passed) return o;
  if (!src) return finish(c, s.p, "no device declares a signal: nothing to read");
  const std::string& sid = src->capabilities.signals(0).signal_id();
  pb::Response r;
  Outcome o =
      s.expect(read_request(src->device_id, {sid, kNoSuchSignal}), {pb::Status::CODE_OK, pb::Status::CODE_NOT_FOUND},
               fmt::format("ReadSignals \"{}\" [\"{}\", an unknown signal]", src->device_id, sid), &r);
  if (!o.passed) return o;
  if (r.status().code() == pb::Status::CODE_NOT_FOUND) return finish(c, s.p, "the read failed with CODE_NOT_FOUND");
  for (const auto& v : r.read_signals().values())
    if (v.signal_id() == kNoSuchSignal)
      return fail(fmt::format("an OK ReadSignals answer carries a value for the unknown signal \"{}\"", kNoSuchSignal));
  return finish(c, s.p, "OK with the unknown signal left out");
}

Outcome case_read_signals_unknown_device(Case& c) {
  Session s(c);
  if (Outcome o = s.open(); !o.passed) return o;
  Outcome o = s.expect(read_request(std::string(kNoSuchDevice), {}), {pb::Status::CODE_NOT_FOUND},
                       "ReadSignals of an unknown device");
  if (!o.passed) return o;
  return finish(c, s.p, o.detail);
}

Outcome case_call_unknown_function(Case& c) {
  Session s(c);
  if (Outcome o = s.open(); !o.passed) return o;
  pb::ListDevicesResponse list;
  if (Outcome o = listed(s, list); !o.passed) return o;
  pb::Request req;
  auto* call = req.mutable_call();
  call->set_device_id(list.devices().empty() ? std::string(kNoSuchDevice) : list.devices(0).device_id());
  call->set_function_id(0x7FFFFFF0u);
  call->set_function_name("dot_core_conformance_no_such_function");
  if (Outcome o = s.expect(req, {pb::Status::CODE_NOT_FOUND}, "Call of an unknown function"); !o.passed) return o;
  pb::Request unknown_device;
  unknown_device.mutable_call()->set_device_id(std::string(kNoSuchDevice));
  unknown_device.mutable_call()->set_function_id(1);
  if (Outcome o = s.expect(unknown_device, {pb::Status::CODE_NOT_FOUND}, "Call on an unknown device"); !o.passed)
    return o;
  return finish(c, s.p, "NOT_FOUND for an unknown function and an unknown device");
}

// Semantics §8.3: required arguments and argument types are validated, with
// INVALID_ARGUMENT. Only calls that must be refused are sent, so no device
// acts on them: the first function with a required argument is called without
// it, then with it wrongly typed.
Outcome case_call_invalid_arguments(Case& c) {
  Session s(c);
  if (Outcome o = s.open(); !o.passed) return o;
  pb::ListDevicesResponse list;
  if (Outcome o = listed(s, list); !o.passed) return o;
  for (const auto& d : list.devices()) {
    pb::Response desc;
    Outcome od = s.expect(describe_request(d.device_id()), {pb::Status::CODE_OK},
                          fmt::format("DescribeDevice \"{}\"", d.device_id()), &desc);
    if (!od.passed) return od;
    for (const auto& f : desc.describe_device().capabilities().functions()) {
      auto arg = std::find_if(f.args().begin(), f.args().end(), [](const pb::ArgSpec& a) {
        return a.required() && a.type() != pb::VALUE_TYPE_UNSPECIFIED;
      });
      if (arg == f.args().end()) continue;
      pb::Request req;
      req.mutable_call()->set_device_id(d.device_id());
      req.mutable_call()->set_function_id(f.function_id());
      std::string what = fmt::format("Call \"{}\".\"{}\"", d.device_id(), f.name());
      if (Outcome o =
              s.expect(req, {pb::Status::CODE_INVALID_ARGUMENT}, what + " without argument \"" + arg->name() + "\"");
          !o.passed)
        return o;
      // A bool where anything else is declared, a string where a bool is.
      pb::Value wrong;
      if (arg->type() == pb::VALUE_TYPE_BOOL) {
        wrong.set_type(pb::VALUE_TYPE_STRING);
        wrong.set_string_value("dot-core-conformance");
      } else {
        wrong.set_type(pb::VALUE_TYPE_BOOL);
        wrong.set_bool_value(true);
      }
      (*req.mutable_call()->mutable_args())[arg->name()] = wrong;
      if (Outcome o = s.expect(req, {pb::Status::CODE_INVALID_ARGUMENT},
                               what + " with argument \"" + arg->name() + "\" of the wrong type");
          !o.passed)
        return o;
      return finish(c, s.p, fmt::format("{}: missing and wrongly typed \"{}\" refused", what, arg->name()));
    }
  }
  return finish(c, s.p, "no function declares a required argument: nothing to check");
}

Outcome case_get_health(Case& c) {
  Session s(c);
  if (Outcome o = s.open(); !o.passed) return o;
  pb::Request req;
  req.mutable_get_health();
  pb::Response r;
  if (Outcome o = s.expect(req, {pb::Status::CODE_OK}, "GetHealth", &r); !o.passed) return o;
  return finish(c, s.p, fmt::format("provider {}", pb::ProviderHealth::State_Name(r.get_health().provider().state())));
}

Outcome case_wait_ready(Case& c) {
  Session s(c);
  if (Outcome o = s.open(); !o.passed) return o;
  const auto& meta = s.hello.metadata();
  auto it = meta.find(std::string(kMetaSupportsWaitReady));
  bool supported = it != meta.end() && it->second == "true";
  pb::Request req;
  req.mutable_wait_ready()->set_max_wait_ms_hint(static_cast<std::uint32_t>(c.window().count()));
  auto r = s.ask(req);
  if (!r.ok()) return fail(fmt::format("WaitReady: {}", describe_read_error(r.error(), c.window())));
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
  return finish(c, s.p, detail);
}

struct CaseDef {
  CaseInfo info;
  Outcome (*run)(Case&);
};

constexpr Suite P = Suite::Profile;
constexpr Suite S = Suite::Semantics;

constexpr CaseDef kCases[] = {
    {{"hello_metadata", P, "a Hello: OK, id echoed, \"v1\", metadata transport, max_frame_bytes, supports_wait_ready"},
     case_hello_metadata},
    {{"oversized_prefix", P, "only a 2 MiB length prefix, stdin open: controlled, the payload never awaited"},
     case_oversized_prefix},
    {{"zero_length", P, "a zero length prefix, stdin open: controlled"}, case_zero_length},
    {{"truncated", P, "a prefix announcing 64 bytes, then stdin closed: controlled"}, case_truncated},
    {{"garbage_payload", P, "a frame of 28 bytes that are not a Request: controlled"}, case_garbage_payload},
    {{"max_frame_request", P, "a Hello frame of exactly 1048576 bytes (the cap): answered OK"}, case_max_frame_request},
    {{"over_cap_request", P, "a Hello frame of 1048577 bytes (cap + 1): controlled, not served"},
     case_over_cap_request},
    {{"trailing_garbage", P, "a Hello and a garbage frame in one write: Hello OK first, then controlled"},
     case_trailing_garbage},
    {{"fragmented", P, "a Hello in two writes 50 ms apart: OK, id 1, \"v1\""}, case_fragmented},
    {{"coalesced", P, "Hellos 1 and 2 in one write: both OK, matched by request_id in any order"}, case_coalesced},
    {{"hello_unsupported_version", P, "a Hello for \"v999\": FAILED_PRECONDITION or UNIMPLEMENTED"},
     case_hello_unsupported_version},
    {{"hello_repeated", P, "a second Hello in one session: OK"}, case_hello_repeated},
    {{"request_id_64bit", P, "request ids above 2^63 and 2^64-1: echoed exactly"}, case_request_id_64bit},
    {{"unknown_fields", P, "a Hello carrying fields 998 and 999: OK (unknown fields ignored)"}, case_unknown_fields},
    {{"eof_exit", P, "stdin closed after a Hello: nothing more on stdout, exit 0"}, case_eof_exit},
    {{"list_devices", S, "ListDevices: OK, device ids non-empty and unique"}, case_list_devices},
    {{"describe_devices", S, "DescribeDevice of each listed device (16 at most): OK, ids consistent and unique"},
     case_describe_devices},
    {{"describe_unknown_device", S, "DescribeDevice of an unknown device: NOT_FOUND"}, case_describe_unknown_device},
    {{"read_signals", S, "ReadSignals of one declared signal: OK with exactly that value"}, case_read_signals},
    {{"read_signals_unknown_signal", S,
      "ReadSignals of a declared and an unknown signal: NOT_FOUND, or OK without the unknown one"},
     case_read_signals_unknown_signal},
    {{"read_signals_unknown_device", S, "ReadSignals on an unknown device: NOT_FOUND"},
     case_read_signals_unknown_device},
    {{"call_unknown_function", S, "Call of an unknown function, and on an unknown device: NOT_FOUND"},
     case_call_unknown_function},
    {{"call_invalid_arguments", S, "Call without a required argument, then with it wrongly typed: INVALID_ARGUMENT"},
     case_call_invalid_arguments},
    {{"get_health", S, "GetHealth: OK"}, case_get_health},
    {{"wait_ready", S, "WaitReady: OK when supports_wait_ready=true, a defined error otherwise"}, case_wait_ready},
};

}  // namespace

std::string_view suite_name(Suite suite) noexcept { return suite == Suite::Profile ? "profile" : "semantics"; }

std::size_t ConformanceReport::passed() const noexcept {
  return static_cast<std::size_t>(std::count_if(cases.begin(), cases.end(), [](const auto& c) { return c.passed; }));
}
std::size_t ConformanceReport::failed() const noexcept { return cases.size() - passed(); }
std::size_t ConformanceReport::passed(Suite suite) const noexcept {
  return static_cast<std::size_t>(
      std::count_if(cases.begin(), cases.end(), [&](const auto& c) { return c.suite == suite && c.passed; }));
}
std::size_t ConformanceReport::failed(Suite suite) const noexcept {
  return static_cast<std::size_t>(
      std::count_if(cases.begin(), cases.end(), [&](const auto& c) { return c.suite == suite && !c.passed; }));
}

std::vector<CaseInfo> conformance_cases() {
  std::vector<CaseInfo> all;
  for (const auto& c : kCases) all.push_back(c.info);
  return all;
}

Result<ConformanceReport> run_conformance(const std::vector<std::string>& argv, const ConformanceOptions& options) {
  if (argv.empty()) return make_error(adpp::ErrorKind::Spawn, "no provider command given");
  for (const auto& name : options.only) {
    auto it = std::find_if(std::begin(kCases), std::end(kCases), [&](const CaseDef& c) { return c.info.name == name; });
    if (it == std::end(kCases))
      return make_error(adpp::ErrorKind::Case, fmt::format("no conformance case \"{}\"", name));
  }
  std::vector<const CaseDef*> selected;
  for (const auto& c : kCases) {
    bool chosen = options.only.empty()
                      ? std::find(options.suites.begin(), options.suites.end(), c.info.suite) != options.suites.end()
                      : std::find(options.only.begin(), options.only.end(), c.info.name) != options.only.end();
    if (chosen) selected.push_back(&c);
  }

  // Whatever a provider abandons (a child that left its process group with
  // setsid) is re-parented to this process and killed and reaped once, after
  // the last case: the cases run side by side, and a sweep at the end of one
  // would kill what another case's provider still relies on.
  DOT_ASSIGN_OR_RETURN(OrphanSweep sweep, OrphanSweep::begin());
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
      out.name = std::string(selected[i]->info.name);
      out.suite = selected[i]->info.suite;
      auto start = Clock::now();
      Case c(argv, options);
      try {
        Outcome o = selected[i]->run(c);
        out.passed = o.passed;
        out.detail = o.passed ? std::move(o.detail) : c.annotate(std::move(o.detail));
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
