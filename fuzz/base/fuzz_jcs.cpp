// Canonical JSON on any bytes, all three profiles: an accepted text's output
// is itself accepted and canonical (idempotent), a profile subset never
// accepts what RFC 8785 refuses, the subsets agree with RFC 8785's bytes, and
// every binary64 bit pattern's ECMAScript string reads back as the same value
// and has the same significant digits as std::to_chars' shortest form (an
// implementation independent of the writer's Dragonbox). A built copy
// (jcs::Node) must encode to the same bytes as the parsed text.
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "dot/base/jcs.h"
#include "dot/base/json.h"

namespace {

void check_number(const std::uint8_t* data, std::size_t size) {
  if (size < 8) return;
  double d;
  std::memcpy(&d, data, sizeof d);
  if (!std::isfinite(d)) return;
  std::string s;
  dot::jcs::append_number(s, d);
  double back = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), back);
  if (res.ec != std::errc() || res.ptr != s.data() + s.size()) std::abort();
  if (back != d) std::abort();  // -0 prints as 0, which compares equal
  // The significant digits, without the sign, point, exponent and the zeros
  // around them, against those of std::to_chars' shortest scientific form.
  auto significant = [](std::string_view text) {
    text = text.substr(0, text.find_first_of("eE"));
    std::string digits;
    for (char c : text)
      if (c >= '0' && c <= '9' && !(digits.empty() && c == '0')) digits += c;
    while (!digits.empty() && digits.back() == '0') digits.pop_back();
    return digits;
  };
  char shortest[64];
  auto sci = std::to_chars(shortest, shortest + sizeof shortest, d, std::chars_format::scientific);
  if (significant(s) != significant(std::string_view(shortest, static_cast<std::size_t>(sci.ptr - shortest))))
    std::abort();
  // And the string must be valid JSON with that value.
  auto doc = dot::json::parse(s);
  if (!doc.ok() || doc->root().as_double() != d) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  check_number(data, size);
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  dot::json::ReadLimits limits;
  limits.max_bytes = 1 << 20;
  limits.max_depth = 64;
  auto rfc = dot::jcs::canonicalize_text(bytes, dot::jcs::Profile::Rfc8785, limits);
  for (auto profile : {dot::jcs::Profile::Rfc8785, dot::jcs::Profile::Hello, dot::jcs::Profile::Metewand}) {
    auto out = dot::jcs::canonicalize_text(bytes, profile, limits);
    // The streaming writer over padded input gives the same bytes or the
    // same error, and a refused text sends nothing to the sink: zero padding
    // (a mapped file: the text is lent, not copied) and padding that could
    // continue the text (copied), small chunks.
    for (char pad : {'\0', size % 2 ? '1' : ']'}) {
      std::string padded(bytes);
      padded.append(dot::json::kPadding, pad);
      std::string streamed;
      auto to = dot::jcs::canonicalize_text_to(
          std::string_view(padded.data(), size), profile,
          [&streamed](std::string_view piece) -> dot::Status {
            streamed.append(piece);
            return {};
          },
          limits, true, 1 + size % 7);
      if (to.ok() != out.ok()) std::abort();
      if (to.ok() && streamed != *out) std::abort();
      if (!to.ok() && (!streamed.empty() || to.error().kind != out.error().kind ||
                       to.error().offset != out.error().offset))
        std::abort();
    }
    if (!out.ok()) {
      if (out.error().code != dot::Code::Validation) std::abort();
      continue;
    }
    if (!rfc.ok() || *out != *rfc) std::abort();  // subsets write the same bytes
    auto again = dot::jcs::canonicalize_text(*out, profile, limits);
    if (!again.ok() || *again != *out) std::abort();
    auto doc = dot::json::parse(*out, limits);
    if (!doc.ok()) std::abort();
    // A built copy encodes to the same bytes.
    auto encoded = dot::jcs::encode(dot::jcs::Node::from(doc->root()), profile);
    if (!encoded.ok() || *encoded != *out) std::abort();
  }
  return 0;
}
