#pragma once
// Private layout of json::Document, shared by the two builders (the simdjson
// fast path in json.cpp and the precise reader in json_strict.cpp) and the
// accessors. Not installed: only base/src includes it.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/json.h"
#include "dot/base/utf8.h"

namespace dot::json::detail {

// One value in pre-order. An object's children alternate key node (a String
// node whose offset is the key's opening quote) and value subtree.
struct Node {
  double number = 0;         // Number: binary64 value
  std::uint64_t offset = 0;  // where the value (or key) starts in the source
  std::uint32_t a = 0;       // String: offset in source or arena; Number: text length; Array/Object: count
  std::uint32_t b = 0;       // String: length
  std::uint32_t next = 0;    // index one past this subtree
  Type type = Type::Null;
  bool flag = false;         // Bool: value; Number: integer spelling; String: bytes are in the arena
};

// Inputs above this size cannot be indexed by the 32-bit fields above; the
// reader refuses them as too_large whatever the caller's limit says.
inline constexpr std::size_t kMaxIndexableBytes = 0xFFFF'0000u;

// Appends nodes in pre-order; containers are opened and closed around their
// children. Strings go into an arena reserved up front to the source size
// (an unescaped string is never longer than its spelling), so string_views
// into it stay valid while the Document is built.
class TreeBuilder {
 public:
  explicit TreeBuilder(std::vector<Node>& nodes, std::string& arena) : nodes_(nodes), arena_(arena) {}

  std::uint32_t open(Type type, std::uint64_t offset) {
    auto index = static_cast<std::uint32_t>(nodes_.size());
    Node& n = nodes_.emplace_back();
    n.type = type;
    n.offset = offset;
    return index;
  }
  void close(std::uint32_t index, std::uint32_t count) {
    nodes_[index].a = count;
    nodes_[index].next = static_cast<std::uint32_t>(nodes_.size());
  }
  void scalar(Type type, std::uint64_t offset, bool flag) {
    Node& n = nodes_.emplace_back();
    n.type = type;
    n.offset = offset;
    n.flag = flag;
    n.next = static_cast<std::uint32_t>(nodes_.size());
  }
  void number(std::uint64_t offset, double value, std::uint32_t text_len, bool integer_spelling) {
    Node& n = nodes_.emplace_back();
    n.type = Type::Number;
    n.offset = offset;
    n.number = value;
    n.a = text_len;
    n.flag = integer_spelling;
    n.next = static_cast<std::uint32_t>(nodes_.size());
  }
  // A string whose unescaped bytes are already at arena[start, end).
  void string_in_arena(std::uint64_t offset, std::size_t start) {
    Node& n = nodes_.emplace_back();
    n.type = Type::String;
    n.offset = offset;
    n.a = static_cast<std::uint32_t>(start);
    n.b = static_cast<std::uint32_t>(arena_.size() - start);
    n.flag = true;
    n.next = static_cast<std::uint32_t>(nodes_.size());
  }
  // A string without escapes: its bytes are source[start, start + size).
  void string_in_source(std::uint64_t offset, std::size_t start, std::size_t size) {
    Node& n = nodes_.emplace_back();
    n.type = Type::String;
    n.offset = offset;
    n.a = static_cast<std::uint32_t>(start);
    n.b = static_cast<std::uint32_t>(size);
    n.next = static_cast<std::uint32_t>(nodes_.size());
  }
  void string_copy(std::uint64_t offset, std::string_view unescaped) {
    std::size_t start = arena_.size();
    arena_.append(unescaped);
    string_in_arena(offset, start);
  }

 private:
  std::vector<Node>& nodes_;
  std::string& arena_;
};

}  // namespace dot::json::detail

namespace dot::json {

struct Document::Impl {
  std::string_view string_of(const detail::Node& n) const {
    return std::string_view((n.flag ? strings.data() : source.get()) + n.a, n.b);
  }
  // The input followed by SIMDJSON_PADDING zero bytes (simdjson reads past the end).
  std::unique_ptr<char[]> source;
  std::size_t size = 0;
  std::vector<detail::Node> nodes;
  std::string strings;
};

namespace detail {

// The precise reader: every rule of json.h with exact kinds and offsets.
// `impl.source`/`impl.size` must be set (padding not needed); fills nodes and strings.
Status parse_strict(Document::Impl& impl, const ReadLimits& limits);

using dot::utf8_valid_prefix;  // dot/base/utf8.h

// The checks that precede parsing: too_large, bom, utf8 (whole input).
Status check_envelope(std::string_view bytes, const ReadLimits& limits);

// Object member order of RFC 8785: UTF-16 code units. UTF-8 byte order is
// code point order, which differs from UTF-16 order only between astral
// characters (surrogate pairs, D800-DFFF) and BMP characters U+E000-U+FFFF.
inline bool utf16_less(std::string_view a, std::string_view b) {
  std::size_t n = std::min(a.size(), b.size());
  std::size_t k = 0;
  while (k < n && a[k] == b[k]) ++k;
  if (k == n) return a.size() < b.size();
  auto la = static_cast<unsigned char>(a[k]);
  auto lb = static_cast<unsigned char>(b[k]);
  // With an equal prefix, k is either inside one code point of the same
  // length in both (continuation bytes: byte order holds) or at a boundary.
  bool astral_a = la >= 0xF0, astral_b = lb >= 0xF0;
  bool high_bmp_a = la == 0xEE || la == 0xEF, high_bmp_b = lb == 0xEE || lb == 0xEF;
  if (astral_a && high_bmp_b) return true;
  if (high_bmp_a && astral_b) return false;
  return la < lb;
}

// The JSON string literal of `s` for error details, shortened when long.
std::string quote_for_detail(std::string_view s);

}  // namespace detail
}  // namespace dot::json
