#pragma once
// The provider runtime: the loop a provider author links against. It reads
// framed Requests, dispatches each to a ProviderHandler, and writes exactly
// one flushed Response per frame before reading the next. It answers Hello
// itself (version check, the profile's metadata) and turns every malformed
// input into either a framed error Status or one of the profile's exit codes:
//
//   input                          reaction
//   zero-length frame              INVALID_ARGUMENT (request_id 0), keep reading
//   payload that is not a Request  INVALID_ARGUMENT (request_id 0), keep reading
//   Request without a payload      INVALID_ARGUMENT (UNIMPLEMENTED if it carries
//                                  unknown fields: a request type from the future)
//   over-cap length prefix         RESOURCE_EXHAUSTED (request_id 0), exit 2,
//                                  without reading the payload
//   stream ends inside a frame     exit 2
//   read error                     exit 2
//   write error (reader gone)      exit 2
//   clean end of stream            exit 0
//
// A response that would exceed the frame cap is replaced by a small
// RESOURCE_EXHAUSTED response with the same request_id. The loop is single-
// threaded (no thread to join on any exit path); run_provider_stdio ignores
// SIGPIPE so a vanished reader is an exit code, never a signal.

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "dot/adpp/frame.h"
#include "dot/adpp/messages.h"
#include "dot/base/byte_stream.h"
#include "dot/base/result.h"

namespace dot::adpp {

// The profile's exit codes (section 4).
inline constexpr int kExitClean = 0;
inline constexpr int kExitFrameError = 2;
inline constexpr int kExitParseError = 3;

// What a handler answers: OK (payload filled in) or an error code and message.
struct Reply {
  pb::Status::Code code = pb::Status::CODE_OK;
  std::string message;

  static Reply ok() { return {}; }
  static Reply error(pb::Status::Code code, std::string message) { return {code, std::move(message)}; }
};

struct ProviderInfo {
  std::string name;
  std::string version;
  bool supports_wait_ready = false;
  // Extra Hello metadata; the profile's three keys are always set by the loop.
  std::map<std::string, std::string> metadata;
};

// One method per request type. Defaults answer UNIMPLEMENTED.
class ProviderHandler {
 public:
  virtual ~ProviderHandler() = default;
  virtual ProviderInfo info() const = 0;
  virtual Reply list_devices(const pb::ListDevicesRequest& request, pb::ListDevicesResponse& response);
  virtual Reply describe_device(const pb::DescribeDeviceRequest& request, pb::DescribeDeviceResponse& response);
  virtual Reply read_signals(const pb::ReadSignalsRequest& request, pb::ReadSignalsResponse& response);
  virtual Reply call(const pb::CallRequest& request, pb::CallResponse& response);
  virtual Reply get_health(const pb::GetHealthRequest& request, pb::GetHealthResponse& response);
  // Called only when info().supports_wait_ready.
  virtual Reply wait_ready(const pb::WaitReadyRequest& request, pb::WaitReadyResponse& response);
};

struct ProviderLoopOptions {
  std::uint32_t max_frame = kMaxFrameBytes;
  // Bytes asked for per read when no frame is pending (a pending frame's
  // remainder is read in one go).
  std::size_t read_chunk = 64 * 1024;
  // Diagnostics (one line each, no newline); stderr in run_provider_stdio.
  std::function<void(std::string_view)> log;
};

// Answers one decoded Request (Hello included). Public so tests and the
// fuzzer can drive dispatch without framing.
pb::Response handle_request(ProviderHandler& handler, const pb::Request& request);

// Runs until end of input or a fatal stream error; returns the exit code.
// The byte streams are descriptors in a real provider, memory in tests and
// the fuzzer (dot/base/byte_stream.h).
int run_provider(ProviderHandler& handler, ByteSource& in, ByteSink& out, const ProviderLoopOptions& options = {});
// stdin/stdout, diagnostics on stderr, SIGPIPE ignored.
int run_provider_stdio(ProviderHandler& handler);

}  // namespace dot::adpp
