// The two leaf writers of canonical JSON: numbers (ECMAScript formatting) and
// strings (RFC 8785 escaping). Everything else in jcs.cpp builds on these.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "dot/base/jcs.h"

namespace dot::jcs {

void append_number(std::string& out, double value) {
  if (value == 0 || !std::isfinite(value)) {  // -0 -> "0"; non-finite never reaches here
    out += '0';
    return;
  }
  if (value < 0) {
    out += '-';
    value = -value;
  }
  // Shortest round-trip digits in scientific form: "d[.ddd]e[+-]x".
  char buf[40];
  auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  auto epos = sci.find('e');
  std::string_view mant = sci.substr(0, epos);
  int exp10 = 0;
  {
    std::string_view e = sci.substr(epos + 1);  // "+21", "-7"
    bool negative = e[0] == '-';
    for (char c : e.substr(1)) exp10 = exp10 * 10 + (c - '0');
    if (negative) exp10 = -exp10;
  }
  char digits[32];
  int k = 0;
  for (char c : mant)
    if (c != '.') digits[k++] = c;
  // ECMAScript Number::toString with n = exp10 + 1 (position of the point).
  int n = exp10 + 1;
  if (k <= n && n <= 21) {
    out.append(digits, static_cast<std::size_t>(k));
    out.append(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out.append(digits, static_cast<std::size_t>(n));
    out += '.';
    out.append(digits + n, static_cast<std::size_t>(k - n));
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-n), '0');
    out.append(digits, static_cast<std::size_t>(k));
  } else {
    out += digits[0];
    if (k > 1) {
      out += '.';
      out.append(digits + 1, static_cast<std::size_t>(k - 1));
    }
    out += 'e';
    int e = n - 1;
    out += e >= 0 ? '+' : '-';
    char ebuf[8];
    auto er = std::to_chars(ebuf, ebuf + sizeof ebuf, e >= 0 ? e : -e);
    out.append(ebuf, static_cast<std::size_t>(er.ptr - ebuf));
  }
}

namespace {
// True when some byte of `w` is below 0x20, a quote or a backslash (SWAR:
// the classic "has a byte less than n" and "has a zero byte" tests).
inline bool needs_escape(std::uint64_t w) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ull;
  constexpr std::uint64_t kHigh = 0x8080808080808080ull;
  std::uint64_t below = (w - kOnes * 0x20) & ~w;
  std::uint64_t q = w ^ (kOnes * '"');
  std::uint64_t b = w ^ (kOnes * '\\');
  std::uint64_t quote = (q - kOnes) & ~q;
  std::uint64_t backslash = (b - kOnes) & ~b;
  return ((below | quote | backslash) & kHigh) != 0;
}
}  // namespace

void append_string(std::string& out, std::string_view utf8) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  const char* p = utf8.data();
  std::size_t n = utf8.size();
  std::size_t run = 0;  // start of the pending run of bytes copied verbatim
  std::size_t i = 0;
  while (i < n) {
    // Skip 8 plain bytes at a time; most strings have nothing to escape.
    if (i + 8 <= n) {
      std::uint64_t w;
      std::memcpy(&w, p + i, sizeof w);
      if (!needs_escape(w)) {
        i += 8;
        continue;
      }
    }
    auto c = static_cast<unsigned char>(p[i]);
    if (c >= 0x20 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    out.append(p + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default: {
        char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
        out.append(esc, sizeof esc);
      }
    }
    ++i;
  }
  out.append(p + run, n - run);
  out += '"';
}

}  // namespace dot::jcs
