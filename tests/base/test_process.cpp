#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "dot/base/process.h"

namespace dot {
namespace {

std::string read_to_end(UniqueFd& fd) {
  auto r = read_all(fd.get(), 1 << 20);
  return r.ok() ? *r : std::string("<read error>");
}

TEST(Spawn, ExactEnvironmentAndWorkingDirectory) {
  SpawnOptions o;
  o.path = "/usr/bin/env";
  o.argv = {"env"};
  o.env = {"LANG=C", "DOT_STAGE_ROOT=/tmp"};
  o.cwd = "/tmp";
  o.stdin_mode = StdioMode::DevNull;
  auto child = spawn(o);
  ASSERT_TRUE(child.ok()) << child.error().line();
  EXPECT_EQ(read_to_end(child->stdout_fd()), "LANG=C\nDOT_STAGE_ROOT=/tmp\n");
  auto st = child->wait_until(Clock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(st.has_value());
  EXPECT_TRUE(st->success());
}

TEST(Spawn, OnlyStdioAndKeptDescriptorsAreInherited) {
  int leak = ::open("/dev/null", O_RDONLY);  // deliberately not close-on-exec
  ASSERT_GE(leak, 0);
  auto p = make_pipe();
  ASSERT_TRUE(p.ok());
  SpawnOptions o;
  o.path = "/bin/ls";
  o.argv = {"ls", "/proc/self/fd"};
  o.keep_fds = {{p->read.get(), 7}};
  auto child = spawn(o);
  ::close(leak);
  ASSERT_TRUE(child.ok()) << child.error().line();
  // ls itself opens one descriptor for the directory it lists (3).
  EXPECT_EQ(read_to_end(child->stdout_fd()), "0\n1\n2\n3\n7\n");
  EXPECT_TRUE(child->wait_until(Clock::now() + std::chrono::seconds(5))->success());
}

TEST(Spawn, ExecFromDescriptor) {
  UniqueFd exe(::open("/bin/echo", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(exe);
  SpawnOptions o;
  o.exec_fd = exe.get();
  o.argv = {"echo", "hi"};
  auto child = spawn(o);
  ASSERT_TRUE(child.ok()) << child.error().line();
  EXPECT_EQ(read_to_end(child->stdout_fd()), "hi\n");
  EXPECT_TRUE(child->wait_until(Clock::now() + std::chrono::seconds(5))->success());
}

TEST(Spawn, FailuresBeforeExecAreReported) {
  SpawnOptions o;
  o.path = "/nonexistent/program";
  o.argv = {"x"};
  auto child = spawn(o);
  ASSERT_FALSE(child.ok());
  EXPECT_NE(child.error().detail.find("exec failed"), std::string::npos) << child.error().detail;

  o.path = "/bin/true";
  o.cwd = "/nonexistent-dir";
  child = spawn(o);
  ASSERT_FALSE(child.ok());
  EXPECT_NE(child.error().detail.find("changing directory"), std::string::npos);
}

TEST(ChildProcess, DestructorKillsTheWholeGroup) {
  pid_t grandchild = -1;
  {
    SpawnOptions o;
    o.path = "/bin/sh";
    o.argv = {"sh", "-c", "sleep 30 & echo $!; wait"};
    auto child = spawn(o);
    ASSERT_TRUE(child.ok());
    char buf[32] = {};
    ssize_t n = ::read(child->stdout_fd().get(), buf, sizeof buf - 1);
    ASSERT_GT(n, 0);
    grandchild = std::atoi(buf);
    ASSERT_GT(grandchild, 0);
  }
  // The grandchild was in the group, so it got SIGKILL too (it may linger as
  // a zombie of init for a moment; kill(0) then still succeeds, so poll).
  for (int i = 0; i < 200 && ::kill(grandchild, 0) == 0; ++i) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", grandchild);
    FILE* f = std::fopen(path, "r");
    if (!f) break;
    char state = '?';
    int ignored = std::fscanf(f, "%*d %*s %c", &state);
    (void)ignored;
    std::fclose(f);
    if (state == 'Z') break;
    ::usleep(10000);
  }
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", grandchild);
  FILE* f = std::fopen(path, "r");
  if (f) {
    char state = '?';
    int ignored = std::fscanf(f, "%*d %*s %c", &state);
    (void)ignored;
    std::fclose(f);
    EXPECT_EQ(state, 'Z');
  }
}

TEST(ChildProcess, WaitUntilTimesOutThenKillReaps) {
  SpawnOptions o;
  o.path = "/bin/sleep";
  o.argv = {"sleep", "30"};
  auto child = spawn(o);
  ASSERT_TRUE(child.ok());
  auto t0 = Clock::now();
  EXPECT_FALSE(child->wait_until(t0 + std::chrono::milliseconds(100)).has_value());
  auto st = child->kill_and_reap();
  EXPECT_EQ(st.signal, SIGKILL);
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
}

}  // namespace
}  // namespace dot
