#include <gtest/gtest.h>

#include "dot/base/error.h"
#include "dot/base/error_kinds.h"
#include "../common/test_error_kinds.h"
#include "dot/base/jcs.h"
#include "dot/base/result.h"

namespace dot {
namespace {

TEST(Error, LineHasCodeKindOffsetAndDetail) {
  auto e = make_parse_error(base::ErrorKind::DuplicateKey, 17, "key \"a\" appears twice");
  EXPECT_EQ(e.line(), "DOT_E_VALIDATION: duplicate_key at byte 17: key \"a\" appears twice");
  EXPECT_EQ(e.json(),
            "{\"error\":{\"code\":\"DOT_E_VALIDATION\",\"kind\":\"duplicate_key\",\"offset\":17,"
            "\"detail\":\"key \\\"a\\\" appears twice\"}}");
}

TEST(Error, WithoutOffsetTheDetailStandsAlone) {
  auto e = make_error(test::ErrorKind::Locked, "the root /r is locked by another dot-core");
  EXPECT_EQ(e.line(), "DOT_E_CONFLICT: the root /r is locked by another dot-core");
  EXPECT_EQ(e.json(), "{\"error\":{\"code\":\"DOT_E_CONFLICT\",\"kind\":\"locked\",\"detail\":\"the root /r is locked by another dot-core\"}}");
}

TEST(Error, CodeNamesRoundTripAndAreStable) {
  const char* names[] = {"DOT_E_PROTOCOL", "DOT_E_PLUGIN_IDENTITY", "DOT_E_POLICY", "DOT_E_PATH_ESCAPE",
                         "DOT_E_CONFLICT", "DOT_E_ARTIFACT_MISMATCH", "DOT_E_VALIDATION", "DOT_E_COMMIT",
                         "DOT_E_RECOVERY_REQUIRED", "DOT_E_POST_COMMIT", "DOT_E_SANDBOX_UNAVAILABLE",
                         "DOT_E_TIMEOUT", "DOT_E_STORE", "DOT_E_NOT_FOUND", "DOT_E_IO", "DOT_E_INTERNAL",
                         "DOT_E_PLUGIN_ERROR"};
  int i = 0;
  for (const char* n : names) {
    auto c = code_from_name(n);
    ASSERT_TRUE(c.has_value()) << n;
    EXPECT_EQ(static_cast<int>(*c), i++);
    EXPECT_EQ(code_name(*c), n);
  }
  EXPECT_FALSE(code_from_name("DOT_E_NOPE").has_value());
}

Result<int> half(int x) {
  if (x % 2) return make_error(test::ErrorKind::Odd, "odd number");
  return x / 2;
}
Result<int> quarter(int x) {
  DOT_ASSIGN_OR_RETURN(int h, half(x));
  return half(h);
}

TEST(Result, PropagatesErrorsAndValues) {
  EXPECT_EQ(quarter(8).value(), 2);
  auto r = quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, "odd");
}

TEST(JcsText, NumbersFollowEcmascript) {
  auto num = [](double d) { std::string s; jcs::append_number(s, d); return s; };
  EXPECT_EQ(num(0.0), "0");
  EXPECT_EQ(num(-0.0), "0");
  EXPECT_EQ(num(1000), "1000");
  EXPECT_EQ(num(1e21), "1e+21");
  EXPECT_EQ(num(1e20), "100000000000000000000");
  EXPECT_EQ(num(1e-7), "1e-7");
  EXPECT_EQ(num(0.000001), "0.000001");
  EXPECT_EQ(num(5e-324), "5e-324");
  EXPECT_EQ(num(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(num(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(num(333333333.3333333), "333333333.3333333");
  EXPECT_EQ(num(-1.5), "-1.5");
  EXPECT_EQ(num(9007199254740993.0), "9007199254740992");
  EXPECT_EQ(num(1.5e-7), "1.5e-7");
  EXPECT_EQ(num(123e-20), "1.23e-18");
}

TEST(JcsText, StringsEscapeOnlyWhatRfc8785Says) {
  std::string s;
  static const char kIn[] = "a\"b\\c/\b\t\n\f\r\x01\x1f\x7f\xc3\xa9";
  jcs::append_string(s, std::string_view(kIn, sizeof kIn - 1));
  EXPECT_EQ(s, "\"a\\\"b\\\\c/\\b\\t\\n\\f\\r\\u0001\\u001f\x7f\xc3\xa9\"");
}

}  // namespace
}  // namespace dot
