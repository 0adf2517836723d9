// The one-shot operation decoders under arbitrary lines: the input is one
// line for the framer, then decoded as an operation request and as the reply
// to each method. Whatever decodes must re-encode canonically and decode
// again to the same bytes; a decoded request's method is never hello and its
// role table entry exists; canonical_json_kind names every reader refusal
// with one of Metewand's five kinds. Violations abort.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "dot/base/jcs.h"
#include "dot/metewand/canonical_json.h"
#include "dot/metewand/frame_reader.h"
#include "dot/metewand/message.h"
#include "dot/metewand/operations.h"
#include "round_trip.h"

namespace {

using namespace dot::metewand;

using fuzzing::round_trip;
using ReplyView = fuzzing::ReplyView<OperationReply>;

// Objects a peer sent (parameters, statistics, details) need not fit the
// metewand profile, so a refusal to encode them is an answer.
bool refusable(const MessageError& e) {
  return e.kind == MessageError::Kind::Serialization || e.kind == MessageError::Kind::LineTooLong;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  // Metewand's kind of whatever the metewand profile refuses.
  auto canonical = dot::jcs::canonicalize_text(line, dot::jcs::Profile::Metewand);
  if (!canonical.ok()) {
    std::string_view name = canonical_json_kind(canonical.error(), line).name();
    bool known = name == "duplicate_key" || name == "unsafe_integer" || name == "invalid_number" ||
                 name == "invalid_unicode" || name == "invalid_json" || name == "too_large";
    if (!known) std::abort();
  }
  auto doc = parse_line(line);
  if (!doc.ok()) return 0;
  auto request = decode_operation_request(doc->root());
  if (request.ok()) {
    if (request->method == Method::Hello || request->id.empty()) std::abort();
    if (request_method(doc->root()) != request->method) std::abort();
    round_trip(request->to_node(), [](dot::json::Value v) { return decode_operation_request(v); }, refusable);
  }
  for (Method m : {Method::Materialize, Method::Prepare, Method::Execute, Method::Reset, Method::Evaluate,
                   Method::Shutdown}) {
    auto reply = decode_operation_reply(m, doc->root());
    if (!reply.ok()) continue;
    if (const auto* s = std::get_if<OperationSuccess>(&*reply)) {
      if (s->method != m || s->id.empty()) std::abort();
      if ((m == Method::Materialize || m == Method::Execute) == s->manifest.empty()) std::abort();
      if (s->implementation_time_ns && *s->implementation_time_ns > kMaxSafeInteger) std::abort();
    }
    round_trip(ReplyView{*reply}.to_node(), [m](dot::json::Value v) -> Expected<ReplyView, MessageError> {
      auto r = decode_operation_reply(m, v);
      if (!r.ok()) return std::move(r).error();
      return ReplyView{std::move(r).value()};
    }, refusable);
  }
  return 0;
}
