// Process-level tests: the real example worker, made to misbehave in one way
// at a time during hello. Every test also checks that nothing of the worker
// survives the session.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "dot/metewand/worker_session.h"

#include "../common/process_gone.h"

namespace dot::metewand {
namespace {

using namespace std::chrono_literals;

const std::string kWorker = std::string(DOT_BIN_DIR) + "/metewand-example-worker";
const std::string kId = "mw1-resolved-worker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

SessionOptions options(std::vector<std::string> args = {}) {
  SessionOptions o;
  o.command.path = kWorker;
  o.command.argv = {"metewand-example-worker"};
  for (auto& a : args) o.command.argv.push_back(a);
  o.timeouts.set_all(5s);
  return o;
}

std::string raw_file(const std::string& name, const std::string& bytes) {
  std::string path = testing::TempDir() + "metewand-raw-" + name + "-" + std::to_string(::getpid());
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string good_response(std::string id = "0", std::string worker = kId) {
  return R"({"capabilities":["one_shot"],"id":")" + id + R"(","ok":true,"protocol":1,"sdk":null,"worker_id":")" + worker + "\"}";
}

// Starts the worker, says hello, returns the error's name ("" on success)
// and checks the worker is gone afterwards.
std::string hello_error(SessionOptions o, std::vector<Capability> selected = {}) {
  auto s = WorkerSession::start(o);
  EXPECT_TRUE(s.ok());
  if (!s.ok()) return "start failed";
  pid_t pid = s->pid();
  auto n = s->hello(WorkerRole::Implementation, kId, selected);
  std::string name;
  if (!n.ok()) name = n.error().name();
  if (s->usable()) {
    auto done = s->shutdown();
    if (!done.ok() && name.empty()) name = done.error().name();
  }
  EXPECT_FALSE(s->running());
  EXPECT_TRUE(process_gone(pid)) << "worker " << pid << " survived";
  return name;
}

TEST(WorkerSession, HelloAndCleanShutdown) {
  auto s = WorkerSession::start(options({"--sdk", "example:1.0", "--capabilities", "one_shot,applicability"}));
  ASSERT_TRUE(s.ok()) << s.error().message();
  std::vector<Capability> sel = {Capability::OneShot};
  auto n = s->hello(WorkerRole::Implementation, kId, sel);
  ASSERT_TRUE(n.ok()) << n.error().name() << ": " << n.error().message();
  EXPECT_EQ(n->worker_id, kId);
  ASSERT_TRUE(n->sdk.has_value());
  EXPECT_EQ(n->sdk->name, "example");
  EXPECT_EQ(n->reported, (std::vector<Capability>{Capability::OneShot, Capability::Applicability}));
  // The next request gets id "1"; the worker acknowledges the reset.
  jcs::Node req = jcs::Node::object();
  req.set("method", jcs::Node::string("reset"));
  auto frame = s->exchange(Phase::Reset, req);
  ASSERT_TRUE(frame.ok()) << frame.error().name();
  auto id = frame->document.root().find("id");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->as_string(), "1");
  EXPECT_EQ(s->last_request(), R"({"id":"1","method":"reset"})");
  EXPECT_EQ(s->last_response(), R"({"id":"1","ok":true})");
  pid_t pid = s->pid();
  auto st = s->shutdown();
  ASSERT_TRUE(st.ok()) << st.error().name() << ": " << st.error().message();
  EXPECT_TRUE(st->success());
  EXPECT_FALSE(s->running());
  EXPECT_TRUE(process_gone(pid));
}

TEST(WorkerSession, OnlyTheProtocolPipesAndLogsAreInheritedAndStdinIsDevNull) {
  std::string path = testing::TempDir() + "metewand-fds-" + std::to_string(::getpid());
  EXPECT_EQ(hello_error(options({"--describe-fds", path})), "");
  std::ifstream in(path);
  std::map<int, std::string> fds;
  int fd;
  std::string target;
  while (in >> fd >> target) fds[fd] = target;
  ::unlink(path.c_str());
  // readlink opens nothing, so what the worker sees is what it inherited:
  // stdin, the two log pipes and the two protocol pipes, nothing else.
  ASSERT_EQ(fds.size(), 5u) << [&] {
    std::string all;
    for (auto& [k, v] : fds) all += std::to_string(k) + "=" + v + " ";
    return all;
  }();
  EXPECT_EQ(fds[0], "/dev/null");
  for (int pipe_fd : {1, 2, 3, 4}) EXPECT_EQ(fds[pipe_fd].rfind("pipe:", 0), 0u) << pipe_fd << " " << fds[pipe_fd];
  // Four distinct pipes: stdout, stderr, requests and responses share nothing.
  std::set<std::string> distinct;
  for (int pipe_fd : {1, 2, 3, 4}) distinct.insert(fds[pipe_fd]);
  EXPECT_EQ(distinct.size(), 4u);
}

TEST(WorkerSession, ProtocolDescriptorsAreConfigurable) {
  auto o = options();
  o.child_read_fd = 7;
  o.child_write_fd = 9;
  EXPECT_EQ(hello_error(o), "");
}

struct BadLine {
  const char* name;
  std::string bytes;
  const char* error;
};

TEST(WorkerSession, EveryBadLineDuringHelloIsTypedAndKillsTheWorker) {
  std::string nested_dup = R"({"capabilities":[],"id":"0","ok":true,"protocol":1,"sdk":{"name":"a","version":"1","name":"b"},"worker_id":")" + kId + "\"}\n";
  std::vector<BadLine> cases = {
      {"duplicate", R"({"id":"0","id":"0"})" "\n", "DuplicateKey"},
      {"nested-duplicate", nested_dup, "DuplicateKey"},
      {"bom", "\xEF\xBB\xBF" + good_response() + "\n", "ByteOrderMark"},
      {"utf8", "{\"id\":\"\xC3\x28\"}\n", "InvalidUtf8"},
      {"malformed", "{\"id\":\"0\",}\n", "MalformedJson"},
      {"empty", "\n", "MalformedJson"},
      {"nan", "{\"id\":\"0\",\"x\":NaN}\n", "MalformedJson"},
      {"deep", std::string(128, '[') + std::string(128, ']') + "\n", "MalformedJson"},
      {"early-eof", good_response(), "EarlyEof"},
      {"too-long", "\"" + std::string(kMaxLineBytes, 'x') + "\"\n", "LineTooLong"},
      {"not-object", "[1]\n", "InvalidRequestId"},
      {"no-id", R"({"ok":true})" "\n", "InvalidRequestId"},
      {"numeric-id", R"({"id":0,"ok":true})" "\n", "InvalidRequestId"},
      {"wrong-id", good_response("1") + "\n", "MismatchedRequestId"},
      {"extra", good_response() + "\n" + good_response() + "\n", "ExtraResponse"},
      {"extra-no-id", good_response() + "\n{}\n", "InvalidRequestId"},
      {"bad-after-hello", good_response() + "\n{\n", "MalformedJson"},
      {"unknown-field", R"({"capabilities":[],"id":"0","ok":true,"protocol":1,"sdk":null,"worker_id":")" + kId + R"(","x":1})" "\n", "InvalidMessage"},
      {"identity", good_response("0", "mw1-resolved-worker-" + std::string(64, 'f')) + "\n", "WorkerIdentityMismatch"},
      {"failure", R"({"error":{"code":"internal_error","message":"boom"},"id":"0","ok":false})" "\n", "internal_error"},
      {"closed", "", "ProtocolClosed"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::string path = raw_file(c.name, c.bytes);
    EXPECT_EQ(hello_error(options({"--raw-file", path})), c.error);
    ::unlink(path.c_str());
  }
}

TEST(WorkerSession, MissingSelectedCapability) {
  std::vector<Capability> sel = {Capability::OneShot};
  EXPECT_EQ(hello_error(options({"--capabilities", ""}), sel), "MissingCapability");
}

TEST(WorkerSession, WorkerFailureLeavesTheSessionUsable) {
  auto s = WorkerSession::start(options({"--fail", "operation_failed"}));
  ASSERT_TRUE(s.ok());
  auto n = s->hello(WorkerRole::Implementation, kId);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().kind, SessionError::Kind::WorkerFailure);
  EXPECT_EQ(n.error().name(), "operation_failed");
  ASSERT_TRUE(n.error().failure.has_value());
  EXPECT_TRUE(n.error().failure->details.has_value());
  EXPECT_TRUE(s->usable());
  EXPECT_TRUE(s->shutdown().ok());
}

TEST(WorkerSession, HelloTimeoutKillsTheWorkerAndItsGroup) {
  auto o = options({"--hang", "--grandchild"});
  o.timeouts.hello = 300ms;
  auto s = WorkerSession::start(o);
  ASSERT_TRUE(s.ok());
  pid_t pid = s->pid();
  auto t0 = Clock::now();
  auto n = s->hello(WorkerRole::Implementation, kId);
  auto took = Clock::now() - t0;
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().name(), "Timeout");
  EXPECT_EQ(n.error().phase, Phase::Hello);
  EXPECT_EQ(n.error().to_error().code, Code::Timeout);
  EXPECT_GE(took, 290ms);
  EXPECT_LT(took, 3s);
  EXPECT_FALSE(s->usable());
  EXPECT_FALSE(s->running());
  EXPECT_TRUE(process_gone(pid));
  const std::string& err = s->stderr_log().bytes();
  auto at = err.find("grandchild=");
  ASSERT_NE(at, std::string::npos) << err;
  pid_t grandchild = static_cast<pid_t>(std::stol(err.substr(at + 11)));
  EXPECT_TRUE(process_gone(grandchild)) << "grandchild " << grandchild << " survived";
  // A discarded session refuses further work.
  auto again = s->hello(WorkerRole::Implementation, kId);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().name(), "SessionUnusable");
}

TEST(WorkerSession, GroupIsKilledAfterACleanExitToo) {
  auto s = WorkerSession::start(options({"--grandchild"}));
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->hello(WorkerRole::Implementation, kId).ok());
  ASSERT_TRUE(s->shutdown().ok());
  const std::string& err = s->stderr_log().bytes();
  auto at = err.find("grandchild=");
  ASSERT_NE(at, std::string::npos) << err;
  EXPECT_TRUE(process_gone(static_cast<pid_t>(std::stol(err.substr(at + 11)))));
}

TEST(WorkerSession, EndlessLineIsRefusedAtTheLimit) {
  EXPECT_EQ(hello_error(options({"--endless"})), "LineTooLong");
}

TEST(WorkerSession, ClosedProtocolStream) { EXPECT_EQ(hello_error(options({"--close"})), "ProtocolClosed"); }

TEST(WorkerSession, ShutdownTimeoutKillsALingeringWorker) {
  auto o = options({"--linger"});
  o.timeouts.shutdown = 300ms;
  auto s = WorkerSession::start(o);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->hello(WorkerRole::Implementation, kId).ok());
  pid_t pid = s->pid();
  auto st = s->shutdown();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().name(), "Timeout");
  EXPECT_EQ(st.error().phase, Phase::Shutdown);
  EXPECT_TRUE(process_gone(pid));
}

TEST(WorkerSession, NonZeroExitIsUnsuccessful) {
  auto s = WorkerSession::start(options({"--exit", "3"}));
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->hello(WorkerRole::Implementation, kId).ok());
  auto st = s->shutdown();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().name(), "UnsuccessfulExit");
  EXPECT_EQ(st.error().status.code, 3);
}

TEST(WorkerSession, LogsAreDrainedConcurrentlyWithCaps) {
  // 300 KB on each log stream is far more than a pipe holds: without
  // concurrent draining the worker would block before answering.
  auto o = options({"--log-bytes", "300000"});
  o.log_cap = 1000;
  auto s = WorkerSession::start(o);
  ASSERT_TRUE(s.ok());
  auto n = s->hello(WorkerRole::Implementation, kId);
  ASSERT_TRUE(n.ok()) << n.error().name();
  ASSERT_TRUE(s->shutdown().ok());
  EXPECT_EQ(s->stdout_log().bytes(), std::string(1000, 'x'));
  EXPECT_TRUE(s->stdout_log().truncated());
  EXPECT_EQ(s->stdout_log().total(), 300000u);
  EXPECT_EQ(s->stderr_log().total(), 300000u);
  EXPECT_TRUE(s->stderr_log().truncated());
}

TEST(WorkerSession, UnstartableWorker) {
  auto o = options();
  o.command.path = "/nonexistent/worker";
  auto s = WorkerSession::start(o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().name(), "Spawn");
  EXPECT_EQ(s.error().to_error().code, Code::Io);
}

TEST(WorkerSession, DestructorKillsARunningWorker) {
  pid_t pid;
  {
    auto s = WorkerSession::start(options({"--hang"}));
    ASSERT_TRUE(s.ok());
    pid = s->pid();
  }
  EXPECT_TRUE(process_gone(pid));
}

}  // namespace
}  // namespace dot::metewand
