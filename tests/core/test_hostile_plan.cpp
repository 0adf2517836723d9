// Every hostile plugin of the DPP module, run through `dot-core plan` exactly
// as a user would run it: each fails with its code, leaves an ABANDONED
// proposal, and leaves no target, no process and no temp file behind.
#include "engine_harness.h"
#include "hostile.h"

namespace dot::core::testing {
namespace {

// Processes whose working directory is inside `dir` (the plugin runs in its stage).
std::vector<std::string> processes_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec;
    auto cwd = fs::read_symlink(e.path() / "cwd", ec);
    if (!ec && cwd.string().rfind(dir.string(), 0) == 0) out.push_back(name);
  }
  return out;
}

class HostilePlan : public EngineTest, public ::testing::WithParamInterface<const dpp::hostile::Case*> {};

TEST_P(HostilePlan, FailsWithItsCodeAndLeavesNothingBehind) {
  const auto& c = *GetParam();
  CmdResult reg = core({"register", "--plugin", bin(std::string("dpp-hostile-") + c.name), "--assurance", "audit",
                        "--replace"});
  ASSERT_EQ(reg.code, 0) << reg.err;
  CmdResult r = core({"plan", "--allow-audit-plugin"});
  EXPECT_EQ(r.code, 1) << c.name << " was accepted: " << r.out;
  EXPECT_NE(r.err.find(std::string(code_name(c.code)) + ":"), std::string::npos) << c.name << ": " << r.err;
  EXPECT_EQ(last_state(), "ABANDONED");
  EXPECT_FALSE(fs::exists(root_ / "hello.txt"));
  EXPECT_FALSE(fs::exists(root_ / "welcome.txt"));
  EXPECT_TRUE(temp_files().empty());
  EXPECT_TRUE(stage_leftovers().empty());
  EXPECT_TRUE(processes_in(root_).empty()) << c.name << " left a process behind";
}

std::vector<const dpp::hostile::Case*> all_cases() {
  std::vector<const dpp::hostile::Case*> v;
  for (const auto& c : dpp::hostile::cases()) v.push_back(&c);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Dpp, HostilePlan, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<const dpp::hostile::Case*>& pinfo) {
                           return std::string(pinfo.param->name);
                         });

}  // namespace
}  // namespace dot::core::testing
