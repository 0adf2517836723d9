// Every hostile plugin, driven the way core drives a plugin: each must be
// refused with its own code, kind and detail, within the deadline, and leave
// no process behind (the host is a child subreaper, so even a grandchild that
// called setsid is found: list_children() must come back empty). The
// interpreted ones (Python scripts) are driven contained, as under process
// assurance, and must leave nothing beside their stage.
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
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

// A catalogue's cases as test parameters, each named by its case.
std::vector<const hostile::Case*> params_of(std::span<const hostile::Case> table) {
  std::vector<const hostile::Case*> v;
  for (const auto& c : table) v.push_back(&c);
  return v;
}

std::string case_name(const ::testing::TestParamInfo<const hostile::Case*>& i) { return i.param->name; }

INSTANTIATE_TEST_SUITE_P(All, Hostile, ::testing::ValuesIn(params_of(hostile::cases())), case_name);

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

// An interpreted case's workspace: the stage (0700) and, around it, what the
// plugin was never given (home/.ssh/id_ed25519) and where a write beside the
// stage or a shell's trace would land.
class InterpretedWorkspace {
 public:
  InterpretedWorkspace() {
    namespace fs = std::filesystem;
    stage_ = ws_.path() + "/stage";
    fs::create_directory(stage_);
    fs::permissions(stage_, fs::perms::owner_all);
    fs::create_directories(ws_.path() + "/home/.ssh");
    std::ofstream(ws_.path() + "/home/.ssh/id_ed25519") << "PRIVATE-KEY\n";
  }
  const std::string& stage() const { return stage_; }
  std::string beside(const std::string& name) const { return ws_.path() + "/" + name; }
  // What the workspace holds besides the stage and home.
  std::set<std::string> strays() const {
    std::set<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(ws_.path()))
      if (e.path().filename() != "stage" && e.path().filename() != "home") out.insert(e.path().filename());
    return out;
  }

 private:
  TempStage ws_;
  std::string stage_;
};

// `deadline`: the hello profile's 5 s, or longer where the test is about an
// act and not about time (a loaded machine may start Python slowly).
testing::DriveResult drive_interpreted(const std::string& name, const InterpretedWorkspace& ws, bool contained,
                                       std::chrono::milliseconds deadline = SessionLimits{}.deadline) {
  testing::DriveOptions o;
  o.contained = contained;
  o.limits.deadline = deadline;
  return drive(bin("dpp-hostile-" + name), ws.stage(), o);
}

class InterpretedHostile : public ::testing::TestWithParam<const hostile::Case*> {};

TEST_P(InterpretedHostile, IsStoppedContainedWithItsVerdictAndLeavesNothing) {
  const hostile::Case& c = *GetParam();
  InterpretedWorkspace ws;
  auto t0 = Clock::now();
  auto r = drive_interpreted(c.name, ws, true);
  auto elapsed = Clock::now() - t0;
  EXPECT_TRUE(hostile::refused_as(r.status, c)) << r.stderr_bytes;
  auto limit = c.needs_deadline ? std::chrono::milliseconds(7000) : std::chrono::milliseconds(4500);
  EXPECT_LT(elapsed, limit) << c.name;
  if (c.needs_deadline) {
    EXPECT_GE(elapsed, std::chrono::milliseconds(4900));
  }
  EXPECT_TRUE(list_children().empty());
  EXPECT_EQ(ws.strays(), std::set<std::string>{});
  EXPECT_EQ(r.stderr_bytes.find("read a key"), std::string::npos) << r.stderr_bytes;
}

INSTANTIATE_TEST_SUITE_P(Python, InterpretedHostile, ::testing::ValuesIn(params_of(hostile::interpreted_cases())),
                         case_name);

// The base the interpreted cases are made from completes a contained session:
// their refusals are their acts', not Python failing to start contained.
TEST(InterpretedHostileBase, TheHonestScriptCompletesContained) {
  InterpretedWorkspace ws;
  auto r = drive_interpreted("py_honest", ws, true, std::chrono::milliseconds(60000));
  ASSERT_TRUE(r.status.ok()) << r.status.error().line() << "\n" << r.stderr_bytes;
  ASSERT_EQ(r.hello.artifacts.size(), 2u);
  EXPECT_EQ(r.hello.artifacts[0].sha256, sha256_hex("Hello, world!\n"));
  EXPECT_TRUE(list_children().empty());
}

// Uncontained (audit) the same four acts happen: containment is what stops them.
TEST(InterpretedHostileBase, UncontainedTheActsHappen) {
  constexpr std::chrono::milliseconds kActDeadline{60000};
  {
    InterpretedWorkspace ws;
    auto r = drive_interpreted("py_reads_ssh_key", ws, false, kActDeadline);
    EXPECT_TRUE(r.status.ok()) << r.status.error().line();
    EXPECT_NE(r.stderr_bytes.find("read a key of 12 bytes"), std::string::npos) << r.stderr_bytes;
  }
  {
    InterpretedWorkspace ws;
    auto r = drive_interpreted("py_writes_beside_stage", ws, false, kActDeadline);
    EXPECT_TRUE(r.status.ok()) << r.status.error().line();
    EXPECT_EQ(ws.strays(), std::set<std::string>{"beside.txt"});
  }
  {
    InterpretedWorkspace ws;
    auto r = drive_interpreted("py_execs_shell", ws, false, kActDeadline);
    EXPECT_FALSE(r.status.ok());  // the shell took the plugin's place
    EXPECT_EQ(ws.strays(), std::set<std::string>{"sh-ran"});
  }
  {
    InterpretedWorkspace ws;
    auto r = drive_interpreted("py_opens_socket", ws, false, kActDeadline);
    EXPECT_TRUE(r.status.ok()) << r.status.error().line();
    EXPECT_NE(r.stderr_bytes.find("opened a socket"), std::string::npos) << r.stderr_bytes;
  }
  EXPECT_TRUE(list_children().empty());
}

TEST(HostileCatalogue, EveryInterpretedCaseIsAScriptOfItsOwn) {
  EXPECT_GE(hostile::expect_catalogue(DOT_HOSTILE_INTERPRETED_LIST, hostile::interpreted_cases(), DOT_BIN_DIR), 11u);
  EXPECT_EQ(::access((std::string(DOT_BIN_DIR) + "/dpp-hostile-py_honest").c_str(), X_OK), 0);
}

TEST(HostileCatalogue, AtLeastFortyCasesEachBuiltAsItsOwnExecutable) {
  EXPECT_GE(hostile::expect_catalogue(DOT_HOSTILE_LIST, hostile::cases(), DOT_BIN_DIR), 40u);
}

}  // namespace
}  // namespace dot::dpp
