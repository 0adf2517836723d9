#include <gtest/gtest.h>

#include "dot/dpp/body.h"

namespace dot::dpp {
namespace {

std::string nest(int n) { return std::string(static_cast<std::size_t>(n), '[') + std::string(static_cast<std::size_t>(n), ']'); }

struct BodyCase {
  const char* name;
  std::string body;
  const char* kind;
  std::uint64_t offset;  // from the body start; the tests add a stream offset of 100
};

class BodyErrors : public ::testing::TestWithParam<BodyCase> {};

TEST_P(BodyErrors, KindAndStreamOffset) {
  const BodyCase& c = GetParam();
  auto st = check_body(c.body, 100);
  ASSERT_FALSE(st.ok()) << c.name;
  EXPECT_EQ(st.error().code, Code::Protocol);
  EXPECT_EQ(st.error().kind, c.kind) << st.error().line();
  EXPECT_EQ(st.error().offset, 100 + c.offset) << st.error().line();
  // parse_body reports exactly the same.
  auto doc = parse_body(c.body, 100);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.error().kind, st.error().kind);
  EXPECT_EQ(doc.error().offset, st.error().offset);
}

INSTANTIATE_TEST_SUITE_P(
    All, BodyErrors,
    ::testing::Values(
        BodyCase{"utf8", "{\"a\":\"\xff\"}", "utf8", 6},
        // UTF-8 is checked over the whole body first, before the earlier duplicate.
        BodyCase{"utf8_wins_over_earlier_errors", "{\"a\":1,\"a\":2,\"b\":\"\xc0\"}", "utf8", 18},
        BodyCase{"depth_17", nest(17), "depth", 16},
        BodyCase{"depth_17_in_object", "{\"a\":" + nest(16) + "}", "depth", 20},
        BodyCase{"duplicate_key", "{\"a\":1,\"a\":2}", "duplicate_key", 7},
        BodyCase{"duplicate_key_escaped", "{\"a\":1,\"\\u0061\":2}", "duplicate_key", 7},
        BodyCase{"duplicate_key_nested", "[{\"x\":{\"k\":1,\"k\":1}}]", "duplicate_key", 13},
        BodyCase{"first_by_offset_duplicate_then_depth", "{\"a\":1,\"a\":" + nest(17) + "}", "duplicate_key", 7},
        BodyCase{"first_by_offset_depth_then_duplicate", "[" + nest(16) + ",{\"a\":1,\"a\":2}]", "depth", 16},
        BodyCase{"trailing", "{} {}", "trailing", 3},
        BodyCase{"malformed", "{\"a\":}", "malformed", 5},
        BodyCase{"malformed_empty_whitespace", " ", "malformed", 1},
        BodyCase{"bom_is_malformed", "\xef\xbb\xbf{}", "malformed", 0},
        BodyCase{"bom_with_invalid_utf8_is_utf8", "\xef\xbb\xbf{\"a\":\"\xff\"}", "utf8", 9},
        BodyCase{"lone_surrogate_is_malformed", "[\"\\ud800\"]", "malformed", 2},
        BodyCase{"huge_number_is_malformed", "[1e400]", "malformed", 1}),
    [](const ::testing::TestParamInfo<BodyCase>& i) { return std::string(i.param.name); });

TEST(Body, SixteenLevelsAreAccepted) {
  EXPECT_TRUE(check_body(nest(16), 0).ok());
  EXPECT_TRUE(parse_body("{\"a\":" + nest(15) + "}", 0).ok());
}

TEST(Body, FoldedKindsNameTheOriginalProblem) {
  EXPECT_NE(check_body("[\"\\udc00\"]", 0).error().detail.find("surrogate"), std::string::npos);
  EXPECT_NE(check_body("[1e400]", 0).error().detail.find("number"), std::string::npos);
  EXPECT_NE(check_body("\xef\xbb\xbf{}", 0).error().detail.find("byte-order mark"), std::string::npos);
}

TEST(Body, CompactJsonKeepsEverythingButWhitespace) {
  EXPECT_EQ(compact_json("{ \"a b\" : [ 1 ,\n\t-0.0e1 ] , \"c\\\" d\":\"x \\\\\" }"),
            "{\"a b\":[1,-0.0e1],\"c\\\" d\":\"x \\\\\"}");
}

}  // namespace
}  // namespace dot::dpp
