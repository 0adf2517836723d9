// 100 plan/apply cycles in one process through the library: no descriptor,
// process, temp file or stage is left behind.
#include <dirent.h>
#include <unistd.h>

#include <fstream>

#include "dot/core/applier.h"
#include "dot/core/planner.h"
#include "engine_harness.h"

namespace dot::core::testing {
namespace {

std::size_t open_descriptors() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// Our children, zombies included (their /proc/PID/stat names us as parent).
std::vector<pid_t> children() {
  std::vector<pid_t> out;
  pid_t self = ::getpid();
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    std::getline(stat, line);
    auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == self) out.push_back(std::stoi(name));
  }
  return out;
}

TEST_F(EngineTest, HundredPlanApplyCyclesLeaveNothingBehind) {
  // One warm-up cycle: the first use of OpenSSL, SQLite and the locale keeps
  // process-wide state that is not a leak.
  auto cycle = [&](int i) {
    // A plan that changes nothing is not sealed: give each cycle a change.
    std::error_code ec;
    fs::remove(root_ / "hello.txt", ec);
    auto root = Root::open(root_.string(), Access::Mutating);
    ASSERT_TRUE(root.ok()) << root.error().line();
    PlanOptions options;
    options.consent = Assurance::Audit;  // the hello plugin is registered with audit assurance
    auto planned = make_plan(*root, options);
    ASSERT_TRUE(planned.ok()) << i << ": " << planned.error().line();
    auto applied = apply_plan(*root, planned->plan_id);
    ASSERT_TRUE(applied.ok()) << i << ": " << applied.error().line();
    EXPECT_EQ(applied->state, store::State::Done);
  };
  cycle(0);
  std::size_t fds = open_descriptors();
  for (int i = 1; i <= 100; ++i) {
    cycle(i);
    if (HasFatalFailure()) return;
  }
  EXPECT_EQ(open_descriptors(), fds);
  EXPECT_TRUE(children().empty());
  EXPECT_TRUE(temp_files().empty());
  EXPECT_TRUE(stage_leftovers().empty());
  EXPECT_EQ(store_problems(), "");
}

}  // namespace
}  // namespace dot::core::testing
