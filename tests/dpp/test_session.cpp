#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drive.h"
#include "dot/base/fd.h"
#include "dot/base/process.h"
#include "dot/dpp/plugin.h"

namespace dot::dpp {
namespace {

using testing::bin;
using testing::drive;
using testing::TempStage;

std::string slurp(const std::string& path) {
  auto r = read_file(path, 1 << 20);
  return r.ok() ? *r : std::string("<unreadable>");
}

TEST(HostSession, DotHelloCompletesACleanSession) {
  TempStage stage;
  auto r = drive(bin("dot-hello"), stage.path());
  ASSERT_TRUE(r.status.ok()) << r.status.error().line() << "\nstderr: " << r.stderr_bytes;
  EXPECT_EQ(r.stderr_bytes, "");
  ASSERT_EQ(r.hello.artifacts.size(), 2u);
  for (const auto& a : r.hello.artifacts) {
    std::string path = stage.path() + "/" + a.name;
    struct stat st{};
    ASSERT_EQ(::lstat(path.c_str(), &st), 0) << path;
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), a.size);
    EXPECT_EQ(sha256_hex(slurp(path)), a.sha256);
    EXPECT_EQ(slurp(path), HelloPlugin::content(a.name));
  }
  EXPECT_TRUE(list_children().empty());
}

TEST(HostSession, CallsOutOfOrderAreRefusedWithoutTouchingThePlugin) {
  TempStage stage;
  UniqueFd fd(::open(bin("dot-hello").c_str(), O_RDONLY | O_CLOEXEC));
  HostSessionOptions o;
  o.exec_fd = fd.get();
  o.stage_dir = stage.path();
  auto s = HostSession::start(std::move(o));
  ASSERT_TRUE(s.ok()) << s.error().line();
  auto plan = s->plan();
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().code, Code::Internal);
  EXPECT_FALSE(s->finish().ok());
  pid_t pid = s->pid();
  s->abort();
  EXPECT_TRUE(s->ended());
  EXPECT_NE(::kill(pid, 0), 0);
}

TEST(HostSession, DestroyingTheSessionKillsAndReapsThePlugin) {
  TempStage stage;
  pid_t pid = -1;
  {
    UniqueFd fd(::open(bin("dpp-hostile-sleep_past_deadline").c_str(), O_RDONLY | O_CLOEXEC));
    HostSessionOptions o;
    o.exec_fd = fd.get();
    o.stage_dir = stage.path();
    auto s = HostSession::start(std::move(o));
    ASSERT_TRUE(s.ok());
    pid = s->pid();
    auto echo = s->initialize(hello::initialize_params("audit", std::string(64, 'a')));
    ASSERT_TRUE(echo.ok()) << echo.error().line();
  }
  EXPECT_NE(::kill(pid, 0), 0);
  EXPECT_TRUE(list_children().empty());
}

// A library does not change the process's signal dispositions: a write to a
// plugin that is gone is an error value (base's write_before blocks SIGPIPE
// for the write), so a host that left SIGPIPE at its default survives
// without the session ignoring it process-wide.
TEST(HostSession, LeavesTheSigpipeDispositionAlone) {
  struct sigaction dfl {}, old {}, after {};
  dfl.sa_handler = SIG_DFL;
  ASSERT_EQ(::sigaction(SIGPIPE, &dfl, &old), 0);
  TempStage stage;
  auto r = drive(bin("dpp-hostile-exits_before_shutdown"), stage.path());
  ASSERT_EQ(::sigaction(SIGPIPE, &old, &after), 0);
  EXPECT_FALSE(r.status.ok());
  EXPECT_EQ(after.sa_handler, SIG_DFL);
  EXPECT_TRUE(list_children().empty());
}

TEST(HostSession, BadOptionsAreRefused) {
  HostSessionOptions o;
  o.stage_dir = "/tmp";
  EXPECT_EQ(HostSession::start(o).error().code, Code::Internal);
  o.exec_fd = 0;
  o.stage_dir = "relative";
  EXPECT_EQ(HostSession::start(o).error().code, Code::Internal);
}

TEST(HostSession, ThePluginGetsExactlyTheSpecifiedStart) {
  TempStage stage;
  auto r = drive(bin("dpp-probe"), stage.path());
  ASSERT_TRUE(r.status.ok()) << r.status.error().line();
  // Environment exactly LANG=C and DOT_STAGE_ROOT, working directory the
  // stage, only the three pipes open, its own process group.
  std::string want = "env LANG=C\nenv DOT_STAGE_ROOT=" + stage.path() + "\ncwd " + stage.path() +
                     "\nfd 0\nfd 1\nfd 2\npgid_is_pid 1\n";
  EXPECT_EQ(slurp(stage.path() + "/probe.txt"), want);
}

TEST(HostSession, StdoutCapIsEnforcedAtTheByte) {
  // dot-hello's answers total well under 2 KiB; a lowered cap proves the
  // limit logic that the 512 KiB default applies.
  TempStage stage;
  testing::DriveOptions opt;
  opt.limits.stdout_cap = 300;
  auto r = drive(bin("dot-hello"), stage.path(), opt);
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.error().code, Code::Protocol);
  EXPECT_EQ(r.status.error().kind, "stdout_limit");
  EXPECT_TRUE(list_children().empty());
}

}  // namespace
}  // namespace dot::dpp
