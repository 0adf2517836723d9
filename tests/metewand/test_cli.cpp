// The two Metewand commands of the dot-core binary, run as a user would.
#include <gtest/gtest.h>

#include <poll.h>
#include <unistd.h>

#include <signal.h>

#include <cerrno>
#include <fstream>

#include <sys/stat.h>

#include <fmt/format.h>

#include "dot/base/process.h"
#include "dot/base/sha256.h"

#include "../common/process_gone.h"

namespace dot {
namespace {

using namespace std::chrono_literals;

const std::string kDotCore = std::string(DOT_BIN_DIR) + "/dot-core";
const std::string kWorker = std::string(DOT_BIN_DIR) + "/metewand-example-worker";
const std::string kPython = DOT_METEWAND_PYTHON;
const std::string kPyWorker = std::string(DOT_SOURCE_DIR) + "/tests/metewand/py/mw_worker.py";

struct CliRun {
  int code = -1;
  std::string out, err;
  std::chrono::milliseconds took{0};
};

CliRun run(std::vector<std::string> args, const std::string& input = "") {
  SpawnOptions o;
  o.path = kDotCore;
  o.argv = {"dot-core"};
  for (auto& a : args) o.argv.push_back(a);
  o.env = {"PATH=/usr/bin:/bin"};
  auto t0 = Clock::now();
  auto child = spawn(o);
  EXPECT_TRUE(child.ok());
  CliRun r;
  if (!child.ok()) return r;
  (void)write_all(child->stdin_fd().get(), input);
  child->stdin_fd().reset();
  UniqueFd* fds[2] = {&child->stdout_fd(), &child->stderr_fd()};
  std::string* outs[2] = {&r.out, &r.err};
  while (*fds[0] || *fds[1]) {
    pollfd p[2];
    nfds_t n = 0;
    int which[2];
    for (int i = 0; i < 2; ++i)
      if (*fds[i]) { p[n] = {fds[i]->get(), POLLIN, 0}; which[n++] = i; }
    if (::poll(p, n, 20000) <= 0) break;
    for (nfds_t k = 0; k < n; ++k) {
      if (p[k].revents == 0) continue;
      char buf[65536];
      ssize_t got = ::read(p[k].fd, buf, sizeof buf);
      if (got <= 0) fds[which[k]]->reset();
      else outs[which[k]]->append(buf, static_cast<std::size_t>(got));
    }
  }
  auto st = child->wait_until(Clock::now() + 20s);
  r.took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
  if (st) r.code = st->exited() ? st->code : 128 + st->signal;
  return r;
}

std::string temp_file(const std::string& name, const std::string& bytes) {
  std::string path = testing::TempDir() + "metewand-cli-" + name + "-" + std::to_string(::getpid());
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(FramesDecodeMetewand, FramesThenCleanEnd) {
  std::string path = temp_file("frames", "{\"b\":1,\"a\":[true,null]}\r\n  \"x\" \n18446744073709551616\n");
  CliRun r = run({"frames", "decode", "--format", "metewand", path});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "{\"frame\":1,\"offset\":0,\"value\":{\"a\":[true,null],\"b\":1}}\n"
            "{\"frame\":2,\"offset\":25,\"value\":\"x\"}\n"
            "{\"frame\":3,\"offset\":32,\"value\":18446744073709552000}\n"
            "{\"end\":\"eof\",\"frames\":3}\n");
  CliRun c = run({"frames", "decode", "--format", "metewand", "--count", "-"}, "{}\n[]\n");
  EXPECT_EQ(c.code, 0);
  EXPECT_EQ(c.out, "{\"end\":\"eof\",\"frames\":2}\n");
  ::unlink(path.c_str());
}

TEST(FramesDecodeMetewand, EachErrorVariantWithItsPayload) {
  struct Case {
    std::string input;
    std::string last_line;
  };
  std::vector<Case> cases = {
      {"{}\n\"" + std::string(1 << 20, 'x') + "\"\n",
       "{\"error\":\"LineTooLong\",\"offset\":3,\"limit\":1048576}"},
      {"{}\n{\"a\"", "{\"error\":\"EarlyEof\",\"offset\":3,\"received\":4}"},
      {"\xEF\xBB\xBF{}\n", "{\"error\":\"ByteOrderMark\",\"offset\":0}"},
      {"[\"\xFF\"]\n", "{\"error\":\"InvalidUtf8\",\"offset\":0,\"valid_up_to\":2}"},
      {"{\"k\":{\"q\\\"\":1,\"q\\u0022\":2}}\n", "{\"error\":\"DuplicateKey\",\"offset\":0,\"key\":\"q\\\"\"}"},
      {"{\"a\":1e400}\n", "{\"error\":\"MalformedJson\",\"offset\":0}"},
  };
  for (const auto& c : cases) {
    for (bool count : {false, true}) {
      std::vector<std::string> args = {"frames", "decode", "--format", "metewand"};
      if (count) args.push_back("--count");
      args.push_back("-");
      CliRun r = run(args, c.input);
      EXPECT_EQ(r.code, 1) << c.last_line;
      ASSERT_FALSE(r.out.empty());
      std::string last = r.out.substr(0, r.out.size() - 1);
      last = last.substr(last.rfind('\n') == std::string::npos ? 0 : last.rfind('\n') + 1);
      EXPECT_EQ(last, c.last_line);
      if (count) {
        EXPECT_EQ(r.out, c.last_line + "\n");
      }
      EXPECT_EQ(r.err.rfind("DOT_E_PROTOCOL: ", 0), 0u) << r.err;
    }
  }
}

TEST(FramesDecodeMetewand, MissingFileIsAnIoError) {
  CliRun r = run({"frames", "decode", "--format", "metewand", "/nonexistent/capture"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("DOT_E_IO: ", 0), 0u) << r.err;
}

TEST(MetewandHello, PrintsTheNegotiationWithTheDefaultIdentity) {
  auto exe = read_file(kWorker, 512 << 20);
  ASSERT_TRUE(exe.ok());
  std::string id = "mw1-resolved-worker-" + sha256_hex(*exe);
  CliRun r = run({"metewand", "hello", "--", kWorker, "--sdk", "ex:2"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "{\"capabilities\":[\"one_shot\"],\"protocol\":1,\"role\":\"implementation\",\"sdk\":{\"name\":\"ex\",\"version\":\"2\"},\"selected\":[],\"worker_id\":\"" + id + "\"}\n");
  CliRun sel = run({"metewand", "hello", "--select", "one_shot", "--", kWorker});
  EXPECT_EQ(sel.code, 0) << sel.err;
  EXPECT_NE(sel.out.find("\"selected\":[\"one_shot\"]"), std::string::npos);
}

// `--` after --select starts the worker's argv, so `--sdk` reaches the
// worker (CLI11's list option used to eat the `--` and refuse --sdk).
TEST(MetewandHello, DoubleDashAfterSelectStartsTheWorkerArguments) {
  CliRun r = run({"metewand", "hello", "--select", "one_shot", "--", kWorker, "--sdk", "ex:2"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"sdk\":{\"name\":\"ex\",\"version\":\"2\"}"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"selected\":[\"one_shot\"]"), std::string::npos) << r.out;
}

TEST(MetewandHello, TypedErrorsExitOne) {
  std::string dup = temp_file("dup", "{\"id\":\"0\",\"id\":\"0\"}\n");
  struct Case {
    std::vector<std::string> args;
    std::string name;
  };
  std::vector<Case> cases = {
      {{"--", kWorker, "--raw-file", dup}, "DuplicateKey"},
      {{"--worker-id", "mw1-resolved-worker-" + std::string(64, 'a'), "--", kWorker, "--worker-id",
        "mw1-resolved-worker-" + std::string(64, 'b')},
       "WorkerIdentityMismatch"},
      {{"--", kWorker, "--fail", "unsupported_operation"}, "unsupported_operation"},
      {{"--", kWorker, "--id", "7"}, "MismatchedRequestId"},
      {{"--", kWorker, "--extra"}, "ExtraResponse"},
      {{"--role", "problem_evaluator", "--select", "one_shot", "--", kWorker}, "CapabilityForRole"},
      {{"--select", "streaming_profile", "--", kWorker}, "ReservedCapability"},
      {{"--", kWorker, "--exit", "4"}, "UnsuccessfulExit"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"metewand", "hello"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    CliRun r = run(args);
    EXPECT_EQ(r.code, 1) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find(": " + c.name + ": "), std::string::npos) << c.name << ": " << r.err;
    EXPECT_TRUE(r.out.empty());
  }
  CliRun j = run({"metewand", "hello", "--json", "--", kWorker, "--raw-file", dup});
  EXPECT_EQ(j.code, 1);
  EXPECT_EQ(j.out.rfind("{\"error\":{\"code\":\"DOT_E_PROTOCOL\",\"kind\":\"DuplicateKey\"", 0), 0u) << j.out;
  ::unlink(dup.c_str());
}

TEST(MetewandHello, TimeoutIsKeptAndNothingSurvives) {
  CliRun r = run({"metewand", "hello", "--timeout", "0.5", "--", kWorker, "--hang", "--grandchild"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("DOT_E_TIMEOUT: Timeout: ", 0), 0u) << r.err;
  EXPECT_LT(r.took, 3s);
  CliRun linger = run({"metewand", "hello", "--timeout", "0.5", "--", kWorker, "--linger"});
  EXPECT_EQ(linger.code, 1);
  EXPECT_NE(linger.err.find("Timeout"), std::string::npos) << linger.err;
  EXPECT_LT(linger.took, 3s);
}

TEST(MetewandHello, EvenADescendantThatLeftTheGroupDoesNotSurvive) {
  std::string pid_file = testing::TempDir() + "metewand-escape-" + std::to_string(::getpid());
  CliRun r = run({"metewand", "hello", "--", kWorker, "--escape", pid_file});
  EXPECT_EQ(r.code, 0) << r.err;
  std::ifstream in(pid_file);
  long pid = 0;
  in >> pid;
  ASSERT_GT(pid, 1);
  EXPECT_TRUE(process_gone(static_cast<pid_t>(pid))) << "escaped descendant " << pid << " survived";
  ::unlink(pid_file.c_str());
}

// A #! script is refused before anything runs: its interpreter would open
// the file again by path, so the bytes hashed would not be the bytes run.
TEST(MetewandHello, AScriptWorkerIsRefusedAndNeverRuns) {
  std::string marker = testing::TempDir() + "metewand-script-ran-" + std::to_string(::getpid());
  std::string script = temp_file("script", "#!/bin/sh\necho ran > '" + marker + "'\n");
  ASSERT_EQ(::chmod(script.c_str(), 0700), 0);
  CliRun r = run({"metewand", "hello", "--", script});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("DOT_E_POLICY: worker " + script + " is a #! script", 0), 0u) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(::access(marker.c_str(), F_OK), 0) << "the script ran";
  ::unlink(script.c_str());
  ::unlink(marker.c_str());
}

TEST(MetewandHello, AWorkerThatIsNotFoundOrNotAFileIsAnIoError) {
  CliRun missing = run({"metewand", "hello", "--", "dot-no-such-worker"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_EQ(missing.err.rfind("DOT_E_IO: no executable named dot-no-such-worker on PATH", 0), 0u)
      << missing.err;
  CliRun dir = run({"metewand", "hello", "--", "/tmp"});
  EXPECT_EQ(dir.code, 1);
  EXPECT_EQ(dir.err.rfind("DOT_E_IO: ", 0), 0u) << dir.err;
}

TEST(MetewandHello, UsageErrorsExitTwo) {
  EXPECT_EQ(run({"metewand", "hello"}).code, 2);
  EXPECT_EQ(run({"metewand", "hello", "--role", "wizard", "--", kWorker}).code, 2);
  EXPECT_EQ(run({"metewand"}).code, 2);
  CliRun help = run({"metewand", "hello", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("Examples:"), std::string::npos);
}

std::string temp_dir(const std::string& name) {
  std::string path = testing::TempDir() + "metewand-cli-" + name + "-" + std::to_string(::getpid());
  ::mkdir(path.c_str(), 0700);
  return path;
}

TEST(MetewandRun, EveryRoleOfTheExampleWorkerThroughShutdown) {
  std::string dir = temp_dir("run");
  CliRun m = run({"metewand", "run", "--role", "dataset_materializer", "--source-dir", dir + "/src", "--output-dir",
                  dir + "/ds", "--dataset-parameters", R"({"rows":3})", "--dataset-seed", "17", "--", kWorker});
  EXPECT_EQ(m.code, 0) << m.err;
  EXPECT_NE(m.out.find("materialize ok"), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("manifest dataset-manifest.json"), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("shutdown    ok"), std::string::npos) << m.out;
  auto data = read_file(dir + "/ds/data.json", 4096);
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(*data, R"({"dataset_parameters":{"rows":3},"dataset_seed":17})");

  CliRun i = run({"metewand", "run", "--role", "implementation", "--dataset-dir", dir + "/ds", "--problem-contract-id",
                  "c", "--result-dir", dir + "/res", "--", kWorker});
  EXPECT_EQ(i.code, 0) << i.err;
  for (const char* phase : {"hello       ok", "prepare     ok", "execute     ok", "reset       ok", "shutdown    ok"})
    EXPECT_NE(i.out.find(phase), std::string::npos) << phase << "\n" << i.out;

  CliRun e = run({"metewand", "run", "--json", "--role", "problem_evaluator", "--dataset-dir", dir + "/ds",
                  "--problem-contract-id", "c", "--result-dir", dir + "/res", "--metrics-path", dir + "/m.json", "--",
                  kWorker});
  EXPECT_EQ(e.code, 0) << e.err;
  EXPECT_NE(e.out.find(R"("phase":"evaluate","ok":true,"request":{"dataset_dir":")"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find(R"("phase":"shutdown","ok":true,"request":{"id":"2","method":"shutdown"},"response":{"id":"2","ok":true})"),
            std::string::npos)
      << e.out;
  EXPECT_NE(e.out.find(R"("ok":true}
)"), std::string::npos);
}

TEST(MetewandRun, AFailedPhaseStopsTheRequestsButNotTheShutdown) {
  CliRun r = run({"metewand", "run", "--role", "implementation", "--dataset-dir", "d", "--problem-contract-id", "c",
                  "--result-dir", "r", "--", kWorker, "--fail-in", "prepare:operation_failed"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("prepare     FAIL"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("execute"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("shutdown    ok"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("DOT_E_PROTOCOL: operation_failed:"), std::string::npos) << r.err;

  CliRun t = run({"metewand", "run", "--role", "problem_evaluator", "--dataset-dir", "d", "--problem-contract-id", "c",
                  "--result-dir", "r", "--metrics-path", "m", "--evaluate-timeout", "0.3", "--", kWorker, "--hang-in",
                  "evaluate"});
  EXPECT_EQ(t.code, 1);
  EXPECT_NE(t.err.find("DOT_E_TIMEOUT: Timeout:"), std::string::npos) << t.err;
  EXPECT_NE(t.err.find("(phase evaluate)"), std::string::npos) << t.err;
}

TEST(MetewandRun, MissingRequestOptionsAreRefusedBeforeAnythingRuns) {
  CliRun r = run({"metewand", "run", "--role", "problem_evaluator", "--", kWorker});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("needs --dataset-dir"), std::string::npos) << r.err;
  CliRun bad = run({"metewand", "run", "--role", "dataset_materializer", "--source-dir", "s", "--output-dir", "o",
                    "--dataset-parameters", "[1]", "--", kWorker});
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("--dataset-parameters must be one JSON object"), std::string::npos) << bad.err;
  EXPECT_EQ(run({"metewand", "run", "--dataset-seed", "9007199254740992", "--", kWorker}).code, 2);
}

TEST(MetewandHelp, ShowsTheMetewandExamples) {
  CliRun r = run({"metewand", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("dot-core metewand run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dot-core metewand conform"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("dot-core jcs canonicalize"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("dot-core vectors replay"), std::string::npos) << r.out;
}

// The conformance runner's verdict on workers that break one rule each.
TEST(MetewandConform, VerdictsOnWorkersThatBreakOneRule) {
  struct Case {
    std::vector<std::string> args;
    const char* failing;   // a case that must fail
    const char* reason;    // in its detail
    const char* role = "dataset_materializer";
  } cases[] = {
      {{"--no-shutdown-ack"}, "shutdown", "ProtocolClosed"},
      {{"--exit-after-shutdown", "3"}, "shutdown", "UnsuccessfulExit"},
      {{"--wrong-identity"}, "hello_identity", "WorkerIdentityMismatch"},
      {{"--out-of-order"}, "serial_ids", "MismatchedRequestId"},
      {{"--lenient-framing"}, "abuse_duplicate_key", "answered with a success"},
      // A hang in each phase of each role.
      {{"--hang", "hello"}, "hello_identity", "Timeout"},
      {{"--hang", "materialize"}, "materialize_valid", "Timeout"},
      {{"--hang", "prepare"}, "prepare_valid", "Timeout", "implementation"},
      {{"--hang", "execute"}, "execute_valid", "Timeout", "implementation"},
      {{"--hang", "reset"}, "reset_valid", "Timeout", "implementation"},
      {{"--hang", "evaluate"}, "evaluate_valid", "Timeout", "problem_evaluator"},
      {{"--hang", "shutdown"}, "shutdown", "Timeout"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args.back());
    // A hang must reach its deadline soon; every other case gets time enough
    // for a Python worker to start on a loaded machine, so that it fails by
    // its own rule and never by the clock (a hang fails by Timeout whichever
    // phase the deadline catches).
    const bool hang = std::string_view(c.reason) == "Timeout";
    std::vector<std::string> args = {"metewand", "conform", "--role", c.role, "--timeout", hang ? "0.5" : "30",
                                     "--json", "--case", c.failing, "--", kPython, "-B", kPyWorker};
    for (const auto& a : c.args) args.push_back(a);
    CliRun r = run(args);
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find(fmt::format(R"({{"name":"{}","role":"{}","passed":false,"detail":")", c.failing, c.role)),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find(c.reason), std::string::npos) << r.out;
    EXPECT_NE(r.err.find(fmt::format("DOT_E_PROTOCOL: 1 of 1 cases failed; first: {}: ", c.failing)), std::string::npos)
        << r.err;
  }
}

TEST(MetewandConform, WellBehavedWorkersPassEveryCase) {
  for (const char* role : {"dataset_materializer", "implementation", "problem_evaluator"}) {
    SCOPED_TRACE(role);
    CliRun py = run({"metewand", "conform", "--role", role, "--", kPython, "-B", kPyWorker});
    EXPECT_EQ(py.code, 0) << py.out << py.err;
    CliRun ex = run({"metewand", "conform", "--role", role, "--", kWorker});
    EXPECT_EQ(ex.code, 0) << ex.out << ex.err;
    EXPECT_NE(ex.out.find(" passed, 0 failed\n"), std::string::npos) << ex.out;
  }
  CliRun list = run({"metewand", "conform", "--list", "--role", "problem_evaluator"});
  EXPECT_EQ(list.code, 0);
  EXPECT_NE(list.out.find("evaluate_invalid"), std::string::npos) << list.out;
  EXPECT_EQ(list.out.find("prepare_valid"), std::string::npos) << list.out;
  EXPECT_EQ(run({"metewand", "conform", "--case", "nope", "--", kWorker}).code, 1);
}

// jcs --profile metewand names rejections with the public vectors' kinds.
TEST(JcsMetewand, RejectionsCarryMetewandsKindNames) {
  struct Case {
    const char* input;
    const char* kind;
  } cases[] = {
      {"NaN", "invalid_number"},        {"[Infinity]", "invalid_number"}, {"-Infinity", "invalid_number"},
      {"01", "invalid_number"},         {"[1,-00]", "invalid_number"},    {"1e400", "invalid_number"},
      {"null true", "invalid_json"},    {"[1,", "invalid_json"},          {"[0.5,1x]", "invalid_json"},
      {R"({"a":1,"a":2})", "duplicate_key"}, {R"("\ud800")", "invalid_unicode"},
      {"9007199254740992", "unsafe_integer"},
  };
  std::string path = temp_file("jcs-kind", "");
  for (const auto& c : cases) {
    SCOPED_TRACE(c.input);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << c.input;
    for (bool json : {false, true}) {
      std::vector<std::string> args = {"jcs", "canonicalize", "--profile", "metewand", path};
      if (json) args.push_back("--json");
      CliRun r = run(args);
      EXPECT_EQ(r.code, 1);
      std::string want = json ? fmt::format(R"("kind":"{}")", c.kind) : fmt::format("DOT_E_VALIDATION: {} at byte", c.kind);
      EXPECT_NE((json ? r.out : r.err).find(want), std::string::npos) << r.out << r.err;
    }
  }
  // The other profiles keep the reader's own names.
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "NaN";
  EXPECT_NE(run({"jcs", "canonicalize", path}).err.find("DOT_E_VALIDATION: malformed at byte 0"), std::string::npos);
  ::unlink(path.c_str());
}

// A document in the public vectors' format ({version, accepted, rejected},
// no profile) replayed under the metewand profile with strict kinds.
TEST(VectorsReplay, ThePublicMetewandVectorFormat) {
  const std::string doc = std::string(DOT_SOURCE_DIR) + "/tests/metewand/data/metewand-vectors.json";
  CliRun r = run({"vectors", "replay", "--profile", "metewand", "--strict-kinds", doc});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "15 passed, 0 failed\n");
  // Without the profile the document is RFC 8785: 2^53 is accepted there.
  CliRun plain = run({"vectors", "replay", doc});
  EXPECT_EQ(plain.code, 1);
  EXPECT_NE(plain.out.find("2^53: accepted as"), std::string::npos) << plain.out;
  // dot-core's own metewand vectors, which name the reader's kinds, still pass.
  CliRun own = run({"vectors", "replay", "--strict-kinds", std::string(DOT_SOURCE_DIR) + "/vectors/jcs/metewand.json"});
  EXPECT_EQ(own.code, 0) << own.out;
}

}  // namespace
}  // namespace dot
