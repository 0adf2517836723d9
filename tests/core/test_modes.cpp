// The general profile keeps file modes, creates folders with the modes a plan
// names, takes over files nobody manages (apply backs them up, rollback
// restores them exactly), lists every refused target and leaves --exclude'd
// paths out of the sealed plan: end to end through the product binary with
// the test plugin core-general-plugin (general_plugin.cpp). The tests run as
// the account whose primary group is its own private group (root in CI, a
// Debian user), so that 0664 is the user-private-group case.
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "../common/process_gone.h"
#include "dot/base/sha256.h"
#include "dot/base/write_access.h"
#include "engine_harness.h"

namespace dot::core::testing {
namespace {

std::vector<json::Value> items(json::Value v) {
  std::vector<json::Value> out;
  for (json::Value e : v.elements()) out.push_back(e);
  return out;
}

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

class Modes : public EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    register_general_test_plugin();
    // The root itself, as a managed root made by init, is 0700.
  }

  CmdResult plan_case(const std::string& name, std::vector<std::string> extra = {}, bool json = true) {
    spit(base_ / "case", name + "\n");
    std::error_code ec;
    fs::remove(base_ / "pid", ec);
    std::vector<std::string> args = {"plan", "--plugin", "org.test.gplan", "--allow-audit-plugin"};
    if (json) args.push_back("--json");
    args.insert(args.end(), extra.begin(), extra.end());
    return core(args);
  }

  pid_t plugin_pid() {
    std::string s = slurp(base_ / "pid");
    return s.empty() ? 0 : static_cast<pid_t>(std::stol(s));
  }

  // Whether the effective user's primary group is its own private group.
  static bool own_group_is_private() {
    WriteAccessJudge judge;
    return !judge.refusal(0664, ::geteuid(), ::getegid()).has_value();
  }
};

TEST_F(Modes, FileModesAndFolderModesAreKeptExactly) {
  if (!own_group_is_private()) GTEST_SKIP() << "the effective group is shared here";
  CmdResult r = plan_case("modes");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  auto doc = json::parse(r.out);
  ASSERT_TRUE(doc.ok()) << r.out;
  std::vector<std::pair<std::string, std::string>> folders;
  for (auto d : items(*doc->root().find("directories")))
    folders.emplace_back(d.find("path")->as_string(), d.find("mode")->number_text());
  EXPECT_EQ(folders, (std::vector<std::pair<std::string, std::string>>{{"etc", "488"}, {"etc/app", "493"}}));
  CmdResult applied = core({"apply", json_field(r.out, "plan_id")});
  ASSERT_EQ(applied.code, 0) << applied.err;
  EXPECT_EQ(mode_of(root_ / "etc"), 0750u);
  EXPECT_EQ(mode_of(root_ / "etc/app"), 0755u);
  EXPECT_EQ(mode_of(root_ / "etc/app/main.conf"), 0640u);
  EXPECT_EQ(mode_of(root_ / "etc/tool"), 0750u);
  EXPECT_EQ(mode_of(root_ / "shared.txt"), 0664u);
  EXPECT_EQ(store_problems(), "");
  // Rollback removes what it created, folders included.
  CmdResult back = core({"rollback", json_field(r.out, "plan_id")});
  ASSERT_EQ(back.code, 0) << back.err;
  EXPECT_FALSE(fs::exists(root_ / "etc"));
  EXPECT_FALSE(fs::exists(root_ / "shared.txt"));
}

TEST_F(Modes, AFolderModeOutsideTheRuleOrNotAParentIsRefusedAndNothingIsWritten) {
  const auto before = tree(root_);
  CmdResult bad = plan_case("folder_mode_bad");
  EXPECT_EQ(bad.code, 1) << bad.out;
  EXPECT_EQ(bad.err.rfind("DOT_E_POLICY:", 0), 0u) << bad.err;
  EXPECT_NE(bad.err.find("a folder takes 0700 to 0775"), std::string::npos) << bad.err;
  CmdResult stray = plan_case("folder_not_parent");
  EXPECT_EQ(stray.code, 1) << stray.out;
  EXPECT_NE(stray.err.find("\"elsewhere\" is not the parent folder of a write"), std::string::npos) << stray.err;
  EXPECT_EQ(tree(root_), before);
  EXPECT_TRUE(process_gone(plugin_pid()));
}

TEST_F(Modes, AGroupWritableTargetOfASharedGroupIsRefused) {
  // A group with no member (staff, users on Debian) is nobody's private group.
  gid_t shared = 0;
  for (gid_t gid : {gid_t{50}, gid_t{100}, gid_t{4}}) {
    GroupMembership g = group_membership(gid);
    if (g.found && g.members.empty()) {
      shared = gid;
      break;
    }
  }
  if (shared == 0) GTEST_SKIP() << "no member-less group among staff, users, adm";
  spit(root_ / "conf.txt", "old\n", 0664);
  ASSERT_EQ(::chown((root_ / "conf.txt").c_str(), ::geteuid(), shared), 0);
  const auto before = tree(root_);
  CmdResult r = plan_case("take_over");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.err.rfind("DOT_E_POLICY:", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("target \"conf.txt\" is writable by more than its owner (mode 0664: group"), std::string::npos)
      << r.err;
  EXPECT_EQ(tree(root_), before);
}

TEST_F(Modes, TakingOverAnUnmanagedFileIsShownAndRollbackRestoresItExactly) {
  if (!own_group_is_private()) GTEST_SKIP() << "the effective group is shared here";
  // Under Debian's umask 002 a file in $HOME is 0664.
  spit(root_ / "conf.txt", "mine, by hand\n", 0664);
  const auto before = tree(root_);
  CmdResult human = plan_case("take_over", {}, false);
  ASSERT_EQ(human.code, 0) << human.err;
  EXPECT_NE(human.out.find("take over conf.txt (exists, not managed yet): mode 0664 -> 0644"), std::string::npos)
      << human.out;
  EXPECT_NE(human.out.find("-mine, by hand\n+bytes of conf.txt\n"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("create new.txt"), std::string::npos) << human.out;
  EXPECT_EQ(human.out.find("take over new.txt"), std::string::npos) << human.out;

  CmdResult r = plan_case("take_over");
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = json::parse(r.out);
  ASSERT_TRUE(doc.ok()) << r.out;
  std::map<std::string, bool> take_over;
  for (auto op : items(*doc->root().find("operations")))
    take_over[std::string(op.find("path")->as_string())] = op.find("take_over")->as_bool();
  EXPECT_EQ(take_over, (std::map<std::string, bool>{{"conf.txt", true}, {"new.txt", false}}));
  const std::string plan_id = json_field(r.out, "plan_id");
  ASSERT_EQ(core({"apply", plan_id}).code, 0);
  EXPECT_EQ(slurp(root_ / "conf.txt"), "bytes of conf.txt\n");
  EXPECT_EQ(mode_of(root_ / "conf.txt"), 0644u);

  // From now on the plugin manages it: the next plan updates, not takes over.
  CmdResult again = plan_case("take_over", {}, false);
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.out.find("take over"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("no changes"), std::string::npos) << again.out;

  CmdResult back = core({"rollback", plan_id});
  ASSERT_EQ(back.code, 0) << back.err;
  EXPECT_EQ(tree(root_), before) << "bytes or mode not restored";
  struct stat st {};
  ASSERT_EQ(::lstat((root_ / "conf.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_EQ(st.st_gid, ::getegid());
  EXPECT_EQ(slurp(root_ / "conf.txt"), "mine, by hand\n");
  EXPECT_EQ(store_problems(), "");
}

TEST_F(Modes, EveryRefusedTargetIsListedNotOnlyTheFirst) {
  for (const char* bad : {"bad1", "bad2", "bad3"}) fs::create_directory(root_ / bad);
  const auto before = tree(root_);
  CmdResult r = plan_case("many_bad");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.err.rfind("DOT_E_POLICY:", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("3 targets are refused"), std::string::npos) << r.err;
  for (const char* bad : {"bad1", "bad2", "bad3"})
    EXPECT_NE(r.err.find(fmt::format("target \"{}\" is a folder, not a regular file", bad)), std::string::npos)
        << r.err;
  EXPECT_EQ(r.err.find("\"good\""), std::string::npos) << r.err;
  EXPECT_EQ(tree(root_), before);
  EXPECT_TRUE(process_gone(plugin_pid()));
}

TEST_F(Modes, ATargetInsideANestedManagedRootIsRefused) {
  fs::create_directories(root_ / "inner" / ".dot");
  ::chmod((root_ / "inner").c_str(), 0700);
  ::chmod((root_ / "inner" / ".dot").c_str(), 0700);
  const auto before = tree(root_);
  CmdResult r = plan_case("nested_root");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.err.rfind("DOT_E_POLICY:", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("parent folder \"inner\" holds its own .dot"), std::string::npos) << r.err;
  EXPECT_EQ(tree(root_), before);
}

TEST_F(Modes, ExcludeLeavesMatchesOutAndIsRecordedInThePlan) {
  CmdResult r = plan_case("exclude", {"--exclude", "*.swp", "--exclude", "/.cache/"});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  auto doc = json::parse(r.out);
  ASSERT_TRUE(doc.ok()) << r.out;
  std::vector<std::string> paths;
  for (auto op : items(*doc->root().find("operations"))) paths.emplace_back(op.find("path")->as_string());
  EXPECT_EQ(paths, (std::vector<std::string>{"keep.txt", "sub/keep"}));
  EXPECT_EQ(doc->root().find("excluded")->number_text(), "3");
  CmdResult exported = core({"export", json_field(r.out, "plan_id")});
  ASSERT_EQ(exported.code, 0) << exported.err;
  EXPECT_NE(exported.out.find("\"exclude\":[\"*.swp\",\"/.cache/\"]"), std::string::npos) << exported.out;
  // The same plan without the exclusions is another plan (another id).
  CmdResult all = plan_case("exclude");
  ASSERT_EQ(all.code, 0) << all.err;
  EXPECT_NE(json_field(all.out, "plan_id"), json_field(r.out, "plan_id"));
  CmdResult applied = core({"apply", json_field(r.out, "plan_id")});
  ASSERT_EQ(applied.code, 0) << applied.err;
  EXPECT_TRUE(fs::exists(root_ / "keep.txt"));
  EXPECT_FALSE(fs::exists(root_ / "a.swp"));
  EXPECT_FALSE(fs::exists(root_ / ".cache"));
  EXPECT_EQ(store_problems(), "");
}

TEST_F(Modes, ABadExcludePatternFailsBeforeAnythingIsRecorded) {
  const std::string before_state = last_state();
  CmdResult r = plan_case("exclude", {"--exclude", "!keep.txt"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.err.rfind("DOT_E_VALIDATION:", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("negation is not supported"), std::string::npos) << r.err;
  EXPECT_EQ(last_state(), before_state);
}

}  // namespace
}  // namespace dot::core::testing
