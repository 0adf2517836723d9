// The two leaf writers of canonical JSON: numbers (ECMAScript formatting) and
// strings (RFC 8785 escaping). Everything else in jcs.cpp builds on these.
#include <array>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "dot/base/jcs.h"
#include "jcs_internal.h"
#include "json_internal.h"

namespace dot::jcs {
namespace detail {
namespace {

// ECMAScript Number::toString of the positive value 0.d1..dk x 10^n, from its
// shortest round-trip digits d1..dk (no trailing zeros) and n, the position
// of the decimal point relative to them.
char* put_es_form(char* p, const char* digits, int k, int n) {
  if (k <= n && n <= 21) {  // an integer below 1e21: all its digits
    std::memcpy(p, digits, static_cast<std::size_t>(k));
    p += k;
    std::memset(p, '0', static_cast<std::size_t>(n - k));
    return p + (n - k);
  }
  if (0 < n && n <= 21) {  // 123.45
    std::memcpy(p, digits, static_cast<std::size_t>(n));
    p += n;
    *p++ = '.';
    std::memcpy(p, digits + n, static_cast<std::size_t>(k - n));
    return p + (k - n);
  }
  if (-6 < n && n <= 0) {  // 0.00012345
    *p++ = '0';
    *p++ = '.';
    std::memset(p, '0', static_cast<std::size_t>(-n));
    p += -n;
    std::memcpy(p, digits, static_cast<std::size_t>(k));
    return p + k;
  }
  *p++ = digits[0];  // 1.2345e+21, 5e-324
  if (k > 1) {
    *p++ = '.';
    std::memcpy(p, digits + 1, static_cast<std::size_t>(k - 1));
    p += k - 1;
  }
  *p++ = 'e';
  int e = n - 1;
  *p++ = e >= 0 ? '+' : '-';
  return std::to_chars(p, p + 4, e >= 0 ? e : -e).ptr;
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
  // Shortest round-trip digits in scientific form: "d[.ddd]e[+-]x".
  char buf[40];
  char* end = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific).ptr;
  char digits[20];
  int k = 0;
  const char* s = buf;
  for (; *s != 'e'; ++s)
    if (*s != '.') digits[k++] = *s;
  bool negative = s[1] == '-';
  int exp10 = 0;
  for (s += 2; s < end; ++s) exp10 = exp10 * 10 + (*s - '0');
  return put_es_form(p, digits, k, (negative ? -exp10 : exp10) + 1);
}

// Why the spelling's digits may be used: any decimal of at most DBL_DIG (15)
// significant digits in the normal range survives decimal -> binary64 ->
// 15-digit decimal unchanged, so no two such decimals share a double. The
// spelling (trailing zeros dropped) is one of them and rounds to `value`;
// the shortest round-trip digits are another that rounds to `value`, and are
// no longer; so they are the spelling's. Subnormals have fewer significant
// bits and take the general path.
char* put_spelled_number(char* p, double value, const char* s, bool integer_spelling) {
  constexpr double kExactIntegers = 9007199254740992.0;  // 2^53: every integer up to it is a double
  double magnitude = std::fabs(value);
  if (integer_spelling && magnitude <= kExactIntegers) {  // its digits are its value's: plain, below 1e21
    if (value == 0) {  // -0 -> "0"
      *p++ = '0';
      return p;
    }
    if (value < 0) *p++ = '-';
    return std::to_chars(p, p + 20, static_cast<std::uint64_t>(magnitude)).ptr;
  }
  if (value == 0 || magnitude < DBL_MIN || !std::isfinite(value)) return put_number(p, value);
  using json::detail::is_digit;
  if (*s == '-') ++s;
  char digits[16];
  int k = 0;        // significant digits kept
  int zeros = 0;    // zeros since the last nonzero significant digit (kept only if another follows)
  long long n = 0;  // the decimal point's position after the first significant digit
  // Keeps a significant digit; false past 15 of them.
  auto keep = [&](char c) {
    if (c == '0') {
      ++zeros;
      return true;
    }
    if (k + zeros >= 15) return false;
    for (; zeros > 0; --zeros) digits[k++] = '0';
    digits[k++] = c;
    return true;
  };
  for (; is_digit(*s); ++s) {
    if (k == 0 && *s == '0') continue;  // the "0" of "0.5"
    ++n;
    if (!keep(*s)) return put_number(p, value);
  }
  if (*s == '.') {
    for (++s; is_digit(*s); ++s) {
      if (k == 0 && *s == '0') {
        --n;  // 0.05: the point is one place before the first significant digit
        continue;
      }
      if (!keep(*s)) return put_number(p, value);
    }
  }
  if (*s == 'e' || *s == 'E') {
    ++s;
    bool minus = *s == '-';
    if (*s == '-' || *s == '+') ++s;
    long long e = 0;
    for (; is_digit(*s); ++s) {
      e = e * 10 + (*s - '0');
      if (e > 1'000'000'000) return put_number(p, value);  // legal (1e-0000...), but not worth a fast path
    }
    n += minus ? -e : e;
  }
  if (value < 0) *p++ = '-';
  return put_es_form(p, digits, k, static_cast<int>(n));
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
