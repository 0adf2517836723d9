// The general profile's message layer (dot/dpp/general.h): canonical bytes,
// round trips, every rejection with its code and kind, the echo check, and
// the reply envelope (result, error response, notification).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "dot/dpp/body.h"
#include "dot/dpp/general.h"
#include "dot/dpp/host_session.h"

namespace dot::dpp::general {
namespace {

json::Document parse(std::string_view text) {
  auto d = parse_body(text, 0);
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().line());
  return std::move(d).value();
}

std::string canonical(const jcs::Node& n) { return *jcs::encode(n, jcs::Profile::Rfc8785); }

const std::string kNonce(64, 'a');
constexpr const char* kLimitsJson =
    "{\"deadline_ms\":60000,\"max_file_bytes\":16777216,\"max_frame_bytes\":16777216,\"max_log_messages\":1000,"
    "\"max_operations\":100000,\"max_stderr_bytes\":65536,\"max_stdout_bytes\":67108864,\"max_total_bytes\":"
    "1073741824}";

TEST(General, InitializeRequestIsTheSpecifiedCanonicalBytes) {
  auto p = initialize_params("process", kNonce, {"/srv/in", "/home/u/dots"});
  EXPECT_EQ(
      *encode_request(1, Method::Initialize, to_node(p)),
      std::string("{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"dot.initialize\",\"params\":{\"capabilities\":"
                  "[\"materialize\",\"plan\",\"post-commit-effects\",\"validate\",\"log\",\"digests\",\"batches\"],"
                  "\"inputs\":"
                  "[\"/srv/in\",\"/home/u/dots\"],\"limits\":") +
          kLimitsJson + ",\"nonce\":\"" + kNonce +
          "\",\"profile\":\"org.dot.dpp/v1\",\"protocol\":1,\"required_assurance\":\"process\"}}");
  EXPECT_EQ(*encode_request(2, Method::Plan, to_node(PlanParams{{"a", "b/c"}})),
            "{\"id\":2,\"jsonrpc\":\"2.0\",\"method\":\"dot.plan\",\"params\":{\"managed\":[\"a\",\"b/c\"]}}");
  EXPECT_EQ(*encode_log({"info", "hi"}),
            "{\"jsonrpc\":\"2.0\",\"method\":\"dot.log\",\"params\":{\"level\":\"info\",\"message\":\"hi\"}}");
}

TEST(General, TheProfileLimitsAreTheSpecifiedValues) { EXPECT_EQ(canonical(to_node(kLimits)), kLimitsJson); }

// Under process assurance (docs/sandbox.md): staged files up to
// max_file_bytes, and CPU for the largest plan, not for one deadline (the
// deadline is a wait's, not the run's).
TEST(General, TheContainmentLimitsAreTheProfilesOwn) {
  const SandboxLimits c = containment_limits(Profile::General);
  EXPECT_EQ(c.file_size, kLimits.max_file_bytes);
  EXPECT_EQ(c.cpu_seconds, 560U);
  EXPECT_EQ(c.cpu_hard_seconds, 561U);
  EXPECT_GT(c.cpu_seconds, kLimits.deadline_ms / 1000);
}

InitializeResult honest_echo(const InitializeParams& p, bool log) {
  InitializeResult r;
  r.assurance = p.required_assurance;
  r.capabilities = {"materialize", "plan", "post-commit-effects", "validate"};
  if (log) r.capabilities.emplace_back("log");
  r.id = "org.dot.mirror";
  r.inputs = p.inputs;
  r.limits = p.limits;
  r.nonce = p.nonce;
  r.profile = p.profile;
  r.protocol = p.protocol;
  return r;
}

// The answer's operations are encoded as they are added: a path that is not
// UTF-8 is the encoder's error, before anything is sent.
TEST(General, APlanResultThatCannotBeEncodedIsAnError) {
  PlanResult pr{{EffectRequest{"sync", "managed-root", "required"}}, {{"write", 420, "a/\xff"}}, {}};
  auto node = to_node(pr);
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(node.error().code, Code::Validation) << node.error().line();
}

TEST(General, EveryTypeRoundTrips) {
  auto ip = initialize_params("audit", kNonce, {"/in"});
  auto doc = parse(canonical(to_node(ip)));
  EXPECT_EQ(*decode_initialize_params(doc.root()), ip);

  auto ir = honest_echo(ip, true);
  doc = parse(canonical(to_node(ir)));
  EXPECT_EQ(*decode_initialize_result(doc.root()), ir);

  PlanParams pp{{"a/b", "z"}};
  doc = parse(canonical(to_node(pp)));
  EXPECT_EQ(*decode_plan_params(doc.root()), pp);

  PlanResult pr{{EffectRequest{"sync", "managed-root", "required"}},
                {{"write", 420, "a/b"}, {"remove", 0, "c"}, {"write", 493, "\xc3\xa9t\xc3\xa9"}},
                {}};
  doc = parse(canonical(*to_node(pr)));
  EXPECT_EQ(*decode_plan_result(doc.root(), kLimits), pr);
  // Without folder modes the answer has no `directories` member (its bytes
  // are what they were); with them it round-trips.
  EXPECT_EQ(canonical(*to_node(pr)).find("directories"), std::string::npos);
  pr.directories = {{0750, "a"}};
  doc = parse(canonical(*to_node(pr)));
  EXPECT_EQ(*decode_plan_result(doc.root(), kLimits), pr);
  // A link carries its link_text (and only a link: the member is optional).
  Operation ln{"link", 0, "d/ln"};
  ln.link_text = "/abs/\x1b text";
  pr.operations.push_back(ln);
  const std::string with_link = canonical(*to_node(pr));
  EXPECT_NE(with_link.find(R"({"action":"link","link_text":"/abs/\u001b text","mode":0,"path":"d/ln"})"),
            std::string::npos)
      << with_link;
  doc = parse(with_link);
  EXPECT_EQ(*decode_plan_result(doc.root(), kLimits), pr);

  MaterializeResult mr{{{"a/b", std::string(64, 'c'), 0}, {"\xc3\xa9", std::string(64, 'd'), 16777216}}};
  doc = parse(canonical(to_node(mr)));
  EXPECT_EQ(*decode_materialize_result(doc.root(), kLimits), mr);

  LogParams lp{"warning", std::string(4096, 'x')};
  doc = parse(canonical(to_node(lp)));
  EXPECT_EQ(*decode_log_params(doc.root()), lp);

  ErrorObject eo{-32000, "no", std::string("{\"a\":[1,\"b\"]}")};
  doc = parse(canonical(*to_node(eo)));
  EXPECT_EQ(*decode_error_object(doc.root()), eo);
}

struct Bad {
  const char* name;
  const char* json;
  Code code;
  const char* kind;
};

enum class Type : std::uint8_t { InitParams, InitResult, PlanParams, PlanResult, MatResult, Log, Error };

std::string init_result(std::string_view limits, std::string_view extra = "") {
  return "{\"assurance\":\"audit\",\"capabilities\":[],\"id\":\"x\",\"inputs\":[]," + std::string(extra) +
         "\"limits\":" + std::string(limits) + ",\"nonce\":\"n\",\"profile\":\"p\",\"protocol\":1}";
}

template <typename T>
Status status_of(Result<T> r) {
  if (!r.ok()) return r.error();
  return {};
}

Status decode(Type t, json::Value v, const Limits& limits = kLimits) {
  switch (t) {
    case Type::InitParams:
      return status_of(decode_initialize_params(v));
    case Type::InitResult:
      return status_of(decode_initialize_result(v));
    case Type::PlanParams:
      return status_of(decode_plan_params(v));
    case Type::PlanResult:
      return status_of(decode_plan_result(v, limits));
    case Type::MatResult:
      return status_of(decode_materialize_result(v, limits));
    case Type::Log:
      return status_of(decode_log_params(v));
    case Type::Error:
      return status_of(decode_error_object(v));
  }
  return {};
}

struct Case {
  const char* name;
  Type type;
  std::string json;
  const char* kind;
};

class DecodeErrors : public ::testing::TestWithParam<Case> {};
TEST_P(DecodeErrors, AreProtocolErrorsOfTheirKind) {
  auto doc = parse(GetParam().json);
  auto st = decode(GetParam().type, doc.root());
  ASSERT_FALSE(st.ok()) << GetParam().json;
  EXPECT_EQ(code_name(st.error().code), "DOT_E_PROTOCOL") << st.error().line();
  EXPECT_EQ(st.error().kind, GetParam().kind) << st.error().line();
  EXPECT_TRUE(st.error().offset.has_value()) << st.error().line();
}

std::string limits_with(std::string_view from, std::string_view to) {
  std::string s = kLimitsJson;
  s.replace(s.find(from), from.size(), to);
  return s;
}

const std::string kEffects =
    "\"effects\":[{\"failure_policy\":\"required\",\"kind\":\"sync\",\"target\":\"managed-root\"}]";
const std::string kSha(64, 'e');

INSTANTIATE_TEST_SUITE_P(
    All, DecodeErrors,
    ::testing::Values(
        Case{"limits_not_object", Type::InitResult, init_result("[]"), "not_object"},
        Case{"limit_string", Type::InitResult, init_result(limits_with("60000", "\"60000\"")), "wrong_type"},
        Case{"limit_negative", Type::InitResult, init_result(limits_with("60000", "-1")), "wrong_type"},
        Case{"limit_fraction", Type::InitResult, init_result(limits_with("60000", "60000.0")), "wrong_type"},
        Case{"limit_huge", Type::InitResult, init_result(limits_with("60000", "9007199254740992")), "wrong_type"},
        Case{"inputs_not_strings", Type::InitResult,
             "{\"assurance\":\"audit\",\"capabilities\":[],\"id\":\"x\",\"inputs\":[1],\"limits\":" +
                 std::string(kLimitsJson) + ",\"nonce\":\"n\",\"profile\":\"p\",\"protocol\":1}",
             "wrong_type"},
        Case{"params_hello_shape", Type::InitParams,
             "{\"capabilities\":[],\"nonce\":\"n\",\"profile\":\"org.dot.hello/v1\",\"protocol\":1,"
             "\"required_assurance\":\"audit\"}",
             "missing_field"},
        Case{"plan_params_empty", Type::PlanParams, "{}", "missing_field"},
        Case{"plan_params_not_strings", Type::PlanParams, "{\"managed\":[null]}", "wrong_type"},
        Case{"plan_params_unknown", Type::PlanParams, "{\"managed\":[],\"x\":1}", "unknown_field"},
        Case{"plan_hello_names", Type::PlanResult, "{" + kEffects + ",\"names\":[]}", "missing_field"},
        Case{"plan_op_not_object", Type::PlanResult, "{" + kEffects + ",\"operations\":[\"a\"]}", "not_object"},
        Case{"plan_op_missing_mode", Type::PlanResult,
             "{" + kEffects + ",\"operations\":[{\"action\":\"remove\",\"path\":\"a\"}]}", "missing_field"},
        Case{"plan_op_mode_string", Type::PlanResult,
             "{" + kEffects + ",\"operations\":[{\"action\":\"write\",\"mode\":\"0644\",\"path\":\"a\"}]}",
             "wrong_type"},
        Case{"plan_op_mode_negative", Type::PlanResult,
             "{" + kEffects + ",\"operations\":[{\"action\":\"write\",\"mode\":-420,\"path\":\"a\"}]}", "wrong_type"},
        Case{"plan_op_path_number", Type::PlanResult,
             "{" + kEffects + ",\"operations\":[{\"action\":\"write\",\"mode\":420,\"path\":1}]}", "wrong_type"},
        Case{"plan_op_unknown", Type::PlanResult,
             "{" + kEffects + ",\"operations\":[{\"action\":\"write\",\"exec\":true,\"mode\":420,\"path\":\"a\"}]}",
             "unknown_field"},
        Case{"plan_op_case", Type::PlanResult,
             "{" + kEffects + ",\"operations\":[{\"Action\":\"write\",\"mode\":420,\"path\":\"a\"}]}", "missing_field"},
        Case{"plan_effect_unknown", Type::PlanResult,
             "{\"effects\":[{\"failure_policy\":\"required\",\"hook\":\"x\",\"kind\":\"sync\",\"target\":\"t\"}],"
             "\"operations\":[]}",
             "unknown_field"},
        Case{"mat_name_not_path", Type::MatResult,
             "{\"artifacts\":[{\"name\":\"a\",\"sha256\":\"" + kSha + "\",\"size\":1}]}", "missing_field"},
        Case{"mat_size_string", Type::MatResult,
             "{\"artifacts\":[{\"path\":\"a\",\"sha256\":\"" + kSha + "\",\"size\":\"1\"}]}", "wrong_type"},
        Case{"mat_file_over_limit", Type::MatResult,
             "{\"artifacts\":[{\"path\":\"a\",\"sha256\":\"" + kSha + "\",\"size\":16777217}]}", "max_file_bytes"},
        Case{"log_missing_level", Type::Log, "{\"message\":\"m\"}", "missing_field"},
        Case{"log_unknown", Type::Log, "{\"level\":\"info\",\"message\":\"m\",\"time\":1}", "unknown_field"},
        Case{"log_level_number", Type::Log, "{\"level\":1,\"message\":\"m\"}", "wrong_type"},
        Case{"log_bad_level", Type::Log, "{\"level\":\"fatal\",\"message\":\"m\"}", "log_level"},
        Case{"log_level_case", Type::Log, "{\"level\":\"INFO\",\"message\":\"m\"}", "log_level"},
        Case{"log_4097", Type::Log, "{\"level\":\"info\",\"message\":\"" + std::string(4097, 'm') + "\"}",
             "log_message"},
        Case{"error_code_string", Type::Error, "{\"code\":\"-32000\",\"message\":\"m\"}", "wrong_type"},
        Case{"error_code_fraction", Type::Error, "{\"code\":-32000.5,\"message\":\"m\"}", "wrong_type"},
        Case{"error_code_huge", Type::Error, "{\"code\":-9007199254740992,\"message\":\"m\"}", "wrong_type"},
        Case{"error_no_message", Type::Error, "{\"code\":1}", "missing_field"},
        Case{"error_unknown", Type::Error, "{\"code\":1,\"message\":\"m\",\"stack\":\"s\"}", "unknown_field"},
        Case{"error_message_4097", Type::Error, "{\"code\":1,\"message\":\"" + std::string(4097, 'm') + "\"}",
             "error_message"},
        Case{"error_data_4097", Type::Error,
             "{\"code\":1,\"data\":\"" + std::string(4095, 'd') + "\",\"message\":\"m\"}", "error_data"}),
    [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

TEST(General, OperationAndArtifactCountsAreLimitedBeforeAnythingIsBuilt) {
  Limits small = kLimits;
  small.max_operations = 2;
  std::string op = "{\"action\":\"remove\",\"mode\":0,\"path\":\"a\"}";
  auto doc = parse("{" + kEffects + ",\"operations\":[" + op + "," + op + "]}");
  EXPECT_TRUE(decode_plan_result(doc.root(), small).ok());
  doc = parse("{" + kEffects + ",\"operations\":[" + op + "," + op + "," + op + "]}");
  auto r = decode_plan_result(doc.root(), small);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Protocol);
  EXPECT_EQ(r.error().kind, "max_operations");
  EXPECT_NE(r.error().detail.find("3 operations; the negotiated limit is 2"), std::string::npos) << r.error().line();

  std::string art = "{\"path\":\"a\",\"sha256\":\"" + kSha + "\",\"size\":1}";
  doc = parse("{\"artifacts\":[" + art + "," + art + "," + art + "]}");
  EXPECT_EQ(decode_materialize_result(doc.root(), small).error().kind, "max_operations");
}

TEST(General, ClaimsTogetherAreLimitedAtTheByte) {
  Limits small = kLimits;
  small.max_total_bytes = 10;
  auto art = [](int size) {
    return "{\"path\":\"a\",\"sha256\":\"" + kSha + "\",\"size\":" + std::to_string(size) + "}";
  };
  auto doc = parse("{\"artifacts\":[" + art(4) + "," + art(6) + "]}");
  EXPECT_TRUE(decode_materialize_result(doc.root(), small).ok());
  doc = parse("{\"artifacts\":[" + art(4) + "," + art(7) + "]}");
  auto r = decode_materialize_result(doc.root(), small);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Protocol);
  EXPECT_EQ(r.error().kind, "max_total_bytes");
}

TEST(General, TheEchoNegotiatesLogOrNot) {
  auto sent = initialize_params("audit", kNonce, {"/a", "/b"});
  auto without = check_identity(sent, honest_echo(sent, false), "org.dot.mirror");
  ASSERT_TRUE(without.ok()) << without.error().line();
  EXPECT_FALSE(without->log);
  EXPECT_FALSE(without->digests);
  auto with = check_identity(sent, honest_echo(sent, true), "org.dot.mirror");
  ASSERT_TRUE(with.ok()) << with.error().line();
  EXPECT_TRUE(with->log);
  EXPECT_FALSE(with->digests);
  // Core that did not offer log does not get it.
  auto no_log = sent;
  std::erase(no_log.capabilities, "log");
  auto st = check_identity(no_log, honest_echo(no_log, true), "org.dot.mirror");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, "capabilities");
}

TEST(General, TheEchoNegotiatesDigestsAfterLogOrAlone) {
  auto sent = initialize_params("audit", kNonce, {"/a"});
  std::erase(sent.capabilities, "batches");  // its own test below
  EXPECT_EQ(sent.capabilities.back(), "digests");
  for (bool log : {false, true}) {
    auto echo = honest_echo(sent, log);
    echo.capabilities.emplace_back("digests");
    auto r = check_identity(sent, echo, "org.dot.mirror");
    ASSERT_TRUE(r.ok()) << r.error().line();
    EXPECT_EQ(r->log, log);
    EXPECT_TRUE(r->digests);
  }
  // Before log, twice, or not offered: a wrong echo.
  auto before_log = honest_echo(sent, false);
  before_log.capabilities.insert(before_log.capabilities.end(), {"digests", "log"});
  EXPECT_EQ(check_identity(sent, before_log, "org.dot.mirror").error().kind, "capabilities");
  auto twice = honest_echo(sent, true);
  twice.capabilities.insert(twice.capabilities.end(), {"digests", "digests"});
  EXPECT_EQ(check_identity(sent, twice, "org.dot.mirror").error().kind, "capabilities");
  auto not_offered = sent;
  not_offered.capabilities.pop_back();
  auto echo = honest_echo(not_offered, true);
  echo.capabilities.emplace_back("digests");
  EXPECT_EQ(check_identity(not_offered, echo, "org.dot.mirror").error().kind, "capabilities");
  EXPECT_TRUE(is_profile_offer(sent.capabilities));
  EXPECT_TRUE(is_profile_offer(not_offered.capabilities));
  EXPECT_FALSE(is_profile_offer({"materialize", "plan", "post-commit-effects", "validate", "digests", "log"}));
}

TEST(General, TheCacheIsOfferedLastWithItsFolderAndEchoedOnlyWhenOffered) {
  auto sent = initialize_params("audit", kNonce, {"/a"}, "/r/.dot/cache-org.dot.mirror");
  std::erase(sent.capabilities, "batches");  // its own test below
  EXPECT_EQ(sent.capabilities.back(), "cache");
  EXPECT_TRUE(is_profile_offer(sent.capabilities));
  EXPECT_TRUE(cache_offer_is_whole(sent));
  for (bool digests : {false, true}) {
    auto echo = honest_echo(sent, true);
    if (digests) echo.capabilities.emplace_back("digests");
    echo.capabilities.emplace_back("cache");
    auto r = check_identity(sent, echo, "org.dot.mirror");
    ASSERT_TRUE(r.ok()) << r.error().line();
    EXPECT_EQ(r->digests, digests);
    EXPECT_TRUE(r->cache);
  }
  auto declined = check_identity(sent, honest_echo(sent, true), "org.dot.mirror");
  ASSERT_TRUE(declined.ok());
  EXPECT_FALSE(declined->cache);
  // Before digests, or not offered: a wrong echo.
  auto before_digests = honest_echo(sent, true);
  before_digests.capabilities.insert(before_digests.capabilities.end(), {"cache", "digests"});
  EXPECT_EQ(check_identity(sent, before_digests, "org.dot.mirror").error().kind, "capabilities");
  auto not_offered = initialize_params("audit", kNonce, {"/a"});
  std::erase(not_offered.capabilities, "batches");
  EXPECT_EQ(not_offered.capabilities.back(), "digests");
  EXPECT_FALSE(not_offered.cache);
  auto echo = honest_echo(not_offered, true);
  echo.capabilities.emplace_back("cache");
  EXPECT_EQ(check_identity(not_offered, echo, "org.dot.mirror").error().kind, "capabilities");
  EXPECT_FALSE(is_profile_offer({"materialize", "plan", "post-commit-effects", "validate", "cache", "digests"}));
  // The folder comes exactly with the offer, as an absolute path.
  auto no_folder = sent;
  no_folder.cache.reset();
  EXPECT_FALSE(cache_offer_is_whole(no_folder));
  auto no_offer = sent;
  no_offer.capabilities.pop_back();
  EXPECT_FALSE(cache_offer_is_whole(no_offer));
  auto relative = sent;
  relative.cache = "r/.dot/cache";
  EXPECT_FALSE(cache_offer_is_whole(relative));
  // On the wire and back.
  const std::string text = canonical(to_node(sent));
  EXPECT_NE(text.find(R"("cache":"/r/.dot/cache-org.dot.mirror")"), std::string::npos);
  auto doc = parse(text);
  auto back = decode_initialize_params(doc.root());
  ASSERT_TRUE(back.ok()) << back.error().line();
  EXPECT_EQ(*back, sent);
}

TEST(General, BatchesAreOfferedLastAndEchoedAfterEverythingElse) {
  auto sent = initialize_params("audit", kNonce, {"/a"}, "/r/.dot/cache-org.dot.mirror");
  EXPECT_EQ(sent.capabilities.back(), "batches");
  EXPECT_TRUE(is_profile_offer(sent.capabilities));
  EXPECT_EQ(initialize_params("audit", kNonce, {"/a"}).capabilities.back(), "batches");  // without cache too
  auto echo = honest_echo(sent, true);
  echo.capabilities.insert(echo.capabilities.end(), {"digests", "cache", "batches"});
  auto r = check_identity(sent, echo, "org.dot.mirror");
  ASSERT_TRUE(r.ok()) << r.error().line();
  EXPECT_TRUE(r->log && r->digests && r->cache && r->batches);
  auto alone = honest_echo(sent, false);
  alone.capabilities.emplace_back("batches");
  ASSERT_TRUE(check_identity(sent, alone, "org.dot.mirror").ok());
  EXPECT_TRUE(check_identity(sent, alone, "org.dot.mirror")->batches);
  EXPECT_FALSE(check_identity(sent, honest_echo(sent, true), "org.dot.mirror")->batches);
  // Before cache, or not offered: a wrong echo.
  auto early = honest_echo(sent, true);
  early.capabilities.insert(early.capabilities.end(), {"batches", "cache"});
  EXPECT_EQ(check_identity(sent, early, "org.dot.mirror").error().kind, "capabilities");
  auto not_offered = sent;
  std::erase(not_offered.capabilities, "batches");
  EXPECT_EQ(check_identity(not_offered, alone, "org.dot.mirror").error().kind, "capabilities");
  EXPECT_FALSE(is_profile_offer({"materialize", "plan", "post-commit-effects", "validate", "batches", "log"}));
}

TEST(General, BatchesAreHeldToTheLimitsOverTheWholeList) {
  Limits small = kLimits;
  small.max_operations = 3;
  small.max_total_bytes = 10;
  auto write = [](const std::string& path, int size) {
    return R"({"action":"write","mode":420,"path":")" + path + R"(","sha256":")" + kSha + R"(","size":)" +
           std::to_string(size) + "}";
  };
  Batched<Operation> ops;
  auto batch = parse(R"({"operations":[)" + write("a", 4) + "," + write("b", 4) + "]}");
  ASSERT_TRUE(decode_operations_batch(batch.root(), small, true, ops).ok());
  EXPECT_EQ(ops.items.size(), 2u);
  EXPECT_EQ(ops.claimed_bytes, 8u);
  // The result's one more write is operation 2 of the list, and the bytes count from 8.
  auto over_bytes = parse("{" + kEffects + R"(,"operations":[)" + write("c", 3) + "]}");
  auto r = decode_plan_result(over_bytes.root(), small, true, ops);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, "max_total_bytes");
  EXPECT_NE(r.error().detail.find("operation 2"), std::string::npos) << r.error().line();
  auto fits = parse("{" + kEffects + R"(,"operations":[)" + write("c", 2) + "]}");
  r = decode_plan_result(fits.root(), small, true, ops);
  ASSERT_TRUE(r.ok()) << r.error().line();
  std::vector<std::string> paths;
  for (const auto& op : r->operations) paths.push_back(op.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"a", "b", "c"}));
  // One operation too many, counted with the batches (a result or another batch).
  EXPECT_EQ(decode_operations_batch(batch.root(), small, true, ops).error().kind, "max_operations");
  Batched<Operation> two;
  ASSERT_TRUE(decode_operations_batch(batch.root(), kLimits, true, two).ok());
  auto too_many = parse("{" + kEffects + R"(,"operations":[)" + write("c", 1) + "," + write("d", 1) + "]}");
  r = decode_plan_result(too_many.root(), small, true, two);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, "max_operations");
  EXPECT_NE(r.error().detail.find("2 operations after 2 in earlier batches; the negotiated limit is 3 in all"),
            std::string::npos)
      << r.error().line();
  // A batch holds nothing but its list.
  auto extra = parse(R"({"effects":[],"operations":[]})");
  Batched<Operation> none;
  EXPECT_EQ(decode_operations_batch(extra.root(), small, true, none).error().kind, "unknown_field");
  // Artifacts likewise.
  auto art = [](const std::string& path, int size) {
    return R"({"path":")" + path + R"(","sha256":")" + kSha + R"(","size":)" + std::to_string(size) + "}";
  };
  Batched<Artifact> arts;
  auto art_batch = parse(R"({"artifacts":[)" + art("a", 5) + "," + art("b", 5) + "]}");
  ASSERT_TRUE(decode_artifacts_batch(art_batch.root(), small, arts).ok());
  auto one_more = parse(R"({"artifacts":[)" + art("c", 1) + "]}");
  auto m = decode_materialize_result(one_more.root(), small, arts);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().kind, "max_total_bytes");
  auto none_more = parse(R"({"artifacts":[]})");
  m = decode_materialize_result(none_more.root(), small, arts);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->artifacts.size(), 2u);
}

// A reader that took the earlier batches (HostSession's sink) leaves
// `items` empty and counts them in handed_on: the limits and the numbers of
// later operations still count them.
TEST(General, BatchesHandedOnStillCountInTheLimitsAndTheNumbers) {
  Limits small = kLimits;
  small.max_operations = 3;
  auto op = [](const std::string& path, const std::string& action = "remove") {
    return R"({"action":")" + action + R"(","mode":0,"path":")" + path + "\"}";
  };
  Batched<Operation> taken;
  taken.handed_on = 2;
  auto two = parse(R"({"operations":[)" + op("c") + "," + op("d") + "]}");
  auto over = decode_operations_batch(two.root(), small, false, taken);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().kind, "max_operations");
  EXPECT_NE(over.error().detail.find("after 2 in earlier batches"), std::string::npos) << over.error().line();
  auto bad = parse("{" + kEffects + R"(,"operations":[{"action":"remove","mode":0}]})");
  auto r = decode_plan_result(bad.root(), small, false, taken);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().detail.find("operation 2"), std::string::npos) << r.error().line();
  auto one = parse("{" + kEffects + R"(,"operations":[)" + op("c") + "]}");
  r = decode_plan_result(one.root(), small, false, taken);
  ASSERT_TRUE(r.ok()) << r.error().line();
  EXPECT_EQ(r->operations.size(), 1u);  // only what was not handed on
  // Artifacts likewise (core's claim check takes each batch as it comes).
  auto art = [](const std::string& path) {
    return R"({"path":")" + path + R"(","sha256":")" + kSha + R"(","size":1})";
  };
  Batched<Artifact> claimed;
  claimed.handed_on = 2;
  auto two_arts = parse(R"({"artifacts":[)" + art("c") + "," + art("d") + "]}");
  auto arts_over = decode_artifacts_batch(two_arts.root(), small, claimed);
  ASSERT_FALSE(arts_over.ok());
  EXPECT_EQ(arts_over.error().kind, "max_operations");
  EXPECT_NE(arts_over.error().detail.find("after 2 in earlier batches"), std::string::npos) << arts_over.error().line();
  auto bad_art = parse(R"({"artifacts":[{"path":"c","size":1}]})");
  auto m = decode_materialize_result(bad_art.root(), small, claimed);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().detail.find("artifact 2"), std::string::npos) << m.error().line();
  auto one_art = parse(R"({"artifacts":[)" + art("c") + "]}");
  m = decode_materialize_result(one_art.root(), small, claimed);
  ASSERT_TRUE(m.ok()) << m.error().line();
  EXPECT_EQ(m->artifacts.size(), 1u);
}

// Core's requests refer to the lists it holds instead of copying them (the
// paths dot.materialize asks for, as views of its plan's; dot.plan's managed
// list): the same text as the params built from copies; a string array
// refuses what is not UTF-8 as any string does.
TEST(General, RequestParamsReferringToCoresListsAreTheSameText) {
  const std::vector<std::string> paths = {"a", "b/c \u00fc"};
  const std::vector<std::string_view> views(paths.begin(), paths.end());
  EXPECT_EQ(canonical(materialize_params_node(std::span<const std::string_view>(views), "/s")),
            canonical(to_node(MaterializeParams{paths, "/s"})));
  EXPECT_EQ(canonical(materialize_params_node(std::nullopt, "/s")), R"({"stage":"/s"})");
  const std::vector<std::string_view> none;
  EXPECT_EQ(canonical(materialize_params_node(std::span<const std::string_view>(none), "/s")),
            R"({"paths":[],"stage":"/s"})");
  const std::vector<std::string_view> broken = {"a\xff"};
  EXPECT_FALSE(jcs::encode(materialize_params_node(std::span<const std::string_view>(broken), "/s"),
                           jcs::Profile::Rfc8785)
                   .ok());
  EXPECT_FALSE(encode_request(2, Method::Plan, to_node(PlanParams{{"a\xff"}})).ok());
  // dot.plan's params referring to their managed list, as core sends them.
  const PlanParams managed{paths};
  EXPECT_EQ(canonical(plan_params_node(managed)), canonical(to_node(managed)));
  EXPECT_FALSE(encode_request(2, Method::Plan, plan_params_node(PlanParams{{"a\xff"}})).ok());
}

TEST(General, DeclaredDigestsAreOnWritesOnlyAndOnlyWhenNegotiated) {
  const std::string effects = R"("effects":[{"failure_policy":"required","kind":"sync","target":"managed-root"}])";
  const std::string declared = R"({"action":"write","mode":420,"path":"a","sha256":")" + kSha + R"(","size":3})";
  const std::string remove = R"({"action":"remove","mode":0,"path":"b"})";
  auto doc = parse("{" + effects + R"(,"operations":[)" + declared + "," + remove + "]}");
  auto with = decode_plan_result(doc.root(), kLimits, true);
  ASSERT_TRUE(with.ok()) << with.error().line();
  EXPECT_EQ(with->operations[0].digest, (Digest{kSha, 3}));
  EXPECT_FALSE(with->operations[1].digest.has_value());
  EXPECT_EQ(decode_plan_result(doc.root(), kLimits, false).error().kind, "unknown_field");
  auto bare = parse("{" + effects + R"(,"operations":[{"action":"write","mode":420,"path":"a"}]})");
  EXPECT_EQ(decode_plan_result(bare.root(), kLimits, true).error().kind, "missing_field");
  auto on_remove = parse("{" + effects + R"(,"operations":[{"action":"remove","mode":0,"path":"b","sha256":")" + kSha +
                         R"(","size":0}]})");
  EXPECT_EQ(decode_plan_result(on_remove.root(), kLimits, true).error().kind, "unknown_field");
  auto upper = parse("{" + effects + R"(,"operations":[{"action":"write","mode":420,"path":"a","sha256":")" +
                     std::string(64, 'A') + R"(","size":3}]})");
  EXPECT_EQ(decode_plan_result(upper.root(), kLimits, true).error().kind, "declared_digest");
  Limits small = kLimits;
  small.max_file_bytes = 2;
  EXPECT_EQ(decode_plan_result(doc.root(), small, true).error().kind, "max_file_bytes");
  // dot.materialize params: paths only when given, bounded by max_operations.
  auto mp = parse(R"({"paths":["a"],"stage":"/s"})");
  auto m = decode_materialize_params(mp.root(), kLimits);
  ASSERT_TRUE(m.ok()) << m.error().line();
  EXPECT_EQ(m->paths, (std::vector<std::string>{"a"}));
  EXPECT_EQ(canonical(to_node(*m)), R"({"paths":["a"],"stage":"/s"})");
  small.max_operations = 0;
  EXPECT_EQ(decode_materialize_params(mp.root(), small).error().kind, "max_operations");
  auto plain = parse(R"({"stage":"/s"})");
  EXPECT_FALSE(decode_materialize_params(plain.root(), kLimits)->paths.has_value());
}

struct EchoCase {
  const char* name;
  void (*mutate)(InitializeResult&);
  const char* kind;
  const char* detail;
};

class EchoErrors : public ::testing::TestWithParam<EchoCase> {};
TEST_P(EchoErrors, ArePluginIdentityErrors) {
  auto sent = initialize_params("process", kNonce, {"/a", "/b"});
  auto echo = honest_echo(sent, true);
  GetParam().mutate(echo);
  auto r = check_identity(sent, echo, "org.dot.mirror");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(code_name(r.error().code), "DOT_E_PLUGIN_IDENTITY") << r.error().line();
  EXPECT_EQ(r.error().kind, GetParam().kind) << r.error().line();
  EXPECT_NE(r.error().detail.find(GetParam().detail), std::string::npos) << r.error().line();
}

INSTANTIATE_TEST_SUITE_P(
    All, EchoErrors,
    ::testing::Values(
        EchoCase{"id", +[](InitializeResult& e) { e.id = "org.dot.hello"; }, "id", "org.dot.hello"},
        EchoCase{"profile_hello", +[](InitializeResult& e) { e.profile = "org.dot.hello/v1"; }, "profile",
                 "org.dot.hello/v1"},
        EchoCase{"protocol", +[](InitializeResult& e) { e.protocol = 2; }, "protocol", "protocol 2"},
        EchoCase{"assurance_downgraded", +[](InitializeResult& e) { e.assurance = "audit"; }, "assurance", "audit"},
        EchoCase{"nonce", +[](InitializeResult& e) { e.nonce[0] = 'b'; }, "nonce", "nonce"},
        EchoCase{"inputs_dropped", +[](InitializeResult& e) { e.inputs.pop_back(); }, "inputs", "1 inputs"},
        EchoCase{"inputs_reordered", +[](InitializeResult& e) { std::swap(e.inputs[0], e.inputs[1]); }, "inputs",
                 "differ"},
        EchoCase{"inputs_added", +[](InitializeResult& e) { e.inputs.emplace_back("/etc"); }, "inputs", "3 inputs"},
        EchoCase{"limits_raised", +[](InitializeResult& e) { e.limits.max_operations = 100001; }, "limits",
                 "limits.max_operations 100001, core sent 100000"},
        EchoCase{"limits_lowered", +[](InitializeResult& e) { e.limits.deadline_ms = 1; }, "limits",
                 "limits.deadline_ms 1, core sent 60000"},
        EchoCase{"capabilities_log_only", +[](InitializeResult& e) { e.capabilities = {"log"}; }, "capabilities",
                 "capability 0 is \"log\""},
        EchoCase{"capabilities_dropped", +[](InitializeResult& e) { e.capabilities.erase(e.capabilities.begin() + 3); },
                 "capabilities", "validate"},
        EchoCase{"capabilities_reordered",
                 +[](InitializeResult& e) { std::swap(e.capabilities[0], e.capabilities[1]); }, "capabilities",
                 "order matters"},
        EchoCase{"capabilities_log_twice", +[](InitializeResult& e) { e.capabilities.emplace_back("log"); },
                 "capabilities", "added capability \"log\" (position 5)"},
        EchoCase{"capabilities_added", +[](InitializeResult& e) { e.capabilities.back() = "exec"; }, "capabilities",
                 "added capability \"exec\""},
        EchoCase{"capabilities_log_first",
                 +[](InitializeResult& e) {
                   e.capabilities = {"log", "materialize", "plan", "post-commit-effects", "validate"};
                 },
                 "capabilities", "order matters"}),
    [](const ::testing::TestParamInfo<EchoCase>& i) { return std::string(i.param.name); });

// A member missing from the echo or added to it is a wrong echo, like a
// changed value (docs/spec/dpp-general.md: "Anything missing, reordered, added,
// changed or downgraded is DOT_E_PLUGIN_IDENTITY"); a value of the wrong JSON
// type is a shape error (DecodeErrors above).
struct EchoShapeCase {
  const char* name;
  std::string json;
  const char* kind;
  const char* detail;
};
class EchoMembers : public ::testing::TestWithParam<EchoShapeCase> {};
TEST_P(EchoMembers, MissingOrAddedArePluginIdentityErrors) {
  auto doc = parse(GetParam().json);
  auto r = decode_initialize_result(doc.root());
  ASSERT_FALSE(r.ok()) << GetParam().json;
  EXPECT_EQ(code_name(r.error().code), "DOT_E_PLUGIN_IDENTITY") << r.error().line();
  EXPECT_EQ(r.error().kind, GetParam().kind) << r.error().line();
  EXPECT_NE(r.error().detail.find(GetParam().detail), std::string::npos) << r.error().line();
}

INSTANTIATE_TEST_SUITE_P(
    All, EchoMembers,
    ::testing::Values(
        EchoShapeCase{"limits_empty", init_result("{}"), "limits", "deadline_ms"},
        EchoShapeCase{"limit_missing", init_result(limits_with(",\"max_total_bytes\":1073741824", "")), "limits",
                      "max_total_bytes"},
        EchoShapeCase{"limit_added", init_result(limits_with("{", "{\"max_hooks\":0,")), "limits", "max_hooks"},
        EchoShapeCase{"limits_missing",
                      "{\"assurance\":\"audit\",\"capabilities\":[],\"id\":\"x\",\"inputs\":[],\"nonce\":\"n\","
                      "\"profile\":\"p\",\"protocol\":1}",
                      "limits", "\"limits\""},
        EchoShapeCase{"inputs_missing",
                      "{\"assurance\":\"audit\",\"capabilities\":[],\"id\":\"x\",\"limits\":" +
                          std::string(kLimitsJson) + ",\"nonce\":\"n\",\"profile\":\"p\",\"protocol\":1}",
                      "inputs", "\"inputs\""},
        EchoShapeCase{"nonce_missing",
                      "{\"assurance\":\"audit\",\"capabilities\":[],\"id\":\"x\",\"inputs\":[],\"limits\":" +
                          std::string(kLimitsJson) + ",\"profile\":\"p\",\"protocol\":1}",
                      "nonce", "\"nonce\""},
        EchoShapeCase{"member_added", init_result(kLimitsJson, "\"log\":true,"), "echo", "\"log\""}),
    [](const ::testing::TestParamInfo<EchoShapeCase>& i) { return std::string(i.param.name); });

TEST(General, RepliesAreResultsErrorsOrNotifications) {
  auto doc = parse("{\"id\":2,\"jsonrpc\":\"2.0\",\"result\":{\"x\":1}}");
  auto r = decode_reply(doc, 2, Method::Plan);
  ASSERT_TRUE(r.ok()) << r.error().line();
  EXPECT_EQ(r->kind, Reply::Kind::Result);
  EXPECT_TRUE(r->result.is_object());

  doc = parse(
      "{\"error\":{\"code\":-32601,\"data\":{\"b\":1, \"a\":[true]},\"message\":\"no such method\"},"
      "\"id\":3,\"jsonrpc\":\"2.0\"}");
  r = decode_reply(doc, 3, Method::Materialize);
  ASSERT_TRUE(r.ok()) << r.error().line();
  EXPECT_EQ(r->kind, Reply::Kind::Error);
  EXPECT_EQ(r->error.code, -32601);
  EXPECT_EQ(r->error.message, "no such method");
  EXPECT_EQ(r->error.data, std::optional<std::string>("{\"a\":[true],\"b\":1}"));

  doc = parse("{\"jsonrpc\":\"2.0\",\"method\":\"dot.log\",\"params\":{\"level\":\"info\",\"message\":\"m\"}}");
  r = decode_reply(doc, 2, Method::Plan);
  ASSERT_TRUE(r.ok()) << r.error().line();
  EXPECT_EQ(r->kind, Reply::Kind::Notification);
  EXPECT_EQ(r->method, "dot.log");
  EXPECT_EQ(*decode_log_params(r->params), (LogParams{"info", "m"}));
}

class ReplyErrors : public ::testing::TestWithParam<Bad> {};
TEST_P(ReplyErrors, Kind) {
  auto doc = parse(GetParam().json);
  auto r = decode_reply(doc, 2, Method::Plan);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(code_name(r.error().code), code_name(GetParam().code));
  EXPECT_EQ(r.error().kind, GetParam().kind) << r.error().line();
}
INSTANTIATE_TEST_SUITE_P(
    All, ReplyErrors,
    ::testing::Values(
        Bad{"batch", "[{\"id\":2,\"jsonrpc\":\"2.0\",\"result\":{}}]", Code::Protocol, "batch"},
        Bad{"not_object", "7", Code::Protocol, "not_object"},
        Bad{"id_mismatch", "{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{}}", Code::Protocol, "id_mismatch"},
        Bad{"error_for_null", "{\"error\":{\"code\":-32700,\"message\":\"m\"},\"id\":null,\"jsonrpc\":\"2.0\"}",
            Code::Protocol, "id"},
        Bad{"result_and_error", "{\"error\":{\"code\":1,\"message\":\"m\"},\"id\":2,\"jsonrpc\":\"2.0\",\"result\":{}}",
            Code::Protocol, "unknown_field"},
        Bad{"error_not_object", "{\"error\":\"no\",\"id\":2,\"jsonrpc\":\"2.0\"}", Code::Protocol, "not_object"},
        Bad{"request_from_plugin", "{\"id\":2,\"jsonrpc\":\"2.0\",\"method\":\"dot.log\",\"params\":{}}",
            Code::Protocol, "method_in_response"},
        Bad{"notification_with_result", "{\"jsonrpc\":\"2.0\",\"method\":\"dot.log\",\"result\":{}}", Code::Protocol,
            "method_in_response"},
        Bad{"notification_1_0", "{\"jsonrpc\":\"1.0\",\"method\":\"dot.log\",\"params\":{}}", Code::Protocol,
            "jsonrpc_version"},
        Bad{"notification_no_version", "{\"method\":\"dot.log\",\"params\":{}}", Code::Protocol, "missing_field"},
        Bad{"notification_no_params", "{\"jsonrpc\":\"2.0\",\"method\":\"dot.log\"}", Code::Protocol, "missing_field"},
        Bad{"notification_params_only", "{\"jsonrpc\":\"2.0\",\"params\":{}}", Code::Protocol, "missing_field"},
        Bad{"notification_method_number", "{\"jsonrpc\":\"2.0\",\"method\":7,\"params\":{}}", Code::Protocol,
            "wrong_type"},
        Bad{"unknown_member", "{\"id\":2,\"jsonrpc\":\"2.0\",\"result\":{},\"x\":0}", Code::Protocol, "unknown_field"},
        Bad{"no_result", "{\"id\":2,\"jsonrpc\":\"2.0\"}", Code::Protocol, "missing_field"}),
    [](const ::testing::TestParamInfo<Bad>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace dot::dpp::general

namespace dot::dpp {
namespace {

// Hands out the bytes it holds and records the largest read it was asked for.
class RecordingSource final : public ByteSource {
 public:
  explicit RecordingSource(std::string bytes) : bytes_(std::move(bytes)) {}
  Result<std::size_t> read(char* buf, std::size_t max) override {
    largest = std::max(largest, max);
    std::size_t n = std::min(max, bytes_.size() - pos_);
    std::memcpy(buf, bytes_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  std::size_t largest = 0;

 private:
  std::string bytes_;
  std::size_t pos_ = 0;
};

TEST(GeneralFrames, ABodyBufferFollowsTheBytesThatArriveNotTheAnnouncedLength) {
  // 16 MiB announced, ten bytes sent: the reader never asks for (so never
  // holds room for) more than 64 KiB, and reports the early end.
  RecordingSource src("Content-Length: 16777216\r\n\r\n0123456789");
  FrameReader reader(src, general::kLimits.max_frame_bytes);
  auto f = reader.next();
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().kind, "early_eof");
  EXPECT_LE(src.largest, kMaxBody);
}

TEST(GeneralFrames, TheNegotiatedLimitIsEnforcedAtTheFirstDigitThatBreaksIt) {
  MemorySource ok("Content-Length: 16777216\r\n\r\n");
  FrameReader r1(ok, general::kLimits.max_frame_bytes);
  EXPECT_EQ(r1.next().error().kind, "early_eof");  // the length itself was fine
  MemorySource over("Content-Length: 16777217\r\n\r\n");
  FrameReader r2(over, general::kLimits.max_frame_bytes);
  auto e = r2.next().error();
  EXPECT_EQ(e.kind, "length");
  EXPECT_EQ(e.offset, std::optional<std::uint64_t>(23));  // the last digit
  EXPECT_NE(e.detail.find("16777216"), std::string::npos) << e.line();
}

}  // namespace
}  // namespace dot::dpp
