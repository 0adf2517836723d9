// Every hostile plugin, driven the way core drives a plugin: each must be
// refused with its own code, kind and detail, within the deadline, and leave
// no process behind (the host is a child subreaper, so even a grandchild that
// called setsid is found: list_children() must come back empty).
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <set>

#include "drive.h"
#include "dot/base/fd.h"
#include "dot/base/process.h"
#include "hostile.h"

namespace dot::dpp {
namespace {

using testing::bin;
using testing::drive;
using testing::TempStage;

class Hostile : public ::testing::TestWithParam<const hostile::Case*> {};

TEST_P(Hostile, IsRefusedWithItsCodeAndLeavesNoProcess) {
  const hostile::Case& c = *GetParam();
  TempStage stage;
  auto t0 = Clock::now();
  auto r = drive(bin(std::string("dpp-hostile-") + c.name), stage.path());
  auto elapsed = Clock::now() - t0;
  ASSERT_FALSE(r.status.ok()) << c.name << " was accepted";
  const Error& e = r.status.error();
  EXPECT_EQ(code_name(e.code), code_name(c.code)) << e.line();
  EXPECT_EQ(e.kind, c.kind) << e.line();
  EXPECT_NE(e.detail.find(c.detail), std::string::npos) << "detail lacks \"" << c.detail << "\": " << e.line();
  // The deadline is a correctness property here, not a performance figure:
  // only the cases that hang may take it, and none may outlast it by much.
  auto limit = c.needs_deadline ? std::chrono::milliseconds(7000) : std::chrono::milliseconds(4500);
  EXPECT_LT(elapsed, limit) << c.name << " took "
                            << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count() << " ms";
  if (c.needs_deadline) {
    EXPECT_GE(elapsed, std::chrono::milliseconds(4900));
  }
  // No survivors: nothing of ours is left, not even a zombie.
  EXPECT_TRUE(list_children().empty());
  std::ifstream pidfile(stage.path() + "/survivor.pid");
  if (pidfile) {
    pid_t pid = 0;
    pidfile >> pid;
    ASSERT_GT(pid, 0);
    EXPECT_NE(::kill(pid, 0), 0) << "the plugin's child " << pid << " survived";
  }
}

std::vector<const hostile::Case*> all_cases() {
  std::vector<const hostile::Case*> v;
  for (const auto& c : hostile::cases()) v.push_back(&c);
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, Hostile, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<const hostile::Case*>& i) {
                           return std::string(i.param->name);
                         });

TEST(HostileCatalogue, AtLeastFortyCasesEachBuiltAsItsOwnExecutable) {
  std::ifstream list(DOT_HOSTILE_LIST);
  std::set<std::string> listed;
  for (std::string line; std::getline(list, line);)
    if (!line.empty() && line[0] != '#') listed.insert(line);
  std::set<std::string> table;
  for (const auto& c : hostile::cases()) {
    EXPECT_TRUE(table.insert(c.name).second) << "duplicate case " << c.name;
    EXPECT_EQ(::access(bin(std::string("dpp-hostile-") + c.name).c_str(), X_OK), 0) << c.name;
  }
  EXPECT_EQ(listed, table);
  EXPECT_GE(table.size(), 40u);
}

}  // namespace
}  // namespace dot::dpp
