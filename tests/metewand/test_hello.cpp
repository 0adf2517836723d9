#include <gtest/gtest.h>

#include "dot/metewand/frame_reader.h"
#include "dot/metewand/hello.h"
#include "dot/metewand/message.h"

namespace dot::metewand {
namespace {

const std::string kId = "mw1-resolved-worker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const std::string kOther = "mw1-resolved-worker-fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";

json::Document doc(std::string_view text) {
  auto d = json::parse(text);
  EXPECT_TRUE(d.ok()) << text << (d.ok() ? "" : d.error().line());
  return std::move(d).value();
}

std::string response_text(std::string_view extra_or_override = "") {
  std::string base = R"({"capabilities":["one_shot"],"id":"0","ok":true,"protocol":1,"sdk":null,"worker_id":")" + kId + "\"";
  return base + std::string(extra_or_override) + "}";
}

TEST(HelloRequest, EncodesExactlyTheSpecBytes) {
  HelloRequest r;
  r.id = "0";
  r.role = WorkerRole::Implementation;
  r.worker_id = kId;
  auto line = encode_message(r.to_node());
  ASSERT_TRUE(line.ok()) << line.error().message();
  EXPECT_EQ(*line, R"({"id":"0","method":"hello","protocols":[1],"role":"implementation","worker_id":")" + kId + "\"}\n");
  // And the encoded line passes the framer and decodes back.
  auto parsed = parse_line(std::string_view(*line).substr(0, line->size() - 1));
  ASSERT_TRUE(parsed.ok());
  auto back = decode_hello_request(parsed->root());
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->id, "0");
  EXPECT_EQ(back->role, WorkerRole::Implementation);
  EXPECT_EQ(back->worker_id, kId);
  EXPECT_EQ(back->protocols, std::vector<std::uint32_t>{1});
}

TEST(HelloRequest, DecodingRefusesEveryDeviation) {
  const std::string tail = R"(,"role":"implementation","worker_id":")" + kId + "\"}";
  for (const std::string& bad : std::vector<std::string>{
           R"({"id":"0","method":"hello","protocols":[1])" + tail.substr(0, tail.size() - 1) + R"(,"x":1})",
           R"({"id":"","method":"hello","protocols":[1])" + tail,
           R"({"id":0,"method":"hello","protocols":[1])" + tail,
           R"({"id":"0","method":"helo","protocols":[1])" + tail,
           R"({"id":"0","method":"hello","protocols":[])" + tail,
           R"({"id":"0","method":"hello","protocols":[1,1])" + tail,
           R"({"id":"0","method":"hello","protocols":[-1])" + tail,
           R"({"id":"0","method":"hello","protocols":[1.0])" + tail,
           R"({"id":"0","method":"hello","protocols":[4294967296])" + tail,
           R"({"id":"0","method":"hello","protocols":[1],"role":"admin","worker_id":")" + kId + "\"}",
           R"({"id":"0","method":"hello","protocols":[1],"role":"implementation","worker_id":"mw1-resolved-worker-ABC"})",
           R"({"id":"0","method":"hello","protocols":[1],"role":"implementation"})",
       }) {
    auto r = decode_hello_request(doc(bad).root());
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.error().name(), "InvalidMessage");
    }
  }
}

TEST(WorkerIdentity, PatternIsExact) {
  EXPECT_TRUE(is_worker_identity(kId));
  EXPECT_FALSE(is_worker_identity(kId + "0"));
  EXPECT_FALSE(is_worker_identity(kId.substr(0, kId.size() - 1)));
  std::string upper = kId;
  upper.back() = 'F';
  EXPECT_FALSE(is_worker_identity(upper));
  EXPECT_FALSE(is_worker_identity("mw2-resolved-worker-" + kId.substr(20)));
  EXPECT_EQ(worker_identity_from_digest(kId.substr(20)), kId);
}

TEST(HelloReply, DecodesTheSuccessShape) {
  auto r = decode_hello_reply(doc(R"({"capabilities":["streaming_profile","one_shot"],"id":"0","ok":true,"protocol":1,"sdk":{"name":"metewand-python","version":"0.1.0"},"worker_id":")" + kId + "\"}").root());
  ASSERT_TRUE(r.ok()) << r.error().message();
  const auto& resp = std::get<HelloResponse>(*r);
  EXPECT_EQ(resp.id, "0");
  ASSERT_TRUE(resp.sdk.has_value());
  EXPECT_EQ(resp.sdk->name, "metewand-python");
  // Protocol order, whatever the worker's order.
  EXPECT_EQ(resp.capabilities, (std::vector<Capability>{Capability::OneShot, Capability::StreamingProfile}));
  auto line = encode_message(resp.to_node());
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(*line, R"({"capabilities":["one_shot","streaming_profile"],"id":"0","ok":true,"protocol":1,"sdk":{"name":"metewand-python","version":"0.1.0"},"worker_id":")" + kId + "\"}\n");
}

TEST(HelloReply, RefusesEveryDeviationFromTheSuccessShape) {
  const std::string w = "\"" + kId + "\"";
  for (const std::string& bad : std::vector<std::string>{
           response_text(R"(,"extra":1)"),
           R"({"id":"0","ok":true,"protocol":1,"sdk":null,"worker_id":)" + w + "}",            // no capabilities
           R"({"capabilities":[],"ok":true,"protocol":1,"sdk":null,"worker_id":)" + w + "}",    // no id
           R"({"capabilities":[],"id":"0","protocol":1,"sdk":null,"worker_id":)" + w + "}",     // no ok
           R"({"capabilities":[],"id":"0","ok":true,"sdk":null,"worker_id":)" + w + "}",        // no protocol
           R"({"capabilities":[],"id":"0","ok":true,"protocol":1,"worker_id":)" + w + "}",      // no sdk
           R"({"capabilities":[],"id":"0","ok":true,"protocol":1,"sdk":null})",                // no worker_id
           R"({"capabilities":["one_shot","one_shot"],"id":"0","ok":true,"protocol":1,"sdk":null,"worker_id":)" + w + "}",
           R"({"capabilities":["teleport"],"id":"0","ok":true,"protocol":1,"sdk":null,"worker_id":)" + w + "}",
           R"({"capabilities":"one_shot","id":"0","ok":true,"protocol":1,"sdk":null,"worker_id":)" + w + "}",
           R"({"capabilities":[],"id":"","ok":true,"protocol":1,"sdk":null,"worker_id":)" + w + "}",
           R"({"capabilities":[],"id":"0","ok":"true","protocol":1,"sdk":null,"worker_id":)" + w + "}",
           R"({"capabilities":[],"id":"0","ok":true,"protocol":2,"sdk":null,"worker_id":)" + w + "}",
           R"({"capabilities":[],"id":"0","ok":true,"protocol":1.0,"sdk":null,"worker_id":)" + w + "}",
           R"({"capabilities":[],"id":"0","ok":true,"protocol":1,"sdk":{"name":"","version":"1"},"worker_id":)" + w + "}",
           R"({"capabilities":[],"id":"0","ok":true,"protocol":1,"sdk":{"name":"a","version":""},"worker_id":)" + w + "}",
           R"({"capabilities":[],"id":"0","ok":true,"protocol":1,"sdk":{"name":"a"},"worker_id":)" + w + "}",
           R"({"capabilities":[],"id":"0","ok":true,"protocol":1,"sdk":{"name":"a","version":"1","x":0},"worker_id":)" + w + "}",
           R"({"capabilities":[],"id":"0","ok":true,"protocol":1,"sdk":"py","worker_id":)" + w + "}",
           R"({"capabilities":[],"id":"0","ok":true,"protocol":1,"sdk":null,"worker_id":"mw1-resolved-worker-xyz"})",
           std::string("[]"),
       }) {
    auto r = decode_hello_reply(doc(bad).root());
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.error().name(), "InvalidMessage") << bad;
    }
  }
}

TEST(WorkerFailure, DecodesAndEncodesTheFailureShape) {
  auto r = decode_hello_reply(doc(R"({"error":{"code":"operation_failed","details":{"iterations":100},"message":"did not converge"},"id":"0","ok":false})").root());
  ASSERT_TRUE(r.ok()) << r.error().message();
  const auto& f = std::get<WorkerFailure>(*r);
  EXPECT_EQ(f.code, "operation_failed");
  EXPECT_EQ(f.message, "did not converge");
  ASSERT_TRUE(f.details.has_value());
  auto line = encode_message(f.to_node());
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(*line, R"({"error":{"code":"operation_failed","details":{"iterations":100},"message":"did not converge"},"id":"0","ok":false})" "\n");
  for (const char* bad : {
           R"({"error":{"code":"oops","message":"m"},"id":"0","ok":false})",
           R"({"error":{"code":"internal_error","message":""},"id":"0","ok":false})",
           R"({"error":{"code":"internal_error","message":"m","details":[]},"id":"0","ok":false})",
           R"({"error":{"code":"internal_error","message":"m","extra":1},"id":"0","ok":false})",
           R"({"error":{"code":"internal_error","message":"m"},"id":"0","ok":false,"x":1})",
           R"({"error":{"code":"internal_error","message":"m"},"ok":false})",
           R"({"error":"internal_error","id":"0","ok":false})",
       }) {
    auto e = decode_hello_reply(doc(bad).root());
    EXPECT_FALSE(e.ok()) << bad;
  }
  for (std::string_view code : kFailureCodes) {
    auto ok = decode_worker_failure(doc(R"({"error":{"code":")" + std::string(code) + R"(","message":"m"},"id":"3","ok":false})").root());
    EXPECT_TRUE(ok.ok()) << code;
  }
}

HelloRequest request(WorkerRole role = WorkerRole::Implementation) {
  HelloRequest r;
  r.id = "0";
  r.role = role;
  r.worker_id = kId;
  return r;
}

HelloResponse response() {
  HelloResponse r;
  r.id = "0";
  r.worker_id = kId;
  r.capabilities = {Capability::OneShot};
  return r;
}

HandshakeError::Kind fails_with(const HelloRequest& q, const HelloResponse& r, std::vector<Capability> sel = {}) {
  auto v = validate_hello_response(q, r, sel);
  EXPECT_FALSE(v.ok());
  return v.ok() ? HandshakeError::Kind::MismatchedRequestId : v.error().kind;
}

TEST(ValidateHello, AcceptsAndRecordsTheNegotiation) {
  auto resp = response();
  resp.capabilities = {Capability::FreshSequence, Capability::OneShot};
  resp.sdk = SdkMetadata{"sdk", "1"};
  std::vector<Capability> sel = {Capability::OneShot};
  auto v = validate_hello_response(request(), resp, sel);
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_EQ(v->protocol, 1u);
  EXPECT_EQ(v->selected, sel);
  EXPECT_EQ(v->reported, (std::vector<Capability>{Capability::OneShot, Capability::FreshSequence}));
  // Reported but unselected capabilities stay inert, for any role.
  EXPECT_TRUE(validate_hello_response(request(WorkerRole::ProblemEvaluator), resp, {}).ok());
}

TEST(ValidateHello, ChecksInTheSpecOrder) {
  using K = HandshakeError::Kind;
  // Everything wrong at once: the id wins.
  auto q = request(WorkerRole::DatasetMaterializer);
  q.protocols = {2};
  auto r = response();
  r.id = "1";
  r.protocol = 2;
  r.worker_id = kOther;
  r.capabilities = {};
  std::vector<Capability> sel = {Capability::Applicability};
  EXPECT_EQ(fails_with(q, r, sel), K::MismatchedRequestId);
  r.id = "0";
  EXPECT_EQ(fails_with(q, r, sel), K::NoCommonProtocol);
  q.protocols = {3, 1};
  EXPECT_EQ(fails_with(q, r, sel), K::ProtocolMismatch);
  r.protocol = 1;
  EXPECT_EQ(fails_with(q, r, sel), K::WorkerIdentityMismatch);
  r.worker_id = kId;
  EXPECT_EQ(fails_with(q, r, sel), K::CapabilityForRole);
  q.role = WorkerRole::Implementation;
  EXPECT_EQ(fails_with(q, r, sel), K::ReservedCapability);
  sel = {Capability::OneShot};
  EXPECT_EQ(fails_with(q, r, sel), K::MissingCapability);
  r.capabilities = {Capability::OneShot};
  EXPECT_TRUE(validate_hello_response(q, r, sel).ok());
}

TEST(ValidateHello, EveryReservedCapabilityIsRefused) {
  auto r = response();
  r.capabilities = {Capability::OneShot, Capability::Applicability, Capability::FreshSequence,
                    Capability::StreamingProfile};
  for (Capability c : {Capability::Applicability, Capability::FreshSequence, Capability::StreamingProfile}) {
    std::vector<Capability> sel = {c};
    auto v = validate_hello_response(request(), r, sel);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.error().kind, HandshakeError::Kind::ReservedCapability);
    EXPECT_EQ(v.error().capability, c);
  }
}

TEST(Encoder, RefusesALineOverTheLimit) {
  // A string of 1,048,573 bytes encodes to 1,048,575 bytes: with its LF exactly the limit.
  jcs::Node fits = jcs::Node::string(std::string(kMaxLineBytes - 3, 'x'));
  auto ok = encode_message(fits);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), kMaxLineBytes);
  jcs::Node too_big = jcs::Node::string(std::string(kMaxLineBytes - 2, 'x'));
  auto bad = encode_message(too_big);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, MessageError::Kind::LineTooLong);
  EXPECT_EQ(bad.error().limit, kMaxLineBytes);
}

TEST(Encoder, UsesTheMetewandProfile) {
  jcs::Node o = jcs::Node::object();
  o.set("b", jcs::Node::number(1e3));
  o.set("a", jcs::Node::number(-0.0));
  o.set("c", jcs::Node::number(0.5));
  auto line = encode_message(o);
  ASSERT_TRUE(line.ok()) << line.error().message();
  EXPECT_EQ(*line, "{\"a\":0,\"b\":1000,\"c\":0.5}\n");
  auto unsafe = encode_message(jcs::Node::number(9007199254740992.0));
  ASSERT_FALSE(unsafe.ok());
  EXPECT_EQ(unsafe.error().kind, MessageError::Kind::Serialization);
  EXPECT_TRUE(encode_message(jcs::Node::number(9007199254740991.0)).ok());
}

}  // namespace
}  // namespace dot::metewand
