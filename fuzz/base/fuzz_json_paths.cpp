// Differential: the simdjson fast path (inside json::parse) against the
// precise reader alone. Both must accept the same texts and build identical
// trees (types, offsets, sizes, numbers bit for bit, strings, number text),
// and refuse with the same error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

#include "dot/base/json.h"
#include "json_internal.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  dot::json::ReadLimits limits;
  limits.max_bytes = 1 << 20;
  limits.max_depth = size > 0 ? data[0] % 40 : 8;  // vary the depth rule too
  auto fast = dot::json::parse(bytes, limits);
  dot::json::Document::Impl slow;
  slow.size = size;
  slow.source = std::make_unique<char[]>(size + 1);
  if (size) std::memcpy(slow.source.get(), data, size);
  dot::Status st = dot::json::detail::parse_strict(slow, limits);
  if (fast.ok() != st.ok()) std::abort();
  if (!st.ok()) {
    if (fast.error().kind != st.error().kind || fast.error().offset != st.error().offset) std::abort();
    return 0;
  }
  const auto& a = fast->impl().nodes;
  const auto& b = slow.nodes;
  if (a.size() != b.size()) std::abort();
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].type != b[i].type || a[i].offset != b[i].offset || a[i].next != b[i].next || a[i].flag != b[i].flag)
      std::abort();
    if (std::memcmp(&a[i].number, &b[i].number, sizeof(double)) != 0) std::abort();
    if (a[i].type == dot::json::Type::String) {
      if (fast->impl().string_of(a[i]) != slow.string_of(b[i])) std::abort();
    } else if (a[i].a != b[i].a) {
      std::abort();
    }
  }
  return 0;
}
