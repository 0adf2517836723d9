// The two leaf writers of canonical JSON: numbers (ECMAScript formatting) and
// strings (RFC 8785 escaping). Everything else in jcs.cpp builds on these.
#include <charconv>
#include <cmath>
#include <cstdlib>

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
  int exp10 = std::atoi(std::string(sci.substr(epos + 1)).c_str());
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

void append_string(std::string& out, std::string_view utf8) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  std::size_t run = 0;  // start of the pending run of bytes copied verbatim
  for (std::size_t i = 0; i < utf8.size(); ++i) {
    auto c = static_cast<unsigned char>(utf8[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(utf8.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xf];
    }
  }
  out.append(utf8.data() + run, utf8.size() - run);
  out += '"';
}

}  // namespace dot::jcs
