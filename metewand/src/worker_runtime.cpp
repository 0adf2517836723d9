// The worker side of a Metewand v1 session (worker_runtime.h).
#include "dot/metewand/worker_runtime.h"
#include "dot/metewand/error_kinds.h"

#include <fmt/format.h>

#include "dot/base/fd.h"
#include "dot/metewand/correlation.h"
#include "dot/metewand/message.h"

namespace dot::metewand {
namespace {

WorkerFailure invalid_request(std::string id, std::string message, std::optional<Method> method) {
  WorkerFailure f = make_failure(std::move(id), "invalid_request", std::move(message));
  if (method) {
    jcs::Node details = jcs::Node::object();
    details.set("method", jcs::Node::string(std::string(method_name(*method))));
    f.details = std::move(details);
  }
  return f;
}

Result<std::optional<ParsedFrame>> next_request(FrameReader& reader) {
  auto frame = reader.read_frame();
  if (!frame.ok()) return frame.error().to_error();
  return std::move(frame).value();
}

}  // namespace

const OperationHandler* WorkerHandlers::find(Method method) const noexcept {
  const OperationHandler* h = nullptr;
  switch (method) {
    case Method::Materialize:
      h = &materialize;
      break;
    case Method::Prepare:
      h = &prepare;
      break;
    case Method::Execute:
      h = &execute;
      break;
    case Method::Reset:
      h = &reset;
      break;
    case Method::Evaluate:
      h = &evaluate;
      break;
    default:
      return nullptr;
  }
  return *h ? h : nullptr;
}

WorkerFailure make_failure(std::string id, std::string code, std::string message) {
  WorkerFailure f;
  f.id = std::move(id);
  f.code = std::move(code);
  f.message = message.empty() ? std::string("the operation failed") : std::move(message);
  return f;
}

Status send_message(int fd, const jcs::Node& message) {
  auto line = encode_message(message);
  if (!line.ok()) return line.error().to_error();
  return write_all(fd, *line, "the response stream");
}

Status serve_requests(FrameReader& reader, int out_fd, WorkerRole role, const WorkerHandlers& handlers) {
  for (;;) {
    DOT_ASSIGN_OR_RETURN(auto frame, next_request(reader));
    if (!frame) return make_error(metewand::ErrorKind::RequestStreamEnded, "the request stream ended before shutdown");
    json::Value root = frame->document.root();
    auto id = response_id(root);
    if (!id || id->empty())
      return make_error(metewand::ErrorKind::RequestId, "a request without a non-empty string id cannot be answered");
    std::string rid(*id);
    auto method = request_method(root);
    if (!method) {
      DOT_TRY(send_message(out_fd, invalid_request(rid, "the method is not one of version 1", std::nullopt).to_node()));
      continue;
    }
    if (*method == Method::Hello) {
      DOT_TRY(send_message(out_fd, invalid_request(rid, "hello is only the first request", method).to_node()));
      continue;
    }
    if (!role_accepts(role, *method)) {
      WorkerFailure f =
          make_failure(rid, "unsupported_operation",
                       fmt::format("the {} role does not take {}", role_name(role), method_name(*method)));
      DOT_TRY(send_message(out_fd, f.to_node()));
      continue;
    }
    auto request = decode_operation_request(root);
    if (!request.ok()) {
      DOT_TRY(send_message(out_fd, invalid_request(rid, request.error().message(), method).to_node()));
      continue;
    }
    if (*method == Method::Shutdown) {
      OperationSuccess ack;
      ack.method = Method::Shutdown;
      ack.id = rid;
      return send_message(out_fd, ack.to_node());
    }
    const OperationHandler* handler = handlers.find(*method);
    jcs::Node answer = jcs::Node::null();
    if (handler == nullptr) {
      answer = make_failure(rid, "unsupported_operation",
                            fmt::format("this worker does not implement {}", method_name(*method)))
                   .to_node();
    } else {
      OperationResult result = (*handler)(*request);
      if (result.ok()) {
        OperationSuccess success = std::move(result).value();
        success.method = *method;
        success.id = rid;
        answer = success.to_node();
      } else {
        WorkerFailure failure = std::move(result).error();
        failure.id = rid;
        answer = failure.to_node();
      }
    }
    DOT_TRY(send_message(out_fd, answer));
  }
}

Status serve_session(FrameReader& reader, int out_fd, const WorkerHelloReply& hello, const WorkerHandlers& handlers) {
  DOT_ASSIGN_OR_RETURN(auto frame, next_request(reader));
  if (!frame) return make_error(metewand::ErrorKind::RequestStreamEnded, "the request stream ended before hello");
  json::Value root = frame->document.root();
  auto request = decode_hello_request(root);
  auto id = response_id(root);
  if (!request.ok()) {
    if (id && !id->empty())
      DOT_TRY(
          send_message(out_fd, invalid_request(std::string(*id), request.error().message(), Method::Hello).to_node()));
    return request.error().to_error();
  }
  auto protocol = negotiate_protocol(request->protocols);
  if (!protocol.ok()) {
    DOT_TRY(send_message(out_fd, invalid_request(request->id, protocol.error().message(), Method::Hello).to_node()));
    return protocol.error().to_error();
  }
  HelloResponse response;
  response.id = request->id;
  response.protocol = *protocol;
  response.worker_id = request->worker_id;
  response.sdk = hello.sdk;
  if (request->role == WorkerRole::Implementation || hello.capabilities_for_every_role)
    response.capabilities = hello.capabilities;
  DOT_TRY(send_message(out_fd, response.to_node()));
  return serve_requests(reader, out_fd, request->role, handlers);
}

}  // namespace dot::metewand
