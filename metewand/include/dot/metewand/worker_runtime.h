#pragma once
// The worker side of a Metewand v1 session: reads requests with the same
// FrameReader the host uses, answers hello, then every request of the
// negotiated role and `shutdown`, with the shapes of operations.h.
//
//   - a method of the role: the handler's success, or its WorkerFailure
//     (a missing handler answers unsupported_operation);
//   - a known method of another role: unsupported_operation;
//   - a second hello, an unknown method, or a request whose members are not
//     its method's: invalid_request (details.method names the method);
//   - shutdown: the acknowledgment {id, ok:true}, and serving ends.
// A line that is not a frame, a request without a string id, or the end of
// the request stream before shutdown ends serving with an error (the worker
// should exit non-zero: the host is no longer speaking the protocol).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dot/base/result.h"
#include "dot/metewand/frame_reader.h"
#include "dot/metewand/hello.h"
#include "dot/metewand/operations.h"

namespace dot::metewand {

// What a handler returns: the success (its id and method are filled in by
// the runtime) or a failure (its id likewise).
using OperationResult = Expected<OperationSuccess, WorkerFailure>;
using OperationHandler = std::function<OperationResult(const OperationRequest&)>;

struct WorkerHandlers {
  OperationHandler materialize, prepare, execute, reset, evaluate;
  const OperationHandler* find(Method method) const noexcept;
};

// What the worker reports at hello.
struct WorkerHelloReply {
  std::optional<SdkMetadata> sdk;            // nullopt: a direct protocol worker
  std::vector<Capability> capabilities;      // reported as given (implementation role)
  bool capabilities_for_every_role = false;  // else non-implementation roles report []
};

// A failure response with `code` and `message` for request `id`.
WorkerFailure make_failure(std::string id, std::string code, std::string message);

// Writes one message line (canonical JSON + LF) to `fd`. Errors: MessageError
// as Code::Protocol, or the write's Code::Io.
Status send_message(int fd, const jcs::Node& message);

// Answers requests after a successful hello until shutdown. `role` is the
// negotiated one. Returns after the shutdown acknowledgment is written.
// Errors (Code::Protocol): the FrameError, "request_id" (no string id),
// "request_stream_ended"; a failed write (Code::Io).
Status serve_requests(FrameReader& reader, int out_fd, WorkerRole role, const WorkerHandlers& handlers);

// The whole session: reads and answers hello (echoing the identity, protocol
// 1; a malformed hello or an offer without 1 is answered invalid_request and
// is an error), then serve_requests.
Status serve_session(FrameReader& reader, int out_fd, const WorkerHelloReply& hello, const WorkerHandlers& handlers);

}  // namespace dot::metewand
