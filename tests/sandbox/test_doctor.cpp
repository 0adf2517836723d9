// dot-core doctor, run as a user would: on this kernel, and on what looks
// like a kernel without Landlock or without seccomp.

#include <gtest/gtest.h>

#include "dot/base/fd.h"
#include "dot/base/json.h"
#include "dot/base/process.h"
#include "dot/base/sandbox.h"

namespace dot {
namespace {

const std::string kBin = DOT_BIN_DIR;

struct CliRun {
  int code = -1;
  std::string out, err;
};

CliRun run(std::vector<std::string> argv) {
  SpawnOptions o;
  o.path = argv[0];
  o.argv = std::move(argv);
  o.env = {"LANG=C"};
  o.stdin_mode = StdioMode::DevNull;
  auto child = spawn(o);
  if (!child.ok()) {
    ADD_FAILURE() << child.error().line();
    return {};
  }
  CliRun r;
  // Small outputs: stdout then stderr cannot deadlock.
  r.out = read_all(child->stdout_fd().get(), 1 << 16).value();
  r.err = read_all(child->stderr_fd().get(), 1 << 16).value();
  auto st = child->wait_until(Clock::now() + std::chrono::seconds(10));
  if (st) r.code = st->code;
  return r;
}

TEST(Doctor, ReportsEveryLayerOnThisKernel) {
  CliRun r = run({kBin + "/dot-core", "doctor", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const int abi = probe_sandbox_support().landlock_abi;
  EXPECT_NE(r.out.find("\"landlock_abi\":" + std::to_string(abi) + ","), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"process_assurance\":true"), std::string::npos) << r.out;
  for (const char* layer : {"landlock", "seccomp", "no_new_privs", "capabilities", "rlimits"})
    EXPECT_NE(r.out.find(std::string("{\"name\":\"") + layer + "\",\"available\":true"), std::string::npos) << layer;
  EXPECT_TRUE(json::validate(r.out.substr(0, r.out.size() - 1)).ok()) << r.out;

  CliRun human = run({kBin + "/dot-core", "doctor"});
  ASSERT_EQ(human.code, 0);
  EXPECT_NE(human.out.find("Landlock ABI: " + std::to_string(abi)), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("process assurance: available"), std::string::npos) << human.out;
}

TEST(Doctor, KernelWithoutLandlock) {
  CliRun r = run({kBin + "/sandbox-without-layer", "landlock", kBin + "/dot-core", "doctor", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"landlock_abi\":0,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("{\"name\":\"landlock\",\"available\":false,\"detail\":\"not built into this kernel (ENOSYS)\"}"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"process_assurance\":false,\"missing\":\"landlock\""), std::string::npos) << r.out;
  CliRun human = run({kBin + "/sandbox-without-layer", "landlock", kBin + "/dot-core", "doctor"});
  EXPECT_NE(human.out.find("DOT_E_SANDBOX_UNAVAILABLE: landlock: not built into this kernel"), std::string::npos)
      << human.out;
}

TEST(Doctor, KernelWithoutSeccomp) {
  CliRun r = run({kBin + "/sandbox-without-layer", "seccomp", kBin + "/dot-core", "doctor", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("{\"name\":\"seccomp\",\"available\":false"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"process_assurance\":false,\"missing\":\"seccomp\""), std::string::npos) << r.out;
}

TEST(Doctor, UsageErrorsExitTwo) {
  EXPECT_EQ(run({kBin + "/dot-core", "doctor", "--nonsense"}).code, 2);
  CliRun help = run({kBin + "/dot-core", "doctor", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("dot-core doctor --json"), std::string::npos);
}

}  // namespace
}  // namespace dot
