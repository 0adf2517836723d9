// The ADPP host side: a provider launched, spoken to with deadlines, killed and reaped (client.h).
#include "dot/adpp/client.h"
#include "dot/adpp/error_kinds.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "dot/base/path_search.h"

extern char** environ;

namespace dot::adpp {
namespace {

constexpr std::size_t kReadChunk = 64 * 1024;

Error no_before_deadline(std::string_view what) {
  return timeout_error(fmt::format("no {} before the deadline", what));
}

}  // namespace

Result<ProviderProcess> ProviderProcess::launch(const std::vector<std::string>& argv, const LaunchOptions& options) {
  return launch(argv, options, false);
}

Result<ProviderProcess> ProviderProcess::launch(const std::vector<std::string>& argv, const LaunchOptions& options,
                                                bool sweep_orphans) {
  if (argv.empty()) return make_error(adpp::ErrorKind::Spawn, "no provider command given");
  PluginChildOptions co;
  co.name = "the provider";
  co.stderr_cap = options.stderr_keep;
  co.stderr_keep = StreamCapture::Keep::Last;
  co.sweep_orphans = sweep_orphans;
  SpawnOptions& so = co.spawn;
  so.argv = argv;
  DOT_ASSIGN_OR_RETURN(so.path, find_executable(argv[0]));
  if (options.env) {
    so.env = *options.env;
  } else {
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) so.env.emplace_back(*e);
  }
  so.cwd = options.cwd;
  ProviderProcess p;
  DOT_ASSIGN_OR_RETURN(p.child_, PluginChild::spawn(std::move(co)));
  return p;
}

Status ProviderProcess::write(std::string_view bytes, Clock::time_point deadline) {
  if (!child_.input_open()) return make_error(adpp::ErrorKind::Closed, "the provider's stdin is already closed");
  child_.set_deadline(deadline);
  Status w = child_.write(bytes);
  if (w.ok()) return w;
  const Error& e = w.error();
  if (e.code == Code::Timeout) return no_before_deadline("room in the provider's stdin");
  if (e.is(base::ErrorKind::Closed)) return make_error(adpp::ErrorKind::Closed, "the provider closed its stdin");
  return w;
}

Status ProviderProcess::send(const pb::Request& request, Clock::time_point deadline) {
  DOT_ASSIGN_OR_RETURN(std::string frame, encode_frame(request));
  return write(frame, deadline);
}

Result<bool> ProviderProcess::pump(Clock::time_point deadline, Want want) {
  child_.set_deadline(deadline);
  for (;;) {
    // A provider flooding stdout has said enough: stop buffering it.
    if (want == Want::Eof && reader_.buffered() > 2 * std::size_t{kMaxFrameBytes}) return true;
    if (want == Want::Frame && (reader_.missing() == 0 || reader_.broken())) return true;
    if (child_.output_ended()) return true;
    std::size_t want_bytes = std::max(reader_.missing(), kReadChunk);
    char* area = reader_.prepare(want_bytes);
    auto n = child_.read(area, want_bytes);
    if (!n.ok()) {
      if (n.error().code == Code::Timeout) return false;
      return std::move(n).error();
    }
    if (*n != 0) reader_.commit(*n);
  }
}

Result<pb::Response> ProviderProcess::read_response(Clock::time_point deadline) {
  for (;;) {
    auto frame = reader_.next();
    if (!frame.ok()) return std::move(frame).error();
    if (frame->has_value()) {
      pb::Response response;
      DOT_TRY(parse_payload((*frame)->payload, response, (*frame)->offset, "ADPP Response"));
      return response;
    }
    if (child_.output_ended()) {
      Status end = reader_.finish();
      if (!end.ok()) {
        Error e = std::move(end).error();
        e.detail = fmt::format("the provider closed stdout inside a frame: {}", e.detail);
        return e;
      }
      return make_error(adpp::ErrorKind::Closed, "the provider closed stdout without answering");
    }
    DOT_ASSIGN_OR_RETURN(bool ready, pump(deadline, Want::Frame));
    if (!ready) return no_before_deadline("complete response");
  }
}

Result<std::size_t> ProviderProcess::read_to_eof(Clock::time_point deadline) {
  DOT_ASSIGN_OR_RETURN(bool done, pump(deadline, Want::Eof));
  if (!done) return no_before_deadline("end of the provider's stdout");
  return reader_.buffered();
}

std::optional<ExitStatus> ProviderProcess::wait_exit(Clock::time_point deadline) {
  // stderr is drained while waiting: a provider blocked writing diagnostics
  // would otherwise never exit.
  child_.set_deadline(deadline);
  return child_.wait_exit();
}

Result<Client> Client::launch(const std::vector<std::string>& argv, const ClientOptions& options) {
  // A subreaper before the provider starts: whatever it forks and abandons
  // comes back to us to be killed, never to init.
  DOT_ASSIGN_OR_RETURN(ProviderProcess p, ProviderProcess::launch(argv, options.launch, true));
  return Client(std::move(p), options);
}

Status check_hello_metadata(const pb::HelloResponse& hello) {
  const auto& meta = hello.metadata();
  auto expect = [&](std::string_view key, auto ok, std::string_view wanted) -> Status {
    auto it = meta.find(std::string(key));
    if (it == meta.end()) return make_error(adpp::ErrorKind::Metadata, fmt::format("Hello metadata lacks \"{}\"", key));
    if (!ok(it->second))
      return make_error(adpp::ErrorKind::Metadata,
                        fmt::format("Hello metadata \"{}\" is \"{}\", expected {}", key, it->second, wanted));
    return {};
  };
  DOT_TRY(expect(
      kMetaTransport, [](const std::string& v) { return v == kTransportStdio; }, "\"stdio+uint32_le\""));
  DOT_TRY(expect(
      kMetaMaxFrameBytes, [](const std::string& v) { return v == "1048576"; }, "\"1048576\""));
  DOT_TRY(expect(
      kMetaSupportsWaitReady, [](const std::string& v) { return v == "true" || v == "false"; },
      "\"true\" or \"false\""));
  return {};
}

Status check_response(const pb::Request& request, const pb::Response& response) {
  if (response.request_id() != request.request_id())
    return make_error(adpp::ErrorKind::RequestId, fmt::format("response carries request_id {} for request {}",
                                                              response.request_id(), request.request_id()));
  if (!response.has_status())
    return make_error(adpp::ErrorKind::Status,
                      fmt::format("response to request {} has no status", request.request_id()));
  int code = response.status().code();
  if (code == pb::Status::CODE_UNSPECIFIED || !pb::Status::Code_IsValid(code))
    return make_error(adpp::ErrorKind::Status, fmt::format("response to request {} has status {}", request.request_id(),
                                                           status_code_name(code)));
  if (code == pb::Status::CODE_OK) {
    if (payload_kind(response) != payload_kind(request))
      return make_error(adpp::ErrorKind::Payload, fmt::format("OK response to {} carries payload {}",
                                                              payload_kind(request), payload_kind(response)));
  } else if (response.payload_case() != pb::Response::PAYLOAD_NOT_SET) {
    return make_error(adpp::ErrorKind::Payload,
                      fmt::format("{} response carries a {} payload", status_code_name(code), payload_kind(response)));
  }
  return {};
}

Result<pb::Response> Client::request(pb::Request request) {
  if (request.request_id() == 0) request.set_request_id(next_id_++);
  // One absolute deadline for the whole exchange: a slow write and a
  // dripping answer share it.
  auto deadline = Clock::now() + options_.request_timeout;
  // A provider that no longer reads its stdin (it closed it, or exited
  // before reading) refuses the write or not, depending on whether its exit
  // came before the write: a race, which must not decide the verdict. So a
  // refused write is not one: stdout is read exactly as after a delivered
  // request, and what the provider left there (an answer, garbage, EOF, or
  // nothing until the deadline) is the one verdict.
  Status sent = process_.send(request, deadline);
  if (!sent.ok() && !sent.error().is(ErrorKind::Closed)) return std::move(sent).error();
  DOT_ASSIGN_OR_RETURN(pb::Response response, process_.read_response(deadline));
  DOT_TRY(check_response(request, response));
  return response;
}

Result<pb::HelloResponse> Client::hello() {
  pb::Request req;
  auto* h = req.mutable_hello();
  h->set_protocol_version(std::string(kProtocolVersion));
  h->set_client_name(options_.client_name);
  h->set_client_version(options_.client_version);
  DOT_ASSIGN_OR_RETURN(pb::Response response, request(std::move(req)));
  if (response.status().code() != pb::Status::CODE_OK)
    return make_error(
        adpp::ErrorKind::Status,
        fmt::format("Hello refused: {} {}", status_code_name(response.status().code()), response.status().message()));
  if (response.hello().protocol_version() != kProtocolVersion)
    return make_error(adpp::ErrorKind::Version,
                      fmt::format("provider answered Hello with protocol_version \"{}\", expected \"{}\"",
                                  response.hello().protocol_version(), kProtocolVersion));
  DOT_TRY(check_hello_metadata(response.hello()));
  return response.hello();
}

Result<ExitStatus> Client::shutdown() {
  process_.close_stdin();
  auto status = process_.wait_exit(Clock::now() + options_.request_timeout);
  // Any descendants left in its group, then those that left the group.
  process_.child_.kill_and_reap();
  process_.child_.kill_survivors();
  if (!status) return no_before_deadline("exit after stdin was closed");
  return *status;
}

}  // namespace dot::adpp
