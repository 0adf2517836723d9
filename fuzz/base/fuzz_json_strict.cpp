// The strict reader on any bytes: parse() and validate() must agree (accept
// or refuse with the same kind, offset and detail), an accepted document must
// canonicalize, and canonical output must read back and reproduce itself.
// Every number of an accepted document has exactly the bits std::from_chars
// gives its spelling (an implementation independent of the reader's digit
// scanning and fast_float; an underflow is zero).
#include <bit>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <system_error>

#include "dot/base/jcs.h"
#include "dot/base/json.h"

namespace {

void check_numbers(const dot::json::Value& v) {
  if (v.is_array()) {
    for (dot::json::Value e : v.elements()) check_numbers(e);
  } else if (v.is_object()) {
    for (const dot::json::Member& m : v.members()) check_numbers(m.value);
  } else if (v.is_number()) {
    std::string_view text = v.number_text();
    bool negative = text[0] == '-';
    double want = 0;
    auto res = std::from_chars(text.data() + negative, text.data() + text.size(), want);
    if (res.ptr != text.data() + text.size()) std::abort();
    if (res.ec == std::errc::result_out_of_range) want = 0;  // the reader refuses an overflow
    else if (res.ec != std::errc()) std::abort();
    if (negative) want = -want;
    if (std::bit_cast<std::uint64_t>(v.as_double()) != std::bit_cast<std::uint64_t>(want)) std::abort();
    if (v.is_integer_spelling() != (text.find_first_of(".eE") == std::string_view::npos)) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  dot::json::ReadLimits limits;
  limits.max_bytes = 1 << 20;
  limits.max_depth = 64;
  auto doc = dot::json::parse(bytes, limits);
  auto st = dot::json::validate(bytes, limits);
  if (doc.ok() != st.ok()) std::abort();
  if (!doc.ok()) {
    const dot::Error& a = doc.error();
    const dot::Error& b = st.error();
    if (a.kind != b.kind || a.offset != b.offset || a.detail != b.detail || !a.offset) std::abort();
    if (*a.offset > size) std::abort();
    return 0;
  }
  check_numbers(doc->root());
  auto canonical = dot::jcs::canonicalize(doc->root(), dot::jcs::Profile::Rfc8785);
  if (!canonical.ok()) std::abort();  // every strictly valid text has an RFC 8785 form
  auto again = dot::jcs::canonicalize_text(*canonical, dot::jcs::Profile::Rfc8785, limits);
  if (!again.ok() || *again != *canonical) std::abort();
  return 0;
}
