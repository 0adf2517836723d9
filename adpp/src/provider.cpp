// The ADPP provider runtime: one flushed Response per framed Request (provider.h).
#include "dot/adpp/provider.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <exception>

#include <unistd.h>

#include <fmt/format.h>

#include "dot/base/fd.h"

namespace dot::adpp {
namespace {

Reply unimplemented(std::string_view what) {
  return Reply::error(pb::Status::CODE_UNIMPLEMENTED, fmt::format("{} is not implemented by this provider", what));
}

pb::Response hello_response(ProviderHandler& handler, std::uint64_t id, const pb::HelloRequest& hello) {
  if (hello.protocol_version() != kProtocolVersion)
    return error_response(id, pb::Status::CODE_FAILED_PRECONDITION,
                          fmt::format("unsupported protocol_version \"{}\": this provider speaks {}",
                                      hello.protocol_version(), kProtocolVersion));
  ProviderInfo info = handler.info();
  pb::Response r;
  r.set_request_id(id);
  r.mutable_status()->set_code(pb::Status::CODE_OK);
  auto* h = r.mutable_hello();
  h->set_protocol_version(std::string(kProtocolVersion));
  h->set_provider_name(info.name);
  h->set_provider_version(info.version);
  auto& meta = *h->mutable_metadata();
  for (auto& [k, v] : info.metadata) meta[k] = v;
  // The profile's keys win over anything a handler put under the same name.
  meta[std::string(kMetaTransport)] = std::string(kTransportStdio);
  meta[std::string(kMetaMaxFrameBytes)] = std::to_string(kMaxFrameBytes);
  meta[std::string(kMetaSupportsWaitReady)] = info.supports_wait_ready ? "true" : "false";
  return r;
}

template <typename Req, typename Resp>
pb::Response dispatch(std::uint64_t id, const Req& req, Resp* (pb::Response::*mutable_payload)(),
                      Reply (ProviderHandler::*method)(const Req&, Resp&), ProviderHandler& handler) {
  pb::Response r;
  r.set_request_id(id);
  Resp payload;
  Reply reply = (handler.*method)(req, payload);
  if (reply.code == pb::Status::CODE_UNSPECIFIED) {
    // A handler must not leave the status undefined; the profile forbids it on the wire.
    reply = Reply::error(pb::Status::CODE_INTERNAL, "the handler returned no status");
  }
  r.mutable_status()->set_code(reply.code);
  r.mutable_status()->set_message(std::move(reply.message));
  if (reply.code == pb::Status::CODE_OK) (r.*mutable_payload)()->Swap(&payload);
  return r;
}

}  // namespace

Reply ProviderHandler::list_devices(const pb::ListDevicesRequest&, pb::ListDevicesResponse&) {
  return unimplemented("ListDevices");
}
Reply ProviderHandler::describe_device(const pb::DescribeDeviceRequest&, pb::DescribeDeviceResponse&) {
  return unimplemented("DescribeDevice");
}
Reply ProviderHandler::read_signals(const pb::ReadSignalsRequest&, pb::ReadSignalsResponse&) {
  return unimplemented("ReadSignals");
}
Reply ProviderHandler::call(const pb::CallRequest&, pb::CallResponse&) { return unimplemented("Call"); }
Reply ProviderHandler::get_health(const pb::GetHealthRequest&, pb::GetHealthResponse&) {
  return unimplemented("GetHealth");
}
Reply ProviderHandler::wait_ready(const pb::WaitReadyRequest&, pb::WaitReadyResponse&) {
  return unimplemented("WaitReady");
}

pb::Response handle_request(ProviderHandler& handler, const pb::Request& req) {
  const std::uint64_t id = req.request_id();
  try {
    switch (req.payload_case()) {
      case pb::Request::kHello:
        return hello_response(handler, id, req.hello());
      case pb::Request::kListDevices:
        return dispatch(id, req.list_devices(), &pb::Response::mutable_list_devices, &ProviderHandler::list_devices,
                        handler);
      case pb::Request::kDescribeDevice:
        return dispatch(id, req.describe_device(), &pb::Response::mutable_describe_device,
                        &ProviderHandler::describe_device, handler);
      case pb::Request::kReadSignals:
        return dispatch(id, req.read_signals(), &pb::Response::mutable_read_signals, &ProviderHandler::read_signals,
                        handler);
      case pb::Request::kCall:
        return dispatch(id, req.call(), &pb::Response::mutable_call, &ProviderHandler::call, handler);
      case pb::Request::kGetHealth:
        return dispatch(id, req.get_health(), &pb::Response::mutable_get_health, &ProviderHandler::get_health, handler);
      case pb::Request::kWaitReady:
        if (!handler.info().supports_wait_ready)
          return error_response(id, pb::Status::CODE_UNIMPLEMENTED,
                                "WaitReady is not supported (Hello metadata supports_wait_ready=false)");
        return dispatch(id, req.wait_ready(), &pb::Response::mutable_wait_ready, &ProviderHandler::wait_ready, handler);
      case pb::Request::PAYLOAD_NOT_SET:
        break;
    }
  } catch (const std::exception& e) {
    return error_response(id, pb::Status::CODE_INTERNAL, fmt::format("handler failed: {}", e.what()));
  } catch (...) {
    return error_response(id, pb::Status::CODE_INTERNAL, "handler failed with an unknown exception");
  }
  // Unknown fields where a payload should be: a request type this provider
  // does not know (a newer protocol) rather than a malformed request.
  if (!req.GetReflection()->GetUnknownFields(req).empty())
    return error_response(id, pb::Status::CODE_UNIMPLEMENTED, "unknown request type");
  return error_response(id, pb::Status::CODE_INVALID_ARGUMENT, "request carries no payload");
}

int run_provider(ProviderHandler& handler, ByteSource& in, ByteSink& out, const ProviderLoopOptions& options) {
  auto log = [&](std::string_view line) {
    if (options.log) options.log(line);
  };
  // Writes one response; false when the reader is gone (the loop then exits 2).
  std::string frame;
  auto send = [&](const pb::Response& response) -> bool {
    frame.clear();
    Status st = append_frame(frame, response, options.max_frame);
    if (!st.ok()) {
      log(fmt::format("response to request {} is too large ({}); sending RESOURCE_EXHAUSTED", response.request_id(),
                      st.error().detail));
      pb::Response small = error_response(response.request_id(), pb::Status::CODE_RESOURCE_EXHAUSTED,
                                          fmt::format("the response ({} bytes) exceeds the frame limit of {} bytes",
                                                      response.ByteSizeLong(), options.max_frame));
      frame.clear();
      st = append_frame(frame, small, options.max_frame);
      if (!st.ok()) return false;
    }
    Status w = out.write(frame);
    if (!w.ok()) {
      log(w.error().line());
      return false;
    }
    return true;
  };

  FrameReader reader(options.max_frame);
  pb::Request request;
  for (;;) {
    // Drain every complete frame before reading more, so coalesced frames are
    // answered in order and nothing waits on a read that may never come.
    for (;;) {
      auto next = reader.next();
      if (!next.ok()) {
        const Error& e = next.error();
        log(e.line());
        if (reader.broken()) {
          // The payload of an over-cap frame is never read: the stream cannot
          // be resynchronised, so answer once and stop.
          (void)send(error_response(0, pb::Status::CODE_RESOURCE_EXHAUSTED, e.message()));
          return kExitFrameError;
        }
        if (!send(error_response(0, pb::Status::CODE_INVALID_ARGUMENT, e.message()))) return kExitFrameError;
        continue;
      }
      if (!next->has_value()) break;
      const FrameView& f = **next;
      request.Clear();
      Status parsed = parse_payload(f.payload, request, f.offset, "ADPP Request");
      pb::Response response = parsed.ok()
                                  ? handle_request(handler, request)
                                  : error_response(0, pb::Status::CODE_INVALID_ARGUMENT, parsed.error().message());
      if (!parsed.ok()) log(parsed.error().line());
      if (!send(response)) return kExitFrameError;
    }
    std::size_t want = std::max({reader.missing(), options.read_chunk, std::size_t{1}});
    char* area = reader.prepare(want);
    auto got = in.read(area, want);
    if (!got.ok()) {
      log(got.error().line());
      return kExitFrameError;
    }
    if (*got == 0) {
      Status end = reader.finish();
      if (!end.ok()) {
        log(end.error().line());
        return kExitFrameError;
      }
      return kExitClean;
    }
    reader.commit(*got);
  }
}

int run_provider_stdio(ProviderHandler& handler) {
  std::signal(SIGPIPE, SIG_IGN);
  FdSource in(STDIN_FILENO, "stdin");
  FdSink out(STDOUT_FILENO, "stdout");
  ProviderLoopOptions options;
  options.log = [](std::string_view line) {
    std::string l(line);
    l += '\n';
    (void)write_all(STDERR_FILENO, l, "stderr");
  };
  return run_provider(handler, in, out, options);
}

}  // namespace dot::adpp
