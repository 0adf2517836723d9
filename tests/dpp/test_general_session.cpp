// The host session in the general profile, against dpp-scripted: the peer
// writes exactly the bytes each test gives for each request, so every rule
// (notifications, log negotiation and limits, error responses, the
// negotiated frame, stdout, stderr and deadline limits) is probed at its
// boundary: the last accepted value and the first refused one.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <fstream>
#include <unistd.h>

#include "drive.h"
#include "dot/base/fd.h"
#include "dot/base/process.h"
#include "dot/dpp/general.h"

namespace dot::dpp {
namespace {

using testing::bin;
using testing::TempStage;

const std::string kNonce(64, 'a');
constexpr std::string_view kId = "org.dot.test";

std::string frame(std::string_view body) {
  return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

// A result body padded with spaces (after the value) to exactly `size` bytes.
std::string padded(std::string body, std::size_t size) {
  if (body.size() < size) body.append(size - body.size(), ' ');
  return body;
}

general::InitializeParams sent(const general::Limits& limits) {
  auto p = general::initialize_params("audit", kNonce, {"/in"});
  p.limits = limits;
  return p;
}

std::string echo_body(const general::Limits& limits, bool log) {
  auto p = sent(limits);
  general::InitializeResult r;
  r.assurance = p.required_assurance;
  r.capabilities = {"materialize", "plan", "post-commit-effects", "validate"};
  if (log) r.capabilities.emplace_back("log");
  r.id = std::string(kId);
  r.inputs = p.inputs;
  r.limits = p.limits;
  r.nonce = p.nonce;
  r.profile = p.profile;
  r.protocol = p.protocol;
  return *encode_result(1, general::to_node(r));
}

std::string plan_body() {
  general::PlanResult r{{EffectRequest{"sync", "managed-root", "required"}}, {{"remove", 0, "old/file"}}, {}};
  return *encode_result(2, *general::to_node(r));
}
std::string materialize_body() { return *encode_result(3, general::to_node(general::MaterializeResult{})); }
std::string valid_body(std::uint64_t id) { return *encode_result(id, to_node(ValidatedResult{true})); }
std::string log(std::string_view level, std::string_view message) {
  return frame(*general::encode_log({std::string(level), std::string(message)}));
}

struct Script {
  std::string init, plan, materialize, validate, shutdown;
};

Script honest(const general::Limits& limits = general::kLimits, bool log = true) {
  return {frame(echo_body(limits, log)), frame(plan_body()), frame(materialize_body()), frame(valid_body(4)),
          frame(valid_body(5))};
}

struct Outcome {
  Status status;
  std::vector<LogEntry> logs;
  std::vector<LogEntry> seen;  // through on_log, in order
  std::optional<PluginErrorInfo> plugin_error;
  bool log_negotiated = false;
  std::string stderr_bytes;
};

Outcome run(const Script& script, const general::Limits& limits = general::kLimits) {
  Outcome out;
  TempStage stage;
  HostSessionOptions o;
  o.stage_dir = stage.path();
  o.profile = Profile::General;
  o.general_limits = limits;
  o.plugin_id = std::string(kId);
  o.on_log = [&out](const LogEntry& e) { out.seen.push_back(e); };
  o.spawn.argv = {"dpp-scripted", script.init, script.plan, script.materialize, script.validate, script.shutdown};
  auto s = testing::start(bin("dpp-scripted"), std::move(o));
  if (!s.ok()) {
    out.status = s.error();
    return out;
  }
  auto drive = [&]() -> Status {
    auto p = sent(limits);
    DOT_ASSIGN_OR_RETURN(general::InitializeResult echo, s->initialize(p));
    DOT_TRY(general::check_identity(p, echo, kId));
    DOT_ASSIGN_OR_RETURN(general::PlanResult plan, s->plan(general::PlanParams{{"old/file"}}));
    DOT_TRY(s->materialize_general());
    DOT_TRY(s->validate());
    DOT_TRY(s->shutdown());
    return s->finish();
  };
  out.status = drive();
  s->abort();
  out.logs = s->logs();
  out.plugin_error = s->plugin_error();
  out.log_negotiated = s->log_negotiated();
  out.stderr_bytes = s->stderr_bytes();
  EXPECT_TRUE(list_children().empty());
  return out;
}

void expect_error(const Outcome& o, Code code, std::string_view kind, std::string_view detail = "") {
  ASSERT_FALSE(o.status.ok()) << "accepted";
  const Error& e = o.status.error();
  EXPECT_EQ(code_name(e.code), code_name(code)) << e.line();
  EXPECT_EQ(e.kind, kind) << e.line();
  EXPECT_NE(e.detail.find(detail), std::string::npos) << "detail lacks \"" << detail << "\": " << e.line();
}

TEST(GeneralSession, AnHonestPeerCompletesWithItsLogsKeptInOrder) {
  Script s = honest();
  s.init = log("debug", "starting") + s.init;
  s.plan = log("info", "planning") + log("warning", "one file gone") + s.plan;
  s.materialize = log("error", std::string(4096, 'x')) + s.materialize;
  s.shutdown = log("info", "bye") + s.shutdown;
  auto o = run(s);
  ASSERT_TRUE(o.status.ok()) << o.status.error().line();
  EXPECT_TRUE(o.log_negotiated);
  std::vector<LogEntry> want = {{"debug", "starting", Method::Initialize},
                                {"info", "planning", Method::Plan},
                                {"warning", "one file gone", Method::Plan},
                                {"error", std::string(4096, 'x'), Method::Materialize},
                                {"info", "bye", Method::Shutdown}};
  EXPECT_EQ(o.logs, want);
  EXPECT_EQ(o.seen, want);
}

TEST(GeneralSession, WithoutLogTheSessionIsCleanToo) {
  auto o = run(honest(general::kLimits, false));
  ASSERT_TRUE(o.status.ok()) << o.status.error().line();
  EXPECT_FALSE(o.log_negotiated);
  EXPECT_TRUE(o.logs.empty());
}

TEST(GeneralSession, ALogWithoutNegotiationFails) {
  Script s = honest(general::kLimits, false);
  s.plan = log("info", "hi") + s.plan;
  expect_error(run(s), Code::Protocol, "log_not_negotiated", "during dot.plan");
}

TEST(GeneralSession, ALogDuringInitializeWithoutNegotiationFailsOnceTheEchoSaysSo) {
  Script s = honest(general::kLimits, false);
  s.init = log("info", "early") + s.init;
  auto o = run(s);
  expect_error(o, Code::Protocol, "log_not_negotiated", "during dot.initialize");
  EXPECT_TRUE(o.seen.empty());  // nothing was shown before negotiation
}

TEST(GeneralSession, OnlyDotLogIsANotification) {
  Script s = honest();
  s.plan = frame("{\"jsonrpc\":\"2.0\",\"method\":\"dot.progress\",\"params\":{}}") + s.plan;
  expect_error(run(s), Code::Protocol, "notification_method", "dot.progress");
}

TEST(GeneralSession, LogLevelAndSizeAreChecked) {
  Script s = honest();
  s.plan = log("fatal", "m") + s.plan;
  expect_error(run(s), Code::Protocol, "log_level", "fatal");
  s = honest();
  s.plan = log("info", std::string(4097, 'm')) + s.plan;
  expect_error(run(s), Code::Protocol, "log_message", "4097");
}

TEST(GeneralSession, TheLogLimitCountsTheWholeInvocation) {
  general::Limits l = general::kLimits;
  l.max_log_messages = 3;
  Script s = honest(l);
  s.init = log("info", "1") + s.init;
  s.plan = log("info", "2") + s.plan;
  s.validate = log("info", "3") + s.validate;
  auto ok = run(s, l);
  ASSERT_TRUE(ok.status.ok()) << ok.status.error().line();
  EXPECT_EQ(ok.logs.size(), 3u);
  s.shutdown = log("info", "4") + s.shutdown;
  expect_error(run(s, l), Code::Protocol, "log_limit", "more than 3");
}

TEST(GeneralSession, TheThousandAndFirstLogFails) {
  Script s = honest();
  std::string many;
  for (int i = 0; i < 1000; ++i) many += log("debug", std::to_string(i));
  s.plan = many + s.plan;
  auto ok = run(s);
  ASSERT_TRUE(ok.status.ok()) << ok.status.error().line();
  EXPECT_EQ(ok.logs.size(), 1000u);
  s.materialize = log("debug", "1000") + s.materialize;
  expect_error(run(s), Code::Protocol, "log_limit", "more than 1000");
}

TEST(GeneralSession, AnErrorResponseIsAPluginErrorWithEverythingKept) {
  Script s = honest();
  s.plan = frame("{\"error\":{\"code\":-32000,\"data\":{\"why\":[\"disk\",1]},\"message\":\"cannot read the "
                 "input\"},\"id\":2,\"jsonrpc\":\"2.0\"}");
  auto o = run(s);
  expect_error(o, Code::PluginError, "error_response",
               "plugin org.dot.test answered dot.plan with error -32000: cannot read the input");
  ASSERT_TRUE(o.plugin_error.has_value());
  EXPECT_EQ(o.plugin_error->method, Method::Plan);
  EXPECT_EQ(o.plugin_error->error.code, -32000);
  EXPECT_EQ(o.plugin_error->error.message, "cannot read the input");
  EXPECT_EQ(o.plugin_error->error.data, std::optional<std::string>("{\"why\":[\"disk\",1]}"));
}

TEST(GeneralSession, AnOversizedErrorIsAProtocolError) {
  Script s = honest();
  s.plan = frame("{\"error\":{\"code\":-32000,\"message\":\"" + std::string(4097, 'm') +
                 "\"},\"id\":2,\"jsonrpc\":\"2.0\"}");
  auto o = run(s);
  expect_error(o, Code::Protocol, "error_message", "4097");
  EXPECT_FALSE(o.plugin_error.has_value());
}

TEST(GeneralSession, TheNegotiatedFrameLimitHoldsAtTheByte) {
  general::Limits l = general::kLimits;
  l.max_frame_bytes = 2000;
  Script s = honest(l);
  s.plan = frame(padded(plan_body(), 2000));
  auto ok = run(s, l);
  ASSERT_TRUE(ok.status.ok()) << ok.status.error().line();
  s.plan = frame(padded(plan_body(), 2001));
  expect_error(run(s, l), Code::Protocol, "length", "over the limit of 2000 bytes");
}

// Bytes for a script step too large for an argument: written to a file the
// peer copies to its stdout.
class ScriptFile {
 public:
  explicit ScriptFile(std::string_view bytes) {
    std::ofstream(dir_.path() + "/step", std::ios::binary) << bytes;
  }
  std::string step() const { return "!file " + dir_.path() + "/step"; }

 private:
  TempStage dir_;
};

TEST(GeneralSession, FramesOverTheHelloLimitAreReadUpToTheProfilesLimit) {
  // 16 MiB exactly is accepted; hello's 64 KiB would have refused it.
  ScriptFile big(frame(padded(plan_body(), general::kLimits.max_frame_bytes)));
  Script s = honest();
  s.plan = big.step();
  auto ok = run(s);
  ASSERT_TRUE(ok.status.ok()) << ok.status.error().line();
}

TEST(GeneralSession, StdoutIsCountedOverTheWholeInvocationAtTheByte) {
  // A limit of 5000 bytes with the shutdown answer padded so that the whole
  // invocation writes exactly 5000; then the same bytes against 4999 (same
  // number of digits, so the echo keeps its size).
  general::Limits l = general::kLimits;
  l.max_stdout_bytes = 5000;
  Script s = honest(l);
  std::size_t rest = s.init.size() + s.plan.size() + s.materialize.size() + s.validate.size();
  std::string shutdown_body = valid_body(5);
  std::size_t header = frame(padded(shutdown_body, 5000 - rest - 30)).size() - (5000 - rest - 30);
  s.shutdown = frame(padded(shutdown_body, 5000 - rest - header));
  ASSERT_EQ(rest + s.shutdown.size(), 5000u);
  auto ok = run(s, l);
  ASSERT_TRUE(ok.status.ok()) << ok.status.error().line();
  l.max_stdout_bytes = 4999;
  Script over = honest(l);
  over.shutdown = s.shutdown;
  ASSERT_EQ(over.init.size(), s.init.size());
  expect_error(run(over, l), Code::Protocol, "stdout_limit", "more than 4999 bytes");
}

TEST(GeneralSession, StderrIsKeptUpToItsLimit) {
  general::Limits l = general::kLimits;
  l.max_stderr_bytes = 1000;
  Script s = honest(l);
  s.plan = "!stderr 1000:" + s.plan;
  auto ok = run(s, l);
  ASSERT_TRUE(ok.status.ok()) << ok.status.error().line();
  EXPECT_EQ(ok.stderr_bytes, std::string(1000, 'e'));
  s.plan = "!stderr 1001:" + honest(l).plan;
  expect_error(run(s, l), Code::Protocol, "stderr_limit", "more than 1000 bytes");
}

TEST(GeneralSession, TheNegotiatedDeadlineHolds) {
  general::Limits l = general::kLimits;
  l.deadline_ms = 400;
  Script s = honest(l);
  s.plan = "!sleep";
  auto t0 = Clock::now();
  expect_error(run(s, l), Code::Timeout, "timeout", "400 ms deadline waiting for dot.plan");
  EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(400));
}

// The deadline is the longest core waits for the plugin's next frame, not
// the whole run: a peer that writes a frame every 0.8 s under a 2.5 s
// deadline takes longer than that in all and completes; once it stops
// writing, the deadline runs from its last frame. (The margin is 1.7 s a
// frame: a loaded machine wakes a sleeper late, not that late.)
TEST(GeneralSession, TheDeadlineIsTheLongestSilenceNotTheWholeRun) {
  general::Limits l = general::kLimits;
  l.deadline_ms = 2500;
  Script s = honest(l);
  std::string logs;
  for (int i = 0; i < 4; ++i) logs += log("info", "step " + std::to_string(i));
  const std::string plan = s.plan;
  s.plan = "!drip 800:" + logs + plan;
  auto t0 = Clock::now();
  auto ok = run(s, l);
  ASSERT_TRUE(ok.status.ok()) << ok.status.error().line();
  EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(5 * 800));
  EXPECT_EQ(ok.logs.size(), 4U);

  s.plan = "!drip 800:" + logs;  // and then nothing
  t0 = Clock::now();
  expect_error(run(s, l), Code::Timeout, "timeout",
               "2500 ms deadline waiting for dot.plan (it sent nothing for that long)");
  EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(4 * 800 + 2500));
}

TEST(GeneralSession, ANotificationAfterTheShutdownResponseIsTrailingOutput) {
  Script s = honest();
  s.shutdown += log("info", "late");
  expect_error(run(s), Code::Protocol, "trailing_output", "after its dot.shutdown response");
}

TEST(GeneralSession, ARequestFromThePluginIsRefused) {
  Script s = honest();
  s.plan = frame("{\"id\":2,\"jsonrpc\":\"2.0\",\"method\":\"dot.log\",\"params\":{}}") + s.plan;
  expect_error(run(s), Code::Protocol, "method_in_response");
}

TEST(GeneralSession, TheProfilesTypesCannotBeMixed) {
  TempStage stage;
  HostSessionOptions o;
  o.stage_dir = stage.path();
  o.profile = Profile::General;
  auto s = testing::start(bin("dpp-scripted"), std::move(o));
  ASSERT_TRUE(s.ok()) << s.error().line();
  auto hello_init = s->initialize(hello::initialize_params("audit", kNonce));
  EXPECT_EQ(hello_init.error().code, Code::Internal);
  auto p = sent(general::kLimits);
  p.limits.max_operations = 5;
  auto other_limits = s->initialize(p);
  EXPECT_EQ(other_limits.error().code, Code::Internal);
  EXPECT_EQ(other_limits.error().kind, "limits");
  s->abort();
  EXPECT_TRUE(list_children().empty());
}

}  // namespace
}  // namespace dot::dpp
