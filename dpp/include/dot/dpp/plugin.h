#pragma once
// The plugin side: a small library for writing DPP plugins. A plugin reads
// requests from stdin and answers on stdout with the same strict framing the
// host uses; stdout is protocol-only (diagnostics go to stderr).
//
//   class MyPlugin : public dot::dpp::PluginHandler { ... };
//   int main() { MyPlugin p; return dot::dpp::serve(p); }
//
// serve() enforces the hello order (ids 1..5, one method each), answers each
// request with the handler's result, and after dot.shutdown requires EOF on
// stdin. On a protocol error (bad framing, JSON, envelope, order, params) or a
// handler error it answers a JSON-RPC error object (when an id is known or the
// request was unreadable), writes the reason to stderr and returns non-zero.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "dot/base/byte_stream.h"
#include "dot/base/jcs.h"
#include "dot/base/json.h"
#include "dot/base/result.h"
#include "dot/dpp/frame.h"
#include "dot/dpp/jsonrpc.h"
#include "dot/dpp/messages.h"

namespace dot::dpp {

// One incoming request with its parsed document. `request.params` points
// into the document (json::Value holds the Document's address, so the
// document lives on the heap and the pair can be moved).
struct IncomingRequest {
  std::unique_ptr<json::Document> doc;
  Request request;
};

// Framed request/response I/O on a pair of descriptors (stdin/stdout).
class PluginConnection {
 public:
  explicit PluginConnection(int in_fd = 0, int out_fd = 1);
  // The next request; nullopt when the host closed stdin cleanly.
  Result<std::optional<IncomingRequest>> next_request();
  Status reply(std::uint64_t id, const jcs::Node& result);
  Status reply_error(std::optional<std::uint64_t> id, std::int64_t code, std::string_view message);
  // A whole frame around `body` (any bytes), or raw bytes as they are.
  Status write_frame(std::string_view body);
  Status write_raw(std::string_view bytes);

 private:
  FdSource in_;
  FdSink out_;
  FrameReader reader_;
  FrameWriter writer_;
};

class PluginHandler {
 public:
  virtual ~PluginHandler() = default;
  virtual Result<InitializeResult> initialize(const InitializeParams& params) = 0;
  virtual Result<PlanResult> plan() = 0;
  virtual Result<MaterializeResult> materialize(const MaterializeParams& params) = 0;
  virtual Result<ValidatedResult> validate() = 0;
  virtual Result<ValidatedResult> shutdown() = 0;
};

// Runs the whole session on `conn`; 0 after a clean session, 1 otherwise.
int serve(PluginHandler& handler, PluginConnection& conn);
int serve(PluginHandler& handler);  // stdin/stdout

// The reference org.dot.hello plugin: echoes the identity, plans hello.txt and
// welcome.txt with the one root-sync effect, and writes both files into the
// stage (created exclusively, mode 0600).
class HelloPlugin : public PluginHandler {
 public:
  Result<InitializeResult> initialize(const InitializeParams& params) override;
  Result<PlanResult> plan() override;
  Result<MaterializeResult> materialize(const MaterializeParams& params) override;
  Result<ValidatedResult> validate() override;
  Result<ValidatedResult> shutdown() override;

  // The bytes dot-hello writes for each slot.
  static std::string_view content(std::string_view name);
};

// Writes `bytes` to `dir`/`name`, created exclusively with mode 0600, never
// through a symlink. Code::Io on failure.
Status write_stage_file(const std::string& dir, std::string_view name, std::string_view bytes);

}  // namespace dot::dpp
