// Whole version-1 sessions against a worker written in Python from the
// public protocol description (py/mw_worker.py): every role through
// shutdown, every failure code, every phase's deadline, the wrong-role and
// one_shot rules. Every test also checks that the worker is gone.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fmt/format.h>

#include "dot/metewand/worker_session.h"

#include "../common/process_gone.h"

namespace dot::metewand {
namespace {

using namespace std::chrono_literals;

const std::string kPython = DOT_METEWAND_PYTHON;
const std::string kScript = std::string(DOT_SOURCE_DIR) + "/tests/metewand/py/mw_worker.py";
const std::string kId = "mw1-resolved-worker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

SessionOptions python_worker(std::vector<std::string> args = {}) {
  SessionOptions o;
  o.command.path = kPython;
  o.command.argv = {"python3", "-B", kScript};
  for (auto& a : args) o.command.argv.push_back(a);
  o.command.env = {"PATH=/usr/bin:/bin"};
  // Generous: a Python start under a loaded machine is slow; the deadline
  // tests shorten only the phase they test.
  o.timeouts.set_all(10s);
  return o;
}

jcs::Node params(std::initializer_list<std::pair<const char*, jcs::Node>> members) {
  jcs::Node o = jcs::Node::object();
  for (const auto& [k, v] : members) o.set(k, v);
  return o;
}

jcs::Node materialize_params() {
  return params({{"source_dir", jcs::Node::string("/src")},
                 {"dataset_parameters", params({{"rows", jcs::Node::integer(100)}})},
                 {"dataset_seed", jcs::Node::integer(17)},
                 {"output_dir", jcs::Node::string("/out")}});
}
jcs::Node prepare_params() {
  return params({{"dataset_dir", jcs::Node::string("/d")},
                 {"problem_contract_id", jcs::Node::string("mw1-problem-contract-abc")},
                 {"problem_parameters", jcs::Node::object()},
                 {"implementation_parameters", jcs::Node::object()},
                 {"implementation_seed", jcs::Node::integer(23)}});
}
jcs::Node execute_params() { return params({{"result_dir", jcs::Node::string("/r")}}); }
jcs::Node evaluate_params() {
  return params({{"dataset_dir", jcs::Node::string("/d")},
                 {"problem_contract_id", jcs::Node::string("c")},
                 {"problem_parameters", jcs::Node::object()},
                 {"result_dir", jcs::Node::string("/r")},
                 {"metrics_path", jcs::Node::string("/m.json")}});
}

const std::vector<Capability> kOneShot = {Capability::OneShot};

TEST(OneShotSession, EveryRoleThroughShutdown) {
  struct RoleRun {
    WorkerRole role;
    std::vector<std::pair<Method, jcs::Node>> requests;
  } runs[] = {
      {WorkerRole::DatasetMaterializer, {{Method::Materialize, materialize_params()}}},
      {WorkerRole::Implementation,
       {{Method::Prepare, prepare_params()}, {Method::Execute, execute_params()}, {Method::Reset, jcs::Node::object()}}},
      {WorkerRole::ProblemEvaluator, {{Method::Evaluate, evaluate_params()}}},
  };
  for (const auto& r : runs) {
    SCOPED_TRACE(std::string(role_name(r.role)));
    auto s = WorkerSession::start(python_worker());
    ASSERT_TRUE(s.ok());
    pid_t pid = s->pid();
    std::vector<Capability> sel = r.role == WorkerRole::Implementation ? kOneShot : std::vector<Capability>{};
    auto n = s->hello(r.role, kId, sel);
    ASSERT_TRUE(n.ok()) << n.error().message();
    int id = 1;
    for (const auto& [method, p] : r.requests) {
      auto done = s->request(method, p);
      ASSERT_TRUE(done.ok()) << method_name(method) << ": " << done.error().name() << " " << done.error().message();
      EXPECT_EQ(done->id, std::to_string(id));
      EXPECT_EQ(s->last_request().find(fmt::format("\"id\":\"{}\"", id)) != std::string::npos, true) << s->last_request();
      if (method == Method::Materialize) {
        EXPECT_EQ(done->manifest, "dataset-manifest.json");
      }
      if (method == Method::Execute) {
        EXPECT_EQ(done->manifest, "result.json");
        EXPECT_FALSE(done->implementation_time_ns.has_value());
      }
      ++id;
    }
    auto st = s->shutdown();
    ASSERT_TRUE(st.ok()) << st.error().name() << ": " << st.error().message();
    EXPECT_TRUE(st->success());
    EXPECT_EQ(s->last_request(), fmt::format(R"({{"id":"{}","method":"shutdown"}})", id));
    EXPECT_EQ(s->last_response(), fmt::format(R"({{"id":"{}","ok":true}})", id));
    EXPECT_TRUE(process_gone(pid));
  }
}

TEST(OneShotSession, AWrongRoleCallFailsLocallyWithoutUsingAnId) {
  auto s = WorkerSession::start(python_worker());
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->hello(WorkerRole::DatasetMaterializer, kId).ok());
  for (Method m : {Method::Prepare, Method::Execute, Method::Reset, Method::Evaluate}) {
    auto wrong = s->request(m, jcs::Node::object());
    ASSERT_FALSE(wrong.ok());
    EXPECT_EQ(wrong.error().name(), "InvalidRole") << method_name(m);
    EXPECT_EQ(wrong.error().phase, phase_of(m));
    EXPECT_EQ(wrong.error().to_error().code, Code::Validation);
    EXPECT_TRUE(s->usable());
    EXPECT_EQ(s->last_request(), "");
  }
  // A request that is not its method's shape is refused here too.
  auto bad = s->request(Method::Materialize, params({{"source_dir", jcs::Node::string("")}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().name(), "InvalidMessage");
  EXPECT_TRUE(s->usable());
  auto ok = s->request(Method::Materialize, materialize_params());
  ASSERT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_EQ(ok->id, "1");
  EXPECT_TRUE(s->shutdown().ok());
}

TEST(OneShotSession, ExecuteNeedsOneShotSelectedAndOperationsNeedAHello) {
  auto s = WorkerSession::start(python_worker());
  ASSERT_TRUE(s.ok());
  auto early = s->request(Method::Prepare, prepare_params());
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error().name(), "NotNegotiated");
  ASSERT_TRUE(s->hello(WorkerRole::Implementation, kId).ok());  // nothing selected
  ASSERT_TRUE(s->request(Method::Prepare, prepare_params()).ok());
  auto ex = s->request(Method::Execute, execute_params());
  ASSERT_FALSE(ex.ok());
  EXPECT_EQ(ex.error().name(), "CapabilityNotSelected");
  EXPECT_TRUE(s->usable());
  auto reset = s->request(Method::Reset);
  ASSERT_TRUE(reset.ok());
  EXPECT_EQ(reset->id, "2");
  EXPECT_TRUE(s->shutdown().ok());
}

TEST(OneShotSession, EveryFailureCodeIsTypedWithItsPhase) {
  struct Case {
    WorkerRole role;
    Method method;
    jcs::Node p;
    const char* code;
  } cases[] = {
      {WorkerRole::DatasetMaterializer, Method::Materialize, materialize_params(), "invalid_request"},
      {WorkerRole::Implementation, Method::Prepare, prepare_params(), "unsupported_operation"},
      {WorkerRole::Implementation, Method::Execute, execute_params(), "operation_failed"},
      {WorkerRole::ProblemEvaluator, Method::Evaluate, evaluate_params(), "internal_error"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.code);
    auto s = WorkerSession::start(python_worker({"--fail", fmt::format("{}:{}", method_name(c.method), c.code)}));
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(s->hello(c.role, kId, c.role == WorkerRole::Implementation ? kOneShot : std::vector<Capability>{}).ok());
    if (c.method == Method::Execute) {
      ASSERT_TRUE(s->request(Method::Prepare, prepare_params()).ok());
    }
    auto r = s->request(c.method, c.p);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, SessionError::Kind::WorkerFailure);
    EXPECT_EQ(r.error().name(), c.code);
    EXPECT_EQ(r.error().phase, phase_of(c.method));
    ASSERT_TRUE(r.error().failure.has_value());
    EXPECT_EQ(r.error().failure->message, "told to fail");
    ASSERT_TRUE(r.error().failure->details.has_value());
    // A worker's failure does not by itself corrupt the session.
    EXPECT_TRUE(s->usable());
    auto st = s->shutdown();
    EXPECT_TRUE(st.ok()) << st.error().message();
  }
}

TEST(OneShotSession, AFailedResetDiscardsTheWorker) {
  auto s = WorkerSession::start(python_worker({"--fail", "reset:operation_failed"}));
  ASSERT_TRUE(s.ok());
  pid_t pid = s->pid();
  ASSERT_TRUE(s->hello(WorkerRole::Implementation, kId, kOneShot).ok());
  auto r = s->request(Method::Reset);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().name(), "operation_failed");
  EXPECT_EQ(r.error().phase, Phase::Reset);
  EXPECT_FALSE(s->usable());
  EXPECT_TRUE(process_gone(pid));
  auto again = s->request(Method::Prepare, prepare_params());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().name(), "SessionUnusable");
}

TEST(OneShotSession, AShutdownFailureIsTypedAndEndsTheWorker) {
  auto s = WorkerSession::start(python_worker({"--fail", "shutdown:internal_error"}));
  ASSERT_TRUE(s.ok());
  pid_t pid = s->pid();
  ASSERT_TRUE(s->hello(WorkerRole::ProblemEvaluator, kId).ok());
  auto st = s->shutdown();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().name(), "internal_error");
  EXPECT_EQ(st.error().phase, Phase::Shutdown);
  EXPECT_FALSE(s->usable());
  EXPECT_TRUE(process_gone(pid));
}

TEST(OneShotSession, ARawRequestOfTheWrongShapeGetsInvalidRequest) {
  auto s = WorkerSession::start(python_worker());
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->hello(WorkerRole::ProblemEvaluator, kId).ok());
  auto r = s->exchange(Phase::Shutdown, params({{"method", jcs::Node::string("shutdown")}, {"x", jcs::Node::integer(1)}}));
  ASSERT_TRUE(r.ok());
  EXPECT_NE(std::string(r->document.source()).find("invalid_request"), std::string::npos);
  EXPECT_TRUE(s->shutdown().ok());
}

// One phase at a time hangs: the deadline of that phase, and only it, fires.
TEST(OneShotSession, EveryPhaseHasItsDeadline) {
  struct Case {
    WorkerRole role;
    Phase phase;
  } cases[] = {
      {WorkerRole::Implementation, Phase::Hello},     {WorkerRole::DatasetMaterializer, Phase::Materialize},
      {WorkerRole::Implementation, Phase::Prepare},   {WorkerRole::Implementation, Phase::Execute},
      {WorkerRole::Implementation, Phase::Reset},     {WorkerRole::ProblemEvaluator, Phase::Evaluate},
      {WorkerRole::DatasetMaterializer, Phase::Shutdown},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(phase_name(c.phase)));
    auto o = python_worker({"--hang", std::string(phase_name(c.phase))});
    constexpr auto kLimit = 300ms;
    switch (c.phase) {
      case Phase::Hello: o.timeouts.hello = kLimit; break;
      case Phase::Materialize: o.timeouts.materialize = kLimit; break;
      case Phase::Prepare: o.timeouts.prepare = kLimit; break;
      case Phase::Execute: o.timeouts.execute = kLimit; break;
      case Phase::Reset: o.timeouts.reset = kLimit; break;
      case Phase::Evaluate: o.timeouts.evaluate = kLimit; break;
      case Phase::Shutdown: o.timeouts.shutdown = kLimit; break;
      case Phase::Start: break;
    }
    auto s = WorkerSession::start(o);
    ASSERT_TRUE(s.ok());
    pid_t pid = s->pid();
    std::optional<SessionError> error;
    Clock::time_point started;
    auto timed = [&](auto&& call) {
      started = Clock::now();
      return call();
    };
    auto sel = c.role == WorkerRole::Implementation ? kOneShot : std::vector<Capability>{};
    auto n = timed([&] { return s->hello(c.role, kId, sel); });
    if (!n.ok()) error = n.error();
    std::vector<std::pair<Method, jcs::Node>> ops;
    if (c.role == WorkerRole::DatasetMaterializer) ops = {{Method::Materialize, materialize_params()}};
    if (c.role == WorkerRole::Implementation)
      ops = {{Method::Prepare, prepare_params()}, {Method::Execute, execute_params()}, {Method::Reset, jcs::Node::object()}};
    if (c.role == WorkerRole::ProblemEvaluator) ops = {{Method::Evaluate, evaluate_params()}};
    for (const auto& op : ops) {  // not a structured binding: clang 14 cannot capture one
      if (error) break;
      auto r = timed([&] { return s->request(op.first, op.second); });
      if (!r.ok()) error = r.error();
    }
    if (!error) {
      auto st = timed([&] { return s->shutdown(); });
      if (!st.ok()) error = st.error();
    }
    auto took = Clock::now() - started;
    ASSERT_TRUE(error.has_value());
    EXPECT_EQ(error->name(), "Timeout");
    EXPECT_EQ(error->phase, c.phase);
    EXPECT_EQ(error->limit, kLimit);
    EXPECT_EQ(error->to_error().code, Code::Timeout);
    EXPECT_GE(took, kLimit - 10ms);
    EXPECT_LT(took, 5s);
    EXPECT_FALSE(s->usable());
    EXPECT_TRUE(process_gone(pid));
  }
}

TEST(OneShotSession, ShutdownWithoutAckOrWithANonZeroExitFails) {
  struct Case {
    std::vector<std::string> args;
    const char* error;
  } cases[] = {
      {{"--no-shutdown-ack"}, "ProtocolClosed"},
      {{"--exit-after-shutdown", "4"}, "UnsuccessfulExit"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.error);
    auto s = WorkerSession::start(python_worker(c.args));
    ASSERT_TRUE(s.ok());
    pid_t pid = s->pid();
    ASSERT_TRUE(s->hello(WorkerRole::ProblemEvaluator, kId).ok());
    auto st = s->shutdown();
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().name(), c.error);
    EXPECT_EQ(st.error().phase, Phase::Shutdown);
    if (std::string(c.error) == "UnsuccessfulExit") {
      EXPECT_EQ(st.error().status.code, 4);
    }
    EXPECT_TRUE(process_gone(pid));
  }
}

TEST(OneShotSession, MalformedOrUncorrelatedResponsesDiscardTheWorker) {
  struct Case {
    std::vector<std::string> args;
    const char* error;
  } cases[] = {
      {{"--unknown-member", "materialize"}, "InvalidMessage"},
      {{"--out-of-order"}, "MismatchedRequestId"},
      {{"--wrong-identity"}, "WorkerIdentityMismatch"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.error);
    auto s = WorkerSession::start(python_worker(c.args));
    ASSERT_TRUE(s.ok());
    pid_t pid = s->pid();
    std::string name;
    auto n = s->hello(WorkerRole::DatasetMaterializer, kId);
    if (!n.ok()) name = n.error().name();
    else if (auto r = s->request(Method::Materialize, materialize_params()); !r.ok()) name = r.error().name();
    EXPECT_EQ(name, c.error);
    EXPECT_FALSE(s->usable());
    EXPECT_TRUE(process_gone(pid));
  }
}

TEST(OneShotSession, ANonPositiveDeadlineIsRefusedAtStart) {
  auto o = python_worker();
  o.timeouts.evaluate = 0ms;
  auto s = WorkerSession::start(o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("evaluate"), std::string::npos);
}

}  // namespace
}  // namespace dot::metewand
