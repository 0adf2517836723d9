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
  slow.source = dot::json::detail::make_block_array<char>(size + 1);
  if (size) std::memcpy(slow.source.get(), data, size);
  slow.source[size] = 0;
  dot::Status st = dot::json::detail::parse_strict(slow, limits);
  if (fast.ok() != st.ok()) std::abort();

  // The reusing entry points agree with the one-shot ones: parse_into a
  // Document that held another tree, and validate_padded over input followed
  // by padding that could continue it ("1", "]", '"') instead of zeros.
  {
    dot::json::Parser parser;
    dot::json::Document reused;
    if (!parser.parse_into("{\"warm\":[1,\"x\",{\"y\":null}]}", reused).ok()) std::abort();
    dot::Status into = parser.parse_into(bytes, reused, limits);
    if (into.ok() != st.ok()) std::abort();
    if (into.ok() && reused.impl().nodes.size() != slow.nodes.size()) std::abort();
    std::unique_ptr<char[]> padded(new char[size + dot::json::kPadding]);
    if (size) std::memcpy(padded.get(), data, size);
    const char fill[] = {'1', ']', '"', '}', ' ', 'e'};
    std::memset(padded.get() + size, fill[size % sizeof fill], dot::json::kPadding);
    dot::Status v = parser.validate_padded(std::string_view(padded.get(), size), limits);
    if (v.ok() != st.ok()) std::abort();
    if (!v.ok() && (v.error().kind != st.error().kind || v.error().offset != st.error().offset)) std::abort();
  }
  if (!st.ok()) {
    if (fast.error().kind != st.error().kind || fast.error().offset != st.error().offset) std::abort();
    return 0;
  }
  const auto& a = fast->impl().nodes;
  const auto& b = slow.nodes;
  if (a.size() != b.size()) std::abort();
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto index = static_cast<std::uint32_t>(i);
    if (a[i].type != b[i].type || a[i].offset != b[i].offset || a[i].flag != b[i].flag ||
        dot::json::detail::next_of(a.data(), index) != dot::json::detail::next_of(b.data(), index))
      std::abort();
    if (a[i].type == dot::json::Type::String) {
      if (fast->impl().string_of(a[i]) != slow.string_of(b[i])) std::abort();
    } else if (a[i].payload != b[i].payload) {  // numbers bit for bit, container counts and ends
      std::abort();
    }
  }
  return 0;
}
