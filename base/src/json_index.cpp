// The tree builder of json::Parser::parse: builds a Document's nodes straight
// from simdjson's stage-1 structural indexes and the source, in place of
// simdjson's stage 2.
//
// Why not read simdjson's DOM: its stage 2 writes a tape and copies every
// string into its own buffer, and building nodes from those meant streaming
// the tape, the string copies and the structural indexes back in (for source
// offsets). Once a text is larger than the cache (8 MiB here), each of those
// streams costs a trip to memory. Reading the source at each structural
// instead, strings without escapes are never copied: their nodes point at the
// source, and only escaped strings are written to the arena.
//
// This path only accepts: anything it does not understand exactly (every
// error, numbers that overflow, lone surrogates, duplicate keys,
// depth) makes it return false, and the precise reader in json_strict.cpp
// decides with the exact error. fuzz_json_paths checks that both build
// identical trees and accept the same texts.
#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <string_view>
#include <vector>

#include <fast_float/fast_float.h>

#include "json_internal.h"

namespace dot::json::detail {
namespace {

// The value of each byte as a hex digit, or -1: a table, because escape-dense
// strings read four of these per escape and the branches of hex_value
// mispredict on them.
constexpr auto kHexDigit = [] {
  std::array<std::int8_t, 256> t{};
  for (int c = 0; c < 256; ++c)
    t[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(hex_value(static_cast<char>(c)));
  return t;
}();

// What each one-character escape (\n, \", ...) stands for, or 0.
constexpr auto kShortEscape = [] {
  std::array<char, 256> t{};
  t['"'] = '"';
  t['\\'] = '\\';
  t['/'] = '/';
  t['b'] = '\b';
  t['f'] = '\f';
  t['n'] = '\n';
  t['r'] = '\r';
  t['t'] = '\t';
  return t;
}();

// Four hex digits at p, or -1. Inlined: escape-dense strings read one or two
// of these per escape, and the call cost as much as the digits.
[[gnu::always_inline]] inline int hex4(const char* p) {
  int a = kHexDigit[static_cast<unsigned char>(p[0])], b = kHexDigit[static_cast<unsigned char>(p[1])];
  int c = kHexDigit[static_cast<unsigned char>(p[2])], d = kHexDigit[static_cast<unsigned char>(p[3])];
  if ((a | b | c | d) < 0) return -1;
  return a << 12 | b << 8 | c << 4 | d;
}

// Writes the UTF-8 form of the scalar value `cp` at `out` with one 4-byte
// store whatever its length, and returns the end (the caller has room: a
// \u escape spans six bytes or twelve for the one to four it stands for).
// All four forms are computed and the length picks one: in escape-dense
// strings the lengths come in random order, and a branch per length
// mispredicted on most escapes.
[[gnu::always_inline]] inline char* put_utf8(char* out, std::uint32_t cp) {
  const std::uint32_t c0 = 0x80 | (cp & 0x3F), c1 = 0x80 | ((cp >> 6) & 0x3F), c2 = 0x80 | ((cp >> 12) & 0x3F);
  const std::uint32_t forms[4] = {cp, (0xC0 | cp >> 6) | c0 << 8, (0xE0 | cp >> 12) | c1 << 8 | c0 << 16,
                                  (0xF0 | cp >> 18) | c2 << 8 | c1 << 16 | c0 << 24};
  const int length = 1 + (cp >= 0x80) + (cp >= 0x800) + (cp >= 0x10000);
  const std::uint32_t w = forms[length - 1];
  const char bytes[4] = {static_cast<char>(w), static_cast<char>(w >> 8), static_cast<char>(w >> 16),
                         static_cast<char>(w >> 24)};
  std::memcpy(out, bytes, sizeof bytes);
  return out + length;
}

// The first byte at or after p that ends a run of plain string bytes: a
// quote, a backslash or a control character. The source's zero padding
// stops the scan at the end of the input at the latest, and every load
// starts before that end, so loads stay inside the padding.
const char* string_stop(const char* p) {
#if defined(__SSE2__)
  for (;; p += 16) {
    unsigned mask = stop_mask(p);
    if (mask != 0) return p + __builtin_ctz(mask);
  }
#else
  while (!is_stop(*p)) ++p;
  return p;
#endif
}

// Whether [p, end) holds a quote, a backslash or a control character. The
// length is known, so the loop's exit does not depend on the bytes; the last
// load may read up to 15 bytes past `end` (into the source or its padding).
[[gnu::always_inline]] inline bool has_stop(const char* p, const char* end) {
#if defined(__SSE2__)
  unsigned seen = 0;
  for (; end - p >= 16; p += 16) seen |= stop_mask(p);
  if (p < end) seen |= stop_mask(p) & ((1u << (end - p)) - 1);
  return seen != 0;
#else
  for (; p < end; ++p)
    if (is_stop(*p)) return true;
  return false;
#endif
}

// A key as the duplicate check sees it: its bytes and a fingerprint (length
// and first 8 bytes) so that most pairs differ on one integer comparison.
struct KeyRef {
  std::uint64_t print;
  std::uint32_t size;
  const char* data;
};

// `overread`: the 8 bytes at `data` may be loaded whatever `size` is (a key
// in the source, followed by more source or the padding). Otherwise a short
// key is read byte by byte (a variable-length copy into the word would stall
// the load that follows it).
[[gnu::always_inline]] inline KeyRef key_ref(const char* data, std::uint32_t size, bool overread) {
  std::uint64_t head = 0;
  if (size >= sizeof head || overread) {
    std::memcpy(&head, data, sizeof head);
    if (size < sizeof head) head &= (std::uint64_t{1} << (8 * size)) - 1;
  } else {
    for (std::uint32_t k = 0; k < size; ++k) head |= std::uint64_t{static_cast<unsigned char>(data[k])} << (8 * k);
  }
  return KeyRef{head ^ (std::uint64_t{size} * 0x9E3779B97F4A7C15ull), size, data};
}

// One bit of an object's 64-bit bloom of key fingerprints: a key whose bit is
// not yet set is new without comparing it to any other.
std::uint64_t bloom_bit(const KeyRef& key) { return std::uint64_t{1} << ((key.print * 0x9E3779B97F4A7C15ull) >> 58); }

// Objects of up to kPairwise keys are checked for a repeated key as each key
// arrives; larger ones are hashed once when they close.
constexpr std::uint32_t kPairwise = 16;

class IndexBuilder {
 public:
  IndexBuilder(Document::Impl& impl, const std::uint32_t* index, std::size_t count, std::size_t max_depth,
               IndexScratch& scratch)
      : src_(impl.text()),
        n_(impl.size),
        index_(index),
        count_(count),
        max_depth_(max_depth),
        impl_(impl),
        nodes_(impl.nodes.data()),
        out_(nodes_),
        frames_(scratch.frames),
        prints_(scratch.prints),
        keys_(scratch.keys),
        slots_(scratch.slots),
        unescaped_(scratch.unescaped) {}

  // Nodes written so far (impl.nodes' size is set from it).
  std::size_t written() const { return static_cast<std::size_t>(out_ - nodes_); }

  bool run() {
    frames_.clear();
    prints_.clear();
    std::size_t si = 0;
    for (;;) {
      // A value starts at index_[si].
      if (si >= count_) return false;
      std::uint32_t at = index_[si++];
      char c = src_[at];
      if (c == '{' || c == '[') {
        if (frames_.size() >= max_depth_) return false;
        bool object = c == '{';
        auto node = static_cast<std::uint32_t>(written());
        add(0, at, object ? Type::Object : Type::Array, false);
        if (src_[index_[si]] == (object ? '}' : ']') && si < count_) {
          ++si;
          close(node, 0);
        } else {
          frames_.push_back(IndexFrame{0, node, 0, static_cast<std::uint32_t>(prints_.size()), object});
          if (object && !key(si, frames_.back())) return false;
          continue;
        }
      } else if (!scalar(c, at, si)) {
        return false;
      }
      // A value ended: a ',' and the next member or element, or the
      // container's close (and then its parent's continuation).
      for (;;) {
        if (frames_.empty()) return si == count_;
        IndexFrame& f = frames_.back();
        ++f.count;
        if (si >= count_) return false;
        char d = src_[index_[si++]];
        if (d == ',') {
          if (f.object && !key(si, f)) return false;
          break;
        }
        if (d != (f.object ? '}' : ']')) return false;
        if (f.object && f.count > kPairwise && !keys_unique(f)) return false;
        close(f.node, f.count);
        prints_.resize(f.prints_base);
        frames_.pop_back();
      }
    }
  }

 private:
  // The caller reserved one node per structural, and every node starts at
  // its own structural, so there is always room.
  [[gnu::always_inline]] void add(std::uint64_t payload, std::uint32_t offset, Type type, bool flag) {
    Node& n = *out_++;
    n.payload = payload;
    n.offset = offset;
    n.type = type;
    n.flag = flag;
  }
  void close(std::uint32_t node, std::uint32_t count) {
    nodes_[node].payload = Node::pack(count, static_cast<std::uint32_t>(written()));
  }

  // Where the next structural starts; index_[count_] holds the input's end.
  std::size_t next_at(std::size_t si) const { return index_[si]; }

  // Only whitespace from `from` up to the next structural: a value must end
  // where its spelling ends. (Between structurals stage 1 leaves nothing but
  // whitespace and the bodies of values, so after an operator this holds by
  // construction.)
  bool ends_at(std::size_t from, std::size_t si) const {
    std::size_t to = next_at(si);
    if (from == to) return true;
    if (from > to) return false;
    for (; from < to; ++from)
      if (!is_ws(src_[from])) return false;
    return true;
  }

  // A string literal whose opening quote is at `at` (the structural before
  // index_[si]): sets `data`/`len` to its unescaped bytes (in the source
  // when nothing was escaped, else in the arena) and returns the offset
  // after the closing quote, or 0 when the string must go to the precise
  // reader.
  [[gnu::always_inline]] std::size_t string(std::size_t at, std::size_t si, const char*& data, std::uint32_t& len,
                                            bool& in_arena) {
    const char* body = src_ + at + 1;
    // Usually the closing quote is the byte before the next structural;
    // then nothing between the quotes may be a quote, a backslash or a
    // control character for the bytes to be the value, and that is checked
    // over a known length.
    std::size_t next = next_at(si);
    if (next > at + 1 && src_[next - 1] == '"' && !has_stop(body, src_ + next - 1)) {
      data = body;
      len = static_cast<std::uint32_t>(next - 1 - (at + 1));
      in_arena = false;
      return next;
    }
    return other_string(body, si, data, len, in_arena);
  }

  // Strings with escapes, or followed by whitespace. The unescaped bytes
  // are never longer than the spelling, which ends before the next
  // structural: `unescaped_` is sized to that and written through a pointer,
  // then copied to the arena once.
  [[gnu::noinline]] std::size_t other_string(const char* body, std::size_t si, const char*& data, std::uint32_t& len,
                                             bool& in_arena) {
    const char* stop = string_stop(body);
    if (*stop == '"') {
      data = body;
      len = static_cast<std::uint32_t>(stop - body);
      in_arena = false;
      return static_cast<std::size_t>(stop - src_) + 1;
    }
    const char* limit = src_ + next_at(si);  // the closing quote comes before this
    if (stop >= limit) return 0;
    // An escape emits at most as many bytes as it spans, but is emitted
    // before its end is checked against `limit`, and runs are copied 16
    // bytes at a time: slack for both.
    auto room = static_cast<std::size_t>(limit - body) + 4 + 16;
    if (unescaped_.size() < room) unescaped_.resize(room);
    char* out = copy_run(unescaped_.data(), body, stop);
    for (;;) {
      // At a backslash before `limit`. Escapes are read whole before being
      // checked against `limit`: the padding keeps those reads in bounds.
      if (*stop != '\\') return 0;  // a control character
      const char* p = stop + 2;
      switch (stop[1]) {
        case 'u': {
          int cp = hex4(p);
          if (cp < 0) return 0;
          p += 4;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return 0;  // lone low surrogate
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (p[0] != '\\' || p[1] != 'u') return 0;  // lone high surrogate
            int low = hex4(p + 2);
            if (low < 0xDC00 || low > 0xDFFF) return 0;
            p += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          out = put_utf8(out, static_cast<std::uint32_t>(cp));
          break;
        }
        default: {  // the one-character escapes, from a table (a switch over them mispredicts)
          char c = kShortEscape[static_cast<unsigned char>(stop[1])];
          if (c == 0) return 0;
          *out++ = c;
        }
      }
      if (p >= limit) return 0;
      stop = string_stop(p);
      if (stop >= limit) return 0;
      out = copy_run(out, p, stop);
      if (*stop == '"') break;
    }
    Arena& arena = impl_.strings;
    std::size_t start = arena.size();
    arena.append(unescaped_.data(), static_cast<std::size_t>(out - unescaped_.data()));
    data = arena.data() + start;
    len = static_cast<std::uint32_t>(arena.size() - start);
    in_arena = true;
    return static_cast<std::size_t>(stop - src_) + 1;
  }

  // Copies [from, to) to `out` in 16-byte steps (a run between escapes is
  // short: this beats a call to memcpy), writing up to 16 bytes past the
  // run's end and reading up to 16 past `to` (source or padding). The first
  // step is taken even for an empty run: escapes often follow one another,
  // and a test for that mispredicted on them.
  static char* copy_run(char* out, const char* from, const char* to) {
    const char* p = from;
    do {
      std::memcpy(out + (p - from), p, 16);
      p += 16;
    } while (p < to);
    return out + (to - from);
  }

  // A member's key at index_[si], the duplicate check, and the ':' after it.
  [[gnu::always_inline]] bool key(std::size_t& si, IndexFrame& f) {
    if (si >= count_) return false;
    std::uint32_t at = index_[si++];
    if (src_[at] != '"') return false;
    const char* data;
    std::uint32_t len;
    bool in_arena;
    std::size_t end = string(at, si, data, len, in_arena);
    if (end == 0 || !ends_at(end, si)) return false;
    if (f.count < kPairwise) {
      KeyRef k = key_ref(data, len, !in_arena);
      std::uint64_t bit = bloom_bit(k);
      if ((f.bloom & bit) != 0 && repeats(f, k)) return false;
      f.bloom |= bit;
      prints_.push_back(k.print);
    }
    add_string(at, data, len, in_arena);
    if (si >= count_ || src_[index_[si]] != ':') return false;
    ++si;
    return true;
  }

  [[gnu::always_inline]] void add_string(std::uint32_t at, const char* data, std::uint32_t len, bool in_arena) {
    auto start = static_cast<std::uint32_t>(in_arena ? data - impl_.strings.data() : data - src_);
    add(Node::pack(start, len), at, Type::String, in_arena);
  }

  // True when `k` equals one of the f.count keys the object already has. On
  // a bloom hit the fingerprints of the earlier keys are compared, and only
  // an equal one (almost always a repeat) has its bytes read back through
  // its node.
  bool repeats(const IndexFrame& f, const KeyRef& k) const {
    const std::uint64_t* prints = prints_.data() + f.prints_base;
    for (std::uint32_t j = 0; j < f.count; ++j) {
      if (prints[j] != k.print) continue;
      std::uint32_t key = f.node + 1;
      for (std::uint32_t m = 0; m < j; ++m) key = next_of(nodes_, key + 1);
      if (impl_.string_of(nodes_[key]) == std::string_view(k.data, k.size)) return true;
    }
    return false;
  }

  // All keys of a large object, checked once when it closes: each is looked
  // up among the keys before it in an open-addressed table of twice the
  // object's width (linear in the keys, where sorting them was n log n
  // comparisons of long shared prefixes).
  bool keys_unique(const IndexFrame& f) {
    std::size_t mask = std::bit_ceil(std::size_t{f.count} * 2) - 1;
    slots_.assign(mask + 1, 0);  // a key's index + 1; 0 is empty
    keys_.clear();
    std::uint32_t key = f.node + 1;
    for (std::uint32_t j = 0; j < f.count; ++j, key = next_of(nodes_, key + 1)) {
      std::string_view k = impl_.string_of(nodes_[key]);
      keys_.push_back(k);
      for (std::size_t slot = std::hash<std::string_view>{}(k)&mask;; slot = (slot + 1) & mask) {
        if (slots_[slot] == 0) {
          slots_[slot] = j + 1;
          break;
        }
        if (keys_[slots_[slot] - 1] == k) return false;
      }
    }
    return true;
  }

  bool scalar(char c, std::uint32_t at, std::size_t si) {
    switch (c) {
      case '"': {
        const char* data;
        std::uint32_t len;
        bool in_arena;
        std::size_t end = string(at, si, data, len, in_arena);
        if (end == 0 || !ends_at(end, si)) return false;
        add_string(at, data, len, in_arena);
        return true;
      }
      case 't':
        return literal(at, si, "true", Type::Bool, true);
      case 'f':
        return literal(at, si, "false", Type::Bool, false);
      case 'n':
        return literal(at, si, "null", Type::Null, false);
      default:
        return number(at, si);
    }
  }

  // The padding makes reading a literal's length past the end harmless.
  bool literal(std::uint32_t at, std::size_t si, std::string_view word, Type type, bool flag) {
    if (std::memcmp(src_ + at, word.data(), word.size()) != 0 || at + word.size() > n_ ||
        !ends_at(at + word.size(), si))
      return false;
    add(0, at, type, flag);
    return true;
  }

  // RFC 8259's number grammar, then the value, always the correctly rounded
  // binary64 (what from_chars gives the precise reader): an integer of up to
  // 19 digits is exact in 64 bits and converted once (the conversion rounds
  // correctly); every other spelling goes to fast_float, which has the
  // one-operation fast path for short decimals itself. An underflow is zero
  // (as in the precise reader); an overflow goes to the precise reader,
  // which reports it.
  bool number(std::uint32_t at, std::size_t si) {
    const char* p = src_ + at;
    bool negative = *p == '-';
    p += negative;
    const char* digits = p;
    std::size_t integer_digits = *p == '0' ? 1 : digit_run(p);
    if (integer_digits == 0) return false;
    p += integer_digits;
    bool integer = true;
    if (*p == '.') {
      integer = false;
      std::size_t n = digit_run(++p);
      if (n == 0) return false;
      p += n;
    }
    if (*p == 'e' || *p == 'E') {
      integer = false;
      ++p;
      p += *p == '+' || *p == '-';
      std::size_t n = digit_run(p);
      if (n == 0) return false;
      p += n;
    }
    auto end = static_cast<std::size_t>(p - src_);
    if (end > n_ || !ends_at(end, si)) return false;
    double value;
    if (integer && integer_digits <= 19) {
      value = static_cast<double>(digits_value(digits, integer_digits));
    } else {
      // fast_float (libstdc++'s from_chars wraps the same algorithm, behind
      // a call and an error check for the range): an underflow reads as
      // zero, an overflow as infinity.
      auto res = fast_float::from_chars(digits, p, value);
      if (res.ec != std::errc() || res.ptr != p) return false;
      // Underflow is a valid number whose value is zero (1e-400); only an
      // overflow is refused, and the precise reader reports it.
      if (std::isinf(value)) return false;
    }
    // The sign as a bit (value is not negative here): "-0" is -0.0, and
    // signs in random order cost no misprediction.
    add(std::bit_cast<std::uint64_t>(value) | std::uint64_t{negative} << 63, at, Type::Number, integer);
    return true;
  }

  const char* src_;
  std::size_t n_;
  const std::uint32_t* index_;
  std::size_t count_;
  std::size_t max_depth_;
  Document::Impl& impl_;
  Node* nodes_;
  Node* out_;  // the next node
  std::vector<IndexFrame>& frames_;
  std::vector<std::uint64_t>& prints_;  // of the first kPairwise keys of each open object
  std::vector<std::string_view>& keys_;
  std::vector<std::uint32_t>& slots_;
  std::vector<char>& unescaped_;
};

}  // namespace

bool build_from_index(Document::Impl& impl, std::uint32_t* index, std::size_t count, const ReadLimits& limits,
                      IndexScratch& scratch) {
  impl.nodes.clear();
  impl.strings.clear();
  impl.strings.reserve(impl.size);
  impl.nodes.reserve(count + 1);                         // every value and key starts at its own structural
  index[count] = static_cast<std::uint32_t>(impl.size);  // so the last value has a next structural too
  IndexBuilder builder(impl, index, count, limits.max_depth, scratch);
  bool ok = builder.run();
  impl.nodes.set_size(builder.written());
  return ok;
}

}  // namespace dot::json::detail
