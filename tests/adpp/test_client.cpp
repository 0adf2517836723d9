// The client against real provider processes: adpp-sim and the broken fixtures.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string_view>

#include "dot/adpp/client.h"

namespace dot::adpp {
namespace {

using std::chrono::milliseconds;

const std::string kSim = DOT_BIN_DIR "/adpp-sim";
const std::string kBroken = DOT_BIN_DIR "/adpp-broken";

ClientOptions quick(milliseconds timeout = milliseconds(10000)) {
  ClientOptions o;
  o.request_timeout = timeout;
  return o;
}

TEST(AdppClient, SessionWithAdppSim) {
  auto c = Client::launch({kSim, "--config", DOT_SOURCE_DIR "/adpp/examples/lab.textproto"}, quick());
  ASSERT_TRUE(c.ok()) << c.error().line();
  auto hello = c->hello();
  ASSERT_TRUE(hello.ok()) << hello.error().line();
  EXPECT_EQ(hello->provider_name(), "adpp-sim-lab");

  pb::Request wait;
  wait.mutable_wait_ready();
  auto ready = c->request(wait);
  ASSERT_TRUE(ready.ok()) << ready.error().line();
  EXPECT_EQ(ready->wait_ready().diagnostics().at("init_time_ms"), "300");

  pb::Request list;
  list.mutable_list_devices();
  auto devices = c->request(list);
  ASSERT_TRUE(devices.ok());
  EXPECT_EQ(devices->request_id(), 3u);  // ids count up from 1
  EXPECT_EQ(devices->list_devices().devices_size(), 3);

  pb::Request call;
  call.set_request_id(0xFFFFFFFFFFFFFFF0ull);
  call.mutable_call()->set_device_id("psu0");
  call.mutable_call()->set_function_name("set_voltage");
  pb::Value v;
  v.set_type(pb::VALUE_TYPE_DOUBLE);
  v.set_double_value(12.0);
  (*call.mutable_call()->mutable_args())["volts"] = v;
  auto called = c->request(call);
  ASSERT_TRUE(called.ok()) << called.error().line();
  EXPECT_EQ(called->call().results().at("voltage_v").double_value(), 12.0);

  auto exit = c->shutdown();
  ASSERT_TRUE(exit.ok());
  EXPECT_TRUE(exit->success()) << exit->describe();
}

TEST(AdppClient, ProviderThatCannotStartIsAnIoError) {
  auto c = Client::launch({"/nonexistent/provider"}, quick());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, Code::Io);
}

struct BrokenCase {
  const char* mode;
  const char* kind;
};

class AdppClientBroken : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(AdppClientBroken, HelloFailsWithTheNamedKind) {
  // Only the hang and drip cases are about the deadline. The others answer
  // at once; a short deadline there would turn a slow start (a sanitizer
  // build on a loaded machine takes more than 400 ms to exec) into "timeout".
  const bool about_the_deadline = std::string_view(GetParam().kind) == "timeout";
  auto c = Client::launch({kBroken, GetParam().mode},
                          quick(about_the_deadline ? milliseconds(400) : milliseconds(10000)));
  ASSERT_TRUE(c.ok());
  auto start = Clock::now();
  auto hello = c->hello();
  ASSERT_FALSE(hello.ok());
  // One timeout code in every host of the project.
  EXPECT_EQ(hello.error().code, about_the_deadline ? Code::Timeout : Code::Protocol) << hello.error().line();
  EXPECT_EQ(hello.error().kind, GetParam().kind) << hello.error().line();
  // The deadline is absolute: a drip or a hang ends near it, far below the
  // several seconds a dripped Hello response takes.
  if (about_the_deadline) {
    EXPECT_LT(Clock::now() - start, milliseconds(2500));
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, AdppClientBroken,
                         ::testing::Values(BrokenCase{"hang", "timeout"}, BrokenCase{"drip", "timeout"},
                                           BrokenCase{"wrong-id", "request_id"},
                                           BrokenCase{"no-metadata", "metadata"},
                                           BrokenCase{"over-cap-response", "length"},
                                           BrokenCase{"unparseable-response", "parse"},
                                           BrokenCase{"stdout-banner", "length"}),
                         [](const auto& param_info) {
                           std::string n = param_info.param.mode;
                           for (auto& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

TEST(AdppClient, KilledAndReapedOnDestruction) {
  pid_t pid;
  {
    auto c = Client::launch({kBroken, "hang"}, quick());
    ASSERT_TRUE(c.ok());
    pid = c->process().pid();
    ASSERT_GT(pid, 0);
  }
  // Reaped: the pid no longer names our child.
  EXPECT_NE(::kill(pid, 0), 0);
}

TEST(AdppClient, WriteToAProviderThatExitedIsAnErrorNotASignal) {
  ProviderProcess p = std::move(ProviderProcess::launch({kBroken, "exit-code"})).value();
  auto deadline = Clock::now() + milliseconds(3000);
  ASSERT_TRUE(p.write(std::string("\x00\x00\x00\x00", 4), deadline).ok());
  auto st = p.wait_exit(deadline);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->code, 1);
  // The reader is gone: EPIPE comes back as an error (SIGPIPE is not ignored here).
  Status w = p.write(std::string(100000, 'x'), deadline);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().kind, "closed");
}

// A provider that exited before reading refuses the write of Hello (the
// race the exit usually wins or loses by a hair is here decided: it has
// exited and been reaped). The verdict is what stdout says, as when the
// write got through: closed without an answer.
TEST(AdppClient, AProviderThatExitedBeforeReadingClosedStdoutWithoutAnswering) {
  auto c = Client::launch({kBroken, "exit-before-reading"}, quick());
  ASSERT_TRUE(c.ok()) << c.error().line();
  auto st = c->process().wait_exit(Clock::now() + milliseconds(10000));
  ASSERT_TRUE(st.has_value());
  ASSERT_EQ(st->code, 0);
  // The write is refused: the reader is gone.
  ASSERT_FALSE(c->process().write("x", Clock::now() + milliseconds(1000)).ok());
  auto hello = c->hello();
  ASSERT_FALSE(hello.ok());
  EXPECT_EQ(hello.error().code, Code::Protocol);
  EXPECT_EQ(hello.error().kind, "closed");
  EXPECT_EQ(hello.error().detail, "the provider closed stdout without answering");
}

pid_t read_pid(const std::string& path) {
  std::ifstream in(path);
  long pid = 0;
  in >> pid;
  return static_cast<pid_t>(pid);
}

// No process has the pid any more: not a running one, not a zombie (a
// zombie can still be signalled). Kills it if it is there, so that a
// failure leaves nothing running.
bool pid_gone(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  ::kill(pid, SIGKILL);
  return false;
}

// A provider's child that called setsid() left the process group, so the
// group kill misses it; the client, a subreaper, kills and reaps it after
// the provider ends.
TEST(AdppClient, ASetsidGrandchildIsKilledAndReapedAtShutdown) {
  std::string dir = testing::TempDir() + "adpp-grandchild-XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const std::string pid_file = dir + "/pid";
  {
    auto c = Client::launch({kBroken, "setsid-grandchild", pid_file}, quick());
    ASSERT_TRUE(c.ok()) << c.error().line();
    ASSERT_TRUE(c->hello().ok());
    auto st = c->shutdown();
    ASSERT_TRUE(st.ok()) << st.error().line();
    EXPECT_EQ(st->code, 0);
    // The provider wrote the pid before it answered Hello.
    pid_t grandchild = read_pid(pid_file);
    ASSERT_GT(grandchild, 0);
    EXPECT_TRUE(pid_gone(grandchild)) << "the setsid grandchild " << grandchild << " outlived shutdown()";
  }
  ::unlink(pid_file.c_str());
  // Without shutdown(): the destructor sweeps too.
  {
    auto launched = Client::launch({kBroken, "setsid-grandchild", pid_file}, quick());
    ASSERT_TRUE(launched.ok()) << launched.error().line();
    std::optional<Client> c(std::move(launched).value());
    ASSERT_TRUE(c->hello().ok());
    pid_t grandchild = read_pid(pid_file);
    ASSERT_GT(grandchild, 0);
    c.reset();
    EXPECT_TRUE(pid_gone(grandchild)) << "the setsid grandchild " << grandchild << " outlived the client";
  }
  ::unlink(pid_file.c_str());
  ::rmdir(dir.c_str());
}

// A bare provider name is searched on PATH, but only in absolute entries: a
// provider sitting in a relative entry (here "rel", under the current
// directory) is not run, and the error says why it was not found.
TEST(AdppClient, ABareNameIsNotSearchedInRelativePathEntries) {
  std::string tmpl = testing::TempDir() + "adpp-path-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  ASSERT_EQ(::mkdir((tmpl + "/rel").c_str(), 0700), 0);
  {
    std::ifstream in(kSim, std::ios::binary);
    std::ofstream out(tmpl + "/rel/dot-test-provider", std::ios::binary);
    out << in.rdbuf();
  }
  ASSERT_EQ(::chmod((tmpl + "/rel/dot-test-provider").c_str(), 0700), 0);
  char old_cwd[4096];
  ASSERT_NE(::getcwd(old_cwd, sizeof old_cwd), nullptr);
  const char* old_path = std::getenv("PATH");
  std::string saved_path = old_path != nullptr ? old_path : "";
  ASSERT_EQ(::chdir(tmpl.c_str()), 0);
  ::setenv("PATH", "rel::.", 1);
  auto c = Client::launch({"dot-test-provider", "--config", DOT_SOURCE_DIR "/adpp/examples/lab.textproto"}, quick());
  ::setenv("PATH", saved_path.c_str(), 1);
  ASSERT_EQ(::chdir(old_cwd), 0);
  ::unlink((tmpl + "/rel/dot-test-provider").c_str());
  ::rmdir((tmpl + "/rel").c_str());
  ::rmdir(tmpl.c_str());
  ASSERT_FALSE(c.ok()) << "a provider in a relative PATH entry was started";
  EXPECT_EQ(c.error().code, Code::Io);
  EXPECT_EQ(c.error().kind, "not_found");
  EXPECT_NE(c.error().detail.find("3 empty or relative PATH entries were not searched"), std::string::npos)
      << c.error().detail;
}

}  // namespace
}  // namespace dot::adpp
