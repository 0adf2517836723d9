#include <gtest/gtest.h>

#include "dot/dpp/body.h"
#include "dot/dpp/hello.h"
#include "dot/dpp/jsonrpc.h"
#include "dot/dpp/messages.h"

namespace dot::dpp {
namespace {

json::Document parse(std::string_view text) {
  auto d = parse_body(text, 0);
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().line());
  return std::move(d).value();
}

std::string canonical(const jcs::Node& n) { return *jcs::encode(n, jcs::Profile::Rfc8785); }

TEST(Messages, RequestsAreCanonical) {
  auto p = hello::initialize_params("audit", std::string(64, 'a'));
  EXPECT_EQ(*encode_request(1, Method::Initialize, to_node(p)),
            "{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"dot.initialize\",\"params\":{\"capabilities\":[\"materialize\","
            "\"plan\",\"post-commit-effects\",\"validate\"],\"nonce\":\"" +
                std::string(64, 'a') + "\",\"profile\":\"org.dot.hello/v1\",\"protocol\":1,\"required_assurance\":\"audit\"}}");
  EXPECT_EQ(*encode_request(2, Method::Plan, jcs::Node::object()),
            "{\"id\":2,\"jsonrpc\":\"2.0\",\"method\":\"dot.plan\",\"params\":{}}");
}

TEST(Messages, EveryTypeRoundTrips) {
  InitializeResult ir{1, "org.dot.hello/v1", "audit", hello::capabilities(), std::string(64, 'f'), "org.dot.hello"};
  auto doc = parse(canonical(to_node(ir)));
  EXPECT_EQ(*decode_initialize_result(doc.root()), ir);

  auto ip = hello::initialize_params("process", std::string(64, '0'));
  doc = parse(canonical(to_node(ip)));
  EXPECT_EQ(*decode_initialize_params(doc.root()), ip);

  PlanResult pr{hello::allowed_names(), {hello::root_sync_effect()}};
  doc = parse(canonical(to_node(pr)));
  EXPECT_EQ(*decode_plan_result(doc.root()), pr);

  MaterializeParams mp{"/tmp/stage"};
  doc = parse(canonical(to_node(mp)));
  EXPECT_EQ(*decode_materialize_params(doc.root()), mp);

  MaterializeResult mr{{{"hello.txt", std::string(64, 'c'), 14}, {"welcome.txt", std::string(64, 'd'), 60}}};
  doc = parse(canonical(to_node(mr)));
  EXPECT_EQ(*decode_materialize_result(doc.root()), mr);

  doc = parse(canonical(to_node(ValidatedResult{true})));
  EXPECT_TRUE(decode_validated_result(doc.root())->valid);
}

struct Bad {
  const char* name;
  const char* json;
  const char* kind;
};

class PlanDecodeErrors : public ::testing::TestWithParam<Bad> {};
TEST_P(PlanDecodeErrors, Kind) {
  auto doc = parse(GetParam().json);
  auto r = decode_plan_result(doc.root());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Protocol);
  EXPECT_EQ(r.error().kind, GetParam().kind) << r.error().line();
}
INSTANTIATE_TEST_SUITE_P(
    All, PlanDecodeErrors,
    ::testing::Values(Bad{"not_object", "[]", "not_object"},
                      Bad{"missing_names", "{\"effects\":[]}", "missing_field"},
                      Bad{"unknown", "{\"effects\":[],\"names\":[],\"x\":1}", "unknown_field"},
                      Bad{"case_sensitive", "{\"effects\":[],\"Names\":[]}", "missing_field"},
                      Bad{"name_not_string", "{\"effects\":[],\"names\":[1]}", "wrong_type"},
                      Bad{"effect_unknown_field",
                          "{\"effects\":[{\"failure_policy\":\"required\",\"kind\":\"sync\",\"target\":\"t\",\"x\":1}],"
                          "\"names\":[]}",
                          "unknown_field"},
                      Bad{"effect_missing_field", "{\"effects\":[{\"kind\":\"sync\"}],\"names\":[]}", "missing_field"}),
    [](const ::testing::TestParamInfo<Bad>& i) { return std::string(i.param.name); });

TEST(Messages, IntegersMustBePlainNonNegativeIntegers) {
  for (const char* bad : {"-1", "1.0", "1e0", "-0", "\"1\"", "9007199254740992"}) {
    std::string text = std::string("{\"artifacts\":[{\"name\":\"a.txt\",\"sha256\":\"x\",\"size\":") + bad + "}]}";
    auto doc = parse(text);
    auto r = decode_materialize_result(doc.root());
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().kind, "wrong_type") << bad;
  }
}

struct EnvelopeCase {
  const char* name;
  const char* json;
  const char* kind;
};
class ResponseEnvelope : public ::testing::TestWithParam<EnvelopeCase> {};
TEST_P(ResponseEnvelope, Kind) {
  auto doc = parse(GetParam().json);
  auto r = decode_response(doc, 2, Method::Plan);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Protocol);
  EXPECT_EQ(r.error().kind, GetParam().kind) << r.error().line();
}
INSTANTIATE_TEST_SUITE_P(
    All, ResponseEnvelope,
    ::testing::Values(
        EnvelopeCase{"batch", "[{\"id\":2,\"jsonrpc\":\"2.0\",\"result\":{}}]", "batch"},
        EnvelopeCase{"scalar", "2", "not_object"},
        EnvelopeCase{"notification", "{\"jsonrpc\":\"2.0\",\"method\":\"dot.log\",\"params\":{}}", "notification"},
        EnvelopeCase{"method", "{\"id\":2,\"jsonrpc\":\"2.0\",\"method\":\"dot.plan\",\"result\":{}}", "method_in_response"},
        EnvelopeCase{"no_version", "{\"id\":2,\"result\":{}}", "missing_field"},
        EnvelopeCase{"version_1", "{\"id\":2,\"jsonrpc\":\"1.0\",\"result\":{}}", "jsonrpc_version"},
        EnvelopeCase{"version_number", "{\"id\":2,\"jsonrpc\":2.0,\"result\":{}}", "jsonrpc_version"},
        EnvelopeCase{"no_id", "{\"jsonrpc\":\"2.0\",\"result\":{}}", "missing_field"},
        EnvelopeCase{"id_upper", "{\"ID\":2,\"jsonrpc\":\"2.0\",\"result\":{}}", "unknown_field"},
        EnvelopeCase{"id_zero", "{\"id\":0,\"jsonrpc\":\"2.0\",\"result\":{}}", "id"},
        EnvelopeCase{"id_negative", "{\"id\":-2,\"jsonrpc\":\"2.0\",\"result\":{}}", "id"},
        EnvelopeCase{"id_fraction", "{\"id\":2.0,\"jsonrpc\":\"2.0\",\"result\":{}}", "id"},
        EnvelopeCase{"id_string", "{\"id\":\"2\",\"jsonrpc\":\"2.0\",\"result\":{}}", "id"},
        EnvelopeCase{"id_null", "{\"id\":null,\"jsonrpc\":\"2.0\",\"result\":{}}", "id"},
        EnvelopeCase{"id_other", "{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{}}", "id_mismatch"},
        EnvelopeCase{"no_result", "{\"id\":2,\"jsonrpc\":\"2.0\"}", "missing_field"},
        EnvelopeCase{"both", "{\"error\":{\"code\":1,\"message\":\"m\"},\"id\":2,\"jsonrpc\":\"2.0\",\"result\":{}}",
                     "unknown_field"},
        EnvelopeCase{"error", "{\"error\":{\"code\":-32000,\"message\":\"no\"},\"id\":2,\"jsonrpc\":\"2.0\"}",
                     "error_response"},
        EnvelopeCase{"error_null_id", "{\"error\":{\"code\":-32700,\"message\":\"no\"},\"id\":null,\"jsonrpc\":\"2.0\"}",
                     "id"},
        EnvelopeCase{"error_malformed", "{\"error\":{\"code\":\"x\",\"message\":\"no\"},\"id\":2,\"jsonrpc\":\"2.0\"}",
                     "wrong_type"}),
    [](const ::testing::TestParamInfo<EnvelopeCase>& i) { return std::string(i.param.name); });

TEST(Envelope, ErrorResponsesShowThePluginsCodeAndMessage) {
  auto doc = parse(*encode_error(2, -32602, "bad params"));
  auto r = decode_response(doc, 2, Method::Plan);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().detail.find("-32602: bad params"), std::string::npos) << r.error().detail;
}

TEST(Envelope, RequestsDecodeStrictly) {
  auto doc = parse(*encode_request(3, Method::Materialize, to_node(MaterializeParams{"/s"})));
  auto r = decode_request(doc);
  ASSERT_TRUE(r.ok()) << r.error().line();
  EXPECT_EQ(r->id, 3u);
  EXPECT_EQ(r->method, Method::Materialize);
  doc = parse("{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"dot.exec\",\"params\":{}}");
  EXPECT_EQ(decode_request(doc).error().kind, "method");
  doc = parse("{\"jsonrpc\":\"2.0\",\"method\":\"dot.plan\",\"params\":{}}");
  EXPECT_EQ(decode_request(doc).error().kind, "notification");
  doc = parse("{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"dot.plan\"}");
  EXPECT_EQ(decode_request(doc).error().kind, "missing_field");
  doc = parse("{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"dot.plan\",\"params\":[]}");
  EXPECT_EQ(decode_request(doc).error().kind, "wrong_type");
}

}  // namespace
}  // namespace dot::dpp
