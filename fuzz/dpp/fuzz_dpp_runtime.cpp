// The plugin runtime (dot/dpp/runtime.h) over an arbitrary input stream: the
// bytes a host could send, split into reads at a size the input chooses. The
// plugin logs once per request and plans from what it is given; it stages
// nothing (materialize claims without writing). Deterministic oracles:
//   - serve returns 0 or 1, and 0 only after it answered dot.shutdown;
//   - everything it wrote is a sequence of legal frames of at most
//     max_frame_bytes, each a canonical response {id, jsonrpc, result|error}
//     or a dot.log notification that the host's own decoders accept;
//   - an error code is one of -32700 (then id null), -32600, -32601, -32602,
//     -32603, -32000, and its message is at most 4096 bytes;
//   - responses carry ids 1..5 in order for their results, never repeat a
//     result, and never outnumber the frames read;
//   - no more than max_log_messages notifications, none before the first
//     dot.initialize result or after the dot.shutdown result.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "dot/base/byte_stream.h"
#include "dot/base/error_kinds.h"
#include "dot/dpp/body.h"
#include "dot/dpp/frame.h"
#include "dot/dpp/general.h"
#include "dot/dpp/jsonrpc.h"
#include "dot/dpp/runtime.h"

namespace {

namespace g = dot::dpp::general;

void check(bool ok) {
  if (!ok) std::abort();
}

class Plugin final : public g::Plugin {
 public:
  std::string id() const override { return "org.dot.fuzz"; }
  bool wants_log() const override { return true; }
  dot::Result<std::vector<g::Operation>> plan(g::Context& ctx, const std::vector<std::string>& managed) override {
    (void)ctx.log("info", "plan");
    std::vector<g::Operation> ops;
    // Remove what it is told it owns: the plugin's answer depends on the input.
    for (const auto& m : managed) ops.push_back({"remove", 0, m});
    if (managed.size() == 2) return dot::make_error(dot::base::ErrorKind::Read, managed[0]);
    return ops;
  }
  dot::Result<std::vector<g::Artifact>> materialize(g::Context& ctx, const std::string& stage) override {
    (void)ctx.log("debug", stage);
    return std::vector<g::Artifact>{{stage, std::string(64, '0'), 0}};
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte chooses how the input is split into reads (1..256).
  std::size_t chunk = static_cast<std::size_t>(data[0]) + 1;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);

  // How many frames the input holds at most (each needs its header).
  std::size_t frames_in = 0;
  for (std::size_t at = input.find("Content-Length: "); at != std::string_view::npos;
       at = input.find("Content-Length: ", at + 1))
    ++frames_in;

  Plugin plugin;
  dot::MemorySource in(input, {chunk});
  dot::StringSink out, err;
  int status = g::serve(plugin, in, out, err);
  check(status == 0 || status == 1);

  dot::MemorySource back(out.out);
  dot::dpp::FrameReader reader(back, g::kLimits.max_frame_bytes);
  std::uint64_t next_result = 1;  // the id of the next result, 6 after dot.shutdown
  std::size_t responses = 0, logs = 0;
  g::Batched<g::Operation> operations;  // dot.operations batches read
  for (;;) {
    auto f = reader.next();
    check(f.ok());
    if (!f->has_value()) break;
    const std::string& body = (*f)->body;
    auto doc = dot::dpp::parse_body(body, 0, g::kLimits.max_frame_bytes);
    check(doc.ok());
    dot::json::Value root = doc->root();
    check(root.is_object());
    if (root.find("method")) {
      // A notification: only between the echo and the shutdown result; a
      // dot.log, or a batch of the list the outstanding request answers
      // (more than 1024 managed paths make dot.plan's answer come in batches).
      check(next_result >= 2 && next_result <= 5);
      auto reply = g::decode_reply(*doc, next_result, static_cast<dot::dpp::Method>(next_result));
      check(reply.ok() && reply->kind == g::Reply::Kind::Notification);
      if (reply->method == g::kOperationsMethod) {
        check(next_result == 2);
        check(g::decode_operations_batch(reply->params, g::kLimits, false, operations).ok());
        continue;
      }
      check(reply->method == g::kLogMethod);
      check(g::decode_log_params(reply->params).ok());
      check(++logs <= g::kLimits.max_log_messages);
      continue;
    }
    ++responses;
    auto id = root.find("id");
    check(id.has_value());
    auto error = root.find("error");
    if (error) {
      auto e = g::decode_error_object(*error);
      check(e.ok());
      check(e->code == dot::dpp::kParseError || e->code == dot::dpp::kInvalidRequest ||
            e->code == dot::dpp::kMethodNotFound || e->code == dot::dpp::kInvalidParams || e->code == -32603 ||
            e->code == -32000);
      if (e->code == dot::dpp::kParseError) check(id->is_null());
      // Re-encoded by the host's rules it is the same bytes: the runtime's answers are canonical.
      std::optional<std::uint64_t> rid;
      if (!id->is_null()) {
        auto got = dot::dpp::read_id(*id, "response");
        check(got.ok());
        rid = *got;
      }
      auto again = g::encode_error_response(rid, *e);
      check(again.ok() && *again == body);
      continue;
    }
    // A result answers exactly the next request of the lifecycle.
    check(next_result <= 5);
    auto reply = g::decode_reply(*doc, next_result, static_cast<dot::dpp::Method>(next_result));
    check(reply.ok() && reply->kind == g::Reply::Kind::Result);
    ++next_result;
  }
  check(responses <= frames_in);
  check(status == 1 || next_result == 6);
  return 0;
}
