// dot-core is a statically linked front end that runs version, init, store
// and inspect itself and execs dot-core-engine (installed next to it) for
// every other command (docs/startup.md). These tests pin both halves: what
// the front end needs at run time, and that handing a command over changes
// nothing the user can see.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dot/base/fd.h"
#include "dot/base/sandbox.h"
#include "helpers.h"
#include "run_cli.h"

namespace dot::cli {
namespace {

using store::testing::RunResult;
using store::testing::TempDir;

std::string bin(const std::string& name) { return std::string(DOT_BIN_DIR) + "/" + name; }

RunResult run(const std::string& exe, std::vector<std::string> args, const TempDir& t) {
  args.insert(args.begin(), exe);
  return store::testing::run_program(args, t.path());
}

// A shell command line (for standard input), run in `t`.
RunResult sh(const std::string& line, const TempDir& t) {
  return store::testing::run_program({"/bin/sh", "-c", line}, t.path());
}

// dot-core alone in a folder of its own: no dot-core-engine beside it.
std::string lone_front_end(const TempDir& t) {
  std::string dir = t / "lone";
  std::filesystem::create_directory(dir);
  std::string exe = dir + "/dot-core";
  std::filesystem::copy_file(bin("dot-core"), exe);
  ::chmod(exe.c_str(), 0755);
  return exe;
}

TEST(FrontEnd, IsStaticallyLinked) {
#ifdef DOT_SANITIZED
  GTEST_SKIP() << "sanitized builds link the front end dynamically (the sanitizer runtimes need the loader)";
#endif
  UniqueFd fd(::open(bin("dot-core").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd);
  auto info = read_elf_dynamic_info([&](std::uint64_t offset, std::size_t length, char* out) -> long {
    return ::pread(fd.get(), out, length, static_cast<off_t>(offset));
  });
  ASSERT_TRUE(info.ok()) << info.error().line();
  EXPECT_TRUE(info->is_elf_executable);
  // No loader and no shared library: adding a dependency that is only
  // available as a shared library (simdjson, libfmt.so) fails here.
  EXPECT_EQ(info->interpreter, "");
  EXPECT_TRUE(info->needed.empty()) << info->needed.front();
}

TEST(FrontEnd, RunsTheStoreCommandsWithoutTheEngine) {
  TempDir t;
  std::string exe = lone_front_end(t);
  auto init = run(exe, {"init", "--root", t / "root"}, t);
  ASSERT_EQ(init.exit_code, 0) << init.err;
  auto list = run(exe, {"inspect", "list", "--root", t / "root", "--json"}, t);
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out, "[]\n");
  auto check = run(exe, {"store", "check", "--root", t / "root"}, t);
  EXPECT_EQ(check.exit_code, 0) << check.err;
  auto version = run(exe, {"version"}, t);
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out.rfind("dot-core ", 0), 0u) << version.out;
}

TEST(FrontEnd, AMissingEngineIsATypedErrorNamingIt) {
  TempDir t;
  std::string exe = lone_front_end(t);
  std::string engine = t / "lone/dot-core-engine";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"jcs", "canonicalize", "-"}, {"--help"}, {}, {"no-such-command"}}) {
    auto r = run(exe, args, t);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("DOT_E_INTERNAL"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(engine), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  auto json = run(exe, {"status", "--root", t / "root", "--json"}, t);
  EXPECT_EQ(json.exit_code, 1);
  EXPECT_NE(json.out.find("\"code\":\"DOT_E_INTERNAL\""), std::string::npos) << json.out;
}

TEST(FrontEnd, EngineCommandsKeepStdinStdoutAndExitCodes) {
  TempDir t;
  auto r = sh("printf '{\"b\":1,\"a\":[true]}' | '" + bin("dot-core") + "' jcs canonicalize -", t);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "{\"a\":[true],\"b\":1}");
  // A usage error keeps spec/cli.md's exit code 2 and the engine's message.
  auto typo = run(bin("dot-core"), {"no-such-command"}, t);
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err, "");
  EXPECT_EQ(typo.err, run(bin("dot-core-engine"), {"no-such-command"}, t).err);
  // A failing engine command keeps its exit code and typed error.
  auto missing = run(bin("dot-core"), {"status", "--root", t / "nowhere"}, t);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("DOT_E_"), std::string::npos) << missing.err;
}

TEST(FrontEnd, HelpListsEveryCommandAndMatchesTheEngine) {
  TempDir t;
  auto help = run(bin("dot-core"), {"--help"}, t);
  EXPECT_EQ(help.exit_code, 0);
  for (const char* command : {"version", "init", "store", "inspect", "plan", "apply", "jcs", "adpp", "metewand"})
    EXPECT_NE(help.out.find(std::string("\n  ") + command + " "), std::string::npos) << command;
  // The commands the front end runs itself are the very same definitions.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"inspect", "--help"}, {"inspect", "show", "--help"}, {"store", "--help"},
        {"init", "--help"}, {"version", "--json"}, {"inspect", "show"}}) {
    auto front = run(bin("dot-core"), args, t);
    auto engine = run(bin("dot-core-engine"), args, t);
    EXPECT_EQ(front.exit_code, engine.exit_code) << args[0];
    EXPECT_EQ(front.out, engine.out) << args[0];
    EXPECT_EQ(front.err, engine.err) << args[0];
  }
}

}  // namespace
}  // namespace dot::cli
