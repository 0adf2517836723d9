// The general-profile plugin runtime (dot/dpp/runtime.h) driven in process:
// the host's side is a byte string of request frames, the plugin's answers
// are read back frame by frame. Every answer of docs/spec/dpp-general.md
// ("Error responses") is produced here, and the runtime keeps reading after
// each of them.
#include <gtest/gtest.h>

#include <optional>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/test_error_kinds.h"
#include "dot/base/fd.h"
#include "dot/base/sha256.h"
#include "dot/base/utf8.h"
#include "dot/dpp/body.h"
#include "dot/dpp/runtime.h"
#include "drive.h"

namespace dot::dpp::general {
namespace {

using dot::dpp::testing::TempStage;

const std::string kNonce(64, 'a');

std::string frame(std::string_view body) {
  return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

std::string request(std::uint64_t id, Method m, const jcs::Node& params) {
  return frame(*encode_request(id, m, params));
}

std::string init_request(std::uint64_t id = 1, bool offer_log = true, bool offer_batches = true) {
  auto p = initialize_params("audit", kNonce, {"/in"});
  if (!offer_log) std::erase(p.capabilities, std::string(kLogCapability));
  if (!offer_batches) std::erase(p.capabilities, std::string(kBatchesCapability));
  return request(id, Method::Initialize, to_node(p));
}

class TestPlugin : public Plugin {
 public:
  std::string id() const override { return "org.dot.test"; }
  bool wants_log() const override { return want_log; }
  Result<std::vector<Operation>> plan(Context& ctx, const std::vector<std::string>& managed) override {
    seen_managed = managed;
    if (log_in_plan) log_status = ctx.log("info", "planning");
    if (fail_plan) return make_error(test::ErrorKind::Input, "cannot read the input");
    return std::vector<Operation>{{"write", 420, "a/b.txt"}};
  }
  Result<std::vector<Artifact>> materialize(Context&, const std::string& stage) override {
    auto a = write_staged_file(stage, "a/b.txt", "hello\n");
    if (!a.ok()) return a.error();
    return std::vector<Artifact>{*a};
  }
  bool want_log = false, log_in_plan = false, fail_plan = false;
  std::vector<std::string> seen_managed;
  Status log_status;
};

struct Answer {
  std::string body;
  std::unique_ptr<json::Document> doc;
  json::Value root() const { return doc->root(); }
  bool is_error() const { return root().find("error").has_value(); }
  std::int64_t code() const { return std::stoll(std::string(root().find("error")->find("code")->number_text())); }
  std::string id() const {
    auto v = root().find("id");
    return v->is_null() ? "null" : std::string(v->number_text());
  }
};

struct Run {
  int exit = -1;
  std::vector<Answer> answers;
  std::string stderr_text;
};

Run run(Plugin& plugin, const std::string& input) {
  Run r;
  MemorySource in(input, {7});  // split reads anywhere
  StringSink out, err;
  r.exit = serve(plugin, in, out, err);
  r.stderr_text = err.out;
  MemorySource back(out.out);
  FrameReader reader(back, kLimits.max_frame_bytes);
  for (;;) {
    auto f = reader.next();
    EXPECT_TRUE(f.ok()) << f.error().line();
    if (!f.ok() || !f->has_value()) break;
    Answer a;
    a.body = (*f)->body;
    auto d = parse_body(a.body, 0, kLimits.max_frame_bytes);
    EXPECT_TRUE(d.ok());
    a.doc = std::make_unique<json::Document>(std::move(d).value());
    r.answers.push_back(std::move(a));
  }
  return r;
}

std::string honest_session(const std::string& stage) {
  return init_request() + request(2, Method::Plan, to_node(PlanParams{{"old"}})) +
         request(3, Method::Materialize, dpp::to_node(dpp::MaterializeParams{stage})) +
         request(4, Method::Validate, jcs::Node::object()) + request(5, Method::Shutdown, jcs::Node::object());
}

TEST(Runtime, AnsweringAWholeSessionExitsZero) {
  TempStage stage;
  TestPlugin p;
  p.want_log = true;
  p.log_in_plan = true;
  auto r = run(p, honest_session(stage.path()));
  EXPECT_EQ(r.exit, 0) << r.stderr_text;
  ASSERT_EQ(r.answers.size(), 6u);  // five answers and one dot.log
  auto sent = initialize_params("audit", kNonce, {"/in"});
  auto echo = decode_initialize_result(*r.answers[0].root().find("result"));
  ASSERT_TRUE(echo.ok()) << echo.error().line();
  auto negotiated = check_identity(sent, *echo, "org.dot.test");
  ASSERT_TRUE(negotiated.ok()) << negotiated.error().line();
  EXPECT_TRUE(negotiated->log);
  EXPECT_EQ(r.answers[1].body,
            "{\"jsonrpc\":\"2.0\",\"method\":\"dot.log\",\"params\":{\"level\":\"info\",\"message\":\"planning\"}}");
  EXPECT_TRUE(p.log_status.ok());
  EXPECT_EQ(p.seen_managed, std::vector<std::string>{"old"});
  auto plan = decode_plan_result(*r.answers[2].root().find("result"), kLimits);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->operations, (std::vector<Operation>{{"write", 420, "a/b.txt"}}));
  EXPECT_EQ(plan->effects.size(), 1u);
  auto arts = decode_materialize_result(*r.answers[3].root().find("result"), kLimits);
  ASSERT_TRUE(arts.ok());
  EXPECT_EQ(arts->artifacts, (std::vector<Artifact>{{"a/b.txt", sha256_hex("hello\n"), 6}}));
  auto staged = read_file(stage.path() + "/a/b.txt", 100);
  EXPECT_EQ(staged.ok() ? *staged : "", "hello\n");
  struct stat st {};
  ASSERT_EQ(::lstat((stage.path() + "/a").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

// 2,050 writes of one byte: two batches of 1024 and a result of 2.
class ManyPlugin : public Plugin {
 public:
  static constexpr std::size_t kWrites = 2050;
  static std::string path(std::size_t i) { return fmt::format("f{:04}", i); }
  std::string id() const override { return "org.dot.test"; }
  Result<std::vector<Operation>> plan(Context&, const std::vector<std::string>&) override {
    std::vector<Operation> ops;
    for (std::size_t i = 0; i < kWrites; ++i) ops.push_back({"write", 420, path(i)});
    return ops;
  }
  Result<std::vector<Artifact>> materialize(Context& ctx, const std::string& stage) override {
    std::vector<Artifact> out;
    for (const std::string& p : ctx.paths_to_stage()) {
      DOT_ASSIGN_OR_RETURN(Artifact a, write_staged_file(stage, p, "x"));
      out.push_back(std::move(a));
    }
    return out;
  }
};

// The same plan handed on one operation at a time (plan_each) and its
// stage one artifact at a time (materialize_each): the same frames. Neither
// plan() nor materialize() is ever asked.
class StreamingPlugin : public ManyPlugin {
 public:
  Result<std::vector<Operation>> plan(Context&, const std::vector<std::string>&) override {
    return make_error(test::ErrorKind::Input, "plan() called instead of plan_each()");
  }
  Status plan_each(Context&, const std::vector<std::string>&, OperationOut& out) override {
    for (std::size_t i = 0; i < kWrites; ++i) DOT_TRY(out.add({"write", 420, path(i)}));
    return {};
  }
  Result<std::vector<Artifact>> materialize(Context&, const std::string&) override {
    return make_error(test::ErrorKind::Input, "materialize() called instead of materialize_each()");
  }
  Status materialize_each(Context& ctx, const std::string& stage, ArtifactOut& out) override {
    for (const std::string& p : ctx.paths_to_stage()) {
      DOT_ASSIGN_OR_RETURN(Artifact a, write_staged_file(stage, p, "x"));
      DOT_TRY(out.add(std::move(a)));
    }
    return {};
  }
};

void expect_long_lists_in_batches(Plugin& plugin) {
  TempStage stage;
  const std::string input = honest_session(stage.path());  // the source reads it in place
  MemorySource in(input, {7});
  StringSink out, err;
  ASSERT_EQ(serve(plugin, in, out, err), 0) << err.out;
  MemorySource back(out.out);
  FrameReader reader(back, kLimits.max_frame_bytes);
  std::vector<std::string> methods;  // each frame's method, "" for a response
  Batched<Operation> ops;
  Batched<Artifact> arts;
  std::optional<PlanResult> plan;
  std::optional<MaterializeResult> staged;
  for (std::uint64_t expected = 1;;) {
    auto f = reader.next();
    ASSERT_TRUE(f.ok()) << f.error().line();
    if (!f->has_value()) break;
    auto doc = parse_body((*f)->body, 0, kLimits.max_frame_bytes);
    ASSERT_TRUE(doc.ok());
    auto reply = decode_reply(*doc, expected, static_cast<Method>(expected));
    ASSERT_TRUE(reply.ok()) << reply.error().line();
    if (reply->kind == Reply::Kind::Notification) {
      methods.push_back(reply->method);
      auto st = reply->method == kOperationsMethod ? decode_operations_batch(reply->params, kLimits, false, ops)
                                                   : decode_artifacts_batch(reply->params, kLimits, arts);
      ASSERT_TRUE(st.ok()) << st.error().line();
      continue;
    }
    methods.emplace_back();
    if (expected == 2) {
      auto r = decode_plan_result(reply->result, kLimits, false, std::move(ops));
      ASSERT_TRUE(r.ok()) << r.error().line();
      plan = std::move(*r);
    } else if (expected == 3) {
      auto r = decode_materialize_result(reply->result, kLimits, std::move(arts));
      ASSERT_TRUE(r.ok()) << r.error().line();
      staged = std::move(*r);
    }
    ++expected;
  }
  EXPECT_EQ(methods, (std::vector<std::string>{"", "dot.operations", "dot.operations", "", "dot.artifacts",
                                               "dot.artifacts", "", "", ""}));
  ASSERT_TRUE(plan && staged);
  ASSERT_EQ(plan->operations.size(), ManyPlugin::kWrites);
  ASSERT_EQ(staged->artifacts.size(), ManyPlugin::kWrites);
  for (std::size_t i = 0; i < ManyPlugin::kWrites; ++i) {
    EXPECT_EQ(plan->operations[i].path, ManyPlugin::path(i));
    EXPECT_EQ(staged->artifacts[i].path, ManyPlugin::path(i));
  }
  // Offered without batches, the same plugin answers with one result each.
  auto sent = initialize_params("audit", kNonce, {"/in"});
  std::erase(sent.capabilities, std::string(kBatchesCapability));
  TempStage stage2;
  const std::string input2 = request(1, Method::Initialize, to_node(sent)) +
                             request(2, Method::Plan, to_node(PlanParams{})) +
                             request(3, Method::Materialize, dpp::to_node(dpp::MaterializeParams{stage2.path()}));
  MemorySource in2(input2, {7});
  StringSink out2, err2;
  EXPECT_EQ(serve(plugin, in2, out2, err2), 1);  // no dot.shutdown
  EXPECT_NE(out2.out.find("\"path\":\"f2049\""), std::string::npos);
  EXPECT_EQ(out2.out.find("dot.operations"), std::string::npos);
  EXPECT_EQ(out2.out.find("dot.artifacts"), std::string::npos);
}

TEST(Runtime, WithBatchesOfferedALongListGoesOutInBatchesTheHostAssembles) {
  ManyPlugin plugin;
  expect_long_lists_in_batches(plugin);
}

TEST(Runtime, ListsHandedOnOneByOneGoOutInTheSameBatches) {
  StreamingPlugin plugin;
  expect_long_lists_in_batches(plugin);
}

// A write without the digest the negotiation requires, handed on: the
// runtime's refusal is the answer, even when the plugin carries on past it.
class UndeclaredPlugin : public TestPlugin {
 public:
  bool declares_digests() const override { return true; }
  Status plan_each(Context&, const std::vector<std::string>&, OperationOut& out) override {
    added = out.add({"write", 420, "a"});
    after = out.add({"remove", 0, "b"});
    return {};
  }
  Status added, after;
};

// dot.initialize, then dot.plan: answered with error `code` saying `says`.
void expect_plan_answered_with(Plugin& plugin, std::int64_t code, std::string_view says) {
  auto r = run(plugin, init_request() + request(2, Method::Plan, to_node(PlanParams{})));
  ASSERT_EQ(r.answers.size(), 2u);
  ASSERT_TRUE(r.answers[1].is_error()) << r.answers[1].body;
  EXPECT_EQ(r.answers[1].code(), code);
  EXPECT_NE(r.answers[1].body.find(says), std::string::npos) << r.answers[1].body;
}

TEST(Runtime, AnOperationTheRuntimeRefusesOnTheWayIsAnsweredAsAnInternalError) {
  UndeclaredPlugin plugin;
  expect_plan_answered_with(plugin, -32603, "declares none");
  EXPECT_EQ(plugin.added.error().kind, "declared_digest");
  EXPECT_EQ(plugin.after.error().kind, "declared_digest");  // the first failure refuses the rest
}

class PlanlessPlugin : public Plugin {
 public:
  std::string id() const override { return "org.dot.test"; }
  Result<std::vector<Artifact>> materialize(Context&, const std::string&) override { return std::vector<Artifact>{}; }
};

TEST(Runtime, APluginWithNeitherPlanNorPlanEachIsAnsweredWithAPluginError) {
  PlanlessPlugin plugin;
  expect_plan_answered_with(plugin, -32000, "implements neither plan nor plan_each");
}

class StagelessPlugin : public Plugin {
 public:
  std::string id() const override { return "org.dot.test"; }
  Result<std::vector<Operation>> plan(Context&, const std::vector<std::string>&) override {
    return std::vector<Operation>{{"write", 420, "a"}};
  }
};

TEST(Runtime, APluginWithNeitherMaterializeNorMaterializeEachIsAnsweredWithAPluginError) {
  TempStage stage;
  StagelessPlugin plugin;
  auto r = run(plugin, honest_session(stage.path()));
  ASSERT_GE(r.answers.size(), 3u);
  EXPECT_FALSE(r.answers[1].is_error()) << r.answers[1].body;
  ASSERT_TRUE(r.answers[2].is_error()) << r.answers[2].body;
  EXPECT_EQ(r.answers[2].code(), -32000);
  EXPECT_NE(r.answers[2].body.find("implements neither materialize nor materialize_each"), std::string::npos)
      << r.answers[2].body;
}

TEST(Runtime, WithoutLogOfferedOrWantedNothingIsLogged) {
  TempStage stage;
  TestPlugin p;
  p.log_in_plan = true;  // wants_log false
  auto r = run(p, honest_session(stage.path()));
  EXPECT_EQ(r.exit, 0);
  ASSERT_EQ(r.answers.size(), 5u);
  EXPECT_FALSE(p.log_status.ok());
  // The first four and "batches", which the runtime takes whenever offered.
  EXPECT_EQ(r.answers[0].root().find("result")->find("capabilities")->size(), 5u);

  TestPlugin q;
  q.want_log = true;
  q.log_in_plan = true;
  r = run(q, init_request(1, false) + request(2, Method::Plan, to_node(PlanParams{})));
  EXPECT_EQ(r.exit, 1);  // EOF before shutdown
  ASSERT_EQ(r.answers.size(), 2u);
  EXPECT_FALSE(q.log_status.ok());
}

struct Case {
  const char* name;
  std::string request;  // after a successful dot.initialize when `after_init`
  bool after_init;
  std::int64_t code;
  const char* id;
};

class Answers : public ::testing::TestWithParam<Case> {};

TEST_P(Answers, EachRefusalIsAnsweredAndTheRuntimeKeepsReading) {
  const Case& c = GetParam();
  TestPlugin p;
  TempStage stage;
  // The refused request, then a whole honest session: the runtime must
  // still answer everything and exit 0.
  std::string input = c.after_init ? init_request() + c.request : c.request;
  std::string rest =
      c.after_init ? honest_session(stage.path()).substr(init_request().size()) : honest_session(stage.path());
  auto r = run(p, input + rest);
  EXPECT_EQ(r.exit, 0) << r.stderr_text;
  std::size_t i = c.after_init ? 1 : 0;
  ASSERT_GT(r.answers.size(), i);
  const Answer& a = r.answers[i];
  ASSERT_TRUE(a.is_error()) << a.body;
  EXPECT_EQ(a.code(), c.code) << a.body;
  EXPECT_EQ(a.id(), c.id) << a.body;
  EXPECT_EQ(r.answers.size(), 6u);
  for (std::size_t k = 0; k < r.answers.size(); ++k)
    if (k != i) {
      EXPECT_FALSE(r.answers[k].is_error()) << r.answers[k].body;
    }
}

std::string with_limits(std::string_view from, std::string_view to) {
  std::string s = *encode_request(1, Method::Initialize, to_node(initialize_params("audit", kNonce, {})));
  s.replace(s.find(from), from.size(), to);
  return frame(s);
}

INSTANTIATE_TEST_SUITE_P(
    All, Answers,
    ::testing::Values(
        Case{"not_json", frame("{\"id\":1,"), false, kParseError, "null"},
        Case{"not_utf8", frame("{\"id\":\"\xff\"}"), false, kParseError, "null"},
        Case{"duplicate_key", frame("{\"id\":1,\"id\":1}"), false, kParseError, "null"},
        Case{"two_values", frame("{} {}"), false, kParseError, "null"},
        Case{"array", frame("[{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"dot.initialize\",\"params\":{}}]"), false,
             kInvalidRequest, "null"},
        Case{"number", frame("1"), false, kInvalidRequest, "null"},
        Case{"notification", frame("{\"jsonrpc\":\"2.0\",\"method\":\"dot.initialize\",\"params\":{}}"), false,
             kInvalidRequest, "null"},
        Case{"id_zero", frame("{\"id\":0,\"jsonrpc\":\"2.0\",\"method\":\"dot.initialize\",\"params\":{}}"), false,
             kInvalidRequest, "null"},
        Case{"id_string", frame("{\"id\":\"1\",\"jsonrpc\":\"2.0\",\"method\":\"dot.initialize\",\"params\":{}}"),
             false, kInvalidRequest, "null"},
        Case{"jsonrpc_1_0", frame("{\"id\":1,\"jsonrpc\":\"1.0\",\"method\":\"dot.initialize\",\"params\":{}}"), false,
             kInvalidRequest, "1"},
        Case{"no_jsonrpc", frame("{\"id\":1,\"method\":\"dot.initialize\",\"params\":{}}"), false, kInvalidRequest,
             "1"},
        Case{"method_number", frame("{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":1,\"params\":{}}"), false,
             kInvalidRequest, "1"},
        Case{"unknown_member",
             frame("{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"dot.initialize\",\"params\":{},\"x\":1}"), false,
             kInvalidRequest, "1"},
        Case{"unknown_method", frame("{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"dot.exec\",\"params\":{}}"), false,
             kMethodNotFound, "1"},
        Case{"plan_first", frame("{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"dot.plan\",\"params\":{\"managed\":[]}}"),
             false, kMethodNotFound, "1"},
        Case{"initialize_twice", init_request(2), true, kMethodNotFound, "2"},
        Case{"id_out_of_order", request(3, Method::Plan, to_node(PlanParams{})), true, kInvalidRequest, "3"},
        Case{"no_params", frame("{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"dot.initialize\"}"), false, kInvalidParams,
             "1"},
        Case{"hello_params", request(1, Method::Initialize, dpp::to_node(hello::initialize_params("audit", kNonce))),
             false, kInvalidParams, "1"},
        Case{"wrong_profile", with_limits("org.dot.dpp/v1", "org.dot.dpp/v2"), false, kInvalidParams, "1"},
        Case{"wrong_protocol", with_limits("\"protocol\":1", "\"protocol\":2"), false, kInvalidParams, "1"},
        Case{"limits_changed", with_limits("\"max_operations\":100000", "\"max_operations\":100001"), false,
             kInvalidParams, "1"},
        Case{"limits_missing_one", with_limits("\"max_operations\":100000,", ""), false, kInvalidParams, "1"},
        Case{"limits_unknown", with_limits("\"max_operations\":100000,", "\"max_operations\":100000,\"max_hooks\":1,"),
             false, kInvalidParams, "1"},
        Case{"inputs_missing", with_limits("\"inputs\":[],", ""), false, kInvalidParams, "1"},
        Case{"capabilities_reordered", with_limits("\"materialize\",\"plan\"", "\"plan\",\"materialize\""), false,
             kInvalidParams, "1"},
        Case{"assurance_unknown", with_limits("\"audit\"", "\"none\""), false, kInvalidParams, "1"},
        Case{"nonce_short", with_limits(std::string(64, 'a'), "aa"), false, kInvalidParams, "1"},
        Case{"plan_params_unknown",
             frame("{\"id\":2,\"jsonrpc\":\"2.0\",\"method\":\"dot.plan\",\"params\":{\"managed\":[],\"x\":0}}"), true,
             kInvalidParams, "2"},
        Case{"plan_params_hello", request(2, Method::Plan, jcs::Node::object()), true, kInvalidParams, "2"}),
    [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

TEST(Runtime, AHandlerErrorIsAnsweredAsAPluginDefinedError) {
  TestPlugin p;
  p.fail_plan = true;
  auto r = run(p, init_request() + request(2, Method::Plan, to_node(PlanParams{})));
  EXPECT_EQ(r.exit, 1);
  ASSERT_EQ(r.answers.size(), 2u);
  ASSERT_TRUE(r.answers[1].is_error());
  EXPECT_EQ(r.answers[1].code(), -32000);
  EXPECT_EQ(r.answers[1].id(), "2");
  auto msg = r.answers[1].root().find("error")->find("message")->as_string();
  EXPECT_NE(msg.find("cannot read the input"), std::string::npos) << msg;
}

TEST(Runtime, AnErrorMessageIsValidUtf8AndBoundedWhateverTheHandlerSaid) {
  class Noisy : public TestPlugin {
   public:
    Result<std::vector<Operation>> plan(Context&, const std::vector<std::string>&) override {
      // Invalid UTF-8 first, then a multi-byte character straddling the
      // 4096-byte bound of the message.
      return make_error(test::ErrorKind::Input, "\xff\xfe " + std::string(5000, '\xc3') + "x");
    }
  } p;
  auto r = run(p, init_request() + request(2, Method::Plan, to_node(PlanParams{})));
  ASSERT_EQ(r.answers.size(), 2u);
  ASSERT_TRUE(r.answers[1].is_error()) << r.answers[1].body;
  auto err = decode_error_object(*r.answers[1].root().find("error"));
  ASSERT_TRUE(err.ok()) << err.error().line();  // the host's own decoder accepts it
  EXPECT_EQ(err->code, -32000);
  EXPECT_LE(err->message.size(), kMaxErrorMessageBytes);
  EXPECT_GT(err->message.size(), kMaxErrorMessageBytes - 3);
  EXPECT_EQ(utf8_valid_prefix(err->message), err->message.size());
}

TEST(Runtime, AResultThatCannotBeSentIsAnsweredAsAnInternalErrorAndReadingGoesOn) {
  class Broken : public TestPlugin {
   public:
    Result<std::vector<Operation>> plan(Context&, const std::vector<std::string>&) override {
      if (calls++ == 0) return std::vector<Operation>{{"write", 420, "bad\xff"}};
      // Over max_frame_bytes once encoded.
      return std::vector<Operation>(kLimits.max_frame_bytes / 40, Operation{"write", 420, "aaaaaaaaaa"});
    }
    int calls = 0;
  } p;
  auto plan2 = request(2, Method::Plan, to_node(PlanParams{}));
  // Without batches: with them a list that long goes out in parts.
  auto r = run(p, init_request(1, true, false) + plan2 + plan2);
  EXPECT_EQ(r.exit, 1);  // no dot.shutdown
  ASSERT_EQ(r.answers.size(), 3u);
  for (std::size_t i : {1u, 2u}) {
    ASSERT_TRUE(r.answers[i].is_error()) << r.answers[i].body.substr(0, 200);
    EXPECT_EQ(r.answers[i].code(), -32603);
    EXPECT_EQ(r.answers[i].id(), "2");
  }
  EXPECT_EQ(p.calls, 2);
}

TEST(Runtime, AFramingViolationEndsItWithoutAnotherByte) {
  TestPlugin p;
  auto r = run(p, init_request() + "Content-Length: 016\r\n\r\n{}");
  EXPECT_EQ(r.exit, 1);
  EXPECT_EQ(r.answers.size(), 1u);  // the echo only
  EXPECT_NE(r.stderr_text.find("DOT_E_PROTOCOL: length"), std::string::npos) << r.stderr_text;
  TestPlugin q;
  auto big = run(q, "Content-Length: 16777217\r\n\r\n");
  EXPECT_EQ(big.exit, 1);
  EXPECT_TRUE(big.answers.empty());
}

TEST(Runtime, EndOfInputBeforeShutdownIsExitOne) {
  TestPlugin p;
  EXPECT_EQ(run(p, "").exit, 1);
  EXPECT_EQ(run(p, init_request()).exit, 1);
}

TEST(Runtime, LogIsRefusedPastItsLimits) {
  class Chatty : public TestPlugin {
   public:
    Status initialize(Context& ctx, const InitializeParams&) override { return ctx.log("debug", "during initialize"); }
    Result<std::vector<Operation>> plan(Context& ctx, const std::vector<std::string>&) override {
      for (int i = 0; i < 999; ++i)
        if (!ctx.log("debug", "x").ok()) return make_error(test::ErrorKind::T, "log refused early");
      over = ctx.log("debug", "1001");
      bad_level = ctx.log("fatal", "x");
      big = ctx.log("info", std::string(4097, 'x'));
      return std::vector<Operation>{};
    }
    Status over, bad_level, big;
  } p;
  p.want_log = true;
  auto r = run(p, init_request() + request(2, Method::Plan, to_node(PlanParams{})));
  // The log during initialize, the echo, 999 logs, the plan: 1000 logs in all.
  ASSERT_EQ(r.answers.size(), 1u + 1u + 999u + 1u);
  EXPECT_FALSE(r.answers.back().is_error()) << r.answers.back().body;
  EXPECT_FALSE(p.over.ok());
  EXPECT_EQ(p.over.error().kind, "log_limit");
  EXPECT_EQ(p.bad_level.error().kind, "log_level");
  EXPECT_EQ(p.big.error().kind, "log_message");
}

TEST(Runtime, StagedFilesNeverFollowASymlink) {
  TempStage stage;
  ASSERT_EQ(::symlink("/tmp", (stage.path() + "/a").c_str()), 0);
  auto a = write_staged_file(stage.path(), "a/b.txt", "x");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().code, Code::PathEscape) << a.error().line();
  struct stat st {};
  EXPECT_NE(::lstat("/tmp/b.txt", &st), 0);  // nothing written through the link
  for (const char* bad : {"../x", "/etc/x", "c//d", "c/./d", ""}) {
    auto r = write_staged_file(stage.path(), bad, "x");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, Code::PathEscape) << bad;
  }
  EXPECT_TRUE(write_staged_file(stage.path(), "c/d/e", "").ok());
  EXPECT_FALSE(write_staged_file(stage.path(), "c/d/e", "").ok());  // exclusive
}

TEST(Runtime, AHandlersInvalidParamsIsAnsweredAsInvalidParams) {
  class Picky : public TestPlugin {
   public:
    Status initialize(Context&, const InitializeParams& p) override {
      if (p.inputs.size() != 2) return invalid_params("this plugin takes two inputs");
      return {};
    }
  } p;
  auto r = run(p, init_request() + init_request());
  ASSERT_EQ(r.answers.size(), 2u);  // answered, and reading went on
  for (const auto& a : r.answers) {
    ASSERT_TRUE(a.is_error()) << a.body;
    EXPECT_EQ(a.code(), -32602);
    EXPECT_EQ(a.id(), "1");
    auto msg = a.root().find("error")->find("message")->as_string();
    EXPECT_EQ(msg, "Invalid params: this plugin takes two inputs");
  }
}

TEST(Runtime, CopyStagedFileStreamsAnyLengthAndRefusesMoreThanItsLimit) {
  TempStage stage, src;
  std::string bytes;
  for (int i = 0; bytes.size() < 200 * 1024 + 17; ++i) bytes += std::to_string(i) + ",";
  const std::string source = src.path() + "/source";
  ASSERT_TRUE(write_all(UniqueFd(::open(source.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600)).get(), bytes).ok());
  auto copy = [&](std::string_view path, std::uint64_t max) {
    UniqueFd fd(::open(source.c_str(), O_RDONLY | O_CLOEXEC));
    return copy_staged_file(stage.path(), path, fd.get(), max);
  };
  auto a = copy("d/e/exact", bytes.size());
  ASSERT_TRUE(a.ok()) << a.error().line();
  EXPECT_EQ(*a, (Artifact{"d/e/exact", sha256_hex(bytes), bytes.size()}));
  auto staged = read_file(stage.path() + "/d/e/exact", 1 << 20);
  EXPECT_EQ(staged.ok() ? *staged : "", bytes);
  auto over = copy("d/e/short", bytes.size() - 1);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().kind, "too_large") << over.error().line();
  auto empty = copy("empty", 0);
  ASSERT_FALSE(empty.ok());  // 0 allowed, one byte is more
  ASSERT_EQ(::symlink("/tmp", (stage.path() + "/link").c_str()), 0);
  auto through = copy("link/x", bytes.size());
  ASSERT_FALSE(through.ok());
  EXPECT_EQ(through.error().code, Code::PathEscape) << through.error().line();
}

}  // namespace
}  // namespace dot::dpp::general
