// Hello decoding under arbitrary lines: the input is one line for the framer,
// then decoded as a hello reply and as a hello request. Whatever decodes must
// re-encode canonically, decode again to the same thing, and validate against
// a request without crashing. Violations abort.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "dot/metewand/frame_reader.h"
#include "dot/metewand/hello.h"
#include "dot/metewand/message.h"

namespace {

using namespace dot::metewand;

// Encode, frame and decode again with `decode`; the canonical bytes must be a
// fixed point.
// Failure details are any object a worker sent; they need not fit the
// metewand profile we encode with (an unsafe integer, say), so for them a
// refusal to encode is an answer, not a bug.
template <typename Decode>
void round_trip(const dot::jcs::Node& node, Decode decode, bool may_be_unencodable = false) {
  auto line = encode_message(node);
  if (!line.ok()) {
    if (may_be_unencodable && line.error().kind == MessageError::Kind::Serialization) return;
    std::abort();
  }
  std::string_view body(*line);
  body.remove_suffix(1);
  auto doc = parse_line(body);
  if (!doc.ok()) std::abort();
  auto again = decode(doc->root());
  if (!again.ok()) std::abort();
  auto line2 = encode_message(again->to_node());
  if (!line2.ok() || *line2 != *line) std::abort();
}

struct ReplyView {
  HelloReply reply;
  dot::jcs::Node to_node() const {
    return std::visit([](const auto& r) { return r.to_node(); }, reply);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  auto doc = parse_line(line);
  if (!doc.ok()) return 0;
  auto reply = decode_hello_reply(doc->root());
  if (reply.ok()) {
    ReplyView view{*reply};
    const auto* failure = std::get_if<WorkerFailure>(&*reply);
    round_trip(
        view.to_node(),
        [](dot::json::Value v) -> Expected<ReplyView, MessageError> {
          auto r = decode_hello_reply(v);
          if (!r.ok()) return std::move(r).error();
          return ReplyView{std::move(r).value()};
        },
        failure != nullptr && failure->details.has_value());
    if (const auto* ok = std::get_if<HelloResponse>(&*reply)) {
      HelloRequest request;
      request.id = "0";
      request.worker_id = ok->worker_id;
      for (WorkerRole role : {WorkerRole::Implementation, WorkerRole::ProblemEvaluator}) {
        request.role = role;
        Capability sel[] = {Capability::OneShot};
        auto v = validate_hello_response(request, *ok, sel);
        if (v.ok() && (ok->id != "0" || role != WorkerRole::Implementation)) std::abort();
        auto none = validate_hello_response(request, *ok, {});
        if (none.ok() != (ok->id == "0")) std::abort();
      }
    }
  }
  auto request = decode_hello_request(doc->root());
  if (request.ok()) {
    if (!is_worker_identity(request->worker_id) || request->id.empty() || request->protocols.empty()) std::abort();
    round_trip(request->to_node(), [](dot::json::Value v) { return decode_hello_request(v); });
  }
  return 0;
}
