// The spawn helper's orphan handling: a grandchild that leaves the process
// group with setsid is re-parented to us (subreaper), found and killed, while
// a child that a ChildProcess owns is never touched.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>

#include "dot/base/process.h"

namespace dot {
namespace {

TEST(OrphanSweep, FindsAndKillsASetsidGrandchildButNotOwnedChildren) {
  ASSERT_TRUE(become_child_subreaper().ok());
  SpawnOptions keep;
  keep.path = "/bin/sleep";
  keep.argv = {"sleep", "30"};
  auto owned = spawn(keep);
  ASSERT_TRUE(owned.ok());

  SpawnOptions o;
  o.path = "/bin/sh";
  // The shell starts a grandchild in its own session, prints its pid, exits.
  o.argv = {"sh", "-c", "setsid sleep 30 </dev/null >/dev/null 2>&1 & echo $!"};
  auto child = spawn(o);
  ASSERT_TRUE(child.ok());
  auto out = read_all(child->stdout_fd().get(), 64);
  ASSERT_TRUE(out.ok());
  pid_t grandchild = std::atoi(out->c_str());
  ASSERT_GT(grandchild, 0);
  ASSERT_TRUE(child->wait_until(Clock::now() + std::chrono::seconds(5)).has_value());
  // The shell is gone; its child is now ours.
  auto kids = list_children();
  EXPECT_NE(std::find(kids.begin(), kids.end(), grandchild), kids.end());
  EXPECT_EQ(kill_orphans(), 1u);
  EXPECT_NE(::kill(grandchild, 0), 0);
  // The owned child is untouched and still ours to reap.
  EXPECT_FALSE(owned->try_wait().has_value());
  EXPECT_EQ(owned->kill_and_reap().signal, SIGKILL);
  EXPECT_TRUE(list_children().empty());
}

TEST(OrphanSweep, ReapOrphansNeverStealsAnOwnedChildsStatus) {
  SpawnOptions o;
  o.path = "/bin/sh";
  o.argv = {"sh", "-c", "exit 7"};
  auto child = spawn(o);
  ASSERT_TRUE(child.ok());
  ::usleep(100000);
  reap_orphans();
  auto st = child->wait_until(Clock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->code, 7);
}

}  // namespace
}  // namespace dot
