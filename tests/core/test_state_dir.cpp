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

// The commands that reach the stage folder, each with the stage folder a
// symlink to a victim folder: `recover` used to empty it, `plan` to create
// the stage in it (and, contained, to grant the plugin write access there)
// and then empty it.
TEST_F(StateDirTest, SymlinkedStageFolderIsRefusedAndItsTargetUntouched) {
  const std::vector<std::vector<std::string>> commands = {
      {"recover"}, {"plan", "--allow-audit-plugin"}, {"plan", "--require-process-sandbox"}};
  for (const auto& args : commands) {
    std::string what;
    for (const auto& a : args) what += a + " ";
    if (args.back() == "--require-process-sandbox")
      ASSERT_EQ(core({"register", "--plugin", bin("dot-hello"), "--assurance", "process", "--replace"}).code, 0);
    symlink_entry("stage", victim_dir_);
    const auto before = tree(victim_dir_);
    expect_refused(core(args), "stage", what);
    EXPECT_EQ(tree(victim_dir_), before) << what;
    EXPECT_FALSE(fs::exists(root_ / "hello.txt")) << what;
  }
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
