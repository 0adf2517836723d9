// The strict reader on any bytes: parse() and validate() must agree (accept
// or refuse with the same kind, offset and detail), an accepted document must
// canonicalize, and canonical output must read back and reproduce itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "dot/base/jcs.h"
#include "dot/base/json.h"

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
  auto canonical = dot::jcs::canonicalize(doc->root(), dot::jcs::Profile::Rfc8785);
  if (!canonical.ok()) std::abort();  // every strictly valid text has an RFC 8785 form
  auto again = dot::jcs::canonicalize_text(*canonical, dot::jcs::Profile::Rfc8785, limits);
  if (!again.ok() || *again != *canonical) std::abort();
  return 0;
}
