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
#include "round_trip.h"

namespace {

using namespace dot::metewand;

using fuzzing::round_trip;
using ReplyView = fuzzing::ReplyView<HelloReply>;

// A request we decoded fits the profile: any refusal to encode it is a bug.
bool never(const MessageError&) { return false; }

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
        // Failure details, any object a worker sent, need not fit the
        // metewand profile (an unsafe integer, say): refusing them is one.
        [details = failure != nullptr && failure->details.has_value()](const MessageError& e) {
          return details && e.kind == MessageError::Kind::Serialization;
        });
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
    round_trip(request->to_node(), [](dot::json::Value v) { return decode_hello_request(v); }, never);
  }
  return 0;
}
