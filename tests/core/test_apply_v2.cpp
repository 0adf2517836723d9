// `apply`, `rollback` and `recover` of version-2 plans (docs/spec/dpp-general.md
// "Apply, rollback, recover"; docs/spec/transactions.md), end to end through the
// product binary with the general test plugin's case "apply"
// (apply_v2_fixture.h): every target gets its sealed bytes and mode, the
// created folders appear (with the modes the plan names, else 0700) and go again at rollback only when empty,
// drift is refused with nothing changed, and recover after a clean run
// changes nothing.
#include <sys/stat.h>
#include <unistd.h>

#include "apply_v2_fixture.h"

namespace dot::core::testing {
namespace {

TEST_F(ApplyV2Test, AppliesEveryTargetWithItsSealedBytesAndModeAndTheCreatedFolders) {
  const std::string id = plan_apply_case();
  ASSERT_TRUE(all_before()) << "plan wrote beneath the root:" << differences(before_);
  CmdResult r = core({"apply", id, "--json"});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_EQ(json_field(r.out, "state"), "DONE");
  EXPECT_NE(r.out.find("\"operations\":9"), std::string::npos) << r.out;
  EXPECT_TRUE(all_after()) << differences(after_);
  EXPECT_EQ(state_of(id), "DONE");
  EXPECT_EQ(store_problems(), "");
  // Nothing is drifted, nothing is left to recover, and the plan applied once.
  CmdResult status = core({"status", "--json"});
  ASSERT_EQ(status.code, 0) << status.err;
  EXPECT_NE(status.out.find("\"drift\":[]"), std::string::npos) << status.out;
  expect_recover_is_a_noop();
  CmdResult again = core({"apply", id});
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.err.find("DOT_E_POLICY"), std::string::npos) << again.err;
  EXPECT_TRUE(all_after());
}

TEST_F(ApplyV2Test, StatusShowsDriftOfANestedTarget) {
  const std::string id = plan_apply_case();
  ASSERT_EQ(core({"apply", id}).code, 0);
  spit(root_ / "etc" / "app" / "new.d" / "x.conf", "x = 1\n", 0600);
  CmdResult status = core({"status", "--json"});
  ASSERT_EQ(status.code, 0) << status.err;
  EXPECT_NE(status.out.find("etc/app/new.d/x.conf"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("\"mode\""), std::string::npos) << status.out;
}

// Each kind of drift between plan and apply: refused with its code, the
// plan STALE, and not one entry beneath the root changed or added.
struct Drift {
  const char* name;
  void (*make)(const fs::path& root);
  const char* code;
};

const Drift kDrifts[] = {
    {"content", [](const fs::path& r) { spit(r / "etc" / "app" / "main.conf", "main = 1.5\n", 0644); },
     "DOT_E_CONFLICT"},
    {"mode", [](const fs::path& r) { ::chmod((r / "conf.txt").c_str(), 0644); }, "DOT_E_CONFLICT"},
    {"removed_target", [](const fs::path& r) { fs::remove(r / "etc" / "app" / "old.conf"); }, "DOT_E_CONFLICT"},
    {"appeared_target", [](const fs::path& r) { spit(r / "empty.txt", "", 0644); }, "DOT_E_CONFLICT"},
    {"created_folder_appeared", [](const fs::path& r) { fs::create_directory(r / "bin", r); }, "DOT_E_CONFLICT"},
    {"parent_gone",
     [](const fs::path& r) {
       fs::remove_all(r / "etc");
     },
     "DOT_E_CONFLICT"},
    {"parent_symlink",
     [](const fs::path& r) {
       fs::rename(r / "etc", r / "etc.real");
       fs::create_directory_symlink("etc.real", r / "etc");
     },
     "DOT_E_PATH_ESCAPE"},
    // Group write of a group that is not the user's private one (gid 100,
    // users on Debian, has no member of its own); others' write always.
    {"parent_other_writable", [](const fs::path& r) { ::chmod((r / "etc" / "app").c_str(), 0707); },
     "DOT_E_CONFLICT"},
    {"parent_group_writable",
     [](const fs::path& r) {
       if (::chown((r / "etc" / "app").c_str(), static_cast<uid_t>(-1), 100) != 0) std::abort();
       ::chmod((r / "etc" / "app").c_str(), 0770);
     },
     "DOT_E_CONFLICT"},
};

void PrintTo(const Drift& d, std::ostream* os) { *os << d.name; }

class ApplyV2Drift : public ApplyV2Test, public ::testing::WithParamInterface<Drift> {};

TEST_P(ApplyV2Drift, IsRefusedWithNothingChanged) {
  const std::string id = plan_apply_case();
  GetParam().make(root_);
  const auto drifted = tree(root_);
  CmdResult r = core({"apply", id});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind(std::string(GetParam().code) + ": ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("STALE"), std::string::npos) << r.err;
  EXPECT_EQ(tree(root_), drifted) << "apply changed the root";
  EXPECT_EQ(state_of(id), "STALE");
  EXPECT_EQ(store_problems(), "");
}

INSTANTIATE_TEST_SUITE_P(Drifts, ApplyV2Drift, ::testing::ValuesIn(kDrifts),
                         [](const ::testing::TestParamInfo<Drift>& p) { return std::string(p.param.name); });

TEST_F(ApplyV2Test, RollbackRestoresEveryTargetAndRemovesTheCreatedFolders) {
  const std::string id = plan_apply_case();
  ASSERT_EQ(core({"apply", id}).code, 0);
  CmdResult r = core({"rollback", id, "--json"});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_TRUE(all_before()) << differences(before_);
  EXPECT_EQ(state_of(id), "ROLLED_BACK");
  EXPECT_EQ(store_problems(), "");
  expect_recover_is_a_noop();
  // The paths are no longer owned: a new plan proposes them again.
  CmdResult again = core({"plan", "--plugin", "org.test.gplan", "--allow-audit-plugin", "--json"});
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(json_field(again.out, "state"), "SEALED");
}

// Files merely named like temp files, in folders the plan touched, are not
// the journal's: rollback (and recover after it) leave them where they are.
TEST_F(ApplyV2Test, RollbackLeavesFilesNamedLikeTempFilesThatItsJournalDoesNotName) {
  const std::string id = plan_apply_case();
  ASSERT_EQ(core({"apply", id}).code, 0);
  const std::string lookalike = ".dot-tmp-" + std::string(32, 'e');
  spit(root_ / lookalike, "someone's\n");
  spit(root_ / "etc" / "app" / lookalike, "someone else's\n");
  CmdResult r = core({"rollback", id});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_EQ(state_of(id), "ROLLED_BACK");
  EXPECT_EQ(slurp(root_ / lookalike), "someone's\n");
  EXPECT_EQ(slurp(root_ / "etc" / "app" / lookalike), "someone else's\n");
  CmdResult rec = core({"recover", "--json"});
  ASSERT_EQ(rec.code, 0) << rec.err;
  EXPECT_NE(rec.out.find("\"temp_files_removed\":0"), std::string::npos) << rec.out;
  EXPECT_EQ(slurp(root_ / lookalike), "someone's\n");
  EXPECT_EQ(slurp(root_ / "etc" / "app" / lookalike), "someone else's\n");
}

TEST_F(ApplyV2Test, RollbackKeepsACreatedFolderThatIsNotEmpty) {
  const std::string id = plan_apply_case();
  ASSERT_EQ(core({"apply", id}).code, 0);
  spit(root_ / "deep" / "er" / "mine.txt", "the user's\n", 0600);
  CmdResult r = core({"rollback", id});
  ASSERT_EQ(r.code, 0) << r.err;
  auto want = before_;
  want["deep"] = fmt::format("{:o}", S_IFDIR | 0755);  // the mode the plan names
  want["deep/er"] = fmt::format("{:o}", S_IFDIR | 0700);
  want["deep/er/mine.txt"] = fmt::format("{:o}", S_IFREG | 0600) + ":" + sha256_hex("the user's\n");
  EXPECT_EQ(tree(root_), want) << differences(want);
  EXPECT_EQ(state_of(id), "ROLLED_BACK");
  EXPECT_EQ(store_problems(), "");
}

TEST_F(ApplyV2Test, RollbackOfAnEditedTargetIsRefusedWithNothingChanged) {
  const std::string id = plan_apply_case();
  ASSERT_EQ(core({"apply", id}).code, 0);
  spit(root_ / kUberPath, "edited\n", 0600);
  const auto edited = tree(root_);
  CmdResult r = core({"rollback", id});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("DOT_E_CONFLICT: ", 0), 0u) << r.err;
  EXPECT_EQ(tree(root_), edited);
  EXPECT_EQ(state_of(id), "DONE");
  EXPECT_EQ(store_problems(), "");
}

TEST_F(ApplyV2Test, InspectShowsTheAppliedPlan) {
  const std::string id = plan_apply_case();
  ASSERT_EQ(core({"apply", id}).code, 0);
  CmdResult show = core({"inspect", "show", id, "--json"});
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_NE(show.out.find("DONE"), std::string::npos);
  EXPECT_NE(show.out.find("etc/app/new.d/x.conf"), std::string::npos);
}

}  // namespace
}  // namespace dot::core::testing
