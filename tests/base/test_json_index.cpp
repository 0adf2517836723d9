// The tree builder that works from simdjson's stage-1 index
// (base/src/json_index.cpp), driven directly: it must accept exactly what the
// precise reader accepts and build the same nodes, and decline (leaving the
// verdict to the precise reader) everything else.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dot/base/json.h"
#include "json_internal.h"

namespace dot::json {
namespace {

// The input copied into `impl` with zero padding, as Parser::parse_into does.
void load(Document::Impl& impl, std::string_view text) {
  impl.size = text.size();
  impl.capacity = text.size() + kPadding;
  impl.source = detail::make_block_array<char>(impl.capacity);
  std::memset(impl.source.get(), 0, impl.capacity);
  if (!text.empty()) std::memcpy(impl.source.get(), text.data(), text.size());
}

// Stage 1 and build_from_index on `text`. Returns false when stage 1 refuses
// the text or the builder declines it.
bool build(std::string_view text, Document::Impl& impl, const ReadLimits& limits = {}) {
  load(impl, text);
  simdjson::dom::parser parser;
  EXPECT_EQ(parser.allocate(std::max<std::size_t>(text.size(), 64), 256), simdjson::SUCCESS);
  auto& stage1 = *parser.implementation;
  if (stage1.stage1(reinterpret_cast<const std::uint8_t*>(impl.source.get()), impl.size,
                    simdjson::stage1_mode::regular) != simdjson::SUCCESS)
    return false;
  detail::IndexScratch scratch;
  return detail::build_from_index(impl, stage1.structural_indexes.get(), stage1.n_structural_indexes, limits,
                                  scratch);
}

// The precise reader's tree (or verdict) for `text`.
Status strict(std::string_view text, Document::Impl& impl, const ReadLimits& limits = {}) {
  load(impl, text);
  return detail::parse_strict(impl, limits);
}

void expect_same_tree(const Document::Impl& a, const Document::Impl& b, std::string_view text) {
  ASSERT_EQ(a.nodes.size(), b.nodes.size()) << text;
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const detail::Node& x = a.nodes[i];
    const detail::Node& y = b.nodes[i];
    auto index = static_cast<std::uint32_t>(i);
    EXPECT_EQ(x.type, y.type) << text << " node " << i;
    EXPECT_EQ(x.offset, y.offset) << text << " node " << i;
    EXPECT_EQ(x.flag, y.flag) << text << " node " << i;
    EXPECT_EQ(detail::next_of(a.nodes.data(), index), detail::next_of(b.nodes.data(), index)) << text << " node " << i;
    if (x.type == Type::String)
      EXPECT_EQ(a.string_of(x), b.string_of(y)) << text << " node " << i;
    else
      EXPECT_EQ(x.payload, y.payload) << text << " node " << i;  // numbers bit for bit, counts and ends
  }
}

void expect_builds_like_strict(std::string_view text) {
  Document::Impl fast, slow;
  EXPECT_TRUE(build(text, fast)) << "declined: " << text;
  ASSERT_TRUE(strict(text, slow).ok()) << text;
  expect_same_tree(fast, slow, text);
}

TEST(JsonIndexBuilder, BuildsWhatThePreciseReaderBuilds) {
  const char* texts[] = {
      // scalars at the top, with and without whitespace around
      "0", "-0", " 7 ", "true", " false", "null ", "\"\"", "\"x\"", " \"x\" ",
      // containers, empty and nested
      "[]", "{}", "[[]]", "[{}]", "{\"a\":{}}", "[[[1],[2,[3]]],{\"b\":[]}]",
      // every escape, surrogate pairs, escaped keys
      R"(["\"\\\/\b\f\n\r\t", "\u0041\u00e9\u20ac\ud83d\ude00", "a\u0000b"])",
      R"({"caf\u00e9":1,"line\nbreak":"x\ty","\ud83d\ude00":true})",
      // strings followed by whitespace (the closing quote is not the byte
      // before the next structural), keys too
      "{\"a\" : \"b\" , \"c\"\t:\n[ \"d\" ] }", "[\"x\"\r\n]",
      // plain strings around the 16-byte steps of the scan
      "[\"0123456789abcde\",\"0123456789abcdef\",\"0123456789abcdef0\"]",
      "[\"0123456789abcdef0123456789abcde\",\"0123456789abcdef0123456789abcdef\"]",
      // escapes right at and after a 16-byte boundary, long runs between escapes
      R"(["0123456789abcde\n", "0123456789abcdef\n0123456789abcdef0123\t"])",
      // UTF-8 in strings and keys
      "{\"\xC3\xA9t\xC3\xA9\":\"\xE2\x82\xAC \xF0\x9F\x98\x80\"}",
      // keys sharing their first 8 bytes and length, keys that differ only in length
      "{\"abcdefgh1\":1,\"abcdefgh2\":2,\"abcdefgh\":3,\"abcdefg\":4,\"\":5}",
      // integers: 19 digits, 2^53 + 1 (rounds), beyond 2^64, negative
      "[1234567890123456789,-1234567890123456789,9007199254740993,18446744073709551616,"
      "123456789012345678901234567890,-0,0]",
      // decimals on the exact path and beyond it
      "[1.5,-0.0,0.1,2.5e+3,1E-7,1e22,1e23,123456789012345.6,0.000001,1.7976931348623157e308,5e-324,"
      "4.9e-324,2.2250738585072014e-308,9007199254740993.0,1e-22,3.14159e-5]",
  };
  for (const char* text : texts) expect_builds_like_strict(text);
}

// Escape-dense strings: the UTF-8 of every escape is written with one 4-byte
// store whatever its length, and runs between escapes are copied 16 bytes at
// a time even when empty. Escapes of each length and at each edge (U+007F /
// U+0080, U+07FF / U+0800, U+FFFF, the first and last surrogate pairs),
// short escapes, and runs of 0 to 40 plain bytes between them, in random
// order and in keys too, build what the precise reader builds.
TEST(JsonIndexBuilder, EscapeDenseStringsBuildWhatThePreciseReaderBuilds) {
  const char* escapes[] = {R"(\u0000)", R"(\u001F)", R"(\u0041)", R"(\u007f)", R"(\u0080)", R"(\u07FF)",
                           R"(\u0800)", R"(\ud7ff)", R"(\uE000)", R"(\uffff)", R"(\uD800\uDC00)",
                           R"(\udbff\udfff)", R"(\ud83d\ude00)", R"(\n)", R"(\")", R"(\\)", R"(\/)", R"(\b)",
                           R"(\t)"};
  std::mt19937_64 rng(20261202);
  for (int round = 0; round < 300; ++round) {
    std::string text = "{";
    int members = 1 + static_cast<int>(rng() % 6);
    for (int m = 0; m < members; ++m) {
      for (int part = 0; part < 2; ++part) {  // a key, then its value
        text += '"';
        text += std::to_string(m) + (part == 0 ? "k" : "");  // keys stay unique
        int pieces = static_cast<int>(rng() % 30);
        for (int k = 0; k < pieces; ++k) {
          if (rng() % 3 == 0) {
            text += std::string(rng() % 41, static_cast<char>('a' + rng() % 26));
          } else {
            text += escapes[rng() % std::size(escapes)];
          }
        }
        text += part == 0 ? "\":" : "\"";
      }
      text += m + 1 < members ? "," : "}";
    }
    expect_builds_like_strict(text);
  }
}

TEST(JsonIndexBuilder, ObjectsAroundThePairwiseLimit) {
  for (int keys : {15, 16, 17, 40}) {
    std::string obj = "{";
    for (int i = 0; i < keys; ++i) obj += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
    expect_builds_like_strict(obj + "}");
    // A repeat of the first key as the last member: declined, and parse()
    // reports the precise reader's duplicate_key at the repeat.
    std::string repeated = obj + ",\"k0\":0}";
    Document::Impl fast;
    EXPECT_FALSE(build(repeated, fast)) << keys;
    auto r = parse(repeated);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, "duplicate_key");
    EXPECT_EQ(r.error().offset, obj.size() + 1);
  }
}

TEST(JsonIndexBuilder, DeclinesWhatItMustNotAccept) {
  struct Case {
    const char* text;
    const char* kind;  // what parse() reports (from the precise reader)
    std::uint64_t offset;
  };
  const Case cases[] = {
      {R"({"a":1,"a":2})", "duplicate_key", 7},
      {R"({"a":1,"\u0061":2})", "duplicate_key", 7},  // equal after unescaping
      {R"({"abcdefgh1":1,"abcdefgh1":2})", "duplicate_key", 15},
      {R"([{"x":{"y":1,"y":2}}])", "duplicate_key", 13},
      {R"(["\ud800"])", "invalid_unicode", 2},
      {R"(["\udc00"])", "invalid_unicode", 2},
      {R"(["\ud800\u0041"])", "invalid_unicode", 2},
      {R"(["\ud800x"])", "invalid_unicode", 2},
      {"[\"a\x01\"]", "malformed", 3},
      {R"(["\x"])", "malformed", 2},
      {R"(["\u12"])", "malformed", 6},
      {"[1e400]", "invalid_number", 1},
      {"[-1e400]", "invalid_number", 1},
      {"[truex]", "malformed", 5},
      {"[nul]", "malformed", 4},
      {"[1 2]", "malformed", 3},
      {"[1,]", "malformed", 3},
      {"{\"a\" 1}", "malformed", 5},
      {"{\"a\":}", "malformed", 5},
      {"{1:2}", "malformed", 1},
      {"[01]", "malformed", 2},
      {"[1.]", "malformed", 3},
      {"[-]", "malformed", 2},
      {"[1e]", "malformed", 3},
      {"[.5]", "malformed", 1},
      {"[+1]", "malformed", 1},
      // Spellings a general float reader takes and JSON does not: the
      // builder's grammar check comes before the value.
      {"[1.e5]", "malformed", 3},
      {"[-.5]", "malformed", 2},
      {"[-01]", "malformed", 3},
      {"[1e+]", "malformed", 4},
      {"[inf]", "malformed", 1},
      {"[-inf]", "malformed", 2},
      {"[nan]", "malformed", 2},
      {"[0x10]", "malformed", 2},
      {"[1.5e308.5]", "malformed", 8},
      {"[1.7976931348623159e308]", "invalid_number", 1},
      {"\"x\"y", "trailing", 3},
      {"1 2", "trailing", 2},
      {"[1]]", "trailing", 3},
      {"[1}", "malformed", 2},
      {"\"abc", "malformed", 4},
      {"\"abc\\", "malformed", 5},
      {"[\"\\u00", "malformed", 6},
  };
  for (const Case& c : cases) {
    Document::Impl fast;
    EXPECT_FALSE(build(c.text, fast)) << "accepted: " << c.text;
    auto r = parse(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.error().kind, c.kind) << c.text;
    EXPECT_EQ(r.error().offset, c.offset) << c.text;
  }
}

// Underflow is a valid number whose value is zero (docs/spec/jcs.md: 1e-400 is
// 0): the builder reads it as the precise reader does, instead of declining
// the whole text (which sent number-dense texts down the slow path).
TEST(JsonIndexBuilder, ReadsUnderflowAsZeroLikeThePreciseReader) {
  const char* text = "[1e-400,-1e-400,0.00001e-330,1e-300]";
  Document::Impl fast, slow;
  ASSERT_TRUE(build(text, fast));
  ASSERT_TRUE(strict(text, slow).ok());
  expect_same_tree(fast, slow, text);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(fast.nodes[1].number()), std::bit_cast<std::uint64_t>(0.0));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(fast.nodes[2].number()), std::bit_cast<std::uint64_t>(-0.0));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(fast.nodes[3].number()), std::bit_cast<std::uint64_t>(0.0));
  EXPECT_EQ(fast.nodes[4].number(), 1e-300);
  // Overflow still goes to the precise reader, which refuses it.
  EXPECT_FALSE(build("[1e400]", fast));
  EXPECT_FALSE(build("[-0.01e311]", fast));
}

TEST(JsonIndexBuilder, DepthLimitCountsEmptyContainers) {
  ReadLimits limits;
  limits.max_depth = 2;
  Document::Impl fast;
  EXPECT_TRUE(build("[[1],[]]", fast, limits));
  EXPECT_FALSE(build("[[[]]]", fast, limits));
  EXPECT_FALSE(build("[{\"a\":{}}]", fast, limits));
  limits.max_depth = 0;
  EXPECT_TRUE(build("1", fast, limits));
  EXPECT_FALSE(build("[]", fast, limits));
}

// The exact-integer and one-operation decimal conversions give what
// from_chars (correctly rounded, the precise reader's) gives, bit for bit.
TEST(JsonIndexBuilder, NumbersMatchFromCharsBitForBit) {
  std::mt19937_64 rng(20261201);
  std::string text = "[";
  std::vector<std::string> spellings;
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    if (rng() % 2) s += '-';
    int int_digits = 1 + static_cast<int>(rng() % 20);
    s += static_cast<char>('1' + rng() % 9);
    for (int d = 1; d < int_digits; ++d) s += static_cast<char>('0' + rng() % 10);
    if (rng() % 3 != 0) {
      s += '.';
      int frac_digits = 1 + static_cast<int>(rng() % 17);
      for (int d = 0; d < frac_digits; ++d) s += static_cast<char>('0' + rng() % 10);
    }
    if (rng() % 2) {
      s += (rng() % 2) ? 'e' : 'E';
      long e = static_cast<long>(rng() % 61) - 30;
      if (e >= 0 && rng() % 2) s += '+';
      s += std::to_string(e);
    }
    spellings.push_back(s);
    text += (i ? "," : "") + s;
  }
  text += "]";
  Document::Impl fast;
  ASSERT_TRUE(build(text, fast));
  ASSERT_EQ(fast.nodes.size(), spellings.size() + 1);
  for (std::size_t i = 0; i < spellings.size(); ++i) {
    const std::string& s = spellings[i];
    double want = 0;
    auto res = std::from_chars(s.data(), s.data() + s.size(), want);
    ASSERT_EQ(res.ec, std::errc()) << s;
    EXPECT_EQ(fast.nodes[i + 1].payload, std::bit_cast<std::uint64_t>(want)) << s;
    EXPECT_EQ(fast.nodes[i + 1].flag, s.find_first_of(".eE") == std::string::npos) << s;
  }
}

// The digit scanner reads runs 16 bytes at a time and converts integers
// eight digits at a time: every length from 1 to 40, every digit in every
// place, runs that end at a 16-byte boundary and past it, and a number that
// ends the text (only the zero padding after it).
TEST(JsonIndexBuilder, DigitRunsOfEveryLengthAndPlace) {
  std::vector<std::string> spellings;
  for (int length = 1; length <= 40; ++length) {
    for (char d = '0'; d <= '9'; ++d) {
      for (int place = 0; place < length; ++place) {
        std::string s(static_cast<std::size_t>(length), '9');
        s[static_cast<std::size_t>(place)] = d;
        if (s[0] == '0' && length > 1) s[0] = '1';
        spellings.push_back(s);
        spellings.push_back("-" + s);
        spellings.push_back("0." + s);
        spellings.push_back("1." + s + "e" + s.substr(0, 3));
        spellings.push_back("2E-" + s.substr(0, 2));
      }
    }
  }
  for (const std::string& s : spellings) {
    double want = 0;
    auto res = std::from_chars(s.data() + (s[0] == '-'), s.data() + s.size(), want);
    if (res.ec == std::errc::result_out_of_range) continue;  // 1.999e999: the overflow, not the scanner
    ASSERT_EQ(res.ec, std::errc()) << s;
    if (s[0] == '-') want = -want;
    for (const std::string& text : {"[" + s + "]", s, "[" + s + "," + s + "]"}) {
      Document::Impl fast;
      ASSERT_TRUE(build(text, fast)) << text;
      EXPECT_EQ(fast.nodes[text[0] == '[' ? 1 : 0].payload, std::bit_cast<std::uint64_t>(want)) << text;
    }
  }
}

// Every other spelling is read by fast_float: the same bits as from_chars
// (the precise reader's) on what is hard to round: subnormals and the
// underflow edge, the overflow edge, more digits than 19 (integers beyond
// 2^64, long fractions, leading and trailing zeros), exponents over the
// whole range, padded with zeros.
TEST(JsonIndexBuilder, HardNumbersMatchFromCharsBitForBit) {
  std::vector<std::string> spellings = {
      "5e-324", "4.9406564584124654e-324", "2.4703282292062328e-324", "2.4703282292062327e-324",
      "2.2250738585072011e-308", "2.2250738585072012e-308", "2.2250738585072014E-308", "1.7976931348623157e308",
      "1.7976931348623158e+308", "17976931348623157" + std::string(292, '0'),
      "9007199254740993", "9007199254740993.0", "18446744073709551615", "18446744073709551616",
      "123456789012345678901234567890", "0.000000000000000000000000000000000000000001", "1e-0000000000000000324",
      "0e999999999999", "-0.0e-5", "1.00000000000000011102230246251565404236316680908203125",
      "1.00000000000000011102230246251565404236316680908203124", "7.8614659464614570648E87", "1e23", "8.41e21"};
  std::mt19937_64 rng(20261202);
  for (int i = 0; i < 20000; ++i) {
    std::string s = rng() % 2 ? "-" : "";
    int int_digits = static_cast<int>(rng() % 41);
    s += int_digits == 0 ? '0' : static_cast<char>('1' + rng() % 9);
    for (int d = 1; d < int_digits; ++d) s += static_cast<char>('0' + rng() % 10);
    if (int_digits == 0 || rng() % 2) {
      s += '.';
      int frac_digits = 1 + static_cast<int>(rng() % 40);
      for (int d = 0; d < frac_digits; ++d) s += static_cast<char>('0' + (rng() % 3 == 0 ? 0 : rng() % 10));
    }
    if (rng() % 4 != 0) {
      s += (rng() % 2) ? 'e' : 'E';
      long e = static_cast<long>(rng() % 700) - 360 - int_digits;
      s += e < 0 ? "-" : rng() % 2 ? "+" : "";
      s += std::string(rng() % 3, '0') + std::to_string(e < 0 ? -e : e);
    }
    spellings.push_back(s);
  }
  std::size_t read = 0;
  for (const std::string& s : spellings) {
    double want = 0;
    auto res = std::from_chars(s.data() + (s[0] == '-'), s.data() + s.size(), want);
    std::string text = "[" + s + "]";
    Document::Impl fast;
    if (std::isinf(std::strtod(s.c_str(), nullptr))) {  // overflow: left to the precise reader
      EXPECT_FALSE(build(text, fast)) << s;
      continue;
    }
    if (res.ec == std::errc::result_out_of_range) want = 0;  // underflow: zero
    ASSERT_EQ(res.ptr, s.data() + s.size()) << s;
    if (s[0] == '-') want = -want;
    ASSERT_TRUE(build(text, fast)) << s;
    EXPECT_EQ(fast.nodes[1].payload, std::bit_cast<std::uint64_t>(want)) << s;
    ++read;
  }
  EXPECT_GT(read, 10000u);
}

// Parser::parse_into takes this path for every valid text; the rest of the
// API sees nothing different, including number_text and source offsets.
TEST(JsonIndexBuilder, ParseIntoUsesItAndKeepsTheSource) {
  Parser parser;
  Document doc;
  std::string text = "{\"n\": -1.50e+2 , \"s\":\"a\\u00e9\", \"k\" :[true]}";
  ASSERT_TRUE(parser.parse_into(text, doc).ok());
  auto n = doc.root().find("n");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->number_text(), "-1.50e+2");
  EXPECT_EQ(n->as_double(), -150.0);
  EXPECT_FALSE(n->is_integer_spelling());
  EXPECT_EQ(doc.root().find("s")->as_string(), "a\xC3\xA9");
  EXPECT_EQ(doc.root().find("k")->offset(), text.find('['));
  // A second, shorter text into the same Document.
  ASSERT_TRUE(parser.parse_into("[\"x\"]", doc).ok());
  EXPECT_EQ(doc.root().size(), 1u);
  EXPECT_EQ((*doc.root().elements().begin()).as_string(), "x");
}

}  // namespace
}  // namespace dot::json

namespace dot::json {
namespace {

bool on_huge_page_boundary(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % (std::uintptr_t{2} << 20) == 0;
}

// Blocks from kHugePagesFrom on start on a 2 MiB boundary (so that huge pages
// back all of them; huge_pages.h says why), smaller ones come from the heap.
TEST(HugePages, LargeBlocksStartOnA2MiBBoundary) {
  for (std::size_t bytes : {detail::kHugePagesFrom, detail::kHugePagesFrom + 1, 3 * detail::kHugePagesFrom + 17}) {
    auto block = detail::make_block_array<char>(bytes);
    EXPECT_TRUE(on_huge_page_boundary(block.get())) << bytes;
    block[0] = 1;
    block[bytes - 1] = 2;  // all of it is writable
  }
  detail::Arena arena;
  arena.reserve(detail::kHugePagesFrom);
  EXPECT_TRUE(on_huge_page_boundary(arena.data()));
  arena.append(detail::kHugePagesFrom + 5, 'x');  // grows through the allocator
  EXPECT_TRUE(on_huge_page_boundary(arena.data()));
  EXPECT_EQ(arena.size(), detail::kHugePagesFrom + 5);
}

// A node array keeps its nodes when it grows, onto a 2 MiB boundary once large.
TEST(NodeArray, KeepsItsNodesWhenItGrowsOntoHugePages) {
  detail::NodeArray nodes;
  nodes.reserve(16);
  for (std::uint32_t i = 0; i < 16; ++i) nodes.emplace_back().offset = i;
  const std::size_t large = detail::kHugePagesFrom / sizeof(detail::Node);
  nodes.reserve(large);
  EXPECT_TRUE(on_huge_page_boundary(nodes.data()));
  ASSERT_EQ(nodes.size(), 16u);
  for (std::uint32_t i = 0; i < 16; ++i) EXPECT_EQ(nodes[i].offset, i);
  nodes.set_size(large);
  nodes[large - 1].offset = 7;
  nodes.reserve(large * 2);
  EXPECT_TRUE(on_huge_page_boundary(nodes.data()));
  EXPECT_EQ(nodes[large - 1].offset, 7u);
  EXPECT_EQ(nodes[15].offset, 15u);
}

// A large parse keeps every buffer that grows with the input on huge pages:
// the padded copy, the nodes and the arena of unescaped strings.
TEST(HugePages, ALargeParseHoldsItsBuffersOnHugePages) {
  std::string text = "[";
  while (text.size() < detail::kHugePagesFrom + 100) text += "\"a\\n\\u00e9b\",";
  text += "1]";
  Parser parser;
  Document doc;
  ASSERT_TRUE(parser.parse_into(text, doc).ok());
  EXPECT_TRUE(on_huge_page_boundary(doc.impl().source.get()));
  EXPECT_TRUE(on_huge_page_boundary(doc.impl().nodes.data()));
  EXPECT_TRUE(on_huge_page_boundary(doc.impl().strings.data()));
  EXPECT_EQ((*doc.root().elements().begin()).as_string(), "a\n\u00e9b");
}

}  // namespace
}  // namespace dot::json
