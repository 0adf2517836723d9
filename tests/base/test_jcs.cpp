#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <random>
#include <vector>
#include <cstring>
#include <limits>
#include <string>

#include "dot/base/jcs.h"
#include "dot/base/error_kinds.h"
#include "dot/base/json.h"
#include "jcs_internal.h"

namespace dot::jcs {
namespace {

std::string num(double d) {
  std::string s;
  append_number(s, d);
  return s;
}

std::string canon(std::string_view text, Profile p = Profile::Rfc8785) {
  auto r = canonicalize_text(text, p);
  if (!r.ok()) return "ERROR " + std::string(r.error().kind.name());
  return *r;
}

double from_bits(std::uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

TEST(JcsNumber, EcmascriptFormatting) {
  EXPECT_EQ(num(0.0), "0");
  EXPECT_EQ(num(-0.0), "0");
  EXPECT_EQ(num(1), "1");
  EXPECT_EQ(num(-1), "-1");
  EXPECT_EQ(num(1e21), "1e+21");
  EXPECT_EQ(num(1e20), "100000000000000000000");
  EXPECT_EQ(num(999999999999999900000.0), "999999999999999900000");
  EXPECT_EQ(num(1e-6), "0.000001");
  EXPECT_EQ(num(1e-7), "1e-7");
  EXPECT_EQ(num(1.5e-7), "1.5e-7");
  EXPECT_EQ(num(5e-324), "5e-324");
  EXPECT_EQ(num(-5e-324), "-5e-324");
  EXPECT_EQ(num(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(num(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(num(333333333.3333333), "333333333.3333333");
  EXPECT_EQ(num(9007199254740992.0), "9007199254740992");
  EXPECT_EQ(num(9007199254740993.0), "9007199254740992");
  EXPECT_EQ(num(18446744073709551616.0), "18446744073709552000");
  EXPECT_EQ(num(1e23), "1e+23");
  EXPECT_EQ(num(123.456), "123.456");
  EXPECT_EQ(num(0.000001234), "0.000001234");
  EXPECT_EQ(num(1.234e-7), "1.234e-7");
  EXPECT_EQ(num(4.35), "4.35");
  EXPECT_EQ(num(2e-3), "0.002");
  // Rows of the well-known ES6 number test file (hex bits, expected).
  EXPECT_EQ(num(from_bits(0x4340000000000000ull)), "9007199254740992");
  EXPECT_EQ(num(from_bits(0x44b52d02c7e14af6ull)), "1e+23");
  EXPECT_EQ(num(from_bits(0x3eb0c6f7a0b5ed8dull)), "0.000001");
  EXPECT_EQ(num(from_bits(0x3eb0c6f7a0b5ed8cull)), "9.999999999999997e-7");
  EXPECT_EQ(num(from_bits(0x7fefffffffffffffull)), "1.7976931348623157e+308");
  EXPECT_EQ(num(from_bits(0x0000000000000001ull)), "5e-324");
  EXPECT_EQ(num(from_bits(0x444b1ae4d6e2ef50ull)), "1e+21");
  EXPECT_EQ(num(from_bits(0x444b1ae4d6e2ef4full)), "999999999999999900000");
}

// ECMAScript Number::toString built independently of the writer: the
// shortest round-trip digits of std::to_chars (libstdc++'s Ryu, where the
// writer uses Dragonbox), placed by the rules of ECMA-262 Number::toString.
std::string es_reference(double d) {
  if (d == 0) return "0";
  char buf[40];
  char* end = std::to_chars(buf, buf + sizeof buf, std::fabs(d), std::chars_format::scientific).ptr;
  std::string sci(buf, end);  // "d[.ddd]e[+-]xx"
  std::size_t e = sci.find('e');
  std::string digits = sci.substr(0, 1) + (e > 1 ? sci.substr(2, e - 2) : "");
  int k = static_cast<int>(digits.size());
  int n = std::stoi(sci.substr(e + 1)) + 1;
  std::string out = d < 0 ? "-" : "";
  if (k <= n && n <= 21) {
    out += digits + std::string(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out += digits.substr(0, static_cast<std::size_t>(n)) + "." + digits.substr(static_cast<std::size_t>(n));
  } else if (-6 < n && n <= 0) {
    out += "0." + std::string(static_cast<std::size_t>(-n), '0') + digits;
  } else {
    out += digits.substr(0, 1) + (k > 1 ? "." + digits.substr(1) : "") + "e" + (n - 1 >= 0 ? "+" : "-") +
           std::to_string(std::abs(n - 1));
  }
  return out;
}

// The writer (Dragonbox's digits) against that reference: every binade's
// first, last and a middle value, subnormals, integers around 2^53 and
// 2^64, both sides of the 1e21, 1e-6 and 1e-7 switches and of every power
// of ten, every four-digit group in every place, and a million random bit
// patterns.
TEST(JcsNumber, ShortestDigitsAgreeWithAnIndependentPrinter) {
  std::vector<double> values;
  auto around = [&values](double d) {
    values.push_back(d);
    values.push_back(std::nextafter(d, 0.0));
    values.push_back(std::nextafter(d, std::numeric_limits<double>::infinity()));
  };
  for (std::uint64_t exp = 0; exp < 2047; ++exp)
    for (std::uint64_t mant : {0ull, 1ull, 0x8000000000000ull, 0xFFFFFFFFFFFFFull})
      values.push_back(from_bits(exp << 52 | mant));
  for (double p = 1e-323; p < 1e308; p *= 10) around(p);
  for (int e = -323; e <= 308; ++e) {
    std::string text = "1e" + std::to_string(e);
    double d = 0;
    std::from_chars(text.data(), text.data() + text.size(), d);
    around(d);
  }
  for (double d : {9007199254740992.0, 18446744073709551616.0, 1e21, 1e-6, 1e-7, 0.1, 5e-324,
                   2.2250738585072014e-308, 1.7976931348623157e308})
    around(d);
  // Every group of four digits in each of the four places the printer
  // writes in fixed steps below the 17th digit.
  for (double place : {1.0, 1e4, 1e8, 1e12})
    for (int g = 1; g < 10000; ++g) values.push_back(g * place + (place > 1 ? 1 : 0));
  std::mt19937_64 rng(20261202);
  for (int i = 0; i < 100000; ++i) values.push_back(from_bits(rng() & 0x000FFFFFFFFFFFFFull));  // subnormal
  for (int i = 0; i < 100000; ++i) values.push_back(static_cast<double>(rng() >> (rng() % 64)));  // integers
  for (int i = 0; i < 1000000; ++i) values.push_back(from_bits(rng()));
  std::size_t checked = 0;
  for (double v : values) {
    for (double d : {v, -v}) {
      if (!std::isfinite(d)) continue;
      ASSERT_EQ(num(d), es_reference(d)) << std::hexfloat << d;
      ++checked;
    }
  }
  EXPECT_GT(checked, 2000000u);
}

TEST(JcsString, Escapes) {
  std::string out;
  append_string(out, std::string_view("\"\\/\b\f\n\r\t\x01\x1f\x7f\xC3\xA9\xF0\x9F\x98\x80\0", 18));
  EXPECT_EQ(out, std::string("\"\\\"\\\\/\\b\\f\\n\\r\\t\\u0001\\u001f\x7f\xC3\xA9\xF0\x9F\x98\x80\\u0000\""));
}

TEST(JcsCanonicalize, Rfc8785SortingExample) {
  // RFC 8785 section 3.2.3: keys sorted by UTF-16 code units.
  std::string in = R"({"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh",)"
                   R"("1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"})";
  std::string want =
      "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\xC2\x80\":\"Control\",\"\xC3\xB6\":\"Latin Small Letter O With "
      "Diaeresis\",\"\xE2\x82\xAC\":\"Euro Sign\",\"\xF0\x9F\x98\x80\":\"Emoji: Grinning Face\",\"\xEF\xAC\xB3\":\"Hebrew "
      "Letter Dalet With Dagesh\"}";
  EXPECT_EQ(canon(in), want);
}

TEST(JcsCanonicalize, Rfc8785NumbersExample) {
  // RFC 8785 section 3.2.2.
  std::string in = R"({"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
    "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]})";
  std::string want =
      "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],"
      "\"string\":\"\xE2\x82\xAC$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}";
  EXPECT_EQ(canon(in), want);
}

TEST(JcsCanonicalize, NestedSortingAndWhitespace) {
  EXPECT_EQ(canon(" { \"b\" : [ 3 , { \"z\":1, \"a\":2 } ], \"a\" : { } } "), "{\"a\":{},\"b\":[3,{\"a\":2,\"z\":1}]}");
  EXPECT_EQ(canon("[\"\\u00e9\", \"e\\u0301\"]"), "[\"\xC3\xA9\",\"e\xCC\x81\"]");  // no normalisation
  EXPECT_EQ(canon("{\"\\uffff\":1,\"\\ud800\\udc00\":2,\"\\ud7ff\":3}"),
            "{\"\xED\x9F\xBF\":3,\"\xF0\x90\x80\x80\":2,\"\xEF\xBF\xBF\":1}");
  EXPECT_EQ(canon("-0"), "0");
  EXPECT_EQ(canon("1e3"), "1000");
  EXPECT_EQ(canon("18446744073709551616"), "18446744073709552000");
  EXPECT_EQ(canon("1e-400"), "0");
  EXPECT_EQ(canon("1e400"), "ERROR invalid_number");
  EXPECT_EQ(canon("{\"a\":1,\"a\":1}"), "ERROR duplicate_key");
}

TEST(JcsCanonicalize, HelloProfile) {
  EXPECT_EQ(canon("{\"b\":[0,9007199254740991],\"a\":\"x y~\"}", Profile::Hello),
            "{\"a\":\"x y~\",\"b\":[0,9007199254740991]}");
  EXPECT_EQ(canon("9007199254740992", Profile::Hello), "ERROR unsafe_integer");
  EXPECT_EQ(canon("123456789012345678901234567890", Profile::Hello), "ERROR unsafe_integer");
  EXPECT_EQ(canon("1.0", Profile::Hello), "ERROR fraction");
  EXPECT_EQ(canon("1e3", Profile::Hello), "ERROR fraction");
  EXPECT_EQ(canon("-0", Profile::Hello), "ERROR negative");
  EXPECT_EQ(canon("-1", Profile::Hello), "ERROR negative");
  EXPECT_EQ(canon("\"caf\\u00e9\"", Profile::Hello), "ERROR not_printable_ascii");
  EXPECT_EQ(canon("\"a\\nb\"", Profile::Hello), "ERROR not_printable_ascii");
  EXPECT_EQ(canon("\"\\u007f\"", Profile::Hello), "ERROR not_printable_ascii");
  EXPECT_EQ(canon("{\"\\u00e9\":1}", Profile::Hello), "ERROR not_printable_ascii");
  auto r = canonicalize_text("[1, 2.5]", Profile::Hello);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Validation);
  EXPECT_EQ(r.error().offset, 4u);
}

TEST(JcsCanonicalize, MetewandProfile) {
  EXPECT_EQ(canon("[1e3, 0.5, -0, 9007199254740991, -9007199254740991]", Profile::Metewand),
            "[1000,0.5,0,9007199254740991,-9007199254740991]");
  EXPECT_EQ(canon("9007199254740992.0", Profile::Metewand), "ERROR unsafe_integer");
  EXPECT_EQ(canon("1.7976931348623157e308", Profile::Metewand), "ERROR unsafe_integer");
  EXPECT_EQ(canon("-9007199254740992", Profile::Metewand), "ERROR unsafe_integer");
  EXPECT_EQ(canon("1e300", Profile::Metewand), "ERROR unsafe_integer");
  EXPECT_EQ(canon("1.5e300", Profile::Metewand), "ERROR unsafe_integer");  // integral value
  EXPECT_EQ(canon("5e-324", Profile::Metewand), "5e-324");
  EXPECT_EQ(canon("\"\\u00e9\"", Profile::Metewand), "\"\xC3\xA9\"");
}

TEST(JcsCanonicalize, Idempotent) {
  const char* docs[] = {"{\"b\":[1,2e10,{\"\\ud83d\\ude00\":null}],\"\\u00e9\":\"\\u001f\"}", "[0.1,1e-7,1e21]"};
  for (const char* d : docs) {
    std::string once = canon(d);
    EXPECT_EQ(canon(once), once);
  }
}

// canonicalize_text writes RFC 8785 and Metewand output straight from
// simdjson's tape; it must agree with the Document path byte for byte and
// refuse exactly what the Document path refuses, with the same error.
// The same texts canonicalized from a lent, zero-padded buffer (as the CLI
// maps a file), from a buffer padded with other bytes (copied), and from a
// plain string: the same bytes, or the same error line. Among them: a wide
// object with a repeat (the hashed check), underflow (zero), numbers beyond
// 2^64, and the depth limit.
TEST(JcsCanonicalize, LentAndCopiedInputsAgree) {
  std::string wide = "{";
  for (int i = 0; i < 40; ++i) wide += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  std::string wide_ok = wide + "\"end\":0}";
  std::string wide_repeat = wide + "\"k17\":0}";
  const std::string docs[] = {
      "{\"b\":[1,2.5,-0,1e21,1e-7],\"a\":{\"\\ud83d\\ude00\":null,\"\\uffff\":true}}",
      "[\"\\u0000\\u001f\\\"\",\"\xC3\xA9\"]", "18446744073709551616", "[9007199254740992]", "[1e16, 0.5]",
      "{\"a\":1,\"\\u0061\":2}", "[1e400]", "[1e-400,-1E-400,0.0000e-99999]", "\"\\ud800\"", "[[[[]]]]",
      "{\"k\":{\"k\":{\"k\":{}}}}", "\xEF\xBB\xBF[]", "[1,]", "{}", "[]", "[{}]", "123456789012345678901234567890e-5",
      wide_ok, wide_repeat,
  };
  json::ReadLimits limits;
  limits.max_depth = 3;
  for (const std::string& d : docs) {
    for (Profile p : {Profile::Rfc8785, Profile::Metewand, Profile::Hello}) {
      auto plain = canonicalize_text(d, p, limits);
      for (char pad : {'\0', ' '}) {
        std::string buffer = d + std::string(json::kPadding, pad);
        std::string streamed;
        auto st = canonicalize_text_to(
            std::string_view(buffer.data(), d.size()), p,
            [&](std::string_view piece) -> Status {
              streamed.append(piece);
              return {};
            },
            limits, true, 7);
        ASSERT_EQ(st.ok(), plain.ok()) << d;
        if (st.ok()) {
          EXPECT_EQ(streamed, *plain) << d;
        } else {
          EXPECT_EQ(streamed, "") << d;
          EXPECT_EQ(st.error().line(), plain.error().line()) << d;
        }
      }
    }
  }
  EXPECT_EQ(canon("[1e-400,-1E-400]"), "[0,0]");
  EXPECT_EQ(canon(wide_repeat), "ERROR duplicate_key");
}

// Keys are ordered by their UTF-16 code units, whatever the object's width
// (wide ones sort by an integer prefix first): checked against an order
// computed in UTF-16 here, on keys made to differ after long shared
// prefixes and exactly where UTF-8 and UTF-16 orders disagree.
TEST(JcsCanonicalize, WideObjectsSortByUtf16CodeUnits) {
  auto utf16 = [](std::string_view s) {
    std::u16string out;
    for (std::size_t i = 0; i < s.size();) {
      auto b = static_cast<unsigned char>(s[i]);
      int len = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
      std::uint32_t cp = len == 1 ? b : b & (0xFF >> (len + 1));
      for (int k = 1; k < len; ++k) cp = cp << 6 | (static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]) & 0x3F);
      if (cp >= 0x10000) {
        out += static_cast<char16_t>(0xD800 + ((cp - 0x10000) >> 10));
        out += static_cast<char16_t>(0xDC00 + ((cp - 0x10000) & 0x3FF));
      } else {
        out += static_cast<char16_t>(cp);
      }
      i += static_cast<std::size_t>(len);
    }
    return out;
  };
  const char* pieces[] = {"a", "b", "\x7F", "\xC3\xA9", "\xE4\xB8\xAD", "\xED\x9F\xBF", "\xEE\x80\x80",
                          "\xEF\xBF\xBD", "\xEF\xAC\x81", "\xF0\x9F\x98\x80", "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF", ""};
  std::mt19937_64 next(88172645463325252ull);
  for (int round = 0; round < 200; ++round) {
    int width = round % 2 == 0 ? 5 : 60;
    std::vector<std::string> keys;
    std::string prefix(next() % 12, 'p');
    while (keys.size() < static_cast<std::size_t>(width)) {
      std::string k = next() % 3 == 0 ? std::string() : prefix;
      int n = 1 + static_cast<int>(next() % 4);
      for (int j = 0; j < n; ++j) k += pieces[next() % (sizeof pieces / sizeof pieces[0])];
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
    std::string text = "{";
    for (std::size_t i = 0; i < keys.size(); ++i) text += (i ? ",\"" : "\"") + keys[i] + "\":" + std::to_string(i);
    text += "}";
    std::vector<std::string> sorted = keys;
    std::sort(sorted.begin(), sorted.end(), [&](const std::string& a, const std::string& b) { return utf16(a) < utf16(b); });
    std::string expected = "{";
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      auto at = std::find(keys.begin(), keys.end(), sorted[i]) - keys.begin();
      expected += (i ? ",\"" : "\"") + sorted[i] + "\":" + std::to_string(at);
    }
    expected += "}";
    ASSERT_EQ(canon(text), expected) << text;
  }
}

TEST(JcsNode, EncodeBuiltTrees) {
  Node n = Node::object();
  n.set("zeta", Node::integer(3))
      .set("alpha", Node::array().push(Node::boolean(true)).push(Node::null()).push(Node::number(0.5)))
      .set("s", Node::string("\xE2\x82\xAC\n"));
  n.set("zeta", Node::integer(4));  // replaces
  auto r = encode(n, Profile::Rfc8785);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "{\"alpha\":[true,null,0.5],\"s\":\"\xE2\x82\xAC\\n\",\"zeta\":4}");
  ASSERT_NE(n.get("zeta"), nullptr);
  EXPECT_EQ(n.get("missing"), nullptr);
  EXPECT_EQ(encode(n, Profile::Hello).error().kind, "fraction");
  EXPECT_EQ(encode(Node::integer(-1), Profile::Hello).error().kind, "negative");
  EXPECT_EQ(encode(Node::integer(9007199254740992), Profile::Hello).error().kind, "unsafe_integer");
  EXPECT_EQ(encode(Node::integer(9007199254740992), Profile::Metewand).error().kind, "unsafe_integer");
  EXPECT_EQ(*encode(Node::integer(9007199254740993), Profile::Rfc8785), "9007199254740992");
  EXPECT_EQ(encode(Node::number(std::nan("")), Profile::Rfc8785).error().kind, "invalid_number");
  EXPECT_EQ(encode(Node::number(INFINITY), Profile::Rfc8785).error().kind, "invalid_number");
  EXPECT_EQ(encode(Node::string("\xFF"), Profile::Rfc8785).error().kind, "utf8");
  EXPECT_EQ(encode(Node::string("caf\xC3\xA9"), Profile::Hello).error().kind, "not_printable_ascii");
  EXPECT_EQ(*encode(Node::number(-0.0), Profile::Rfc8785), "0");
  EXPECT_EQ(encode(Node::number(-0.0), Profile::Hello).error().kind, "negative");
}

TEST(JcsNode, AnEncodedPieceIsWrittenAsItsTreeWouldBe) {
  // An array encoded element by element with encode_to, then set as one
  // piece: the same bytes as the whole tree encoded at once.
  Node whole = Node::object();
  Node items = Node::array();
  std::string piece = "[";
  for (int i = 0; i < 3; ++i) {
    Node item = Node::object().set("z", Node::integer(i)).set("a", Node::string("x" + std::to_string(i)));
    if (i > 0) piece += ',';
    ASSERT_TRUE(encode_to(piece, item, Profile::Rfc8785).ok());
    items.push(std::move(item));
  }
  piece += ']';
  whole.set("items", std::move(items)).set("b", Node::boolean(false));
  Node pieced = Node::object().set("items", Node::encoded(piece, Profile::Rfc8785)).set("b", Node::boolean(false));
  ASSERT_TRUE(encode(whole, Profile::Rfc8785).ok());
  EXPECT_EQ(*encode(pieced, Profile::Rfc8785), *encode(whole, Profile::Rfc8785));
  EXPECT_EQ(*encode(pieced, Profile::Rfc8785),
            "{\"b\":false,\"items\":[{\"a\":\"x0\",\"z\":0},{\"a\":\"x1\",\"z\":1},{\"a\":\"x2\",\"z\":2}]}");
  // A piece is only valid under the profile that wrote it: the hello
  // profile's checks were not made on an RFC 8785 piece.
  auto other = encode(pieced, Profile::Hello);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().detail, "a piece encoded under profile rfc8785 inside a hello document");
  // encode_to appends.
  std::string out = "prefix:";
  ASSERT_TRUE(encode_to(out, Node::integer(7), Profile::Hello).ok());
  EXPECT_EQ(out, "prefix:7");
}

TEST(JcsNode, AWrittenPieceIsWrittenInPlaceAndItsErrorStops) {
  // The writer appends to the document's own buffer, between the members
  // before and after it in key order.
  int calls = 0;
  auto three = [&calls](std::string& out) -> Status {
    ++calls;
    out += '[';
    for (int i = 0; i < 3; ++i) {
      if (i > 0) out += ',';
      DOT_TRY(encode_to(out, Node::object().set("z", Node::integer(i)).set("a", Node::string("x")), Profile::Rfc8785));
    }
    out += ']';
    return {};
  };
  Node n = Node::object().set("m", Node::written(three, Profile::Rfc8785)).set("b", Node::boolean(false));
  n.set("z", Node::null());
  EXPECT_EQ(*encode(n, Profile::Rfc8785),
            "{\"b\":false,\"m\":[{\"a\":\"x\",\"z\":0},{\"a\":\"x\",\"z\":1},{\"a\":\"x\",\"z\":2}],\"z\":null}");
  EXPECT_EQ(calls, 1);
  auto other = encode(n, Profile::Hello);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().detail, "a piece written under profile rfc8785 inside a hello document");
  EXPECT_EQ(calls, 1);
  // The writer's error is the encoding's.
  auto bad = [](std::string& out) -> Status { return encode_to(out, Node::string("\xff"), Profile::Rfc8785); };
  auto refused = encode(Node::object().set("m", Node::written(bad, Profile::Rfc8785)), Profile::Rfc8785);
  ASSERT_FALSE(refused.ok());
}

TEST(JcsNode, FromParsedValueRoundTrips) {
  const char* text = "{\"b\":[1,-0,2.5,18446744073709551616,\"x\"],\"a\":{\"\\ud83d\\ude00\":true}}";
  auto doc = json::parse(text);
  ASSERT_TRUE(doc.ok());
  Node n = Node::from(doc->root());
  EXPECT_EQ(*encode(n, Profile::Rfc8785), *canonicalize(doc->root(), Profile::Rfc8785));
  auto minus_zero = json::parse("[-0]");
  ASSERT_TRUE(minus_zero.ok());
  // -0 keeps its sign through from(), so the hello profile still refuses it.
  EXPECT_EQ(encode(Node::from(minus_zero->root()), Profile::Hello).error().kind, "negative");
}

TEST(JcsProfile, Names) {
  for (Profile p : {Profile::Rfc8785, Profile::Hello, Profile::Metewand})
    EXPECT_EQ(profile_from_name(profile_name(p)), p);
  EXPECT_FALSE(profile_from_name("RFC8785").has_value());
}

}  // namespace
}  // namespace dot::jcs

TEST(JcsCanonicalize, StreamedOutputMatchesAndRefusalsWriteNothing) {
  using dot::jcs::Profile;
  std::string text = R"({"b":[1,2.5,"\u00e9",{"y":null,"x":true}],"a":-0,"c":"tab\tquote\"")";
  text += "}";
  for (Profile profile : {Profile::Rfc8785, Profile::Metewand, Profile::Hello}) {
    auto whole = dot::jcs::canonicalize_text(text, profile);
    for (bool padded : {false, true}) {
      std::string buffer = text + std::string(dot::json::kPadding, ']');
      std::string streamed;
      int pieces = 0;
      auto st = dot::jcs::canonicalize_text_to(
          std::string_view(buffer.data(), text.size()), profile,
          [&](std::string_view piece) -> dot::Status {
            streamed.append(piece);
            ++pieces;
            return {};
          },
          {}, padded, 3);
      ASSERT_EQ(st.ok(), whole.ok());
      if (whole.ok()) {
        EXPECT_EQ(streamed, *whole);
        EXPECT_GT(pieces, 1);
      } else {
        EXPECT_EQ(streamed, "");
        EXPECT_EQ(st.error().kind, whole.error().kind);
      }
    }
  }
  // A duplicate key late in the text: nothing reaches the sink.
  std::string late = "[";
  for (int i = 0; i < 1000; ++i) late += "\"some text\",";
  late += R"({"k":1,"k":2}])";
  std::string padded_late = late + std::string(dot::json::kPadding, ' ');
  std::string streamed;
  auto st = dot::jcs::canonicalize_text_to(
      std::string_view(padded_late.data(), late.size()), Profile::Rfc8785,
      [&](std::string_view piece) -> dot::Status {
        streamed.append(piece);
        return {};
      },
      {}, true, 64);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, "duplicate_key");
  EXPECT_EQ(streamed, "");
  // A failing sink stops the writing and its error comes back.
  std::string small = std::string(R"(["abc",1,{"b":2,"a":1}])") + std::string(dot::json::kPadding, ' ');
  int calls = 0;
  auto failed = dot::jcs::canonicalize_text_to(
      std::string_view(small.data(), small.size() - dot::json::kPadding), Profile::Rfc8785,
      [&calls](std::string_view) -> dot::Status {
        ++calls;
        return dot::make_error(dot::base::ErrorKind::Write, "sink closed");
      },
      {}, true, 1);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, dot::Code::Io);
  EXPECT_EQ(calls, 1);
}
