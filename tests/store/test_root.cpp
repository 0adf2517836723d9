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

// A folder of `depth` nested 100-byte names below `base`, made.
std::string deep_folder(const std::string& base, int depth) {
  std::string p = base;
  for (int i = 0; i < depth; ++i) {
    p += "/" + std::string(100, static_cast<char>('a' + i));
    EXPECT_EQ(::mkdir(p.c_str(), 0700), 0) << p;
  }
  return p;
}

TEST(StoreRoot, RootPathSqliteCannotOpenIsRefusedBeforeAnythingIsMade) {
  TempDir t;
  // Some 510 bytes of folders: more than SQLite opens (504), and still far
  // below PATH_MAX, so every other call would accept it.
  std::string parent = deep_folder(t.path(), 5);
  for (const std::string& name : {std::string("r"), std::string(40, 'r')}) {
    auto r = testing::run_program({testing::dot_core(), "init", "--root", parent + "/" + name}, t.path());
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_EQ(r.err.rfind("DOT_E_IO: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("SQLite opens at most 504"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(parent + "/" + name + "/.dot/store.db"), std::string::npos) << r.err;
    struct stat st{};
    EXPECT_NE(::lstat((parent + "/" + name).c_str(), &st), 0) << "a half-made root was left behind";
  }
  // A symlink does not hide the length: SQLite resolves it.
  ASSERT_EQ(::symlink(parent.c_str(), (t / "short").c_str()), 0);
  auto via_link = init_root(t / "short/r");
  ASSERT_ERR(via_link, Code::Io);
  EXPECT_EQ(via_link.error().kind, "path_too_long");
  // Exactly at the limit works, and the root made there opens.
  const std::size_t tail = std::string("/.dot/store.db.new").size();
  std::string fits = t.path();
  for (;;) {
    std::size_t room = 504 - tail - fits.size() - 1;  // for the next name
    if (room <= 100) {
      fits += "/" + std::string(room, 'x');
      break;
    }
    fits += "/" + std::string(100, 'y');
    ASSERT_EQ(::mkdir(fits.c_str(), 0700), 0) << fits;
  }
  ASSERT_EQ(fits.size() + tail, 504u);
  auto ok = init_root(fits);
  ASSERT_OK(ok);
  ASSERT_OK(open_root(fits));
  // A root moved to a longer path is named as such, not "unable to open".
  std::string moved = parent + "/m";
  ASSERT_EQ(::rename(fits.c_str(), moved.c_str()), 0);
  auto r = testing::run_program({testing::dot_core(), "inspect", "list", "--root", moved}, t.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("DOT_E_IO: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("choose a shorter root path"), std::string::npos) << r.err;
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
