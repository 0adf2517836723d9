// The probes through the real product: `dot-core plan`. Each probe is its
// own plugin binary (sandbox-plan-probe-<act>) that attempts its act as it
// starts and writes the outcome into hello.txt, so an act that happened shows
// in the plan's diff. Registered with audit assurance and planned with
// --allow-audit-plugin, the act happens; registered with process assurance and
// planned with --require-process-sandbox, the plan either fails with a clear
// code or completes without the act having happened.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "dot/base/fd.h"
#include "dot/base/process.h"
#include "product_run.h"
#include "dot/store/store.h"

namespace dot {
namespace {

namespace fs = std::filesystem;

const std::string kBin = DOT_BIN_DIR;

using sandbox_testing::CmdResult;
using sandbox_testing::contains;
using sandbox_testing::dot_core;

// What a contained plugin killed by seccomp before its first answer is
// reported as: the signal and the layer, not the closed pipe it left behind.
const std::string kSeccompKill =
    "the plugin was killed by SIGSYS (signal 31) while core waited for dot.initialize: seccomp blocked a system "
    "call that is not on the allowlist (process containment, seccomp layer)";

// A managed root in a fresh folder per test, and next to it the probe's
// target folder, removed afterwards.
class PlanProbe : public ::testing::Test {
 protected:
  void start(const std::string& act) {
    act_ = act;
    char tmpl[] = "/tmp/dot-sandbox-plan-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    root_ = base_ / "root";
    CmdResult init = dot_core({"init", "--root", root_.string()});
    ASSERT_EQ(init.code, 0) << init.err;
    // The probe finds this folder from its stage (<base>/root/.dot/stage/<id>).
    targets_ = base_ / "targets";
    fs::create_directories(targets_);
    std::ofstream(targets_ / "secret") << "TOPSECRET-" << ::getpid() << "\n";
  }
  void TearDown() override {
    std::error_code ec;
    if (!base_.empty()) fs::remove_all(base_, ec);
  }
  CmdResult plan(const std::string& assurance, bool json = false) {
    const std::string plugin = kBin + "/sandbox-plan-probe-" + act_;
    CmdResult reg = dot_core({"register", "--root", root_.string(), "--plugin", plugin, "--assurance", assurance,
                              "--replace"});
    EXPECT_EQ(reg.code, 0) << reg.err;
    std::vector<std::string> args = {"plan", "--root", root_.string(),
                                     assurance == "process" ? "--require-process-sandbox" : "--allow-audit-plugin"};
    if (json) args.push_back("--json");
    return dot_core(args);
  }
  // The same probe as a general-profile plugin (org.test.probe) whose one
  // declared input is <targets>/input.
  CmdResult plan_general(const std::string& assurance) {
    const std::string plugin = kBin + "/sandbox-plan-probe-" + act_;
    CmdResult reg = dot_core({"register", "--root", root_.string(), "--plugin", plugin, "--assurance", assurance,
                              "--id", "org.test.probe", "--profile", "org.dot.dpp/v1", "--input",
                              (targets_ / "input").string(), "--replace"});
    EXPECT_EQ(reg.code, 0) << reg.err;
    return dot_core({"plan", "--root", root_.string(), "--plugin", "org.test.probe",
                     assurance == "process" ? "--require-process-sandbox" : "--allow-audit-plugin"});
  }
  void make_input() {
    fs::create_directories(targets_ / "input");
    std::ofstream(targets_ / "input" / "inside.txt") << "INSIDE-" << ::getpid() << "\n";
  }
  // The newest transaction of the root, as `inspect` would read it.
  store::TxnDetail newest_txn() {
    store::OpenOptions o;
    o.read_only = true;
    auto st = store::Store::open((root_ / ".dot" / "store.db").string(), o);
    EXPECT_TRUE(st.ok()) << st.error().line();
    if (!st.ok()) return {};
    store::ListFilter f;
    f.limit = 1;
    auto list = st->list(f);
    EXPECT_TRUE(list.ok() && list->size() == 1);
    if (!list.ok() || list->empty()) return {};
    auto d = st->detail(list->front().id);
    EXPECT_TRUE(d.ok()) << d.error().line();
    return d.ok() ? *d : store::TxnDetail{};
  }
  // A contained plan that failed with exactly this error: on stderr, in the
  // --json error object, and in the abandoned transaction's record.
  void expect_plan_failed(const CmdResult& r, const std::string& code, const std::string& kind,
                          const std::string& detail) {
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, code + ": " + detail + "\n");
    store::TxnDetail t = newest_txn();
    EXPECT_EQ(t.summary.state, store::State::Abandoned);
    EXPECT_EQ(t.summary.code, code);
    EXPECT_EQ(t.detail, detail);
    CmdResult j = plan("process", true);
    EXPECT_EQ(j.code, 1);
    EXPECT_TRUE(contains(j.out, "{\"error\":{\"code\":\"" + code + "\",\"kind\":\"" + kind + "\",\"detail\":"))
        << j.out;
  }
  // The plan either failed with a DOT_E_* code or completed; either way
  // nothing may be left behind in the root's stage.
  void expect_clean_stage() {
    std::error_code ec;
    fs::path stage = root_ / ".dot" / "stage";
    if (fs::exists(stage))
      for (const auto& e : fs::directory_iterator(stage, ec)) ADD_FAILURE() << "left in the stage: " << e.path();
  }

  std::string act_;
  fs::path base_, root_, targets_;
};

TEST_F(PlanProbe, ReadOutsideTheRoot) {
  start("read-outside");
  CmdResult audit = plan("audit");
  ASSERT_EQ(audit.code, 0) << audit.err;
  EXPECT_TRUE(contains(audit.out, "probe read-outside: read TOPSECRET-")) << audit.out;
  CmdResult boxed = plan("process");
  ASSERT_EQ(boxed.code, 0) << boxed.err;
  EXPECT_TRUE(contains(boxed.out, "probe read-outside: blocked (Permission denied)")) << boxed.out;
  EXPECT_FALSE(contains(boxed.out, "TOPSECRET"));
  expect_clean_stage();
}

// A general plugin under process assurance reads its declared inputs
// (files and listings) and nothing else; it never writes them.
TEST_F(PlanProbe, GeneralPluginReadsItsDeclaredInput) {
  start("read-input");
  make_input();
  CmdResult boxed = plan_general("process");
  ASSERT_EQ(boxed.code, 0) << boxed.err;
  EXPECT_TRUE(contains(boxed.out, "probe read-input: read INSIDE-")) << boxed.out;
  expect_clean_stage();
}

TEST_F(PlanProbe, GeneralPluginListsItsDeclaredInput) {
  start("list-input");
  make_input();
  CmdResult boxed = plan_general("process");
  ASSERT_EQ(boxed.code, 0) << boxed.err;
  EXPECT_TRUE(contains(boxed.out, "probe list-input: listed the folder")) << boxed.out;
}

TEST_F(PlanProbe, GeneralPluginReadsNothingBesideItsInput) {
  start("read-outside");
  make_input();
  CmdResult audit = plan_general("audit");
  ASSERT_EQ(audit.code, 0) << audit.err;
  EXPECT_TRUE(contains(audit.out, "probe read-outside: read TOPSECRET-")) << audit.out;
  CmdResult boxed = plan_general("process");
  ASSERT_EQ(boxed.code, 0) << boxed.err;
  EXPECT_TRUE(contains(boxed.out, "probe read-outside: blocked (Permission denied)")) << boxed.out;
  EXPECT_FALSE(contains(boxed.out, "TOPSECRET"));
}

TEST_F(PlanProbe, GeneralPluginNeverWritesItsInput) {
  start("write-input");
  make_input();
  CmdResult audit = plan_general("audit");
  ASSERT_EQ(audit.code, 0) << audit.err;
  EXPECT_TRUE(fs::exists(targets_ / "input" / "written"));
  fs::remove(targets_ / "input" / "written");
  CmdResult boxed = plan_general("process");
  ASSERT_EQ(boxed.code, 0) << boxed.err;
  EXPECT_TRUE(contains(boxed.out, "probe write-input: blocked (Permission denied)")) << boxed.out;
  EXPECT_FALSE(fs::exists(targets_ / "input" / "written"));
}

// The input is checked again at every plan: swapped for a symlink after
// register (to a folder the plugin was never granted), the plugin never
// starts.
TEST_F(PlanProbe, GeneralPluginsInputSwappedForASymlinkIsRefusedBeforeItStarts) {
  start("write-input");
  make_input();
  ASSERT_EQ(plan_general("process").code, 0);
  fs::rename(targets_ / "input", targets_ / "real-input");
  fs::create_directory_symlink(targets_ / "real-input", targets_ / "input");
  CmdResult r = dot_core({"plan", "--root", root_.string(), "--plugin", "org.test.probe", "--require-process-sandbox"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.err.rfind("DOT_E_PATH_ESCAPE:", 0), 0u) << r.err;
  EXPECT_TRUE(contains(r.err, "is a symlink (never followed)")) << r.err;
  EXPECT_FALSE(fs::exists(targets_ / "real-input" / "written"));
  expect_clean_stage();
}

// dot-mirror, the real general plugin, contained: it reads its source (the
// declared input) and stages a file well past the hello profile's 64 KiB
// file-size limit (the general profile's own limits are the binding ones).
TEST_F(PlanProbe, DotMirrorPlansItsSourceUnderProcessAssurance) {
#ifdef DOT_SANITIZED
  GTEST_SKIP() << "dot-mirror is sanitizer-built in this preset and cannot start under a 1 GiB address space";
#endif
  start("none");
  fs::path src = targets_ / "input";
  fs::create_directories(src / "etc" / "sub");
  std::ofstream(src / "etc" / "sub" / "small.conf") << "key = value\n";
  std::ofstream(src / "big.bin") << std::string(1 << 20, 'b');
  CmdResult reg = dot_core({"register", "--root", root_.string(), "--plugin", kBin + "/dot-mirror", "--assurance",
                            "process", "--id", "org.dot.mirror", "--profile", "org.dot.dpp/v1", "--input",
                            src.string()});
  ASSERT_EQ(reg.code, 0) << reg.err;
  CmdResult r = dot_core({"plan", "--root", root_.string(), "--require-process-sandbox", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "\"state\":\"SEALED\"")) << r.out;
  EXPECT_TRUE(contains(r.out, "big.bin")) << r.out;
  EXPECT_TRUE(contains(r.out, "etc/sub/small.conf")) << r.out;
  expect_clean_stage();
  // Its cache folder is the one place beside the stage it may write.
  EXPECT_TRUE(fs::is_regular_file(root_ / ".dot" / "cache-org.dot.mirror" / "digests"));
}

TEST_F(PlanProbe, WriteOutsideTheStage) {
  start("write-outside");
  CmdResult audit = plan("audit");
  ASSERT_EQ(audit.code, 0) << audit.err;
  EXPECT_TRUE(fs::exists(targets_ / "written-outside"));
  fs::remove(targets_ / "written-outside");
  CmdResult boxed = plan("process");
  ASSERT_EQ(boxed.code, 0) << boxed.err;
  EXPECT_TRUE(contains(boxed.out, "probe write-outside: blocked (Permission denied)")) << boxed.out;
  EXPECT_FALSE(fs::exists(targets_ / "written-outside"));
}

TEST_F(PlanProbe, SocketToALoopbackListener) {
  start("connect");
  UniqueFd l(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(l.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(l.get(), 4), 0);
  ASSERT_EQ(::getsockname(l.get(), reinterpret_cast<sockaddr*>(&a), &len), 0);
  // The port travels as the size of a file: stat() is not mediated, so the
  // contained probe knows it too and really tries.
  { std::ofstream(targets_ / "port") << std::string(ntohs(a.sin_port), 'p'); }
  auto accepted = [&] { return UniqueFd(::accept4(l.get(), nullptr, nullptr, SOCK_CLOEXEC)).valid(); };

  CmdResult audit = plan("audit");
  ASSERT_EQ(audit.code, 0) << audit.err;
  EXPECT_TRUE(contains(audit.out, "probe connect: connected to port")) << audit.out;
  EXPECT_TRUE(accepted());
  CmdResult boxed = plan("process");
  // seccomp killed it at socket() before it answered.
  expect_plan_failed(boxed, "DOT_E_PROTOCOL", "seccomp_kill", kSeccompKill);
  EXPECT_FALSE(accepted());
  expect_clean_stage();
}

TEST_F(PlanProbe, ExecAShell) {
  start("exec-sh");
  CmdResult audit = plan("audit");
  EXPECT_EQ(audit.code, 1);  // the shell took the plugin's place and broke the session
  EXPECT_TRUE(fs::exists(targets_ / "sh-ran")) << audit.err;
  fs::remove(targets_ / "sh-ran");
  CmdResult boxed = plan("process");
  // execve by path is not on the allowlist (only fexecve is).
  expect_plan_failed(boxed, "DOT_E_PROTOCOL", "seccomp_kill", kSeccompKill);
  EXPECT_FALSE(fs::exists(targets_ / "sh-ran"));
  expect_clean_stage();
}

TEST_F(PlanProbe, Allocate2GiB) {
  start("alloc-2g");
  CmdResult audit = plan("audit");
  ASSERT_EQ(audit.code, 0) << audit.err;
  EXPECT_TRUE(contains(audit.out, "probe alloc-2g: allocated 2 GiB")) << audit.out;
  CmdResult boxed = plan("process");
  ASSERT_EQ(boxed.code, 0) << boxed.err;
  EXPECT_TRUE(contains(boxed.out, "probe alloc-2g: blocked (Cannot allocate memory)")) << boxed.out;
}

TEST_F(PlanProbe, SpinTheCpuFor3s) {
  // Only contained: uncontained, 3 s of CPU on a loaded 2-core machine can
  // pass the 5 s session deadline, so the uncontained half lives in
  // SandboxProbe.SpinTheCpuFor3sUncontained.
  start("spin-cpu");
  CmdResult boxed = plan("process");
  EXPECT_EQ(boxed.code, 1);
  // RLIMIT_CPU's soft limit sends SIGXCPU, which names its cause whatever
  // CPU time the status reports. On a machine so loaded that 2 s of CPU take
  // more than 5 s of wall time, the session deadline comes first and the
  // host kills the plugin itself.
  const std::regex cpu_limit(
      "DOT_E_PROTOCOL: the plugin was killed by SIGXCPU \\(signal 24\\) while core waited for dot\\.initialize: "
      "it reached the 2 s CPU limit, which the kernel enforces with SIGXCPU \\(process containment, RLIMIT_CPU; "
      "[0-9]\\.[0-9][0-9] s of CPU by the scheduler's exact count\\)\n");
  const std::string deadline =
      "DOT_E_TIMEOUT: the plugin passed its 5000 ms deadline waiting for dot.initialize; dot-core killed its "
      "process group with SIGKILL\n";
  EXPECT_TRUE(std::regex_match(boxed.err, cpu_limit) || boxed.err == deadline) << boxed.err;
  store::TxnDetail t = newest_txn();
  EXPECT_EQ(t.summary.state, store::State::Abandoned);
  EXPECT_EQ(t.summary.code + ": " + t.detail + "\n", boxed.err);
  EXPECT_FALSE(contains(boxed.out, "spun"));
  expect_clean_stage();
}

TEST_F(PlanProbe, WriteA1MiBFile) {
  start("write-1m");
  CmdResult audit = plan("audit");
  ASSERT_EQ(audit.code, 0) << audit.err;
  EXPECT_TRUE(contains(audit.out, "probe write-1m: wrote 1 MiB")) << audit.out;
  CmdResult boxed = plan("process");
  ASSERT_EQ(boxed.code, 0) << boxed.err;
  EXPECT_TRUE(contains(boxed.out, "probe write-1m: blocked (File too large) after 65536 bytes")) << boxed.out;
}

TEST_F(PlanProbe, WriteA1MiBFileKilledBySigxfsz) {
  // The same act by a plugin that leaves SIGXFSZ at its default: the kernel
  // ends it at the limit, and the host names the signal and the limit.
  start("write-1m-sigxfsz");
  CmdResult audit = plan("audit");
  ASSERT_EQ(audit.code, 0) << audit.err;
  EXPECT_TRUE(contains(audit.out, "probe write-1m-sigxfsz: wrote 1 MiB")) << audit.out;
  CmdResult boxed = plan("process");
  expect_plan_failed(boxed, "DOT_E_PROTOCOL", "file_size_limit",
                     "the plugin was killed by SIGXFSZ (signal 25) while core waited for dot.initialize: a file it "
                     "wrote reached the 65536-byte file-size limit (process containment, RLIMIT_FSIZE)");
  expect_clean_stage();
}

TEST_F(PlanProbe, PtraceTheParent) {
  start("ptrace-parent");
  CmdResult audit = plan("audit");
  ASSERT_EQ(audit.code, 0) << audit.err;
  EXPECT_TRUE(contains(audit.out, "probe ptrace-parent: attached to parent")) << audit.out;
  CmdResult boxed = plan("process");
  expect_plan_failed(boxed, "DOT_E_PROTOCOL", "seccomp_kill", kSeccompKill);
  EXPECT_FALSE(contains(boxed.out, "attached"));
  expect_clean_stage();
}

TEST_F(PlanProbe, SetTheHostsFileSizeLimitToZero) {
  // The plugin sets dot-core's RLIMIT_FSIZE to 0 as it starts. Contained,
  // prlimit64 on another process is refused and the plan completes.
  start("fsize-parent");
  CmdResult boxed = plan("process");
  ASSERT_EQ(boxed.code, 0) << boxed.err;
  EXPECT_TRUE(contains(boxed.out, "probe fsize-parent: blocked (Operation not permitted)")) << boxed.out;
  EXPECT_EQ(newest_txn().summary.state, store::State::Sealed);
  expect_clean_stage();
  // Uncontained the limit is set, and the next file dot-core writes kills it
  // (the control: without the refusal this test fails).
  CmdResult audit = plan("audit");
  EXPECT_EQ(audit.signal, SIGXFSZ) << audit.code << " " << audit.err;
}

TEST_F(PlanProbe, EchoingTheWrongAssuranceFails) {
  start("wrong-assurance");
  // Echoes "process" when asked for audit, and "audit" when asked for process.
  // The error ends with the last line the plugin wrote to stderr and the
  // command that shows all of it.
  const auto said = [&](int txn) {
    return fmt::format(
        "; the plugin's stderr ends with \"wrong-assurance: nothing attempted\" (`dot-core inspect show txn-{} --root "
        "{}` shows all of it)\n",
        txn, root_.string());
  };
  CmdResult audit = plan("audit");
  EXPECT_EQ(audit.code, 1);
  EXPECT_EQ(audit.err,
            "DOT_E_PLUGIN_IDENTITY: the plugin echoed assurance \"process\", core requires \"audit\"" + said(1));
  CmdResult boxed = plan("process");
  EXPECT_EQ(boxed.code, 1);
  EXPECT_EQ(boxed.err,
            "DOT_E_PLUGIN_IDENTITY: the plugin echoed assurance \"audit\", core requires \"process\"" + said(2));
  store::TxnDetail t = newest_txn();
  EXPECT_EQ(t.summary.state, store::State::Abandoned);
  EXPECT_EQ(t.summary.code, "DOT_E_PLUGIN_IDENTITY");
}

TEST_F(PlanProbe, RequiredAssuranceIsWhatCoreEnforces) {
  // The probe writes the required_assurance it was sent into welcome.txt.
  start("none");
  CmdResult audit = plan("audit");
  ASSERT_EQ(audit.code, 0) << audit.err;
  EXPECT_TRUE(contains(audit.out, "+welcome from the sandbox probe, asked for assurance audit\n")) << audit.out;
  CmdResult boxed = plan("process");
  ASSERT_EQ(boxed.code, 0) << boxed.err;
  EXPECT_TRUE(contains(boxed.out, "+welcome from the sandbox probe, asked for assurance process\n")) << boxed.out;
}

TEST_F(PlanProbe, AuditConsentNeverSatisfiesAProcessManifest) {
  start("none");
  CmdResult reg = dot_core({"register", "--root", root_.string(), "--plugin", kBin + "/sandbox-plan-probe-none",
                            "--assurance", "process"});
  ASSERT_EQ(reg.code, 0) << reg.err;
  CmdResult r = dot_core({"plan", "--root", root_.string(), "--allow-audit-plugin"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "DOT_E_POLICY: the plugin is registered with process assurance: audit consent never satisfies it; use "
            "--require-process-sandbox\n");
  // Refused before a proposal was begun, so before the plugin could start.
  {
    store::OpenOptions o;
    o.read_only = true;
    auto st = store::Store::open((root_ / ".dot" / "store.db").string(), o);
    ASSERT_TRUE(st.ok()) << st.error().line();
    EXPECT_EQ(st->count().value(), 0u);
  }
  // The same manifest with the right flag plans, negotiated as process.
  CmdResult ok = dot_core({"plan", "--root", root_.string(), "--require-process-sandbox"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_TRUE(contains(ok.out, "asked for assurance process")) << ok.out;
}

TEST_F(PlanProbe, AuditConsentNeverStartsAProcessPlugin) {
  // A plugin whose act would show at once (a file outside the stage).
  start("write-outside");
  CmdResult reg = dot_core({"register", "--root", root_.string(), "--plugin",
                            kBin + "/sandbox-plan-probe-write-outside", "--assurance", "process"});
  ASSERT_EQ(reg.code, 0) << reg.err;
  CmdResult r = dot_core({"plan", "--root", root_.string(), "--allow-audit-plugin"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "DOT_E_POLICY: the plugin is registered with process assurance")) << r.err;
  EXPECT_FALSE(fs::exists(targets_ / "written-outside"));
}

// A kernel without one layer, simulated for the whole dot-core process by
// sandbox-without-layer (a seccomp filter that makes the layer's system calls
// fail as that kernel would): the plan fails closed naming the layer, and the
// probe, which would write outside the stage at once, never starts.
struct MissingLayer {
  const char* mode;      // sandbox-without-layer's first argument
  const char* expected;  // the whole stderr line
};

class PlanWithoutLayer : public PlanProbe, public ::testing::WithParamInterface<MissingLayer> {};

TEST_P(PlanWithoutLayer, NeverStartsThePlugin) {
  start("write-outside");
  CmdResult reg = dot_core({"register", "--root", root_.string(), "--plugin",
                            kBin + "/sandbox-plan-probe-write-outside", "--assurance", "process"});
  ASSERT_EQ(reg.code, 0) << reg.err;
  SpawnOptions o;
  o.path = kBin + "/sandbox-without-layer";
  o.argv = {"sandbox-without-layer", GetParam().mode, kBin + "/dot-core", "plan", "--root", root_.string(),
            "--require-process-sandbox"};
  o.env = {"LANG=C"};
  o.stdin_mode = StdioMode::DevNull;
  auto child = spawn(o);
  ASSERT_TRUE(child.ok()) << child.error().line();
  std::string err = read_all(child->stderr_fd().get(), 1 << 16).value();
  auto st = child->wait_until(Clock::now() + std::chrono::seconds(30));
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->code, 1);
  EXPECT_EQ(err, std::string(GetParam().expected) + "\n");
  // Never started: the probe would have written this file at once.
  EXPECT_FALSE(fs::exists(targets_ / "written-outside"));
  // The control: the same plan on this kernel as it is does start the probe
  // (which Landlock then stops from writing outside).
  CmdResult real = dot_core({"plan", "--root", root_.string(), "--require-process-sandbox"});
  EXPECT_EQ(real.code, 0) << real.err;
  EXPECT_TRUE(contains(real.out, "probe write-outside: blocked (Permission denied)")) << real.out;
}

INSTANTIATE_TEST_SUITE_P(
    Layers, PlanWithoutLayer,
    ::testing::Values(
        MissingLayer{"landlock", "DOT_E_SANDBOX_UNAVAILABLE: landlock: not built into this kernel (ENOSYS)"},
        MissingLayer{"landlock-disabled",
                     "DOT_E_SANDBOX_UNAVAILABLE: landlock: built in but disabled at boot (add landlock to the lsm= "
                     "list)"},
        MissingLayer{"seccomp", "DOT_E_SANDBOX_UNAVAILABLE: seccomp: filter mode unavailable (Function not "
                                "implemented)"}),
    [](const ::testing::TestParamInfo<MissingLayer>& i) {
      std::string n = i.param.mode;
      for (auto& c : n)
        if (c == '-') c = '_';
      return n;
    });

// `dot-core dpp conform` with a plugin that writes outside its stage and
// otherwise behaves (the write-outside probe: it writes <base>/targets/
// written-outside, <base> found four levels above its stage, then serves the
// profile whatever came of the write). Uncontained the write happens, every
// case passes, and the lifecycle's verdict does not claim that nothing else
// was written: it says what it checked. With --require-process-sandbox each
// case runs as `plan --require-process-sandbox` would run it: the kernel
// refuses the write, nothing is written, and the verdict says the plugin was
// contained. On a kernel without a layer nothing runs.
class ConformProbe : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/dot-sandbox-conform-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    // conform's case folders: <base>/a/b/dot-conform-XXXXXX/stage.
    tmp_ = base_ / "a" / "b";
    fs::create_directories(tmp_);
    fs::create_directories(base_ / "targets");
  }
  void TearDown() override {
    std::error_code ec;
    if (!base_.empty()) fs::remove_all(base_, ec);
  }
  CmdResult conform(std::vector<std::string> options) {
    std::vector<std::string> args = {"dpp", "conform"};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"--", kBin + "/sandbox-plan-probe-write-outside"});
    return dot_core(args, {"LANG=C", "TMPDIR=" + tmp_.string()});
  }
  fs::path written() const { return base_ / "targets" / "written-outside"; }

  fs::path base_, tmp_;
};

TEST_F(ConformProbe, AWriteOutsideTheStageIsNeverReportedAsNothingElseWritten) {
  CmdResult audit = conform({"--profile", "org.dot.hello/v1"});
  EXPECT_EQ(audit.code, 0) << audit.out << audit.err;
  // The probe really wrote outside its stage (once per case, the same file).
  EXPECT_TRUE(fs::exists(written()));
  EXPECT_TRUE(contains(audit.out,
                       "2 files staged as claimed, nothing else in the stage or beside it (run "
                       "uncontained: writes elsewhere are not seen), exit 0\n"))
      << audit.out;
  EXPECT_FALSE(contains(audit.out, "nothing else written")) << audit.out;
  EXPECT_FALSE(contains(audit.out, "nothing written elsewhere")) << audit.out;
  fs::remove(written());

  // --assurance process is the same request as --require-process-sandbox.
  for (const std::vector<std::string>& contain :
       {std::vector<std::string>{"--require-process-sandbox"}, std::vector<std::string>{"--assurance", "process"}}) {
    for (const std::vector<std::string>& profile :
         {std::vector<std::string>{"--profile", "org.dot.hello/v1"},
          // The general profile's lifecycle (the probe answers no probe case).
          std::vector<std::string>{"--id", "org.test.probe", "--case", "lifecycle"}}) {
      std::vector<std::string> options = profile;
      options.insert(options.end(), contain.begin(), contain.end());
      CmdResult boxed = conform(options);
      EXPECT_EQ(boxed.code, 0) << boxed.out << boxed.err;
      EXPECT_FALSE(fs::exists(written())) << profile.front() << " " << contain.front();
      EXPECT_TRUE(contains(boxed.out,
                           "files staged as claimed, nothing else in the stage or beside it, nothing written "
                           "elsewhere (contained: only the stage was writable)"))
          << boxed.out;
      // --json says the run was contained.
      CmdResult json = conform([&] {
        auto o = options;
        o.push_back("--json");
        return o;
      }());
      EXPECT_TRUE(contains(json.out, "\"contained\":true")) << json.out;
    }
  }
  // --assurance audit is the default: uncontained, the write happens.
  CmdResult audit_again = conform({"--profile", "org.dot.hello/v1", "--assurance", "audit", "--json"});
  EXPECT_EQ(audit_again.code, 0) << audit_again.out << audit_again.err;
  EXPECT_TRUE(fs::exists(written()));
  EXPECT_TRUE(contains(audit_again.out, "\"contained\":false")) << audit_again.out;
  // One way to ask: both options together are a usage error, and nothing runs.
  fs::remove(written());
  CmdResult both = conform({"--profile", "org.dot.hello/v1", "--assurance", "process", "--require-process-sandbox"});
  EXPECT_EQ(both.code, 2) << both.out << both.err;
  EXPECT_FALSE(fs::exists(written()));
}

TEST_F(ConformProbe, WithoutALayerNothingRuns) {
  SpawnOptions o;
  o.path = kBin + "/sandbox-without-layer";
  o.argv = {"sandbox-without-layer", "landlock", kBin + "/dot-core", "dpp", "conform", "--profile",
            "org.dot.hello/v1", "--require-process-sandbox", "--", kBin + "/sandbox-plan-probe-write-outside"};
  o.env = {"LANG=C", "TMPDIR=" + tmp_.string()};
  o.stdin_mode = StdioMode::DevNull;
  auto child = spawn(o);
  ASSERT_TRUE(child.ok()) << child.error().line();
  std::string out = read_all(child->stdout_fd().get(), 1 << 16).value();
  std::string err = read_all(child->stderr_fd().get(), 1 << 16).value();
  auto st = child->wait_until(Clock::now() + std::chrono::seconds(60));
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->code, 1);
  EXPECT_EQ(err, "DOT_E_SANDBOX_UNAVAILABLE: landlock: not built into this kernel (ENOSYS)\n");
  EXPECT_TRUE(out.empty()) << out;
  EXPECT_FALSE(fs::exists(written()));
}

}  // namespace
}  // namespace dot
