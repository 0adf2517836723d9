// Every general-profile hostile plugin (tests/dpp/hostile/general.cpp),
// driven the way core drives an org.dot.dpp/v1 plugin: each must be refused
// with its own code, kind and detail, and leave no process behind. The honest
// base they are all made from completes the same drive.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "drive.h"
#include "dot/base/fd.h"
#include "dot/base/process.h"
#include "dot/base/sha256.h"
#include "dot/dpp/general.h"
#include "hostile.h"
#include "verdict.h"

namespace dot::dpp {
namespace {

using testing::bin;
using testing::TempStage;

// The deadline cases are driven with this deadline_ms instead of the
// profile's 60 s: the session takes its deadline from the limits it sends
// (core always sends general::kLimits), and the suite should not wait a
// minute per case.
constexpr std::uint64_t kShortDeadlineMs = 2000;

using testing::drive;

// The hostile plugins answer as hostile::kGeneralPluginId.
testing::DriveOptions hostile_options() { return testing::general_options(std::string(hostile::kGeneralPluginId)); }

class GeneralHostile : public ::testing::TestWithParam<const hostile::Case*> {};

TEST_P(GeneralHostile, IsRefusedWithItsCodeAndLeavesNoProcess) {
  const hostile::Case& c = *GetParam();
  TempStage stage;
  auto opt = hostile_options();
  if (c.needs_deadline) opt.general_limits.deadline_ms = kShortDeadlineMs;
  auto t0 = Clock::now();
  auto r = drive(bin(std::string("dpp-hostile-") + c.name), stage.path(), opt);
  auto elapsed = Clock::now() - t0;
  ASSERT_TRUE(hostile::refused_as(r.status, c));
  const Error& e = r.status.error();
  // Only the hanging cases may reach a deadline; they reach the one sent.
  if (c.needs_deadline) {
    EXPECT_GE(elapsed, std::chrono::milliseconds(kShortDeadlineMs));
  } else {
    EXPECT_LT(elapsed, std::chrono::milliseconds(general::kLimits.deadline_ms / 2));
  }
  // An error response is kept whole; nothing else leaves one behind.
  EXPECT_EQ(r.plugin_error.has_value(), c.code == Code::PluginError) << e.line();
  EXPECT_TRUE(list_children().empty());
}

std::vector<const hostile::Case*> all_cases() {
  std::vector<const hostile::Case*> v;
  for (const auto& c : hostile::general_cases()) v.push_back(&c);
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, GeneralHostile, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<const hostile::Case*>& i) {
                           return std::string(i.param->name);
                         });

TEST(GeneralHostileBase, TheHonestPluginCompletesWithItsLog) {
  TempStage stage;
  auto r = drive(bin("dpp-general-honest"), stage.path(), hostile_options());
  ASSERT_TRUE(r.status.ok()) << r.status.error().line();
  ASSERT_EQ(r.artifacts.artifacts.size(), 1u);
  EXPECT_EQ(r.artifacts.artifacts[0].path, "etc/app.conf");
  auto staged = read_file(stage.path() + "/etc/app.conf", 100);
  ASSERT_TRUE(staged.ok()) << staged.error().line();
  EXPECT_EQ(r.artifacts.artifacts[0].sha256, sha256_hex(*staged));
  ASSERT_EQ(r.logs.size(), 1u);
  EXPECT_EQ(r.logs[0], (LogEntry{"info", "planning etc/app.conf", Method::Plan}));
  EXPECT_TRUE(list_children().empty());
}

TEST(GeneralHostile, AnErrorResponseKeepsCodeMessageAndData) {
  TempStage stage;
  auto r = drive(bin("dpp-hostile-general_error_response"), stage.path(), hostile_options());
  ASSERT_TRUE(r.plugin_error.has_value());
  EXPECT_EQ(r.plugin_error->method, Method::Plan);
  EXPECT_EQ(r.plugin_error->error.code, -32001);
  EXPECT_EQ(r.plugin_error->error.message, "source folder is gone");
  EXPECT_EQ(r.plugin_error->error.data, std::optional<std::string>("{\"path\":\"/src\"}"));
}

// docs/writing-plugins.md shows this plugin whole: it must run as the page says.
TEST(GeneralExample, TheSmallestPluginOfTheDocsCompletesASession) {
  TempStage stage;
  auto opt = testing::general_options("org.example.motd");
  opt.managed = {"etc/x", "motd.old"};
  auto r = drive(bin("dpp-example-motd"), stage.path(), opt);
  ASSERT_TRUE(r.status.ok()) << r.status.error().line();
  EXPECT_EQ(r.plan.operations,
            (std::vector<general::Operation>{{"write", 0644, "motd"}, {"remove", 0, "motd.old"}}));
  ASSERT_EQ(r.artifacts.artifacts.size(), 1u);
  EXPECT_EQ(r.artifacts.artifacts[0], (general::Artifact{"motd", sha256_hex("Welcome.\n"), 9}));
  auto staged = read_file(stage.path() + "/motd", 100);
  EXPECT_EQ(staged.ok() ? *staged : "", "Welcome.\n");
  ASSERT_EQ(r.logs.size(), 1u);
  EXPECT_EQ(r.logs[0], (LogEntry{"info", "proposing motd", Method::Plan}));
}

TEST(GeneralHostileCatalogue, EveryListedCaseIsBuiltAsItsOwnExecutable) {
  hostile::expect_catalogue(DOT_HOSTILE_GENERAL_LIST, hostile::general_cases(), DOT_BIN_DIR);
  // The broken plugins of `dpp conform` (tests/dpp/test_conformance.cpp).
  hostile::expect_catalogue(DOT_HOSTILE_CONFORM_LIST, hostile::conform_cases(), DOT_BIN_DIR);
}

}  // namespace
}  // namespace dot::dpp
