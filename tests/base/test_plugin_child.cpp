// PluginChild (base/plugin_child.h), the session every protocol host builds
// on: buffered reads under the output cap, the one timeout error, paced
// writes, a protocol on its own pipe pair, the signal-death explanation and
// the survivors a sweep finds. Deadlines are only ever reached by a child
// that outlives them on any schedule (it sleeps for a minute), so no verdict
// here depends on timing.
#include <gtest/gtest.h>

#include <signal.h>

#include <string>

#include "dot/base/plugin_child.h"

#include "../common/process_gone.h"

namespace dot {
namespace {

using namespace std::chrono_literals;

PluginChildOptions sh(const std::string& script) {
  PluginChildOptions o;
  o.spawn.path = "/bin/sh";
  o.spawn.argv = {"sh", "-c", script};
  o.spawn.env = {"PATH=/usr/bin:/bin"};
  return o;
}

PluginChild start(PluginChildOptions o, std::chrono::milliseconds deadline = 30s) {
  auto c = PluginChild::spawn(std::move(o));
  EXPECT_TRUE(c.ok()) << c.error().line();
  PluginChild child = std::move(c).value();
  child.set_deadline(Clock::now() + deadline);
  return child;
}

TEST(PluginChild, ReadsWholeChunksAndStopsOneBytePastTheOutputCap) {
  PluginChildOptions o = sh("head -c 1000 /dev/zero; exec sleep 60");
  o.output_cap = 10;
  PluginChild child = start(std::move(o));
  char buf[4096];
  std::size_t got = 0;
  while (!child.over_output_cap()) {
    auto n = child.read(buf, sizeof buf);
    ASSERT_TRUE(n.ok()) << n.error().line();
    ASSERT_GT(*n, 0u);
    got += *n;
  }
  EXPECT_EQ(got, 11u);
  EXPECT_EQ(child.output_total(), 11u);
}

TEST(PluginChild, ADeadlineIsTheOneTimeoutError) {
  PluginChild child = start(sh("exec sleep 60"), 200ms);
  char buf[16];
  auto n = child.read(buf, sizeof buf);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().code, Code::Timeout);
  EXPECT_EQ(n.error().kind, "timeout");
  EXPECT_FALSE(child.wait_exit().has_value());
  Error e = timeout_error("no answer");
  EXPECT_EQ(e.code, Code::Timeout);
  EXPECT_EQ(e.kind, "timeout");
  EXPECT_EQ(e.detail, "no answer");
}

TEST(PluginChild, PacedWritesWaitUntilTheChildReadEachByte) {
  // The child reads three bytes and then never reads again: a whole write
  // fits in the pipe at once, a paced one waits for the fourth byte to be
  // read until the deadline.
  PluginChildOptions o = sh("head -c 3 >/dev/null; exec sleep 60");
  o.paced_input = true;
  PluginChild paced = start(std::move(o), 300ms);
  Status w = paced.write_paced("abcdef");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code, Code::Timeout);

  PluginChild whole = start(sh("head -c 3 >/dev/null; exec sleep 60"), 300ms);
  EXPECT_TRUE(whole.write("abcdef").ok());
}

TEST(PluginChild, PacedWritesEndWhenTheChildExits) {
  PluginChildOptions o = sh("head -c 3 >/dev/null");
  o.paced_input = true;
  PluginChild child = start(std::move(o));
  Status w = child.write_paced("abcdef");
  EXPECT_TRUE(w.ok() || w.error().kind == "closed") << w.error().line();
  auto status = child.wait_exit();
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(status->success());
}

TEST(PluginChild, TheProtocolCanRunOnItsOwnPipes) {
  PluginChildOptions o = sh("echo to-the-log; echo oops >&2; read line <&3; echo \"got $line\" >&4");
  o.protocol_fds = std::pair{3, 4};
  PluginChild child = start(std::move(o));
  ASSERT_TRUE(child.write("hi\n").ok());
  std::string answer;
  char buf[64];
  for (;;) {
    auto n = child.read(buf, sizeof buf);
    ASSERT_TRUE(n.ok()) << n.error().line();
    if (*n == 0) break;
    answer.append(buf, *n);
  }
  EXPECT_EQ(answer, "got hi\n");
  ASSERT_TRUE(child.wait_exit().has_value());
  child.drain_logs_until(Clock::now() + 30s);
  EXPECT_EQ(child.stdout_log().bytes(), "to-the-log\n");
  EXPECT_EQ(child.stderr_log().bytes(), "oops\n");
}

TEST(PluginChild, ASignalDeathIsExplained) {
  PluginChild child = start(sh("kill -TERM $$"));
  char buf[16];
  auto n = child.read(buf, sizeof buf);
  ASSERT_TRUE(n.ok()) << n.error().line();
  EXPECT_EQ(*n, 0u);
  auto death = child.signal_death(true, nullptr);
  ASSERT_TRUE(death.has_value());
  EXPECT_NE(death->signal.find("SIGTERM"), std::string::npos) << death->signal;
  // A child the host killed itself has no death to explain.
  PluginChild killed = start(sh("exec sleep 60"));
  killed.kill_all();
  EXPECT_FALSE(killed.signal_death(true, nullptr).has_value());
}

TEST(PluginChild, TheSweepCountsAndKillsADescendantThatLeftTheGroup) {
  PluginChildOptions o = sh("setsid sleep 60 & echo $!");
  o.sweep_orphans = true;
  PluginChild child = start(std::move(o));
  std::string line;
  char buf[64];
  while (line.find('\n') == std::string::npos) {
    auto n = child.read(buf, sizeof buf);
    ASSERT_TRUE(n.ok()) << n.error().line();
    ASSERT_GT(*n, 0u);
    line.append(buf, *n);
  }
  const auto escaped = static_cast<pid_t>(std::stol(line));
  ASSERT_TRUE(child.wait_exit().has_value());
  EXPECT_EQ(child.kill_survivors(), 1u);
  EXPECT_TRUE(process_gone(escaped));
}

}  // namespace
}  // namespace dot
