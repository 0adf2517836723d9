#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "dot/base/json.h"
#include "json_internal.h"

namespace dot::json {
namespace {

// Parses with both entry points and checks they agree on the error.
struct Outcome {
  bool ok;
  std::string kind;
  std::uint64_t offset;
};

Outcome outcome_of(std::string_view text, const ReadLimits& limits = {}) {
  auto doc = parse(text, limits);
  auto st = validate(text, limits);
  EXPECT_EQ(doc.ok(), st.ok()) << "parse and validate disagree on: " << text;
  if (doc.ok()) return {true, "", 0};
  if (!st.ok()) {
    EXPECT_EQ(doc.error().kind, st.error().kind) << text;
    EXPECT_EQ(doc.error().offset, st.error().offset) << text;
    EXPECT_EQ(doc.error().detail, st.error().detail) << text;
  }
  EXPECT_EQ(doc.error().code, Code::Validation);
  EXPECT_TRUE(doc.error().offset.has_value());
  return {false, std::string(doc.error().kind.name()), doc.error().offset.value_or(~0ull)};
}

#define EXPECT_REJECTS(text, want_kind, want_offset)            \
  do {                                                          \
    Outcome o_ = outcome_of(text);                              \
    EXPECT_FALSE(o_.ok) << "accepted: " << (text);              \
    EXPECT_EQ(o_.kind, want_kind) << (text);                    \
    EXPECT_EQ(o_.offset, static_cast<std::uint64_t>(want_offset)) << (text); \
  } while (0)

#define EXPECT_ACCEPTS(text)                                    \
  do {                                                          \
    Outcome o_ = outcome_of(text);                              \
    EXPECT_TRUE(o_.ok) << "rejected: " << (text) << " as " << o_.kind << " at " << o_.offset; \
  } while (0)

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonParse, ScalarsAndAccessors) {
  auto doc = parse(R"( {"b": [1, 2.5, "x\ny", true, false, null], "a": {"c": -0}} )");
  ASSERT_TRUE(doc.ok()) << doc.error().line();
  Value root = doc->root();
  ASSERT_TRUE(root.is_object());
  EXPECT_EQ(root.offset(), 1u);
  EXPECT_EQ(root.size(), 2u);
  std::vector<std::string_view> keys;
  for (Member m : root.members()) keys.push_back(m.key);
  EXPECT_EQ(keys, (std::vector<std::string_view>{"b", "a"}));  // source order
  auto b = root.find("b");
  ASSERT_TRUE(b && b->is_array());
  EXPECT_EQ(b->size(), 6u);
  std::vector<Type> types;
  for (Value e : b->elements()) types.push_back(e.type());
  EXPECT_EQ(types, (std::vector<Type>{Type::Number, Type::Number, Type::String, Type::Bool, Type::Bool, Type::Null}));
  auto it = b->elements().begin();
  EXPECT_EQ((*it).as_double(), 1.0);
  EXPECT_TRUE((*it).is_integer_spelling());
  EXPECT_EQ((*it).offset(), 8u);
  ++it;
  EXPECT_EQ((*it).number_text(), "2.5");
  EXPECT_FALSE((*it).is_integer_spelling());
  ++it;
  EXPECT_EQ((*it).as_string(), "x\ny");
  ++it;
  EXPECT_TRUE((*it).as_bool());
  ++it;
  EXPECT_FALSE((*it).as_bool());
  auto c = root.find("a")->find("c");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->number_text(), "-0");
  EXPECT_TRUE(std::signbit(c->as_double()));
  EXPECT_FALSE(root.find("B"));  // exact, case-sensitive
  EXPECT_EQ(doc->source().front(), ' ');
}

TEST(JsonParse, MemberKeysAreUnescapedWithOffsets) {
  auto doc = parse(R"({"a\u0062":1,  "\ud83d\ude00":[]})");
  ASSERT_TRUE(doc.ok());
  std::vector<Member> ms;
  for (Member m : doc->root().members()) ms.push_back(m);
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[0].key, "ab");
  EXPECT_EQ(ms[0].key_offset, 1u);
  EXPECT_EQ(ms[1].key, "\xF0\x9F\x98\x80");
  EXPECT_EQ(ms[1].key_offset, 15u);
  EXPECT_TRUE(ms[1].value.is_array());
  EXPECT_EQ(ms[1].value.offset(), 30u);
}

TEST(JsonParse, NumbersKeepTextAndBinary64Value) {
  struct Case {
    const char* text;
    double value;
  } cases[] = {
      {"18446744073709551616", 18446744073709551616.0},   // 2^64: simdjson calls it a big integer
      {"18446744073709551615", 18446744073709551615.0},
      {"-9223372036854775809", -9223372036854775809.0},
      {"9007199254740993", 9007199254740992.0},            // 2^53 + 1 rounds to even
      {"123456789012345678901234567890", 1.2345678901234568e29},
      {"1e-400", 0.0},
      {"5e-324", 5e-324},
      {"2e-324", 0.0},
      {"1.7976931348623157e308", 1.7976931348623157e308},
      {"0.1", 0.1},
      {"1E3", 1000.0},
  };
  for (const auto& c : cases) {
    auto doc = parse(c.text);
    ASSERT_TRUE(doc.ok()) << c.text << ": " << doc.error().line();
    EXPECT_EQ(doc->root().as_double(), c.value) << c.text;
    EXPECT_EQ(doc->root().number_text(), c.text);
  }
  auto neg = parse("[-1e-400, -0.0]");
  ASSERT_TRUE(neg.ok());
  for (Value v : neg->root().elements()) {
    EXPECT_EQ(v.as_double(), 0.0);
    EXPECT_TRUE(std::signbit(v.as_double()));
  }
  std::string big = "[" + std::string(400, '9') + "]";
  EXPECT_REJECTS(big, "invalid_number", 1);
  EXPECT_ACCEPTS("[" + std::string(300, '9') + "]");
}

TEST(JsonParse, RejectionKindsAndOffsets) {
  EXPECT_REJECTS("\xEF\xBB\xBF{}", "bom", 0);
  EXPECT_REJECTS("[\"\xC3\"]", "utf8", 2);
  EXPECT_REJECTS("[\"ok\", \"\xC0\xAF\"]", "utf8", 8);          // overlong
  EXPECT_REJECTS("\"\xED\xA0\x80\"", "utf8", 1);                 // UTF-8-encoded surrogate
  EXPECT_REJECTS("\"\xF4\x90\x80\x80\"", "utf8", 1);             // above U+10FFFF
  EXPECT_REJECTS("\"\xE2\x82\"", "utf8", 1);                     // truncated sequence
  EXPECT_REJECTS("{\"a\":1,\"a\":2}", "duplicate_key", 7);
  EXPECT_REJECTS("{\"a\":1,\"\\u0061\":2}", "duplicate_key", 7);  // after unescaping
  EXPECT_REJECTS("[{\"x\":{\"k\":[],\"k\":0}}]", "duplicate_key", 14);
  EXPECT_REJECTS("\"\\ud800\"", "invalid_unicode", 1);
  EXPECT_REJECTS("\"\\udc00\"", "invalid_unicode", 1);
  EXPECT_REJECTS("\"ab\\ud800\\u0041\"", "invalid_unicode", 3);
  EXPECT_REJECTS("{\"\\uDBFF\":1}", "invalid_unicode", 2);
  EXPECT_REJECTS("\"\\ud800\\ud800\"", "invalid_unicode", 1);
  EXPECT_REJECTS("1e400", "invalid_number", 0);
  EXPECT_REJECTS("[1, -1e400]", "invalid_number", 4);
  EXPECT_REJECTS("{\"a\":1.7976931348623159e308}", "invalid_number", 5);
  EXPECT_REJECTS("", "malformed", 0);
  EXPECT_REJECTS("   ", "malformed", 3);
  EXPECT_REJECTS("[1,]", "malformed", 3);
  EXPECT_REJECTS("[01]", "malformed", 2);
  EXPECT_REJECTS("{", "malformed", 1);
  EXPECT_REJECTS("{\"a\" 1}", "malformed", 5);
  EXPECT_REJECTS("{1:2}", "malformed", 1);
  EXPECT_REJECTS("tru", "malformed", 3);
  EXPECT_REJECTS("[nul]", "malformed", 4);
  EXPECT_REJECTS("\"a\tb\"", "malformed", 2);
  EXPECT_REJECTS("\"\\x\"", "malformed", 1);
  EXPECT_REJECTS("\"\\u12G4\"", "malformed", 5);
  EXPECT_REJECTS("\"abc", "malformed", 4);
  EXPECT_REJECTS("-", "malformed", 1);
  EXPECT_REJECTS("1.", "malformed", 2);
  EXPECT_REJECTS("1e+", "malformed", 3);
  EXPECT_REJECTS(".5", "malformed", 0);
  EXPECT_REJECTS("NaN", "malformed", 0);
  EXPECT_REJECTS("[Infinity]", "malformed", 1);
  EXPECT_REJECTS("1 2", "trailing", 2);
  EXPECT_REJECTS("{} {}", "trailing", 3);
  EXPECT_REJECTS("01", "trailing", 1);
  EXPECT_REJECTS("[1]\f", "trailing", 3);
  EXPECT_REJECTS(std::string("[1]\0", 4), "trailing", 3);
  EXPECT_ACCEPTS(" \t\r\n[1] \t\r\n");
}

TEST(JsonParse, SmallestOffsetWins) {
  EXPECT_REJECTS("[1e400, \"\\ud800\"]", "invalid_number", 1);
  EXPECT_REJECTS("[\"\\ud800\", 1e400]", "invalid_unicode", 2);
  EXPECT_REJECTS("{\"a\":1,\"a\":\"\\ud800\"}", "duplicate_key", 7);
  EXPECT_REJECTS("{\"a\":[1e400],\"a\":1}", "invalid_number", 6);
  EXPECT_REJECTS("[1e400,", "invalid_number", 1);
  EXPECT_REJECTS("{\"a\":1,\"a\":2} x", "duplicate_key", 7);
  EXPECT_REJECTS("[[[1e400]]]", "invalid_number", 3);
  ReadLimits shallow;
  shallow.max_depth = 2;
  auto d = parse("[[[1e400]]]", shallow);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().kind, "depth");
  EXPECT_EQ(d.error().offset, 2u);
  // Whole-input checks come first whatever their offset.
  EXPECT_REJECTS("[1e400, \"\xFF\"]", "utf8", 9);
  ReadLimits tiny;
  tiny.max_bytes = 4;
  auto t = parse("\xEF\xBB\xBF\xFF[]", tiny);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().kind, "too_large");
  EXPECT_EQ(t.error().offset, 4u);
}

TEST(JsonParse, DepthRuleIsExact) {
  ReadLimits limits;
  limits.max_depth = 16;
  EXPECT_TRUE(parse(nested(16), limits).ok());
  EXPECT_TRUE(validate(nested(16), limits).ok());
  auto deep = parse(nested(17), limits);
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error().kind, "depth");
  EXPECT_EQ(deep.error().offset, 16u);
  auto deep_v = validate(nested(17), limits);
  ASSERT_FALSE(deep_v.ok());
  EXPECT_EQ(deep_v.error().kind, "depth");
  EXPECT_EQ(deep_v.error().offset, 16u);
  // Objects count the same, and non-empty innermost levels too.
  std::string objs;
  for (int i = 0; i < 16; ++i) objs += "{\"k\":";
  objs += "1";
  for (int i = 0; i < 16; ++i) objs += "}";
  EXPECT_TRUE(parse(objs, limits).ok());
  EXPECT_FALSE(parse("[" + objs + "]", limits).ok());
  limits.max_depth = 0;
  EXPECT_TRUE(parse("1", limits).ok());
  EXPECT_FALSE(parse("[]", limits).ok());
  // Very deep input neither overflows the stack nor passes the default limit.
  std::string very = nested(100000);
  auto v = parse(very);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().kind, "depth");
  EXPECT_EQ(v.error().offset, 128u);
  ReadLimits deep_ok;
  deep_ok.max_depth = 200000;
  EXPECT_TRUE(parse(very, deep_ok).ok());
}

TEST(JsonParse, SizeLimit) {
  ReadLimits limits;
  limits.max_bytes = 5;
  EXPECT_TRUE(parse("[1,2]", limits).ok());
  auto r = validate("[1,23]", limits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, "too_large");
  EXPECT_EQ(r.error().offset, 5u);
}

TEST(JsonParse, DuplicatesInLargeObjectsAndSiblings) {
  std::string obj = "{";
  for (int i = 0; i < 100; ++i) obj += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  std::string ok = obj + "\"last\":0}";
  EXPECT_ACCEPTS(ok);
  std::size_t at = obj.size();
  EXPECT_REJECTS(obj + "\"k57\":0}", "duplicate_key", at);
  // The same key in sibling or nested objects is fine.
  EXPECT_ACCEPTS("[{\"a\":1},{\"a\":2},{\"a\":{\"a\":3}}]");
}

TEST(JsonParse, ErrorLineNamesTheProblem) {
  auto r = parse("{\"a\":1,\"a\":2}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().line(), "DOT_E_VALIDATION: duplicate_key at byte 7: key \"a\" appears twice in one object");
}

TEST(JsonParse, FastAndPreciseReadersBuildTheSameTree) {
  const char* docs[] = {
      "0", "-0", "[]", "{}", "\"\"", "[[[]],{}]", "{\"a\":[1,2,{\"b\":null}],\"c\":\"\\u00e9\\n\\\"\"}",
      "[1.5e3, -2E-2, 0.0, 123456789012345678, true, false, null, \"\\ud83d\\ude00\"]",
      " {\"k\" : [ 1 , 2 ] } ",
  };
  for (const char* text : docs) {
    auto fast = parse(text);
    ASSERT_TRUE(fast.ok()) << text;
    Document::Impl slow;
    slow.size = std::strlen(text);
    slow.source = detail::make_block_array<char>(slow.size + 1);
    std::memset(slow.source.get(), 0, slow.size + 1);
    std::memcpy(slow.source.get(), text, slow.size);
    ASSERT_TRUE(detail::parse_strict(slow, {}).ok()) << text;
    const auto& fn = fast->impl().nodes;
    ASSERT_EQ(fn.size(), slow.nodes.size()) << text;
    for (std::size_t i = 0; i < fn.size(); ++i) {
      EXPECT_EQ(fn[i].type, slow.nodes[i].type) << text << " node " << i;
      EXPECT_EQ(fn[i].offset, slow.nodes[i].offset) << text << " node " << i;
      EXPECT_EQ(detail::next_of(fn.data(), static_cast<std::uint32_t>(i)),
                detail::next_of(slow.nodes.data(), static_cast<std::uint32_t>(i)))
          << text << " node " << i;
      EXPECT_EQ(fn[i].flag, slow.nodes[i].flag) << text << " node " << i;
      if (fn[i].type == Type::String) {
        EXPECT_EQ(fast->impl().string_of(fn[i]), slow.string_of(slow.nodes[i])) << text << " node " << i;
      } else {  // numbers bit for bit, container counts and ends
        EXPECT_EQ(fn[i].payload, slow.nodes[i].payload) << text << " node " << i;
      }
    }
  }
}

TEST(JsonParser, ParseIntoReusesOneDocument) {
  Parser parser;
  Document doc;
  ASSERT_TRUE(parser.parse_into(R"({"a":[1,2,{"b":"x\ny"}],"c":-0})", doc).ok());
  EXPECT_EQ(doc.root().size(), 2u);
  ASSERT_TRUE(parser.parse_into(R"(["short"])", doc).ok());
  ASSERT_TRUE(doc.root().is_array());
  EXPECT_EQ(doc.root().size(), 1u);
  EXPECT_EQ((*doc.root().elements().begin()).as_string(), "short");
  EXPECT_EQ(doc.source(), R"(["short"])");
  auto bad = parser.parse_into(R"({"k":1,"k":2})", doc);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, "duplicate_key");
  EXPECT_EQ(bad.error().offset, 7u);
  EXPECT_EQ(doc.source(), "");  // no value after an error
  ASSERT_TRUE(parser.parse_into("1.5e1", doc).ok());
  EXPECT_EQ(doc.root().as_double(), 15.0);
  EXPECT_EQ(doc.root().number_text(), "1.5e1");
}

TEST(JsonParser, ValidatePaddedIgnoresWhatFollowsTheText) {
  // The padding holds bytes that would continue or close the text; only the
  // first `size` bytes count, as validate() of a copy would judge them.
  const char* texts[] = {"[1,2", "[tru", "{\"a\":1", "\"abc", "12", "[1]", "{\"a\":{\"a\":1}}", "[\"\\"};
  for (const char* text : texts) {
    std::string_view view(text);
    for (char fill : {'0', ']', '}', '"', 'e', ' '}) {
      std::string buffer(view);
      buffer.append(kPadding, fill);
      Parser parser;
      auto padded = parser.validate_padded(std::string_view(buffer.data(), view.size()));
      auto plain = validate(view);
      ASSERT_EQ(padded.ok(), plain.ok()) << text << " fill " << fill;
      if (!plain.ok()) {
        EXPECT_EQ(padded.error().kind, plain.error().kind) << text;
        EXPECT_EQ(padded.error().offset, plain.error().offset) << text;
      }
    }
  }
}

TEST(JsonParser, LargeObjectsAndDeepKeysStillRefuseRepeats) {
  // Past 16 keys the check moves from pairwise to a sort at the object's end;
  // a repeat after a nested object of its own keys is still the object's.
  std::string many = "{";
  for (int i = 0; i < 40; ++i) many += "\"k" + std::to_string(i) + "\":{\"k1\":1},";
  std::string ok = many + "\"last\":0}";
  EXPECT_TRUE(validate(ok).ok());
  EXPECT_TRUE(parse(ok).ok());
  std::string repeated = many + "\"k33\":0}";
  for (auto st : {validate(repeated), Parser().validate(repeated)}) {
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().kind, "duplicate_key");
  }
  EXPECT_FALSE(parse(repeated).ok());
  EXPECT_FALSE(parse(R"({"a":{"b":1},"b":{"a":1,"a":2}})").ok());
  EXPECT_TRUE(parse(R"({"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]})").ok());
}

TEST(ObjectReader, RequiredOptionalUnknownMissing) {
  auto doc = parse(R"({"id":"x","n":42,"flag":true,"arr":[],"obj":{},"extra":1})");
  ASSERT_TRUE(doc.ok());
  ObjectReader r(doc->root(), "test object");
  auto id = r.required_string("id");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, "x");
  auto n = r.required_uint("n", 100);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 42u);
  EXPECT_TRUE(r.required_bool("flag").ok());
  EXPECT_TRUE(r.required_array("arr").ok());
  EXPECT_TRUE(r.required_object("obj").ok());
  EXPECT_FALSE(r.optional("absent").has_value());
  auto fin = r.finish();
  ASSERT_FALSE(fin.ok());
  EXPECT_EQ(fin.error().kind, "unknown_field");
  EXPECT_EQ(fin.error().offset, 47u);
  EXPECT_TRUE(r.optional("extra").has_value());
  EXPECT_TRUE(r.finish().ok());

  auto missing = r.required("ID");  // case-sensitive
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, "missing_field");
  EXPECT_EQ(missing.error().offset, 0u);
}

TEST(ObjectReader, TypesAndRanges) {
  auto doc = parse(R"({"s":1,"u":-1,"f":1.0,"big":101,"huge":99999999999999999999999})");
  ASSERT_TRUE(doc.ok());
  ObjectReader r(doc->root(), "t");
  auto s = r.required_string("s");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, "wrong_type");
  EXPECT_EQ(s.error().offset, 5u);
  EXPECT_EQ(r.required_uint("u", 100).error().kind, "out_of_range");
  EXPECT_EQ(r.required_uint("f", 100).error().kind, "wrong_type");
  EXPECT_EQ(r.required_uint("big", 100).error().kind, "out_of_range");
  EXPECT_EQ(r.required_uint("huge", ~0ull).error().kind, "out_of_range");

  auto arr = parse("[1]");
  ObjectReader na(arr->root(), "params");
  EXPECT_EQ(na.required("x").error().kind, "malformed");
  EXPECT_EQ(na.finish().error().kind, "malformed");
  EXPECT_FALSE(na.optional("x").has_value());
}

TEST(Utf8, ValidPrefix) {
  EXPECT_EQ(detail::utf8_valid_prefix("abc"), 3u);
  EXPECT_EQ(detail::utf8_valid_prefix("a\xC3\xA9z"), 4u);
  EXPECT_EQ(detail::utf8_valid_prefix("a\xE0\x80\x80"), 1u);
  EXPECT_EQ(detail::utf8_valid_prefix("\xF0\x9F\x98\x80!"), 5u);
  EXPECT_EQ(detail::utf8_valid_prefix("\xF0\x9F\x98"), 0u);
  EXPECT_EQ(detail::utf8_valid_prefix("\x80"), 0u);
  EXPECT_EQ(detail::utf8_valid_prefix("\xF5\x80\x80\x80"), 0u);
}

}  // namespace
}  // namespace dot::json
