// The managed-root layout, `init_root` and the root's exclusive lock.
#include <sys/stat.h>

#include "dot/store/root.h"
#include "helpers.h"
#include "run_cli.h"

namespace dot::store {
namespace {

using testing::TempDir;

mode_t mode_of(const std::string& p) {
  struct stat st{};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

TEST(StoreRoot, LayoutIsUnderTheHiddenStateFolder) {
  auto l = RootLayout::for_root("/srv/managed/");
  EXPECT_EQ(l.root, "/srv/managed");
  EXPECT_EQ(l.state_dir, "/srv/managed/.dot");
  EXPECT_EQ(l.database, "/srv/managed/.dot/store.db");
  EXPECT_EQ(l.lock_file, "/srv/managed/.dot/lock");
  EXPECT_EQ(l.plugin_copy, "/srv/managed/.dot/plugin");
  EXPECT_EQ(l.stage_dir, "/srv/managed/.dot/stage");
  auto rel = RootLayout::for_root("some/where");
  EXPECT_EQ(rel.root.front(), '/');
}

TEST(StoreRoot, InitCreatesPrivateRootWithDatabaseAndRootId) {
  TempDir t;
  ::umask(022);
  auto r = init_root(t / "root");
  ASSERT_OK(r);
  EXPECT_EQ(r->root_id.size(), 64u);
  EXPECT_TRUE(is_sha256_hex(r->root_id));
  EXPECT_EQ(mode_of(t / "root"), 0700u);
  EXPECT_EQ(mode_of(t / "root/.dot"), 0700u);
  EXPECT_EQ(mode_of(t / "root/.dot/lock"), 0600u);
  auto s = Store::open(r->layout.database);
  ASSERT_OK(s);
  EXPECT_EQ(*s->root_id(), r->root_id);
  EXPECT_EQ(s->opened_version(), kSchemaVersion);
  // No stray file from the atomic creation.
  struct stat st{};
  EXPECT_NE(::lstat((r->layout.database + ".new").c_str(), &st), 0);
  // Two roots get different ids.
  auto r2 = init_root(t / "root2");
  ASSERT_OK(r2);
  EXPECT_NE(r2->root_id, r->root_id);
}

TEST(StoreRoot, InitRefusesAnyExistingPath) {
  TempDir t;
  ASSERT_EQ(::mkdir((t / "dir").c_str(), 0700), 0);
  auto a = init_root(t / "dir");
  ASSERT_ERR(a, Code::Io);
  EXPECT_EQ(a.error().kind, "exists");
  { std::ofstream((t / "file")) << "x"; }
  ASSERT_ERR(init_root(t / "file"), Code::Io);
  ASSERT_EQ(::symlink("/nonexistent-target", (t / "link").c_str()), 0);
  ASSERT_ERR(init_root(t / "link"), Code::Io);
  // The existing directory was not adopted: nothing was created inside it.
  struct stat st{};
  EXPECT_NE(::lstat((t / "dir/.dot").c_str(), &st), 0);
  ASSERT_ERR(init_root(t / "missing-parent/root"), Code::Io);
}

TEST(StoreRoot, OpenRootNamesWhatIsMissing) {
  TempDir t;
  auto a = open_root(t / "nothing");
  ASSERT_ERR(a, Code::Store);
  auto b = open_root(t.path());
  ASSERT_ERR(b, Code::Store);
  EXPECT_NE(b.error().detail.find(".dot"), std::string::npos);
  ASSERT_OK(init_root(t / "r"));
  ASSERT_OK(open_root(t / "r"));
}

TEST(StoreRoot, SecondLockIsConflictAtOnce) {
  TempDir t;
  ASSERT_OK(init_root(t / "r"));
  auto r = open_root(t / "r");
  ASSERT_OK(r);
  {
    auto first = RootLock::acquire(*r);
    ASSERT_OK(first);
    auto second = RootLock::acquire(*r);
    ASSERT_ERR(second, Code::Conflict);
    // Another process too, and without waiting.
    pid_t pid = ::fork();
    if (pid == 0) {
      auto other = RootLock::acquire(*r);
      ::_exit(!other.ok() && other.error().code == Code::Conflict ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  // Released with its owner.
  ASSERT_OK(RootLock::acquire(*r));
}

TEST(StoreRoot, MutatingCommandGetsConflictWhileReadOnlyOnesWork) {
  TempDir t;
  ASSERT_OK(init_root(t / "r"));
  auto r = open_root(t / "r");
  ASSERT_OK(r);
  auto lock = RootLock::acquire(*r);
  ASSERT_OK(lock);
  auto prune = testing::run_program({testing::dot_core(), "store", "prune", "--root", t / "r", "--keep", "1"}, t.path());
  EXPECT_EQ(prune.exit_code, 1);
  EXPECT_EQ(prune.err.rfind("DOT_E_CONFLICT: ", 0), 0u) << prune.err;
  auto list = testing::run_program({testing::dot_core(), "inspect", "list", "--root", t / "r", "--json"}, t.path());
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out, "[]\n");
  auto check = testing::run_program({testing::dot_core(), "store", "check", "--root", t / "r"}, t.path());
  EXPECT_EQ(check.exit_code, 0) << check.err;
}

TEST(StoreRoot, InitCommand) {
  TempDir t;
  auto a = testing::run_program({testing::dot_core(), "init", "--root", t / "r", "--json"}, t.path());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.out.find("\"root_id\":\""), std::string::npos) << a.out;
  auto b = testing::run_program({testing::dot_core(), "init", "--root", t / "r"}, t.path());
  EXPECT_EQ(b.exit_code, 1);
  EXPECT_EQ(b.err.rfind("DOT_E_IO: ", 0), 0u) << b.err;
  auto c = testing::run_program({testing::dot_core(), "init"}, t.path());
  EXPECT_EQ(c.exit_code, 2);
}

}  // namespace
}  // namespace dot::store
