#include <gtest/gtest.h>

#include "dot/metewand/correlation.h"

namespace dot::metewand {
namespace {

using Kind = CorrelationError::Kind;

json::Document doc(std::string_view text) {
  auto d = json::parse(text);
  EXPECT_TRUE(d.ok()) << text;
  return std::move(d).value();
}

TEST(ResponseCorrelator, AcceptsTheMatchingResponseOnce) {
  ResponseCorrelator c("0");
  auto ok = doc(R"({"id":"0","ok":true})");
  EXPECT_TRUE(c.accept(ok.root()).ok());
  EXPECT_TRUE(c.complete());
  auto extra = c.accept(ok.root());
  ASSERT_FALSE(extra.ok());
  EXPECT_EQ(extra.error().kind, Kind::ExtraResponse);
  EXPECT_EQ(extra.error().actual, "0");
  EXPECT_EQ(extra.error().name(), "ExtraResponse");
}

TEST(ResponseCorrelator, MismatchedIdLeavesTheRequestPending) {
  ResponseCorrelator c("7");
  auto wrong = doc(R"({"id":"8"})");
  auto r = c.accept(wrong.root());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, Kind::MismatchedRequestId);
  EXPECT_EQ(r.error().expected, "7");
  EXPECT_EQ(r.error().actual, "8");
  EXPECT_FALSE(c.complete());
  ASSERT_TRUE(c.pending().has_value());
  EXPECT_EQ(*c.pending(), "7");
  EXPECT_TRUE(c.accept(doc(R"({"id":"7"})").root()).ok());
}

TEST(ResponseCorrelator, InvalidRequestIdBeforeEverythingElse) {
  for (const char* bad : {R"([])", R"("0")", R"({})", R"({"id":0})", R"({"id":null})", R"({"ID":"0"})",
                          R"({"id":["0"]})"}) {
    ResponseCorrelator c("0");
    auto r = c.accept(doc(bad).root());
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().kind, Kind::InvalidRequestId) << bad;
    EXPECT_FALSE(c.complete());
  }
  // Even after completion, a response without a string id is InvalidRequestId.
  ResponseCorrelator done("0");
  ASSERT_TRUE(done.accept(doc(R"({"id":"0"})").root()).ok());
  auto r = done.accept(doc(R"({"id":1})").root());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, Kind::InvalidRequestId);
}

TEST(ResponseCorrelator, IdsCompareExactly) {
  ResponseCorrelator c("1");
  for (const char* near : {R"({"id":"01"})", R"({"id":"1 "})", R"({"id":""})"}) {
    auto r = c.accept(doc(near).root());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, Kind::MismatchedRequestId) << near;
  }
  // Escapes are compared after unescaping.
  EXPECT_TRUE(c.accept(doc(R"({"id":"\u0031"})").root()).ok());
}

TEST(RequestTracker, AllocatesDecimalIdsOneAtATime) {
  RequestTracker t;
  auto a = t.begin_request();
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, "0");
  auto again = t.begin_request();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, Kind::RequestAlreadyPending);
  EXPECT_EQ(again.error().expected, "0");
  auto mismatch = t.complete_response("1");
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error().kind, Kind::MismatchedRequestId);
  ASSERT_TRUE(t.pending().has_value());
  EXPECT_TRUE(t.complete_response("0").ok());
  EXPECT_FALSE(t.pending().has_value());
  auto extra = t.complete_response("0");
  ASSERT_FALSE(extra.ok());
  EXPECT_EQ(extra.error().kind, Kind::ExtraResponse);
  for (int i = 1; i <= 11; ++i) {
    auto id = t.begin_request();
    ASSERT_TRUE(id.ok());
    EXPECT_EQ(*id, std::to_string(i));
    ASSERT_TRUE(t.complete_response(*id).ok());
  }
}

TEST(CorrelationError, ConvertsToAProtocolError) {
  CorrelationError e{Kind::MismatchedRequestId, "0", "9"};
  Error err = e.to_error();
  EXPECT_EQ(err.code, Code::Protocol);
  EXPECT_EQ(err.kind, "MismatchedRequestId");
  EXPECT_NE(err.detail.find("\"9\""), std::string::npos);
}

}  // namespace
}  // namespace dot::metewand
