// The conformance suite passes adpp-sim and fails every broken fixture on the
// case that names its fault.
#include <gtest/gtest.h>

#include <algorithm>

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

const std::vector<Suite> kAll = {Suite::Profile, Suite::Semantics};

ConformanceReport conform(const std::vector<std::string>& argv, milliseconds window = milliseconds(kRoomy),
                          std::vector<std::string> only = {}, std::vector<Suite> suites = kAll) {
  ConformanceOptions o;
  o.window = window;
  o.only = std::move(only);
  o.suites = std::move(suites);
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
    EXPECT_EQ(r.cases.size(), conformance_cases().size());
    EXPECT_TRUE(r.all_passed()) << config << "\n" << dump(r);
  }
}

// The default run is the framed-stdio profile and nothing else: every
// profile case, no semantic one, counted apart.
TEST(AdppConformance, DefaultRunIsExactlyTheProfileSuite) {
  ConformanceOptions o;
  o.window = milliseconds(kRoomy);
  auto r = run_conformance({kSim}, o);
  ASSERT_TRUE(r.ok()) << r.error().line();
  std::vector<std::string> want, got;
  for (const auto& c : conformance_cases())
    if (c.suite == Suite::Profile) want.emplace_back(c.name);
  for (const auto& c : r->cases) {
    got.push_back(c.name);
    EXPECT_EQ(c.suite, Suite::Profile) << c.name;
  }
  EXPECT_EQ(got, want);
  for (const char* name : {"max_frame_request", "over_cap_request", "hello_metadata", "hello_unsupported_version",
                           "hello_repeated", "request_id_64bit", "unknown_fields", "eof_exit", "coalesced"})
    EXPECT_NE(std::find(got.begin(), got.end(), name), got.end()) << name;
  EXPECT_EQ(r->passed(Suite::Profile), want.size()) << dump(*r);
  EXPECT_EQ(r->passed(Suite::Semantics) + r->failed(Suite::Semantics), 0u);
  o.suites = {Suite::Semantics};
  auto sem = run_conformance({kSim}, o);
  ASSERT_TRUE(sem.ok());
  for (const auto& c : sem->cases) EXPECT_EQ(c.suite, Suite::Semantics) << c.name;
  EXPECT_TRUE(sem->all_passed()) << dump(*sem);
  EXPECT_EQ(sem->cases.size() + want.size(), conformance_cases().size());
}

// A provider that breaks only a device-semantics rule meets the profile: the
// default run passes it, --suite semantics fails it.
TEST(AdppConformance, ASemanticsFaultPassesTheDefaultRun) {
  auto profile = conform({kBroken, "value-for-unknown-signal"}, milliseconds(kRoomy), {}, {Suite::Profile});
  EXPECT_TRUE(profile.all_passed()) << dump(profile);
  auto sem = conform({kBroken, "value-for-unknown-signal"}, milliseconds(kRoomy), {}, {Suite::Semantics});
  EXPECT_EQ(sem.failed(Suite::Semantics), 1u) << dump(sem);
}

// Semantics §4: responses may come out of order. A provider answering two
// coalesced Hellos newest first passes (matched by request_id), and so does
// every other case.
TEST(AdppConformance, OutOfOrderAnswersToCoalescedRequestsPass) {
  auto r = conform({kBroken, "reorder"});
  EXPECT_TRUE(r.all_passed()) << dump(r);
  const CaseResult* c = find(r, "coalesced");
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c->detail.find("ids 2, 1"), std::string::npos) << c->detail;
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
        Expectation{"stdout-banner", "hello_metadata", "over-cap", nullptr, kRoomy},
        // A provider that died mid-session is always named with its signal,
        // not only "closed stdout".
        Expectation{"crash-mid-session", "request_id_64bit", "killed by signal 11", "hello_metadata", kRoomy},
        Expectation{"crash-mid-session", "list_devices", "killed by signal 11", "eof_exit", kRoomy},
        Expectation{"value-for-unknown-signal", "read_signals_unknown_signal", "value for the unknown signal",
                    "read_signals", kRoomy},
        Expectation{"cap-off-by-one", "max_frame_request", "exactly 1048576 bytes", "hello_metadata", kRoomy},
        Expectation{"lenient-cap", "over_cap_request", "CODE_OK", "max_frame_request", kRoomy}),
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
  // A named case runs whatever the suites say: get_health is a semantic case.
  o.only = {"get_health", "zero_length"};
  auto r = run_conformance({kSim}, o);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->cases.size(), 2u);
  EXPECT_EQ(r->cases[0].name, "zero_length");
  EXPECT_EQ(r->cases[1].name, "get_health");
  EXPECT_EQ(r->cases[1].suite, Suite::Semantics);
  EXPECT_TRUE(r->all_passed());
  o.only = {"no_such_case"};
  EXPECT_FALSE(run_conformance({kSim}, o).ok());
}

}  // namespace
}  // namespace dot::adpp
