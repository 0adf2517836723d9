// The managed-root layout, `init_root` and the root's exclusive lock.
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "dot/base/write_access.h"
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

// Every entry below `dir` as "path mode mtime size owner bytes": what init
// in place must leave exactly as it was (the folder's own mtime changes with
// the .dot entry made in it; its mode is checked apart).
std::string tree_facts(const std::string& dir) {
  std::string out;
  std::vector<std::filesystem::path> paths;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  for (const auto& p : paths) {
    struct stat st{};
    EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
    out += fmt::format("{} {:o} {}.{} {} {}:{}", p.string(), st.st_mode, st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
                       st.st_size, st.st_uid, st.st_gid);
    if (S_ISREG(st.st_mode)) {
      std::ifstream in(p);
      out += " " + std::string(std::istreambuf_iterator<char>(in), {});
    }
    out += "\n";
  }
  return out;
}

TEST(StoreRoot, InitTakesAnExistingFolderAsItIs) {
  TempDir t;
  const std::string home = t / "home";
  ASSERT_EQ(::mkdir(home.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(home.c_str(), 0751), 0);
  ASSERT_EQ(::mkdir((home + "/.config").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((home + "/.config/git").c_str(), 0755), 0);
  { std::ofstream(home + "/.profile") << "export EDITOR=vi\n"; }
  { std::ofstream(home + "/.config/git/config") << "[user]\n"; }
  ASSERT_EQ(::symlink(".profile", (home + "/.bashrc").c_str()), 0);
  const std::string before = tree_facts(home);
  auto r = init_root(home);
  ASSERT_OK(r);
  EXPECT_EQ(r->layout.root, home);
  // The folder keeps its mode; only .dot (private) was added in it.
  EXPECT_EQ(mode_of(home), 0751u);
  EXPECT_EQ(mode_of(home + "/.dot"), 0700u);
  ASSERT_OK(open_root(home));
  std::filesystem::remove_all(home + "/.dot");
  EXPECT_EQ(tree_facts(home), before);
  // Found from a folder inside it, as git finds its repository.
  ASSERT_OK(init_root(home));
  auto found = discover_root(home + "/.config/git");
  ASSERT_OK(found);
  EXPECT_EQ(*found, home);
  // A second init is refused and changes nothing.
  const std::string managed = tree_facts(home);
  auto again = init_root(home);
  ASSERT_ERR(again, Code::Io);
  EXPECT_EQ(again.error().kind, "exists");
  EXPECT_NE(again.error().detail.find("already holds .dot"), std::string::npos) << again.error().detail;
  EXPECT_EQ(tree_facts(home), managed);
  // Through the command line, with the user's own umask.
  const std::string etc = t / "etc";
  ASSERT_EQ(::mkdir(etc.c_str(), 0755), 0);
  auto cli = testing::run_program({testing::dot_core(), "init", "--root", etc}, t.path());
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_EQ(mode_of(etc), 0755u);
}

TEST(StoreRoot, InitRefusesWhatCannotBeARoot) {
  TempDir t;
  { std::ofstream((t / "file")) << "x"; }
  auto file = init_root(t / "file");
  ASSERT_ERR(file, Code::Io);
  EXPECT_EQ(file.error().kind, "exists");
  ASSERT_EQ(::mkdir((t / "dir").c_str(), 0700), 0);
  ASSERT_EQ(::symlink((t / "dir").c_str(), (t / "link").c_str()), 0);
  auto link = init_root(t / "link");
  ASSERT_ERR(link, Code::Io);
  EXPECT_NE(link.error().detail.find("symlink"), std::string::npos) << link.error().detail;
  ASSERT_EQ(::symlink("/nonexistent-target", (t / "dangling").c_str()), 0);
  ASSERT_ERR(init_root(t / "dangling"), Code::Io);
  ASSERT_ERR(init_root(t / "missing-parent/root"), Code::Io);
  // Others can write it: refused whoever the group is.
  ASSERT_EQ(::chmod((t / "dir").c_str(), 0757), 0);
  auto open_to_all = init_root(t / "dir");
  ASSERT_ERR(open_to_all, Code::Policy);
  EXPECT_EQ(open_to_all.error().kind, "root_writable");
  EXPECT_NE(open_to_all.error().detail.find("mode 0757: every user can write it"), std::string::npos)
      << open_to_all.error().detail;
  // A group that is not the owner's private group can write it: the
  // refusal names the mode and the group (this one has no entry at all).
  const gid_t unknown = 4000000123u;
  ASSERT_EQ(::getgrgid(unknown), nullptr);
  ASSERT_EQ(::chown((t / "dir").c_str(), ::geteuid(), unknown), 0);
  ASSERT_EQ(::chmod((t / "dir").c_str(), 0770), 0);
  auto shared = init_root(t / "dir");
  ASSERT_ERR(shared, Code::Policy);
  EXPECT_EQ(shared.error().kind, "root_writable");
  EXPECT_NE(shared.error().detail.find("mode 0770: group 4000000123 has no entry"), std::string::npos)
      << shared.error().detail;
  // Another user's folder, however private.
  ASSERT_EQ(::chown((t / "dir").c_str(), ::geteuid() + 1000, ::getegid()), 0);
  ASSERT_EQ(::chmod((t / "dir").c_str(), 0700), 0);
  auto theirs = init_root(t / "dir");
  ASSERT_ERR(theirs, Code::Policy);
  EXPECT_EQ(theirs.error().kind, "root_owner");
  // No refusal made anything in the folder.
  struct stat st{};
  EXPECT_NE(::lstat((t / "dir/.dot").c_str(), &st), 0);
  EXPECT_TRUE(std::filesystem::is_empty(t / "dir"));
  // The command line says the same as a typed error.
  ASSERT_EQ(::chown((t / "dir").c_str(), ::geteuid(), unknown), 0);
  ASSERT_EQ(::chmod((t / "dir").c_str(), 0775), 0);
  auto cli = testing::run_program({testing::dot_core(), "init", "--root", t / "dir"}, t.path());
  EXPECT_EQ(cli.exit_code, 1);
  EXPECT_EQ(cli.err.rfind("DOT_E_POLICY: ", 0), 0u) << cli.err;
  EXPECT_NE(cli.err.find("mode 0775"), std::string::npos) << cli.err;
}

// Debian's user-private-group rule: group write is harmless when the group's
// only member is the owner (root's group 0 holds root alone on a default
// system and in CI).
TEST(StoreRoot, InitAcceptsGroupWriteOfTheOwnersPrivateGroup) {
  TempDir t;
  struct passwd* me = ::getpwuid(::geteuid());
  ASSERT_NE(me, nullptr);
  if (!is_user_private_group(group_membership(me->pw_gid), me->pw_name))
    GTEST_SKIP() << "the primary group is shared here";
  ASSERT_EQ(::mkdir((t / "home").c_str(), 0700), 0);
  ASSERT_EQ(::chown((t / "home").c_str(), ::geteuid(), me->pw_gid), 0);
  ASSERT_EQ(::chmod((t / "home").c_str(), 0775), 0);
  ASSERT_OK(init_root(t / "home"));
  EXPECT_EQ(mode_of(t / "home"), 0775u);
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
  auto prune =
      testing::run_program({testing::dot_core(), "store", "prune", "--root", t / "r", "--keep", "1"}, t.path());
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
