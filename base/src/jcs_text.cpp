// The two leaf writers of canonical JSON: numbers (ECMAScript formatting) and
// strings (RFC 8785 escaping). Everything else in jcs.cpp builds on these.
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include <dragonbox/dragonbox.h>

#include "dot/base/jcs.h"
#include "jcs_internal.h"
#include "json_internal.h"

namespace dot::jcs {
namespace detail {
namespace {

// The digits are moved in fixed 24-byte pieces (they are at most 17, the
// zeros that pad them at most 20): a copy of a constant size is two moves,
// one of a variable size a call to memcpy. The buffers are sized for it.
constexpr std::size_t kPiece = 24;
constexpr std::size_t kDigitsRoom = 17 + kPiece;  // a significand's digits, readable kPiece past any of them
static_assert(kMaxNumberBytes >= 17 + 1 + kPiece, "put_es_form writes up to a piece past the 17th digit");

// ECMAScript Number::toString of the positive value 0.d1..dk x 10^n, from its
// shortest round-trip digits d1..dk (no trailing zeros, k <= 17) at `digits`
// (kDigitsRoom bytes) and n, the position of the decimal point relative to
// them.
char* put_es_form(char* p, const char* digits, int k, int n) {
  if (k <= n && n <= 21) {  // an integer below 1e21: all its digits, then zeros
    std::memcpy(p, digits, kPiece);
    std::memset(p + k, '0', kPiece);
    return p + n;
  }
  if (0 < n && n <= 21) {  // 123.45 (n < k here)
    std::memcpy(p, digits, kPiece);
    p[n] = '.';
    std::memcpy(p + n + 1, digits + n, kPiece);
    return p + k + 1;
  }
  if (-6 < n && n <= 0) {  // 0.00012345
    std::memcpy(p, "0.00000", 8);
    std::memcpy(p + 2 - n, digits, kPiece);
    return p + 2 - n + k;
  }
  *p++ = digits[0];  // 1.2345e+21, 5e-324
  if (k > 1) {
    *p = '.';
    std::memcpy(p + 1, digits + 1, kPiece);
    p += k;
  }
  *p++ = 'e';
  int e = n - 1;
  *p++ = e >= 0 ? '+' : '-';
  return std::to_chars(p, p + 4, e >= 0 ? e : -e).ptr;
}

// "00" "01" ... "99": two digits per division.
constexpr auto kDigitPairs = [] {
  std::array<char, 200> t{};
  for (int i = 0; i < 100; ++i) {
    t[static_cast<std::size_t>(2 * i)] = static_cast<char>('0' + i / 10);
    t[static_cast<std::size_t>(2 * i + 1)] = static_cast<char>('0' + i % 10);
  }
  return t;
}();

// The decimal digits of `v` (below 10^17, as a shortest significand is) at
// `p`; returns the end. The last eight are written in four fixed steps from
// the pair table, only the leading part by to_chars' loop: most significands
// have 16 or 17 digits, and a loop over all of them costs twice as much.
char* put_significand(char* p, std::uint64_t v) {
  if (v < 100000000) return std::to_chars(p, p + 8, v).ptr;
  p = std::to_chars(p, p + 9, v / 100000000).ptr;
  auto low = static_cast<std::uint32_t>(v % 100000000);
  for (int i = 3; i >= 0; --i, low /= 100) std::memcpy(p + 2 * i, &kDigitPairs[2 * (low % 100)], 2);
  return p + 8;
}

}  // namespace

char* put_number(char* p, double value) {
  if (value == 0 || !std::isfinite(value)) {  // -0 -> "0"; non-finite never reaches here
    *p++ = '0';
    return p;
  }
  if (value < 0) {
    *p++ = '-';
    value = -value;
  }
  // An integer below 2^53 is its own shortest round-trip digits and is
  // written plainly (it is below 1e21): the common case, without the search.
  constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
  if (value < kExactIntegers) {
    auto integer = static_cast<std::uint64_t>(value);
    if (static_cast<double>(integer) == value) return std::to_chars(p, p + 20, integer).ptr;
  }
  // Dragonbox: the shortest digits that read back as `value` (round to
  // nearest, ties to even), the closest to it when several are that short,
  // as ECMAScript's Number::toString asks; trailing zeros removed.
  auto decimal = jkj::dragonbox::to_decimal(value);
  char digits[kDigitsRoom] = {};
  auto k = static_cast<int>(put_significand(digits, decimal.significand) - digits);
  return put_es_form(p, digits, k, k + decimal.exponent);
}

namespace {

// The escape of each byte that needs one (RFC 8785: the two-character forms
// where JSON has them, else \u00xx in lowercase hex), copied whole from a
// table: escape-dense strings would mispredict a switch on every escape.
struct Escape {
  char bytes[6];
  std::uint8_t size;
};
constexpr auto kEscapes = [] {
  std::array<Escape, 0x60> t{};
  constexpr char kHex[] = "0123456789abcdef";
  for (int c = 0; c < 0x20; ++c)
    t[static_cast<std::size_t>(c)] = Escape{{'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]}, 6};
  t['\b'] = Escape{{'\\', 'b'}, 2};
  t['\t'] = Escape{{'\\', 't'}, 2};
  t['\n'] = Escape{{'\\', 'n'}, 2};
  t['\f'] = Escape{{'\\', 'f'}, 2};
  t['\r'] = Escape{{'\\', 'r'}, 2};
  t['"'] = Escape{{'\\', '"'}, 2};
  t['\\'] = Escape{{'\\', '\\'}, 2};
  return t;
}();

}  // namespace

char* put_string(char* p, std::string_view utf8) {
  *p++ = '"';
  const char* s = utf8.data();
  const char* end = s + utf8.size();
  for (;;) {
#if defined(__SSE2__)
    // 16 plain bytes at a time; the store may run up to 15 bytes past what
    // is kept (string_room has room for it).
    while (end - s >= 16) {
      unsigned mask = json::detail::stop_mask(s);
      std::memcpy(p, s, 16);
      if (mask == 0) {
        s += 16;
        p += 16;
        continue;
      }
      auto plain = static_cast<unsigned>(__builtin_ctz(mask));
      s += plain;
      p += plain;
      break;
    }
#endif
    while (s < end && !json::detail::is_stop(*s)) *p++ = *s++;
    if (s == end) break;
    const Escape& e = kEscapes[static_cast<unsigned char>(*s++)];  // a stop byte is below 0x60
    std::memcpy(p, e.bytes, sizeof e.bytes);
    p += e.size;
  }
  *p++ = '"';
  return p;
}

}  // namespace detail

void append_number(std::string& out, double value) {
  char buf[detail::kMaxNumberBytes];
  out.append(buf, detail::put_number(buf, value));
}

void append_string(std::string& out, std::string_view utf8) {
  std::size_t used = out.size();
  out.resize(used + detail::string_room(utf8.size()));
  char* end = detail::put_string(out.data() + used, utf8);
  out.resize(static_cast<std::size_t>(end - out.data()));
}

}  // namespace dot::jcs
