// The state folder is never reached through a symlink (issue 14): an entry of
// DIR/.dot replaced by a symlink to a victim outside the root is refused with
// DOT_E_PATH_ESCAPE naming the entry, and the victim stays byte-for-byte what
// it was, whatever the command.
#include <sys/stat.h>

#include <map>

#include "engine_harness.h"

namespace dot::core::testing {
namespace {

std::string fmt_entry(const fs::path& p, const struct stat& st) {
  std::string d = std::to_string(st.st_mode) + " ";
  if (S_ISLNK(st.st_mode)) d += "-> " + fs::read_symlink(p).string();
  if (S_ISREG(st.st_mode)) d += slurp(p);
  return d;
}

// Every entry below `dir` by relative path: type, mode and content (or the
// link text), to show that a victim was not touched.
std::map<std::string, std::string> tree(const fs::path& dir) {
  std::map<std::string, std::string> out;
  struct stat top {};
  if (::lstat(dir.c_str(), &top) != 0) return {{"", "<absent>"}};
  if (!S_ISDIR(top.st_mode)) return {{"", fmt_entry(dir, top)}};
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    struct stat st {};
    ::lstat(it->path().c_str(), &st);
    out[fs::relative(it->path(), dir).string()] = fmt_entry(it->path(), st);
  }
  return out;
}

class StateDirTest : public EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    victim_dir_ = base_ / "victim";
    fs::create_directories(victim_dir_ / "sub");
    spit(victim_dir_ / "keep.txt", "the victim's own file\n");
    spit(victim_dir_ / "sub" / "inner.txt", "nested\n");
    victim_file_ = base_ / "victim.bin";
    spit(victim_file_, "the victim's own bytes\n");
  }
  fs::path state(const std::string& entry) const { return root_ / ".dot" / entry; }
  // Replaces DIR/.dot/ENTRY (whatever is there, or nothing) by a symlink to `to`.
  void symlink_entry(const std::string& entry, const fs::path& to) {
    fs::remove_all(state(entry));
    fs::create_symlink(to, state(entry));
  }
  void expect_refused(const CmdResult& r, const std::string& entry, const std::string& what) {
    EXPECT_EQ(r.code, 1) << what << ": " << r.out << r.err;
    EXPECT_EQ(r.err.rfind("DOT_E_PATH_ESCAPE: ", 0), 0u) << what << ": " << r.err;
    EXPECT_NE(r.err.find(state(entry).string()), std::string::npos) << what << " does not name the entry: " << r.err;
  }

  fs::path victim_dir_, victim_file_;
};

// Every command that opens a root, as a user types it ({sealed} and
// {applied} are plan ids of the fixture). `init` never opens an existing
// root (InitNeverAdoptsAnExistingRoot) and `plan-id` reads no root at all.
const std::vector<std::vector<std::string>>& commands() {
  static const std::vector<std::vector<std::string>> all = {
      {"register", "--plugin", "{dot-hello}", "--assurance", "process", "--replace"},
      {"plan", "--allow-audit-plugin"},
      {"plan", "--require-process-sandbox"},
      {"apply", "{sealed}"},
      {"rollback", "{applied}"},
      {"recover"},
      {"retry-effects"},
      {"discard", "{sealed}"},
      {"status"},
      {"export", "{sealed}"},
      {"inspect", "list"},
      {"inspect", "show", "{sealed}"},
      {"inspect", "events", "{sealed}"},
      {"store", "check"},
      {"store", "prune", "--keep", "1"},
  };
  return all;
}

// One entry of the state folder ("" is the folder itself) and what its
// symlink points to.
struct EntryCase {
  const char* entry;
  enum Victim { Folder, File, StateFolderCopy, PluginCopy, DatabaseCopy } victim;
};

class EntrySymlink : public StateDirTest, public ::testing::WithParamInterface<EntryCase> {};

// The state folder (or one entry of it) is a symlink to a victim outside the
// root: every command refuses with DOT_E_PATH_ESCAPE naming it, the symlink
// stays, and the victim is byte-for-byte what it was. The victims are the
// dangerous kind: a working copy of the state folder, of the database, of
// the plugin, or a folder or file of the user's.
TEST_P(EntrySymlink, EveryCommandRefusesItAndTouchesNothingOutsideTheRoot) {
  const EntryCase& c = GetParam();
  // The fixture plans under audit: a sanitizer-built dot-hello cannot start
  // under containment's address-space limit, and assurance is not what this
  // test is about (every command below is refused before any plugin runs).
  ASSERT_EQ(core({"register", "--plugin", bin("dot-hello"), "--assurance", "audit", "--replace"}).code, 0);
  CmdResult a = core({"plan", "--allow-audit-plugin", "--json"});
  ASSERT_EQ(a.code, 0) << a.err;
  const std::string applied = json_field(a.out, "plan_id");
  ASSERT_EQ(core({"apply", applied}).code, 0);
  CmdResult s = core({"plan", "--allow-audit-plugin", "--json"});
  ASSERT_EQ(s.code, 0) << s.err;
  const std::string sealed = json_field(s.out, "plan_id");

  const std::string entry = c.entry;
  const fs::path link = entry.empty() ? root_ / ".dot" : state(entry);
  fs::path victim;
  switch (c.victim) {
    case EntryCase::Folder: victim = victim_dir_; break;
    case EntryCase::File: victim = victim_file_; break;
    case EntryCase::StateFolderCopy:
      victim = base_ / "state-copy";
      fs::copy(link, victim, fs::copy_options::recursive);
      break;
    case EntryCase::PluginCopy:
      victim = base_ / "plugin-copy";
      fs::copy_file(link, victim);
      break;
    case EntryCase::DatabaseCopy:
      victim = base_ / "store-copy.db";
      fs::copy_file(link, victim);
      break;
  }
  fs::remove_all(link);
  fs::create_symlink(victim, link);
  const auto before = tree(victim);
  const std::string hello_before = hello();

  for (auto args : commands()) {
    std::string what;
    for (auto& arg : args) {
      if (arg == "{dot-hello}") arg = bin("dot-hello");
      if (arg == "{sealed}") arg = sealed;
      if (arg == "{applied}") arg = applied;
      what += arg + " ";
    }
    CmdResult r = core(args);
    EXPECT_EQ(r.code, 1) << what << ": " << r.out << r.err;
    EXPECT_EQ(r.err.rfind("DOT_E_PATH_ESCAPE: " + link.string() + " is a symlink", 0), 0u) << what << ": " << r.err;
    EXPECT_TRUE(fs::is_symlink(link)) << what << " replaced the symlink";
    EXPECT_EQ(tree(victim), before) << what << " changed the victim";
    EXPECT_EQ(hello(), hello_before) << what << " changed a target";
  }
}

INSTANTIATE_TEST_SUITE_P(StateFolder, EntrySymlink,
                         ::testing::Values(EntryCase{"", EntryCase::StateFolderCopy},
                                           EntryCase{"stage", EntryCase::Folder},
                                           EntryCase{"lock", EntryCase::File},
                                           EntryCase{"plugin", EntryCase::PluginCopy},
                                           EntryCase{"store.db", EntryCase::DatabaseCopy},
                                           EntryCase{"store.db-wal", EntryCase::File},
                                           EntryCase{"store.db-shm", EntryCase::File}),
                         [](const ::testing::TestParamInfo<EntryCase>& pinfo) {
                           std::string n = *pinfo.param.entry ? pinfo.param.entry : "state_folder";
                           for (char& ch : n)
                             if (ch == '.' || ch == '-') ch = '_';
                           return n;
                         });

// `init` never opens an existing root: a folder that holds a state folder (a
// symlinked one included) is refused and nothing is adopted.
TEST_F(StateDirTest, InitNeverAdoptsAnExistingRoot) {
  fs::remove_all(state("stage"));
  fs::create_symlink(victim_dir_, state("stage"));
  const auto before = tree(victim_dir_);
  CmdResult r = dot_core({"init", "--root", root_.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("DOT_E_IO: " + root_.string() + ": already holds .dot", 0), 0u) << r.err;
  EXPECT_EQ(tree(victim_dir_), before);
}

// An audit plugin (it runs with our rights) moves its stage folder aside and
// puts a symlink to a victim in its place while it materializes. Core
// reads, seals and cleans up through the descriptors it opened: the victim
// is not emptied, and the next command refuses the symlink.
TEST_F(StateDirTest, PluginSwappingTheStageFolderCannotTurnTheCleanupAgainstItsTarget) {
  ASSERT_EQ(core({"register", "--plugin", bin("core-artifact-swapped_stage_folder"), "--assurance", "audit",
                  "--replace"})
                .code,
            0);
  const auto before = tree(victim_dir_);
  CmdResult r = core({"plan", "--allow-audit-plugin"});
  EXPECT_TRUE(fs::is_symlink(state("stage"))) << "the plugin did not swap the stage folder: " << r.err;
  EXPECT_EQ(tree(victim_dir_), before) << r.err;
  // Sealed from what core read through its own descriptors.
  EXPECT_EQ(r.code, 0) << r.err;
  // The moved folder was cleaned through its descriptor: nothing is left in it.
  EXPECT_TRUE(fs::is_empty(state("stage.moved")));
  expect_refused(core({"recover"}), "stage", "recover after the swap");
  EXPECT_EQ(tree(victim_dir_), before);
}

}  // namespace
}  // namespace dot::core::testing
