// The two leaf writers of canonical JSON: numbers (ECMAScript formatting) and
// strings (RFC 8785 escaping). Everything else in jcs.cpp builds on these.
#include <array>
#include <bit>
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

// put_number writes in fixed-size pieces past the end it returns (a copy of
// a constant size is a move or two, one of a variable size a call to
// memcpy); the most it writes is a sign and 33 bytes (put_es_form, "123.45").
static_assert(kMaxNumberBytes >= 1 + 33, "put_number writes up to 34 bytes");

// "00" "01" ... "99": two digits per division.
constexpr auto kDigitPairs = [] {
  std::array<char, 200> t{};
  for (std::size_t i = 0; i < 100; ++i) {
    t[2 * i] = static_cast<char>('0' + i / 10);
    t[2 * i + 1] = static_cast<char>('0' + i % 10);
  }
  return t;
}();

// The exponent's digits (0 to 324) with their count: copied as one 4-byte
// word, so that an exponent of one, two or three digits costs no branch.
struct ExponentText {
  char digits[3];
  std::uint8_t size;
};
constexpr auto kExponents = [] {
  std::array<ExponentText, 325> t{};
  for (int e = 0; e < 325; ++e) {
    auto& x = t[static_cast<std::size_t>(e)];
    x.size = static_cast<std::uint8_t>(e < 10 ? 1 : e < 100 ? 2 : 3);
    for (int i = x.size - 1, v = e; i >= 0; --i, v /= 10) x.digits[i] = static_cast<char>('0' + v % 10);
  }
  return t;
}();

// How many decimal digits v has (v > 0): the bit width times log10(2)
// (1233 / 4096) is the count or one more, decided by one comparison.
int decimal_length(std::uint64_t v) {
  auto t = static_cast<std::size_t>((64 - std::countl_zero(v)) * 1233 >> 12);
  return static_cast<int>(t) + 1 - (v < json::detail::kPowersOfTen[t] ? 1 : 0);
}

// Eight digits of v (below 10^8), leading zeros included, in fixed steps.
void put_eight(char* p, std::uint32_t v) {
  std::uint32_t high = v / 10000, low = v % 10000;
  std::memcpy(p, &kDigitPairs[2 * (high / 100)], 2);
  std::memcpy(p + 2, &kDigitPairs[2 * (high % 100)], 2);
  std::memcpy(p + 4, &kDigitPairs[2 * (low / 100)], 2);
  std::memcpy(p + 6, &kDigitPairs[2 * (low % 100)], 2);
}

// The k digits of v (0 < v < 10^k, k <= 17) at p, left-aligned in 17 places
// (the digits, then 17 - k zeros): one multiplication by 10^(17 - k) aligns
// them, then all 17 places are written in the same fixed steps whatever k is
// (significands are 1 to 17 digits long at random, and a loop or a branch on
// the length mispredicts). Aligned to the left, the digits can be written
// where they belong in the output: copying them there from a buffer read
// back stores that had just been made, and such loads wait for the stores.
void put_digits(char* p, std::uint64_t v, int k) {
  constexpr std::uint64_t kTen16 = 10000000000000000ull;
  v *= json::detail::kPowersOfTen[static_cast<std::size_t>(17 - k)];
  std::uint64_t top = v / kTen16, rest = v % kTen16;
  p[0] = static_cast<char>('0' + top);
  put_eight(p + 1, static_cast<std::uint32_t>(rest / 100000000));
  put_eight(p + 9, static_cast<std::uint32_t>(rest % 100000000));
}

// ECMAScript Number::toString of the positive value 0.d1..dk x 10^n, from its
// shortest round-trip digits d1..dk, the k digits of v (no trailing zeros,
// k <= 17), and n, the position of the decimal point relative to them. Up to
// kMaxNumberBytes bytes at p may be written; the end is returned.
char* put_es_form(char* p, std::uint64_t v, int k, int n) {
  if (k <= n && n <= 21) {  // an integer below 1e21: its digits, then zeros
    put_digits(p, v, k);    // zeros up to place 17
    std::memcpy(p + 17, "0000", 4);
    return p + n;
  }
  if (0 < n && n <= 21) {  // 123.45 (n < k here): the digits go on both sides of the point
    char digits[33];
    put_digits(digits, v, k);
    std::memset(digits + 17, '0', 16);
    std::memcpy(p, digits, 16);
    p[n] = '.';
    std::memcpy(p + n + 1, digits + n, 16);
    return p + k + 1;
  }
  if (-6 < n && n <= 0) {  // 0.00012345
    std::memcpy(p, "0.00000", 8);
    put_digits(p + 2 - n, v, k);
    return p + 2 - n + k;
  }
  // 1.2345e+21, 5e-324: the digits one place to the right, then the first
  // moved back over the place for the point.
  put_digits(p + 1, v, k);
  p[0] = p[1];
  p[1] = '.';
  p += k + (k > 1);  // "5e-324" has no point
  *p++ = 'e';
  int e = n - 1;
  *p++ = e >= 0 ? '+' : '-';
  const ExponentText& x = kExponents[static_cast<std::size_t>(e >= 0 ? e : -e)];
  std::memcpy(p, x.digits, sizeof x.digits);
  return p + x.size;
}

}  // namespace

char* put_number(char* p, double value) {
  if (value == 0 || !std::isfinite(value)) {  // -0 -> "0"; non-finite never reaches here
    *p++ = '0';
    return p;
  }
  // The sign without a branch: signs come in random order in numeric data,
  // and a branch on them mispredicted on half of the numbers.
  *p = '-';
  p += std::signbit(value);
  value = std::fabs(value);
  // An integer below 2^53 is its own shortest round-trip digits and is
  // written plainly (it is below 1e21): the common case, without the search.
  constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
  if (value < kExactIntegers) {
    auto integer = static_cast<std::uint64_t>(value);
    if (static_cast<double>(integer) == value) {
      int k = decimal_length(integer);
      put_digits(p, integer, k);
      return p + k;
    }
  }
  // Dragonbox: the shortest digits that read back as `value` (round to
  // nearest, ties to even), the closest to it when several are that short,
  // as ECMAScript's Number::toString asks; trailing zeros removed.
  auto decimal = jkj::dragonbox::to_decimal(value);
  int k = decimal_length(decimal.significand);
  return put_es_form(p, decimal.significand, k, k + decimal.exponent);
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
