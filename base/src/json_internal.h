#pragma once
// Private layout of json::Document, shared by the two builders (the simdjson
// fast path in json.cpp and the precise reader in json_strict.cpp) and the
// accessors. Not installed: only base/src includes it.

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "dot/base/json.h"
#include "dot/base/utf8.h"
#include "huge_pages.h"

namespace dot::json::detail {

// Character classes of RFC 8259, shared by the precise reader (json_strict.cpp)
// and the tree builder over simdjson's index (json_index.cpp).
inline bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
// The value of one hex digit, or -1.
constexpr int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The bytes a JSON string cannot hold raw: a quote, a backslash, a control
// character. The reader stops at them to unescape, the canonical writer to
// escape.
#if defined(__SSE2__)
// Bit k set when p[k] (k < 16) is a quote, a backslash or a control character.
inline unsigned stop_mask(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i stop =
      _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                   _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v));  // v <= 0x1F
  return static_cast<unsigned>(_mm_movemask_epi8(stop));
}
#endif
// 10^0 .. 10^19, every power of ten a 64-bit integer holds: the number
// reader scales by them, the canonical writer counts digits with them.
inline constexpr auto kPowersOfTen = [] {
  std::array<std::uint64_t, 20> t{};
  t[0] = 1;
  for (std::size_t i = 1; i < t.size(); ++i) t[i] = t[i - 1] * 10;
  return t;
}();

// How many ASCII digits start at p, found 16 bytes at a time: numbers have
// runs of 1 to 25 digits in random order, and a loop that stops at the first
// other byte mispredicts its exit once per run. Reads up to 15 bytes past
// the run, which the padding of every text the readers take makes harmless.
inline std::size_t digit_run(const char* p) {
#if defined(__SSE2__)
  std::size_t n = 0;
  for (;;) {
    const __m128i v = _mm_sub_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + n)), _mm_set1_epi8('0'));
    auto digits = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(9)), v)));
    if (digits != 0xFFFF) return n + static_cast<std::size_t>(std::countr_one(digits));
    n += 16;
  }
#else
  std::size_t n = 0;
  while (is_digit(p[n])) ++n;
  return n;
#endif
}

// The value of the n digits (n <= 19) at p, eight at a time: each step turns
// eight digit bytes into their value with three multiplications (pairs, then
// fours, then eight), and the last step takes the remaining 0 to 7 digits as
// the low bytes of a word whose leading places are zeros.
inline std::uint64_t digits_value(const char* p, std::size_t n) {
  auto eight = [](std::uint64_t w) {  // w: eight digit values, the first in the low byte
    w = ((w * 10) + (w >> 8)) & 0x00FF00FF00FF00FFull;
    w = ((w * 100) + (w >> 16)) & 0x0000FFFF0000FFFFull;
    return ((w * 10000) + (w >> 32)) & 0xFFFFFFFFull;
  };
  auto load = [](const char* q) {
    std::uint64_t w;
    std::memcpy(&w, q, 8);
    // A byte past the digits may borrow, but only from the bytes above it,
    // which are past the digits too and shifted out.
    return w - 0x3030303030303030ull;
  };
  std::uint64_t value = 0;
  for (; n >= 8; n -= 8, p += 8) value = value * 100000000 + eight(load(p));
  std::uint64_t rest = n == 0 ? 0 : eight(load(p) << (8 * (8 - n)));
  return value * kPowersOfTen[n] + rest;
}

inline bool is_stop(char c) {
  auto u = static_cast<unsigned char>(c);
  return u == '"' || u == '\\' || u < 0x20;
}

// One value in pre-order, 16 bytes: an 8 MiB document has about 650,000
// values, and every byte of the node array is memory a parse must touch.
// An object's children alternate key node (a String node whose offset is the
// key's opening quote) and value subtree. A scalar's subtree ends at the next
// index; a container keeps where its subtree ends.
// Trivial (no member initialisers): the node array is not zero-filled before
// the builders write every field of every node.
struct Node {
  // Number: the binary64 bits. String: start (in source or arena) | length << 32.
  // Array/Object: member or element count | index one past the subtree << 32.
  std::uint64_t payload;
  std::uint32_t offset;  // where the value (or key) starts in the source
  Type type;
  bool flag;  // Bool: value; Number: integer spelling; String: bytes are in the arena

  double number() const noexcept { return std::bit_cast<double>(payload); }
  std::uint32_t lo() const noexcept { return static_cast<std::uint32_t>(payload); }
  std::uint32_t hi() const noexcept { return static_cast<std::uint32_t>(payload >> 32); }
  static std::uint64_t pack(std::uint32_t lo, std::uint32_t hi) noexcept {
    return std::uint64_t{lo} | (std::uint64_t{hi} << 32);
  }
};
static_assert(sizeof(Node) == 16);
static_assert(std::is_trivially_default_constructible_v<Node>);

// The nodes of a Document: a growable array that, unlike std::vector, does
// not value-initialise what it reserves, so that build_from_index can write
// nodes through a plain pointer into reserved room and set the size after.
class NodeArray {
 public:
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  Node* data() noexcept { return data_.get(); }
  const Node* data() const noexcept { return data_.get(); }
  Node& operator[](std::size_t i) noexcept { return data_[i]; }
  const Node& operator[](std::size_t i) const noexcept { return data_[i]; }
  void clear() noexcept { size_ = 0; }
  void reserve(std::size_t n) {
    if (n <= capacity_) return;
    grow_block_array(data_, size_, n);
    capacity_ = n;
  }
  Node& emplace_back() {
    if (size_ == capacity_) reserve(std::max<std::size_t>(64, capacity_ * 2));
    return data_[size_++];
  }
  // After writing nodes [size(), n) through data() into reserved room.
  void set_size(std::size_t n) noexcept { size_ = n; }

 private:
  BlockArray<Node> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

// Index one past the subtree of nodes[i].
inline std::uint32_t next_of(const Node* nodes, std::uint32_t i) noexcept {
  const Node& n = nodes[i];
  return n.type == Type::Array || n.type == Type::Object ? n.hi() : i + 1;
}

// Inputs above this size cannot be indexed by the 32-bit fields above; the
// reader refuses them as too_large whatever the caller's limit says.
inline constexpr std::size_t kMaxIndexableBytes = 0xFFFF'0000u;

// Appends nodes in pre-order; containers are opened and closed around their
// children. Strings go into an arena reserved up front to the source size
// (an unescaped string is never longer than its spelling), so string_views
// into it stay valid while the Document is built.
class TreeBuilder {
 public:
  explicit TreeBuilder(NodeArray& nodes, Arena& arena) : nodes_(nodes), arena_(arena) {}

  std::uint32_t open(Type type, std::uint64_t offset) {
    auto index = static_cast<std::uint32_t>(nodes_.size());
    add(0, offset, type, false);
    return index;
  }
  void close(std::uint32_t index, std::uint32_t count) {
    nodes_[index].payload = Node::pack(count, static_cast<std::uint32_t>(nodes_.size()));
  }
  void scalar(Type type, std::uint64_t offset, bool flag) { add(0, offset, type, flag); }
  void number(std::uint64_t offset, double value, bool integer_spelling) {
    add(std::bit_cast<std::uint64_t>(value), offset, Type::Number, integer_spelling);
  }
  // A string whose unescaped bytes are already at arena[start, end).
  void string_in_arena(std::uint64_t offset, std::size_t start) {
    add(Node::pack(static_cast<std::uint32_t>(start), static_cast<std::uint32_t>(arena_.size() - start)), offset,
        Type::String, true);
  }
  // A string without escapes: its bytes are source[start, start + size).
  void string_in_source(std::uint64_t offset, std::size_t start, std::size_t size) {
    add(Node::pack(static_cast<std::uint32_t>(start), static_cast<std::uint32_t>(size)), offset, Type::String, false);
  }
  void string_copy(std::uint64_t offset, std::string_view unescaped) {
    std::size_t start = arena_.size();
    arena_.append(unescaped);
    string_in_arena(offset, start);
  }

 private:
  void add(std::uint64_t payload, std::uint64_t offset, Type type, bool flag) {
    Node& n = nodes_.emplace_back();
    n.payload = payload;
    n.offset = static_cast<std::uint32_t>(offset);
    n.type = type;
    n.flag = flag;
  }
  NodeArray& nodes_;
  Arena& arena_;
};

}  // namespace dot::json::detail

namespace dot::json {

struct Document::Impl {
  std::string_view string_of(const detail::Node& n) const {
    return std::string_view((n.flag ? strings.data() : text()) + n.lo(), n.hi());
  }
  // The input the nodes point into: the caller's own bytes when it lent them
  // (Parser::parse_borrowed), else this Document's copy.
  const char* text() const noexcept { return borrowed != nullptr ? borrowed : source.get(); }
  // The input followed by SIMDJSON_PADDING zero bytes (simdjson reads past the end).
  detail::BlockArray<char> source;
  const char* borrowed = nullptr;  // lent bytes (with the same padding), or null
  std::size_t size = 0;
  std::size_t capacity = 0;  // of `source`, kept across Parser::parse_into calls
  detail::NodeArray nodes;
  detail::Arena strings;
};

namespace detail {

// Scratch space of build_from_index, kept by a Parser between calls.
struct IndexFrame {
  std::uint64_t bloom;  // of the object's first keys (see json_index.cpp)
  std::uint32_t node;
  std::uint32_t count;        // members or elements so far
  std::uint32_t prints_base;  // the object's key fingerprints start here in IndexScratch::prints
  bool object;
};
struct IndexScratch {
  std::vector<IndexFrame> frames;
  std::vector<std::uint64_t> prints;
  std::vector<std::string_view> keys;
  std::vector<std::uint32_t> slots;  // the open-addressed table of keys_unique
  std::vector<char> unescaped;       // an escaped string's bytes before they go to the arena
};

// Builds impl.nodes and impl.strings from simdjson's stage-1 structural
// indexes (index[0, count)) over impl.source, which must be followed by at
// least kPadding zero bytes. True when the text is valid under every rule of
// json.h; false when anything is wrong or unusual, and then the precise
// reader must decide (it reports the error).
// index[count] is overwritten (stage 1 leaves room there for a sentinel).
bool build_from_index(Document::Impl& impl, std::uint32_t* index, std::size_t count, const ReadLimits& limits,
                      IndexScratch& scratch);

// The precise reader: every rule of json.h with exact kinds and offsets.
// `impl.source`/`impl.size` must be set (padding not needed); fills nodes and strings.
Status parse_strict(Document::Impl& impl, const ReadLimits& limits);

using dot::utf8_valid_prefix;  // dot/base/utf8.h

// from_chars reports both overflow and underflow as out of range; tells
// them apart by the decimal magnitude of a grammar-checked spelling.
bool spelling_is_huge(std::string_view text);

// The checks that precede parsing: too_large, bom, utf8 (whole input).
Status check_envelope(std::string_view bytes, const ReadLimits& limits);

// Object member order of RFC 8785: UTF-16 code units. UTF-8 byte order is
// code point order, which differs from UTF-16 order only between astral
// characters (surrogate pairs, D800-DFFF) and BMP characters U+E000-U+FFFF.
inline bool utf16_less(std::string_view a, std::string_view b) {
  std::size_t n = std::min(a.size(), b.size());
  std::size_t k = 0;
  // The first differing byte, 8 at a time (keys of wide objects share long
  // prefixes): on little-endian x86 the lowest set bit of x ^ y is in it.
  static_assert(std::endian::native == std::endian::little);
  for (; k + 8 <= n; k += 8) {
    std::uint64_t x, y;
    std::memcpy(&x, a.data() + k, 8);
    std::memcpy(&y, b.data() + k, 8);
    if (x != y) {
      k += static_cast<std::size_t>(std::countr_zero(x ^ y)) / 8;
      break;
    }
  }
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

// The first 8 bytes of `s` (zeros past its end) as a big-endian integer whose
// order agrees with utf16_less: lead bytes EE-EF (U+E000-U+FFFF) rank above
// F0-F4 (astral), as in UTF-16. A smaller prefix means a smaller key; equal
// prefixes decide nothing (utf16_less then does). Sorting wide objects by it
// settles most comparisons with one integer compare.
inline std::uint64_t utf16_order_prefix(std::string_view s) {
  std::uint64_t v = 0;
  std::size_t n = std::min<std::size_t>(s.size(), 8);
  for (std::size_t k = 0; k < 8; ++k) {
    unsigned b = k < n ? static_cast<unsigned char>(s[k]) : 0;
    if (b >= 0xEE) b = b >= 0xF0 ? b - 2 : b + 5;  // F0-F4 -> EE-F2, EE-EF -> F3-F4 (F5-FF never occur)
    v = v << 8 | b;
  }
  return v;
}

// The JSON string literal of `s` for error details, shortened when long.
std::string quote_for_detail(std::string_view s);

}  // namespace detail
}  // namespace dot::json
