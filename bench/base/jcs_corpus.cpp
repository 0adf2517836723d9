// bench_jcs_corpus DIR [MIB] [SEED]: writes the canonical-JSON benchmark
// corpus (issue 18) into DIR, one file per shape of document, each about MIB
// mebibytes (default 8), all a deterministic function of SEED (default 1):
//
//   numbers.json   every class of binary64 and many spellings of each:
//                  subnormals, the extremes, integers beyond 2^53 and 2^64 in
//                  plain digits, -0, exponents in e/E/e+/e- form, more digits
//                  than a double holds, underflow to zero
//   escapes.json   strings dense with escapes: every control character as
//                  \uXXXX (either case of hex) and the short forms, \" \\ \/,
//                  escaped BMP characters and escaped surrogate pairs
//   utf8.json      strings of raw multi-byte UTF-8: 2-, 3- and 4-byte
//                  characters, U+007F, U+2028, U+FEFF, U+E000-U+FFFD
//   wide.json      wide objects (8 to 2000 members) whose keys share
//                  prefixes and differ in characters where UTF-16 order is
//                  not code point order (astral against U+E000-U+FFFF)
//   deep.json      towers of nesting down to depth 120 (the reader's limit is
//                  128), arrays and objects alternating
//   pretty.json    records pretty-printed with irregular whitespace: spaces,
//                  tabs, CR LF, blank lines, space before colons and commas
//   records.json   bench/base/doc_gen.h's document (the shape the earlier
//                  numbers in docs/PERFORMANCE.md were measured on)
//
// Every file is a valid text for the strict reader (unique keys after
// unescaping, no lone surrogates, no overflow, depth below 128), so npm
// canonicalize, any other RFC 8785 implementation and dot-core must all
// produce the same bytes. The generator uses its own PRNG and formatting
// (std::to_chars and fixed tables), never a distribution of <random>, whose
// results vary between standard libraries.
#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <string_view>

#include "doc_gen.h"
#include "dot/base/fd.h"
#include "dot/base/utf8.h"

namespace {

// splitmix64: small, fast and the same everywhere.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform enough in [0, n) for a benchmark (n is small).
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(next() % n); }
  bool coin(std::uint32_t one_in) { return below(one_in) == 0; }

 private:
  std::uint64_t s_;
};

void put_u_escape(std::string& out, std::uint32_t unit, bool upper) {
  const char* hex = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += hex[(unit >> shift) & 0xF];
}

// A code point of the given class: 0 ASCII letter, 1 two-byte, 2 three-byte
// below the surrogates, 3 three-byte above them (U+E000-U+FFFD, sorted after
// astral characters in UTF-16), 4 astral.
std::uint32_t code_point(Rng& r, int cls) {
  switch (cls) {
    case 0: return 'a' + r.below(26);
    case 1: return 0x80 + r.below(0x800 - 0x80);
    case 2: return 0x800 + r.below(0xD800 - 0x800);
    case 3: return 0xE000 + r.below(0xFFFE - 0xE000);
    default: return 0x10000 + r.below(0x110000 - 0x10000);
  }
}

std::string fmt_double(double d, std::chars_format f, int precision = -1) {
  char buf[400];
  auto res = precision < 0 ? std::to_chars(buf, buf + sizeof buf, d, f)
                           : std::to_chars(buf, buf + sizeof buf, d, f, precision);
  return std::string(buf, res.ptr);
}

// Respells an exponent "e-05"/"e+21" from to_chars in one of JSON's forms.
std::string respell_exponent(std::string s, Rng& r) {
  auto e = s.find('e');
  if (e == std::string::npos) return s;
  std::string mant = s.substr(0, e);
  std::string exp = s.substr(e + 1);
  bool minus = exp[0] == '-';
  std::string digits = exp.substr(exp[0] == '-' || exp[0] == '+' ? 1 : 0);
  while (digits.size() > 1 && digits[0] == '0') digits.erase(0, 1);
  if (r.coin(3)) digits.insert(0, r.below(3), '0');  // leading zeros in an exponent are valid
  std::string letter = r.coin(2) ? "E" : "e";
  std::string sign = minus ? "-" : (r.coin(2) ? "+" : "");
  return mant + letter + sign + digits;
}

// One number of a random binary64 class, spelled in one of several ways.
std::string number(Rng& r) {
  std::uint64_t bits = r.next();
  switch (r.below(14)) {
    case 0: {  // subnormal
      double d = std::bit_cast<double>(bits & 0x800F'FFFF'FFFF'FFFFull);
      return respell_exponent(fmt_double(d, std::chars_format::scientific), r);
    }
    case 1: {  // the extremes and their neighbours
      static constexpr const char* kEdges[] = {
          "5e-324", "5E-324", "-4.9406564584124654e-324", "2.2250738585072014E-308", "2.225073858507201e-308",
          "1.7976931348623157e308", "-1.7976931348623157E+308", "1.7976931348623155e+308", "4.4501477170144023e-308",
          "9.007199254740993e15", "1e-400", "-1e-400", "2.4703282292062328e-324"};
      return kEdges[r.below(sizeof kEdges / sizeof kEdges[0])];
    }
    case 2: {  // any finite double, shortest form, exponent respelled
      double d = std::bit_cast<double>(bits);
      if (!std::isfinite(d)) d = 1.5;
      return respell_exponent(fmt_double(d, std::chars_format::scientific), r);
    }
    case 3: {  // any finite double with 17 to 25 significant digits (more than it holds)
      double d = std::bit_cast<double>(bits);
      if (!std::isfinite(d)) d = -2.5;
      return respell_exponent(fmt_double(d, std::chars_format::scientific, 16 + static_cast<int>(r.below(9))), r);
    }
    case 4: {  // integers beyond 2^53
      std::uint64_t v = (bits >> r.below(10)) | (std::uint64_t{1} << 54);
      return (r.coin(2) ? "-" : "") + std::to_string(v);
    }
    case 5: {  // integers beyond 2^64, up to 40 digits
      std::string s = std::to_string(1 + r.below(9));
      int extra = 19 + static_cast<int>(r.below(21));
      for (int k = 0; k < extra; ++k) s += static_cast<char>('0' + r.below(10));
      return (r.coin(2) ? "-" : "") + s;
    }
    case 6: {  // zero in its spellings
      static constexpr const char* kZeros[] = {"0", "-0", "0.0", "-0.0", "0e0", "-0E+5", "0.000e-12"};
      return kZeros[r.below(sizeof kZeros / sizeof kZeros[0])];
    }
    case 7:  // small integers
      return std::to_string(static_cast<std::int64_t>(bits % 200001) - 100000);
    case 8: {  // integers spelled with a fraction or an exponent: 1.0, 12e3, 1.5E2
      std::uint64_t v = bits % 1000000;
      switch (r.below(3)) {
        case 0: return std::to_string(v) + ".0";
        case 1: return std::to_string(v) + "e" + std::to_string(r.below(15));
        default: return std::to_string(v) + "." + std::to_string(r.below(9) + 1) + "E+" + std::to_string(r.below(5) + 1);
      }
    }
    case 9: {  // short decimals, the common case of prices and ratios
      double d = static_cast<double>(bits % 10000000) / 1000.0;
      return fmt_double(d, std::chars_format::fixed, static_cast<int>(r.below(4)));
    }
    case 10: {  // around the 1e21 and 1e-7 switches of ECMAScript's form
      double mant = 1.0 + static_cast<double>(bits % 1000) / 1000.0;
      int exp = r.coin(2) ? 19 + static_cast<int>(r.below(4)) : -(5 + static_cast<int>(r.below(4)));
      return respell_exponent(fmt_double(mant, std::chars_format::general) + "e" + std::to_string(exp), r);
    }
    case 11: {  // plain decimals with long fractions (0.1, 333333333.3333333)
      double d = static_cast<double>(bits % 1000000000) / static_cast<double>(1 + r.below(999));
      return fmt_double(d, std::chars_format::fixed, 12 + static_cast<int>(r.below(8)));
    }
    case 12: {  // large decimal exponents in both directions
      double d = std::bit_cast<double>((bits & 0x000F'FFFF'FFFF'FFFFull) | (std::uint64_t{0x600 + r.below(0x1F0)} << 52));
      if (r.coin(2)) d = 1 / d;
      return respell_exponent(fmt_double(d, std::chars_format::scientific), r);
    }
    default: {  // exact powers of two and of ten
      if (r.coin(2)) return "1e" + std::to_string(r.below(309));
      return fmt_double(std::ldexp(1.0, static_cast<int>(r.below(2000)) - 1074), std::chars_format::general);
    }
  }
}

using Emit = std::function<void(std::string&, Rng&)>;

// A top-level array of items, each from `item`, until `target` bytes.
std::string array_of(std::size_t target, Rng& r, const Emit& item, std::string_view sep = ",") {
  std::string out = "[";
  bool first = true;
  while (out.size() < target - 64) {
    std::size_t before = out.size();
    if (!first) out += sep;
    first = false;
    item(out, r);
    if (out.size() > target - 2) {  // keep the file within its size
      out.resize(before);
      break;
    }
  }
  out += "]";
  return out;
}

std::string shape_numbers(std::size_t target, Rng& r) {
  return array_of(target, r, [](std::string& out, Rng& g) {
    out += '[';
    int n = 1 + static_cast<int>(g.below(16));
    for (int k = 0; k < n; ++k) {
      if (k > 0) out += ',';
      out += number(g);
    }
    out += ']';
  });
}

std::string shape_escapes(std::size_t target, Rng& r) {
  return array_of(target, r, [](std::string& out, Rng& g) {
    out += '"';
    int n = 4 + static_cast<int>(g.below(60));
    for (int k = 0; k < n; ++k) {
      switch (g.below(10)) {
        case 0: put_u_escape(out, g.below(0x20), g.coin(2)); break;
        case 1: {
          static constexpr const char* kShort[] = {"\\b", "\\t", "\\n", "\\f", "\\r", "\\\"", "\\\\", "\\/"};
          out += kShort[g.below(8)];
          break;
        }
        case 2: put_u_escape(out, code_point(g, 1 + static_cast<int>(g.below(3))), g.coin(2)); break;
        case 3: {  // an escaped surrogate pair
          std::uint32_t cp = code_point(g, 4) - 0x10000;
          put_u_escape(out, 0xD800 + (cp >> 10), g.coin(2));
          put_u_escape(out, 0xDC00 + (cp & 0x3FF), g.coin(2));
          break;
        }
        case 4: put_u_escape(out, 0x20 + g.below(0x5F), g.coin(2)); break;  // an escaped printable (\u0041)
        case 5: put_u_escape(out, 0x7F, false); break;
        default: {  // a short plain run
          int len = 1 + static_cast<int>(g.below(6));
          for (int j = 0; j < len; ++j) out += static_cast<char>('a' + g.below(26));
        }
      }
    }
    out += '"';
  });
}

std::string shape_utf8(std::size_t target, Rng& r) {
  return array_of(target, r, [](std::string& out, Rng& g) {
    out += '"';
    int n = 8 + static_cast<int>(g.below(120));
    int mostly = static_cast<int>(g.below(5));  // each string leans to one class, as real text does
    for (int k = 0; k < n; ++k) {
      if (g.coin(40)) {
        static constexpr std::uint32_t kOdd[] = {0x7F, 0x2028, 0x2029, 0xFEFF, 0xFFFD, 0x10FFFF, 0x80, 0x7FF, 0x800};
        dot::append_utf8(out, kOdd[g.below(9)]);
      } else {
        dot::append_utf8(out, code_point(g, g.coin(3) ? static_cast<int>(g.below(5)) : mostly));
      }
    }
    out += '"';
  });
}

// A key that shares a prefix with its siblings and then differs in a
// character whose UTF-16 order may differ from its UTF-8 order.
std::string wide_key(Rng& g, const std::string& prefix) {
  std::string k = prefix;
  int n = 1 + static_cast<int>(g.below(4));
  for (int j = 0; j < n; ++j) {
    static constexpr int kClasses[] = {3, 4, 3, 4, 0, 1, 2};  // weighted to the astral/high-BMP pairs
    dot::append_utf8(k, code_point(g, kClasses[g.below(7)]));
  }
  return k;
}

std::string shape_wide(std::size_t target, Rng& r) {
  return array_of(target, r, [](std::string& out, Rng& g) {
    std::uint32_t width = g.coin(8) ? 500 + g.below(1500) : 8 + g.below(120);
    std::string prefixes[4];
    for (std::string& p : prefixes) {
      int len = static_cast<int>(g.below(12));
      for (int j = 0; j < len; ++j) p += static_cast<char>('a' + g.below(3));
    }
    std::set<std::string> used;
    out += '{';
    bool first = true;
    for (std::uint32_t m = 0; m < width; ++m) {
      std::string key = wide_key(g, prefixes[g.below(4)]);
      if (!used.insert(key).second) continue;
      if (!first) out += ',';
      first = false;
      out += '"';
      out += key;
      out += "\":";
      switch (g.below(4)) {
        case 0: out += std::to_string(g.below(100000)); break;
        case 1: out += g.coin(2) ? "true" : "null"; break;
        case 2: out += "\"v\""; break;
        default: out += "[" + std::to_string(g.below(10)) + "]";
      }
    }
    out += '}';
  });
}

std::string shape_deep(std::size_t target, Rng& r) {
  return array_of(target, r, [](std::string& out, Rng& g) {
    int depth = 40 + static_cast<int>(g.below(80));  // 2 levels are the top array and this tower's own
    for (int d = 0; d < depth; ++d) {
      if (d % 2 == 0) {
        out += "{\"n\":" + std::to_string(d) + ",\"";
        out += static_cast<char>('a' + g.below(13));  // a-m: never "n" or "z", the other keys
        out += "\":";
      } else {
        out += "[" + std::to_string(g.below(1000)) + ",";
      }
    }
    out += g.coin(2) ? "\"leaf\"" : "0.5";
    for (int d = depth - 1; d >= 0; --d) {
      if (d % 2 == 0) {
        out += ",\"z\":[]}";
      } else {
        out += ",{}]";
      }
    }
  });
}

// Whitespace of RFC 8259 in irregular amounts: spaces, tabs, CR LF.
void ws(std::string& out, Rng& g) {
  switch (g.below(6)) {
    case 0: break;
    case 1: out += ' '; break;
    case 2: out += "\n" + std::string(g.below(12), ' '); break;
    case 3: out += "\r\n" + std::string(g.below(4), '\t'); break;
    case 4: out += std::string(1 + g.below(8), ' '); break;
    default: out += " \t \n\n  "; break;
  }
}

std::string shape_pretty(std::size_t target, Rng& r) {
  std::size_t id = 0;
  return array_of(
      target, r,
      [&id](std::string& out, Rng& g) {
        static constexpr const char* kWords[] = {"alpha", "beta", "gamma", "delta", "caf\u00e9", "na\u00efve",
                                                 "stra\u00dfe", "\u65e5\u672c", "\U0001F600ok"};
        auto field = [&](const char* key, const std::string& value, bool last) {
          ws(out, g);
          out += '"';
          out += key;
          out += '"';
          if (g.coin(3)) ws(out, g);
          out += ':';
          ws(out, g);
          out += value;
          if (!last) {
            if (g.coin(4)) ws(out, g);
            out += ',';
          }
        };
        ws(out, g);
        out += '{';
        field("id", std::to_string(id++), false);
        field("name", std::string("\"") + kWords[g.below(9)] + "-" + std::to_string(g.below(1000)) + "\"", false);
        field("price", fmt_double(static_cast<double>(g.below(100000)) / 100.0, std::chars_format::fixed, 2), false);
        field("weight", number(g), false);
        std::string tags = "[";
        int nt = static_cast<int>(g.below(5));
        for (int k = 0; k < nt; ++k) {
          if (k > 0) tags += g.coin(2) ? ", " : ",\n\t\t";
          tags += std::string("\"") + kWords[g.below(9)] + "\"";
        }
        tags += "]";
        field("tags", tags, false);
        field("active", g.coin(2) ? "true" : "false", false);
        std::string nested = "{";
        nested += "\n      \"zeta\" : " + std::to_string(g.below(100)) + ",";
        nested += "\n      \"Alpha\"\t:\t\"x\\ty\",";
        nested += "\n      \"\u00e9t\u00e9\": null ,";
        nested += "\n      \"\U0001F680\": [ 1 , 2 ,3 ] ,";
        nested += "\n      \"\uFB01\":\"ligature\"";
        nested += "\n    }";
        field("meta", nested, false);
        field("note", "\"Lorem ipsum dolor sit amet, consectetur adipiscing elit.\"", true);
        ws(out, g);
        out += '}';
      },
      ",");
}

struct Shape {
  const char* name;
  std::string (*make)(std::size_t, Rng&);
};

std::string shape_records(std::size_t target, Rng&) { return dot::bench::make_document(target); }

constexpr Shape kShapes[] = {
    {"numbers", shape_numbers}, {"escapes", shape_escapes}, {"utf8", shape_utf8},     {"wide", shape_wide},
    {"deep", shape_deep},       {"pretty", shape_pretty},   {"records", shape_records},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: bench_jcs_corpus DIR [MIB] [SEED]\n");
    return 2;
  }
  long mib = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 8;
  if (mib <= 0 || mib > 256) {
    std::fprintf(stderr, "bench_jcs_corpus: MIB must be 1..256\n");
    return 2;
  }
  std::uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
  std::string dir = argv[1];
  for (const Shape& s : kShapes) {
    std::uint64_t name_hash = 0xCBF29CE484222325ull;  // FNV-1a: each shape its own stream
    for (const char* c = s.name; *c != 0; ++c) name_hash = (name_hash ^ static_cast<unsigned char>(*c)) * 0x100000001B3ull;
    Rng r(seed ^ name_hash);
    std::string doc = s.make(static_cast<std::size_t>(mib) << 20, r);
    std::string path = dir + "/" + s.name + ".json";
    dot::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (!fd) {
      std::perror(path.c_str());
      return 1;
    }
    if (!dot::write_all(fd.get(), doc, path).ok()) return 1;
    std::printf("%s %zu\n", path.c_str(), doc.size());
  }
  return 0;
}
