#pragma once
// The fixed-point oracle of the Metewand fuzz targets (fuzz_hello.cpp,
// fuzz_operations.cpp): a decoded message is encoded, framed and decoded
// again; the canonical bytes must not move. Violations abort.
#include <cstdlib>
#include <string_view>
#include <utility>
#include <variant>

#include "dot/base/jcs.h"
#include "dot/metewand/frame_reader.h"
#include "dot/metewand/message.h"

namespace dot::metewand::fuzzing {

// Encode `node`, frame it, decode it with `decode`, encode that again: the
// two lines must be equal. `refusable(error)` says which refusals of the
// encoder are answers rather than bugs (objects a peer sent, such as failure
// details or statistics, need not fit the metewand profile we encode with).
template <typename Decode, typename Refusable>
void round_trip(const jcs::Node& node, Decode decode, Refusable refusable) {
  auto line = encode_message(node);
  if (!line.ok()) {
    if (refusable(line.error())) return;
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

// A reply variant (success or failure) with the to_node round_trip needs.
template <typename Reply>
struct ReplyView {
  Reply reply;
  jcs::Node to_node() const {
    return std::visit([](const auto& r) { return r.to_node(); }, reply);
  }
};

}  // namespace dot::metewand::fuzzing
