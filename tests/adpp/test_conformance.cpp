// The conformance suite passes adpp-sim and fails every broken fixture on the
// case that names its fault.
#include <gtest/gtest.h>

#include "dot/adpp/conformance.h"

namespace dot::adpp {
namespace {

using std::chrono::milliseconds;

const std::string kSim = DOT_BIN_DIR "/adpp-sim";
const std::string kBroken = DOT_BIN_DIR "/adpp-broken";

// Well-behaved providers answer long before the window ends, so it only
// bounds a loaded machine (sanitizer builds start slowly); the hang and drip
// fixtures, the only ones that wait it out, get a short one.
constexpr int kRoomy = 10000;

ConformanceReport conform(const std::vector<std::string>& argv, milliseconds window = milliseconds(kRoomy),
                          std::vector<std::string> only = {}) {
  ConformanceOptions o;
  o.window = window;
  o.only = std::move(only);
  auto r = run_conformance(argv, o);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().line());
  return r.ok() ? std::move(r).value() : ConformanceReport{};
}

std::string dump(const ConformanceReport& r) {
  std::string s;
  for (const auto& c : r.cases) s += (c.passed ? "PASS " : "FAIL ") + c.name + ": " + c.detail + "\n";
  return s;
}

const CaseResult* find(const ConformanceReport& r, std::string_view name) {
  for (const auto& c : r.cases)
    if (c.name == name) return &c;
  return nullptr;
}

TEST(AdppConformance, AdppSimPassesEveryCase) {
  for (const char* config : {"basic", "lab"}) {
    auto r = conform({kSim, "--config", std::string(DOT_SOURCE_DIR "/adpp/examples/") + config + ".textproto"});
    EXPECT_EQ(r.cases.size(), conformance_case_names().size());
    EXPECT_TRUE(r.all_passed()) << config << "\n" << dump(r);
  }
}

TEST(AdppConformance, TheFixtureHarnessItselfPasses) {
  auto r = conform({kBroken, "good"});
  EXPECT_TRUE(r.all_passed()) << dump(r);
}

struct Expectation {
  const char* mode;
  const char* failing_case;  // a case that must fail ...
  const char* detail;        // ... with this in its detail
  const char* passing_case;  // a case the fault does not touch (nullptr: none)
  int window_ms;
};

class AdppConformanceBroken : public ::testing::TestWithParam<Expectation> {};

TEST_P(AdppConformanceBroken, SuiteFailsOnTheFault) {
  const auto& e = GetParam();
  std::vector<std::string> only;
#ifdef DOT_SANITIZED_BUILD
  // Every fixture meets the whole suite in the release run; under the
  // sanitizers each process start costs half a second, so only the two
  // cases this expectation is about run there.
  only.push_back(e.failing_case);
  if (e.passing_case != nullptr) only.push_back(e.passing_case);
#endif
  auto r = conform({kBroken, e.mode}, milliseconds(e.window_ms), only);
  EXPECT_FALSE(r.all_passed()) << dump(r);
  const CaseResult* c = find(r, e.failing_case);
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->passed) << dump(r);
  EXPECT_NE(c->detail.find(e.detail), std::string::npos) << c->detail;
  if (e.passing_case != nullptr) {
    const CaseResult* ok = find(r, e.passing_case);
    ASSERT_NE(ok, nullptr);
    EXPECT_TRUE(ok->passed) << dump(r);
  }
}

// The hang and the drip are the only fixtures that wait out the window, so
// they get a short one.
INSTANTIATE_TEST_SUITE_P(
    Fixtures, AdppConformanceBroken,
    ::testing::Values(
        Expectation{"hang", "hello_metadata", "hang", nullptr, 300},
        Expectation{"hang", "oversized_prefix", "hang", nullptr, 300},
        Expectation{"crash-on-malformed", "zero_length", "signal 11", "hello_metadata", kRoomy},
        Expectation{"crash-on-malformed", "garbage_payload", "signal 11", "coalesced", kRoomy},
        Expectation{"exit-code", "truncated", "exit 1", "fragmented", kRoomy},
        Expectation{"ok-on-malformed", "garbage_payload", "CODE_OK", "hello_metadata", kRoomy},
        Expectation{"unspecified-on-malformed", "zero_length", "CODE_UNSPECIFIED", "hello_metadata", kRoomy},
        Expectation{"over-cap-response", "hello_metadata", "over-cap", nullptr, kRoomy},
        Expectation{"unparseable-response", "hello_metadata", "unparseable", nullptr, kRoomy},
        Expectation{"drip", "hello_metadata", "no complete response", nullptr, 300},
        Expectation{"wrong-id", "hello_metadata", "request_id", nullptr, kRoomy},
        Expectation{"no-metadata", "hello_metadata", "lacks \"transport\"", "coalesced", kRoomy},
        Expectation{"answer-then-abort", "trailing_garbage", "then killed by signal 6", "hello_metadata", kRoomy},
        Expectation{"stdout-banner", "hello_metadata", "over-cap", nullptr, kRoomy}),
    [](const auto& param_info) {
      std::string n = std::string(param_info.param.mode) + "_" + param_info.param.failing_case;
      for (auto& ch : n)
        if (ch == '-') ch = '_';
      return n;
    });

TEST(AdppConformance, UnstartableProviderIsOneError) {
  auto r = run_conformance({"/nonexistent/provider"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Io);
}

TEST(AdppConformance, OnlySelectedCasesRun) {
  ConformanceOptions o;
  o.only = {"zero_length", "eof_exit"};
  auto r = run_conformance({kSim}, o);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->cases.size(), 2u);
  EXPECT_EQ(r->cases[0].name, "zero_length");
  EXPECT_TRUE(r->all_passed());
  o.only = {"no_such_case"};
  EXPECT_FALSE(run_conformance({kSim}, o).ok());
}

}  // namespace
}  // namespace dot::adpp
