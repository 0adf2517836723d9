#include "dot/adpp/client.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <fmt/format.h>

extern char** environ;

namespace dot::adpp {
namespace {

constexpr std::size_t kReadChunk = 64 * 1024;

int poll_timeout_ms(Clock::time_point deadline) {
  auto now = Clock::now();
  if (now >= deadline) return 0;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
  return static_cast<int>(std::min<long long>(ms, 60'000));
}

Error timeout_error(std::string_view what) {
  return make_error(Code::Protocol, "timeout", fmt::format("no {} before the deadline", what));
}

// A name without '/' is looked up in PATH, like execvp, but here so that the
// spawn helper gets a path and its exec error names the real file.
std::string resolve(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (!dirs.empty()) {
    auto colon = dirs.find(':');
    std::string_view dir = dirs.substr(0, colon);
    dirs = colon == std::string_view::npos ? std::string_view{} : dirs.substr(colon + 1);
    std::string candidate = fmt::format("{}/{}", dir.empty() ? "." : dir, name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;
}

// write() to a pipe whose reader is gone raises SIGPIPE. The caller may not
// have ignored it (a test binary, a library user), so it is blocked in this
// thread for the write and a SIGPIPE the write raised is consumed before the
// old mask is restored.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeGuard() {
    if (raised_ && !was_pending_) {
      timespec zero{0, 0};
      while (sigtimedwait(&pipe_, nullptr, &zero) < 0 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;
  void raised() { raised_ = true; }

 private:
  sigset_t pipe_{}, old_{};
  bool was_pending_ = false;
  bool raised_ = false;
};

}  // namespace

Result<ProviderProcess> ProviderProcess::launch(const std::vector<std::string>& argv, const LaunchOptions& options) {
  if (argv.empty()) return make_error(Code::Internal, "spawn", "no provider command given");
  SpawnOptions so;
  so.argv = argv;
  so.path = resolve(argv[0]);
  if (options.env) {
    so.env = *options.env;
  } else {
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) so.env.emplace_back(*e);
  }
  so.cwd = options.cwd;
  ProviderProcess p;
  DOT_ASSIGN_OR_RETURN(p.child_, spawn(so));
  p.stderr_keep_ = options.stderr_keep;
  set_nonblocking(p.child_.stdin_fd().get(), true);
  set_nonblocking(p.child_.stdout_fd().get(), true);
  set_nonblocking(p.child_.stderr_fd().get(), true);
  return p;
}

void ProviderProcess::drain_stderr() {
  if (stderr_eof_ || !child_.stderr_fd()) return;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(child_.stderr_fd().get(), buf, sizeof buf);
    if (n > 0) {
      stderr_tail_.append(buf, static_cast<std::size_t>(n));
      if (stderr_tail_.size() > stderr_keep_) stderr_tail_.erase(0, stderr_tail_.size() - stderr_keep_);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) stderr_eof_ = true;
    return;
  }
}

Status ProviderProcess::write(std::string_view bytes, Clock::time_point deadline) {
  if (!child_.stdin_fd()) return make_error(Code::Protocol, "closed", "the provider's stdin is already closed");
  SigpipeGuard guard;
  while (!bytes.empty()) {
    ssize_t n = ::write(child_.stdin_fd().get(), bytes.data(), bytes.size());
    if (n >= 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EPIPE) {
      guard.raised();
      return make_error(Code::Protocol, "closed", "the provider closed its stdin");
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return make_error(Code::Io, "write", fmt::format("cannot write to the provider: {}", std::strerror(errno)));
    // The pipe is full: wait for room, draining stderr meanwhile so a
    // provider blocked on its own stderr cannot deadlock us.
    pollfd fds[2] = {{child_.stdin_fd().get(), POLLOUT, 0}, {child_.stderr_fd().get(), POLLIN, 0}};
    int nfds = stderr_eof_ ? 1 : 2;
    int timeout = poll_timeout_ms(deadline);
    if (timeout == 0) return timeout_error("room in the provider's stdin");
    if (::poll(fds, static_cast<nfds_t>(nfds), timeout) < 0 && errno != EINTR)
      return make_error(Code::Io, "poll", std::strerror(errno));
    if (nfds == 2 && fds[1].revents != 0) drain_stderr();
  }
  return {};
}

Status ProviderProcess::send(const pb::Request& request, Clock::time_point deadline) {
  DOT_ASSIGN_OR_RETURN(std::string frame, encode_frame(request));
  return write(frame, deadline);
}

Result<bool> ProviderProcess::pump(Clock::time_point deadline, Want want) {
  for (;;) {
    if (want == Want::Eof && stdout_eof_) return true;
    // A provider flooding stdout has said enough: stop buffering it.
    if (want == Want::Eof && reader_.buffered() > 2 * std::size_t{kMaxFrameBytes}) return true;
    if (want == Want::Frame && (reader_.missing() == 0 || reader_.broken())) return true;
    if (stdout_eof_) return true;
    pollfd fds[2] = {{child_.stdout_fd().get(), POLLIN, 0}, {child_.stderr_fd().get(), POLLIN, 0}};
    int nfds = stderr_eof_ ? 1 : 2;
    int timeout = poll_timeout_ms(deadline);
    if (timeout == 0) return false;
    int r = ::poll(fds, static_cast<nfds_t>(nfds), timeout);
    if (r < 0) {
      if (errno == EINTR) continue;
      return make_error(Code::Io, "poll", std::strerror(errno));
    }
    if (nfds == 2 && fds[1].revents != 0) drain_stderr();
    if (fds[0].revents == 0) continue;
    std::size_t want_bytes = std::max(reader_.missing(), kReadChunk);
    char* area = reader_.prepare(want_bytes);
    ssize_t n = ::read(child_.stdout_fd().get(), area, want_bytes);
    if (n > 0) {
      reader_.commit(static_cast<std::size_t>(n));
    } else if (n == 0) {
      stdout_eof_ = true;
    } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
      return make_error(Code::Io, "read", fmt::format("cannot read the provider's stdout: {}", std::strerror(errno)));
    }
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
    if (stdout_eof_) {
      Status end = reader_.finish();
      if (!end.ok()) {
        Error e = std::move(end).error();
        e.detail = fmt::format("the provider closed stdout inside a frame: {}", e.detail);
        return e;
      }
      return make_error(Code::Protocol, "closed", "the provider closed stdout without answering");
    }
    DOT_ASSIGN_OR_RETURN(bool ready, pump(deadline, Want::Frame));
    if (!ready) return timeout_error("complete response");
  }
}

Result<std::size_t> ProviderProcess::read_to_eof(Clock::time_point deadline) {
  DOT_ASSIGN_OR_RETURN(bool done, pump(deadline, Want::Eof));
  if (!done) return timeout_error("end of the provider's stdout");
  return reader_.buffered();
}

std::optional<ExitStatus> ProviderProcess::wait_exit(Clock::time_point deadline) {
  // Keep draining stderr while waiting: a provider blocked writing
  // diagnostics would otherwise never exit.
  for (;;) {
    drain_stderr();
    auto step = std::min(deadline, Clock::now() + std::chrono::milliseconds(20));
    if (auto s = child_.wait_until(step)) return s;
    if (Clock::now() >= deadline) return std::nullopt;
  }
}

Result<Client> Client::launch(const std::vector<std::string>& argv, const ClientOptions& options) {
  DOT_ASSIGN_OR_RETURN(ProviderProcess p, ProviderProcess::launch(argv, options.launch));
  return Client(std::move(p), options);
}

Status check_hello_metadata(const pb::HelloResponse& hello) {
  const auto& meta = hello.metadata();
  auto expect = [&](std::string_view key, auto ok, std::string_view wanted) -> Status {
    auto it = meta.find(std::string(key));
    if (it == meta.end())
      return make_error(Code::Protocol, "metadata", fmt::format("Hello metadata lacks \"{}\"", key));
    if (!ok(it->second))
      return make_error(Code::Protocol, "metadata",
                        fmt::format("Hello metadata \"{}\" is \"{}\", expected {}", key, it->second, wanted));
    return {};
  };
  DOT_TRY(expect(kMetaTransport, [](const std::string& v) { return v == kTransportStdio; }, "\"stdio+uint32_le\""));
  DOT_TRY(expect(kMetaMaxFrameBytes, [](const std::string& v) { return v == "1048576"; }, "\"1048576\""));
  DOT_TRY(expect(kMetaSupportsWaitReady, [](const std::string& v) { return v == "true" || v == "false"; },
                 "\"true\" or \"false\""));
  return {};
}

Status check_response(const pb::Request& request, const pb::Response& response) {
  if (response.request_id() != request.request_id())
    return make_error(Code::Protocol, "request_id",
                      fmt::format("response carries request_id {} for request {}", response.request_id(),
                                  request.request_id()));
  if (!response.has_status())
    return make_error(Code::Protocol, "status", fmt::format("response to request {} has no status",
                                                            request.request_id()));
  int code = response.status().code();
  if (code == pb::Status::CODE_UNSPECIFIED || !pb::Status::Code_IsValid(code))
    return make_error(Code::Protocol, "status",
                      fmt::format("response to request {} has status {}", request.request_id(), status_code_name(code)));
  if (code == pb::Status::CODE_OK) {
    if (payload_kind(response) != payload_kind(request))
      return make_error(Code::Protocol, "payload",
                        fmt::format("OK response to {} carries payload {}", payload_kind(request),
                                    payload_kind(response)));
  } else if (response.payload_case() != pb::Response::PAYLOAD_NOT_SET) {
    return make_error(Code::Protocol, "payload",
                      fmt::format("{} response carries a {} payload", status_code_name(code), payload_kind(response)));
  }
  return {};
}

Result<pb::Response> Client::request(pb::Request request) {
  if (request.request_id() == 0) request.set_request_id(next_id_++);
  // One absolute deadline for the whole exchange: a slow write and a
  // dripping answer share it.
  auto deadline = Clock::now() + options_.request_timeout;
  DOT_TRY(process_.send(request, deadline));
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
    return make_error(Code::Protocol, "status",
                      fmt::format("Hello refused: {} {}", status_code_name(response.status().code()),
                                  response.status().message()));
  if (response.hello().protocol_version() != kProtocolVersion)
    return make_error(Code::Protocol, "version",
                      fmt::format("provider answered Hello with protocol_version \"{}\", expected \"{}\"",
                                  response.hello().protocol_version(), kProtocolVersion));
  DOT_TRY(check_hello_metadata(response.hello()));
  return response.hello();
}

Result<ExitStatus> Client::shutdown() {
  process_.close_stdin();
  auto status = process_.wait_exit(Clock::now() + options_.request_timeout);
  if (!status) {
    process_.kill_and_reap();
    return make_error(Code::Protocol, "timeout", "the provider did not exit after stdin was closed");
  }
  process_.kill_and_reap();  // any descendants left in its group
  return *status;
}

}  // namespace dot::adpp
