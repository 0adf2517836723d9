#pragma once
// The JSON checks on a frame body (docs/spec/dpp-hello.md, "Body checks"): first
// the whole body must be valid UTF-8; then whichever comes first by offset of
// nesting deeper than 16, a duplicate key (compared after unescaping), or
// malformed JSON; then anything after the one value. Errors are Code::Protocol
// with a DPP kind and the offset counted from the start of the stream:
//
//   DPP kind       strict-reader kinds (json.h) mapped onto it
//   utf8           utf8
//   depth          depth
//   duplicate_key  duplicate_key
//   trailing       trailing
//   malformed      malformed, and also:
//                  bom (a byte-order mark is not JSON text; offset of the BOM;
//                    but invalid UTF-8 anywhere in the body still wins as utf8),
//                  invalid_unicode (a lone surrogate escape cannot become UTF-8),
//                  invalid_number (a number beyond binary64, e.g. 1e400)
//
// For the three folded kinds the detail names the original problem.

#include <cstdint>
#include <string_view>

#include "dot/base/json.h"
#include "dot/base/result.h"
#include "dot/dpp/frame.h"

namespace dot::dpp {

// The strict-reader limits of a DPP body (`max_bytes`: 64 KiB for the hello
// profile, the negotiated max_frame_bytes for the general one; depth 16).
json::ReadLimits body_limits(std::size_t max_bytes = kMaxBody) noexcept;

// Validates without building a tree (the decoder's fast path).
Status check_body(std::string_view body, std::uint64_t body_offset, std::size_t max_bytes = kMaxBody);
// Validates and parses.
Result<json::Document> parse_body(std::string_view body, std::uint64_t body_offset, std::size_t max_bytes = kMaxBody);

// Re-labels a strict-reader error on `body` (starting at stream offset
// `body_offset`) as the DPP error described above.
Error body_error(const Error& reader_error, std::string_view body, std::uint64_t body_offset);

// The body on one line: whitespace outside strings removed, everything else
// (key order, number spelling, escapes) exactly as sent. `body` must have
// passed check_body.
std::string compact_json(std::string_view body);

}  // namespace dot::dpp
