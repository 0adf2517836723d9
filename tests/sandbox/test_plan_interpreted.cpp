// Interpreted plugins through the real product (docs/spec/dpp-general.md,
// "Interpreted plugins"): a Python plugin on dot_plugin, and one started by
// `#!/usr/bin/env python3`, register and plan under audit and process
// assurance; a hostile Python plugin's acts (reading a private key outside
// its inputs, writing beside its stage, executing a shell, opening a socket)
// happen under audit and are stopped under process assurance, each with its
// verdict; a script or interpreter changed after register is refused with
// DOT_E_PLUGIN_IDENTITY; a folder given with `register --runtime` is
// recorded, shown and readable (never writable) under process assurance,
// and checked as an input is. The plugins are written at test time: the #! line
// names this machine's python3, and dot_plugin (dpp/python) is inlined,
// since an isolated (-I) interpreter reads no folder but its own runtime.

#include <gtest/gtest.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dot/base/fd.h"
#include "dot/base/process.h"
#include "dot/base/sha256.h"
#include "product_run.h"

namespace dot {
namespace {

namespace fs = std::filesystem;

const std::string kBin = DOT_BIN_DIR;
const std::string kPython = DOT_TEST_PYTHON;

using sandbox_testing::CmdResult;
using sandbox_testing::contains;
using sandbox_testing::dot_core;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string real_path(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) != nullptr ? std::string(buf) : p;
}

// What a contained plugin killed by seccomp before its first answer is reported as.
const std::string kSeccompKill =
    "DOT_E_PROTOCOL: the plugin was killed by SIGSYS (signal 31) while core waited for dot.initialize: seccomp "
    "blocked a system call that is not on the allowlist (process containment, seccomp layer)\n";

// A general-profile plugin on dot_plugin (inlined after the #! line) that
// first does `act` (Python statements setting `outcome`), then proposes one
// file, outcome.txt, holding the outcome: what happened shows in the diff.
std::string python_plugin(const std::string& shebang, const std::string& act) {
  return "#!" + shebang + "\n" + slurp(fs::path(DOT_SOURCE_DIR) / "dpp/python/dot_plugin.py") +
         "\n# ---- the plugin (dot_plugin above, inlined) ----\n"
         "dot_plugin = sys.modules[__name__]\n"
         "outcome = 'nothing tried'\n" +
         act +
         "\nclass Probe(dot_plugin.Plugin):\n"
         "    id = 'org.test.py'\n"
         "    def plan(self, ctx, managed):\n"
         "        return [dot_plugin.write('outcome.txt', 0o644)]\n"
         "    def materialize(self, ctx, stage):\n"
         "        return [dot_plugin.write_staged_file(stage, 'outcome.txt', (outcome + '\\n').encode())]\n"
         "dot_plugin.run(Probe())\n";
}

class InterpretedPlan : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/dot-interp-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    root_ = base_ / "root";
    CmdResult init = dot_core({"init", "--root", root_.string()});
    ASSERT_EQ(init.code, 0) << init.err;
    targets_ = base_ / "targets";
    fs::create_directories(targets_ / "home" / ".ssh");
    std::ofstream(targets_ / "home" / ".ssh" / "id_ed25519") << "PRIVATE-KEY-" << ::getpid() << "\n";
  }
  void TearDown() override {
    std::error_code ec;
    if (!base_.empty()) fs::remove_all(base_, ec);
  }
  // Writes the plugin as <base>/plugin.py (mode 0755).
  fs::path write_plugin(const std::string& text, const std::string& name = "plugin.py") {
    fs::path p = base_ / name;
    { std::ofstream(p, std::ios::trunc) << text; }
    fs::permissions(p, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                           fs::perms::others_exec);
    return p;
  }
  CmdResult register_plugin(const fs::path& plugin, const std::string& assurance,
                            std::vector<std::string> env = {"LANG=C"}) {
    return dot_core({"register", "--root", root_.string(), "--plugin", plugin.string(), "--id", "org.test.py",
                     "--profile", "org.dot.dpp/v1", "--assurance", assurance, "--replace"},
                    std::move(env));
  }
  CmdResult plan(const std::string& assurance) {
    return dot_core({"plan", "--root", root_.string(), "--plugin", "org.test.py",
                     assurance == "process" ? "--require-process-sandbox" : "--allow-audit-plugin"});
  }
  // Registers `act`'s plugin with `assurance` and plans with it.
  CmdResult act(const std::string& statements, const std::string& assurance) {
    fs::path p = write_plugin(python_plugin(kPython, statements));
    CmdResult reg = register_plugin(p, assurance);
    EXPECT_EQ(reg.code, 0) << reg.err;
    return plan(assurance);
  }
  // Nothing left in the root's stage folder, whatever the plan did.
  void expect_clean_stage() {
    std::error_code ec;
    fs::path stage = root_ / ".dot" / "stage";
    if (fs::exists(stage))
      for (const auto& e : fs::directory_iterator(stage, ec)) ADD_FAILURE() << "left in the stage: " << e.path();
  }
  fs::path base_, root_, targets_;
};

TEST_F(InterpretedPlan, PythonPluginOnDotPluginPlansUnderBothAssurances) {
  fs::path p = write_plugin(python_plugin(kPython, "outcome = 'hello from python'"));
  CmdResult reg = register_plugin(p, "process");
  ASSERT_EQ(reg.code, 0) << reg.err;
  // The interpreter and its runtime folders are shown, resolved.
  const std::string interpreter = real_path(kPython);
  EXPECT_TRUE(contains(reg.out, "interpreter " + interpreter + " (sha256 ")) << reg.out;
  const std::string version = fs::path(interpreter).filename().string().substr(std::string("python").size());
  const std::string lib = fs::path(interpreter).parent_path().parent_path().string() + "/lib/python" + version;
  EXPECT_TRUE(contains(reg.out, "runtime " + lib + " (read-only)\n")) << reg.out;
  CmdResult boxed = plan("process");
  ASSERT_EQ(boxed.code, 0) << boxed.err;
  EXPECT_TRUE(contains(boxed.out, "\n+hello from python\n")) << boxed.out;
  ASSERT_EQ(register_plugin(p, "audit").code, 0);
  CmdResult audit = plan("audit");
  ASSERT_EQ(audit.code, 0) << audit.err;
  EXPECT_TRUE(contains(audit.out, "\n+hello from python\n")) << audit.out;
  expect_clean_stage();
}

// A plugin whose runtime predates an offer of this dot-core (here dot_plugin
// as it was before "cache") answers dot.initialize -32602: the error says
// what to do about it.
TEST_F(InterpretedPlan, APluginBuiltAgainstAnOlderRuntimeIsToldHowToCatchUp) {
  CmdResult r = act("_OPTIONAL = ('log', 'digests')", "audit");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(contains(r.err,
                       "answered dot.initialize with error -32602: Invalid params: the capabilities are not "
                       "the profile's"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "a plugin built against an older dot-core refuses what this one offers")) << r.err;
  EXPECT_TRUE(contains(r.err, "register --root " + root_.string() + " --replace ...")) << r.err;
  expect_clean_stage();
}

TEST_F(InterpretedPlan, EnvPython3LineIsResolvedOnceAtRegister) {
  // PATH holds a relative entry (skipped) before python3's own folder.
  const std::string dir = fs::path(kPython).parent_path().string();
  fs::path p = write_plugin(python_plugin("/usr/bin/env python3", "outcome = 'started by env'"));
  CmdResult reg = dot_core({"register", "--root", root_.string(), "--plugin", p.string(), "--id", "org.test.py",
                            "--profile", "org.dot.dpp/v1", "--assurance", "process", "--json"},
                           {"LANG=C", "PATH=bin:" + dir});
  ASSERT_EQ(reg.code, 0) << reg.err;
  EXPECT_TRUE(contains(reg.out, "\"path\":\"" + real_path(dir + "/python3") + "\"")) << reg.out;
  EXPECT_TRUE(contains(reg.out, "\"options\":[\"-I\"]")) << reg.out;
  // Plan looks nothing up: no PATH at all.
  CmdResult boxed = plan("process");
  ASSERT_EQ(boxed.code, 0) << boxed.err;
  EXPECT_TRUE(contains(boxed.out, "\n+started by env\n")) << boxed.out;
}

TEST_F(InterpretedPlan, ReadingAPrivateKeyOutsideItsInputsIsBlocked) {
  const std::string key = (targets_ / "home" / ".ssh" / "id_ed25519").string();
  const std::string statements =
      "try:\n"
      "    with open('" +
      key +
      "') as f:\n"
      "        outcome = 'read ' + f.read().strip()\n"
      "except OSError as e:\n"
      "    outcome = 'blocked (%s)' % e.strerror\n";
  CmdResult audit = act(statements, "audit");
  ASSERT_EQ(audit.code, 0) << audit.err;
  EXPECT_TRUE(contains(audit.out, "\n+read PRIVATE-KEY-")) << audit.out;
  CmdResult boxed = act(statements, "process");
  ASSERT_EQ(boxed.code, 0) << boxed.err;
  EXPECT_TRUE(contains(boxed.out, "\n+blocked (Permission denied)\n")) << boxed.out;
  EXPECT_FALSE(contains(boxed.out, "PRIVATE-KEY")) << boxed.out;
}

TEST_F(InterpretedPlan, WritingBesideItsStageIsBlocked) {
  // Straight into the managed root, around the plan (the stage lies beneath it).
  const fs::path beside = root_ / "beside.txt";
  const std::string statements =
      "try:\n"
      "    with open('" +
      beside.string() +
      "', 'w') as f:\n"
      "        f.write('x')\n"
      "    outcome = 'wrote beside the stage'\n"
      "except OSError as e:\n"
      "    outcome = 'blocked (%s)' % e.strerror\n";
  CmdResult audit = act(statements, "audit");
  ASSERT_EQ(audit.code, 0) << audit.err;
  EXPECT_TRUE(contains(audit.out, "\n+wrote beside the stage\n")) << audit.out;
  EXPECT_TRUE(fs::exists(beside));
  fs::remove(beside);
  CmdResult boxed = act(statements, "process");
  ASSERT_EQ(boxed.code, 0) << boxed.err;
  EXPECT_TRUE(contains(boxed.out, "\n+blocked (Permission denied)\n")) << boxed.out;
  EXPECT_FALSE(fs::exists(beside));
  expect_clean_stage();
}

TEST_F(InterpretedPlan, ExecutingAShellIsKilled) {
  const fs::path marker = targets_ / "sh-ran";
  const std::string statements = "os.execv('/bin/sh', ['sh', '-c', 'touch " + marker.string() + "'])\n";
  CmdResult audit = act(statements, "audit");
  EXPECT_EQ(audit.code, 1);  // the shell took the plugin's place and broke the session
  EXPECT_TRUE(fs::exists(marker)) << audit.err;
  fs::remove(marker);
  CmdResult boxed = act(statements, "process");
  EXPECT_EQ(boxed.code, 1);
  EXPECT_EQ(boxed.err, kSeccompKill);
  EXPECT_FALSE(fs::exists(marker));
  expect_clean_stage();
}

TEST_F(InterpretedPlan, OpeningASocketIsKilled) {
  const std::string statements =
      "import socket\n"
      "socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()\n"
      "outcome = 'opened a socket'\n";
  CmdResult audit = act(statements, "audit");
  ASSERT_EQ(audit.code, 0) << audit.err;
  EXPECT_TRUE(contains(audit.out, "\n+opened a socket\n")) << audit.out;
  CmdResult boxed = act(statements, "process");
  EXPECT_EQ(boxed.code, 1);
  EXPECT_EQ(boxed.err, kSeccompKill);
  expect_clean_stage();
}

TEST_F(InterpretedPlan, ScriptChangedAfterRegisterIsRefused) {
  fs::path p = write_plugin(python_plugin(kPython, "outcome = 'pinned'"));
  ASSERT_EQ(register_plugin(p, "process").code, 0);
  // The source file is not what runs: changing it changes nothing.
  write_plugin(python_plugin(kPython, "outcome = 'changed source'"));
  CmdResult first = plan("process");
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_TRUE(contains(first.out, "\n+pinned\n")) << first.out;
  // The pinned copy rewritten in place is refused before anything runs.
  const fs::path copy = root_ / ".dot" / "plugin-org.test.py";
  ASSERT_TRUE(fs::exists(copy));
  const std::string changed = python_plugin(kPython, "outcome = 'swapped'");
  fs::permissions(copy, fs::perms::owner_read | fs::perms::owner_write);
  { std::ofstream(copy, std::ios::trunc) << changed; }
  CmdResult r = plan("process");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(
      r.err.rfind("DOT_E_PLUGIN_IDENTITY: the pinned plugin changed after register: sha256 " + sha256_hex(changed), 0),
      0u)
      << r.err;
  EXPECT_FALSE(contains(r.out, "swapped"));
}

TEST_F(InterpretedPlan, InterpreterChangedAfterRegisterIsRefused) {
  // An interpreter of our own (a copy of python3 under <base>/bin) that the
  // test can change; python finds its standard library from its built-in
  // prefix. Audit: a copy elsewhere has no runtime folders to grant.
  const fs::path interpreter = base_ / "bin" / fs::path(real_path(kPython)).filename();
  fs::create_directories(interpreter.parent_path());
  fs::copy_file(real_path(kPython), interpreter);
  fs::path p = write_plugin(python_plugin(interpreter.string(), "outcome = 'own interpreter'"));
  CmdResult reg = register_plugin(p, "audit");
  ASSERT_EQ(reg.code, 0) << reg.err;
  EXPECT_TRUE(
      contains(reg.out, "interpreter " + interpreter.string() + " (sha256 " + sha256_hex(slurp(interpreter)) + ")\n"))
      << reg.out;
  CmdResult first = plan("audit");
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_TRUE(contains(first.out, "\n+own interpreter\n")) << first.out;

  { std::ofstream(interpreter, std::ios::app) << "one more byte"; }
  CmdResult changed = plan("audit");
  EXPECT_EQ(changed.code, 1);
  EXPECT_EQ(changed.err.rfind("DOT_E_PLUGIN_IDENTITY: the pinned plugin's interpreter " + interpreter.string() +
                                  " changed after register: sha256 " + sha256_hex(slurp(interpreter)),
                              0),
            0u)
      << changed.err;
  fs::remove(interpreter);
  CmdResult gone = plan("audit");
  EXPECT_EQ(gone.code, 1);
  EXPECT_EQ(gone.err.rfind("DOT_E_PLUGIN_IDENTITY: the pinned plugin's interpreter " + interpreter.string() +
                               " cannot be used any more",
                           0),
            0u)
      << gone.err;
}

// register --runtime: a folder of the author's own, read-only under process
// assurance, recorded after the derived ones and shown with them.
TEST_F(InterpretedPlan, RuntimeFoldersGivenAtRegisterAreReadOnlyUnderProcess) {
  const fs::path extra = base_ / "extra";
  fs::create_directories(extra);
  std::ofstream(extra / "data.txt") << "RUNTIME-DATA\n";
  const std::string statements =
      "try:\n"
      "    with open('" +
      (extra / "data.txt").string() +
      "') as f:\n"
      "        outcome = 'read ' + f.read().strip()\n"
      "except OSError as e:\n"
      "    outcome = 'not read (%s)' % e.strerror\n"
      "try:\n"
      "    open('" +
      (extra / "new.txt").string() +
      "', 'w').close()\n"
      "    outcome += ', wrote'\n"
      "except OSError as e:\n"
      "    outcome += ', not written (%s)' % e.strerror\n";
  fs::path p = write_plugin(python_plugin(kPython, statements));
  ASSERT_EQ(register_plugin(p, "process").code, 0);
  CmdResult without = plan("process");
  ASSERT_EQ(without.code, 0) << without.err;
  EXPECT_TRUE(contains(without.out, "\n+not read (Permission denied), not written (Permission denied)\n"))
      << without.out;

  CmdResult reg =
      dot_core({"register", "--root", root_.string(), "--plugin", p.string(), "--id", "org.test.py", "--profile",
                "org.dot.dpp/v1", "--assurance", "process", "--replace", "--runtime", extra.string()});
  ASSERT_EQ(reg.code, 0) << reg.err;
  EXPECT_TRUE(contains(reg.out, "runtime " + extra.string() + " (read-only)\n")) << reg.out;
  const std::size_t derived = reg.out.find("runtime ");
  EXPECT_LT(derived, reg.out.find("runtime " + extra.string())) << "the derived folders come first: " << reg.out;
  CmdResult boxed = plan("process");
  ASSERT_EQ(boxed.code, 0) << boxed.err;
  EXPECT_TRUE(contains(boxed.out, "\n+read RUNTIME-DATA, not written (Permission denied)\n")) << boxed.out;
  EXPECT_FALSE(fs::exists(extra / "new.txt"));

  // Recorded in the manifest: the JSON view, and once even when repeated
  // from the derived ones.
  const std::string lib = reg.out.substr(derived + 8, reg.out.find(" (read-only)", derived) - derived - 8);
  CmdResult json = dot_core({"register", "--root", root_.string(), "--plugin", p.string(), "--id", "org.test.py",
                             "--profile", "org.dot.dpp/v1", "--assurance", "process", "--replace", "--runtime",
                             extra.string(), "--runtime", lib, "--json"});
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_TRUE(contains(json.out, "\",\"" + extra.string() + "\"],\"sha256\"")) << json.out;
  EXPECT_EQ(json.out.find("\"" + lib + "\""), json.out.rfind("\"" + lib + "\"")) << json.out;
  expect_clean_stage();
}

TEST_F(InterpretedPlan, RuntimeFoldersAreCheckedAsInputsAreAndOnlyForScripts) {
  const fs::path extra = base_ / "extra";
  fs::create_directories(extra);
  fs::create_directory_symlink(extra, base_ / "link");
  fs::path p = write_plugin(python_plugin(kPython, "outcome = 'x'"));
  auto refused = [&](const fs::path& plugin, std::vector<std::string> runtime) {
    std::vector<std::string> args = {"register",       "--root",      root_.string(), "--plugin",
                                     plugin.string(),  "--id",        "org.test.py",  "--profile",
                                     "org.dot.dpp/v1", "--assurance", "process"};
    for (auto& dir : runtime) {
      args.push_back("--runtime");
      args.push_back(std::move(dir));
    }
    CmdResult r = dot_core(args);
    EXPECT_EQ(r.code, 1) << r.out;
    return r.err;
  };
  const std::string python = real_path(kPython);  // an ELF plugin has no interpreter to give folders to
  EXPECT_EQ(refused(python, {extra.string()}), "DOT_E_POLICY: --runtime " + extra.string() +
                                                   " is for a #! script's interpreter (" + python +
                                                   " is an ELF executable)\n");
  EXPECT_EQ(refused(p, {"extra"}), "DOT_E_POLICY: --runtime extra: not an absolute path\n");
  EXPECT_EQ(refused(p, {(base_ / "link").string()}), "DOT_E_PATH_ESCAPE: --runtime " + (base_ / "link").string() +
                                                         ": " + (base_ / "link").string() +
                                                         " is a symlink (never followed)\n");
  EXPECT_EQ(refused(p, {root_.string()}),
            "DOT_E_POLICY: --runtime " + root_.string() +
                ": the managed root, its state folder or above the root: a plugin never reads the root's state "
                "folder\n");
  EXPECT_EQ(refused(p, {extra.string(), extra.string()}),
            "DOT_E_POLICY: --runtime " + extra.string() + " is given twice\n");
  // Nothing was registered by any of them.
  CmdResult none = plan("process");
  EXPECT_EQ(none.code, 1);
  EXPECT_TRUE(contains(none.err, "no plugin is registered")) << none.err;
}

TEST_F(InterpretedPlan, ConformRunsTheScriptAsPlanWould) {
  fs::path p = write_plugin(python_plugin(kPython, "outcome = 'conform'"));
  CmdResult r = dot_core({"dpp", "conform", "--id", "org.test.py", "--assurance", "process", "--", p.string()});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // What register refuses, conform refuses with the same words.
  fs::path bad = write_plugin("#!/bin/sh -e\nexit 0\n", "bad.sh");
  CmdResult conform = dot_core({"dpp", "conform", "--id", "org.test.py", "--", bad.string()});
  CmdResult reg = register_plugin(bad, "audit");
  EXPECT_EQ(conform.code, 1);
  EXPECT_EQ(reg.code, 1);
  EXPECT_TRUE(contains(conform.err, "is a #! script whose #! line is not")) << conform.err;
  EXPECT_TRUE(contains(reg.err, "is a #! script whose #! line is not")) << reg.err;
}

}  // namespace
}  // namespace dot
