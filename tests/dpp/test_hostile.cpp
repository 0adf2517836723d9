// Every hostile plugin, driven the way core drives a plugin: each must be
// refused with its own code, kind and detail, within the deadline, and leave
// no process behind (the host is a child subreaper, so even a grandchild that
// called setsid is found: list_children() must come back empty).
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <set>

#include "drive.h"
#include "dot/base/error_kinds.h"
#include "../common/test_error_kinds.h"
#include "dot/base/fd.h"
#include "dot/base/process.h"
#include "hostile.h"
#include "verdict.h"

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
  EXPECT_TRUE(hostile::refused_as(r.status, c));
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

// Which comes first, the host's write of a request or the death of a plugin
// that never reads it, is up to the scheduler; the verdict must not be. Both
// orders are forced here, not hoped for: no_output is dead (a zombie, seen
// through a pidfd, not yet reaped) before dot.initialize is written, so that
// write fails with EPIPE; exits_after_reading_the_request exits only after
// reading the request, so that write succeeded. Each must get the
// catalogue's refusal, and the two exactly the same error.
Error refusal_of_initialize(const std::string& exe, bool wait_until_dead, const std::string& stage) {
  UniqueFd fd(::open(exe.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return make_error(base::ErrorKind::Open, "cannot open " + exe);
  HostSessionOptions o;
  o.exec_fd = fd.get();
  o.stage_dir = stage;
  auto s = HostSession::start(std::move(o));
  if (!s.ok()) return s.error();
  if (wait_until_dead) {
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, s->pid(), 0)));
    if (!pidfd) return make_error(test::ErrorKind::PidfdOpen, std::strerror(errno));
    pollfd p{pidfd.get(), POLLIN, 0};
    if (::poll(&p, 1, 10'000) != 1) return make_error(test::ErrorKind::Test, "the plugin did not exit by itself");
  }
  auto echo = s->initialize(hello::initialize_params("audit", std::string(64, 'a')));
  if (echo.ok()) return make_error(test::ErrorKind::Test, exe + " answered dot.initialize");
  return echo.error();
}

TEST(HostileSchedule, ThePluginDyingBeforeOrAfterTheRequestLandsIsOneVerdict) {
  const hostile::Case* expected = hostile::find("no_output");
  ASSERT_NE(expected, nullptr);
  TempStage stage1, stage2;
  Error dead_first = refusal_of_initialize(bin("dpp-hostile-no_output"), true, stage1.path());
  Error read_first = refusal_of_initialize(bin("dpp-hostile-exits_after_reading_the_request"), false, stage2.path());
  for (const Error* e : {&dead_first, &read_first}) {
    EXPECT_EQ(code_name(e->code), code_name(expected->code)) << e->line();
    EXPECT_EQ(e->kind, expected->kind) << e->line();
    EXPECT_EQ(e->detail, "the plugin closed stdout without answering dot.initialize") << e->line();
  }
  EXPECT_EQ(dead_first.line(), read_first.line());
  EXPECT_TRUE(list_children().empty());
}

TEST(HostileCatalogue, AtLeastFortyCasesEachBuiltAsItsOwnExecutable) {
  EXPECT_GE(hostile::expect_catalogue(DOT_HOSTILE_LIST, hostile::cases(), DOT_BIN_DIR), 40u);
}

}  // namespace
}  // namespace dot::dpp
