// The reference plugin, unchanged, through a whole hello session under
// containment, negotiated as `process`: what the loader needs is allowed and
// nothing else was needed.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "dot/base/sandbox.h"
#include "dot/base/error_kinds.h"
#include "dot/base/sha256.h"
#include "dot/dpp/hello.h"
#include "dot/dpp/host_session.h"

namespace dot {
namespace {

namespace fs = std::filesystem;

struct Stage {
  std::string path;
  Stage() {
    char tmpl[] = "/tmp/dot-sandbox-hello-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~Stage() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

struct Session {
  Status status;
  dpp::MaterializeResult artifacts;
  std::string stderr_bytes;
};

Session drive_contained(const std::string& exe, const std::string& stage, std::string_view assurance,
                        bool contained = true, std::chrono::milliseconds deadline = std::chrono::milliseconds(5000)) {
  Session out;
  UniqueFd fd(::open(exe.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    out.status = make_error(base::ErrorKind::Open, "cannot open " + exe);
    return out;
  }
  dpp::HostSessionOptions o;
  o.exec_fd = fd.get();
  o.stage_dir = stage;
  o.limits.deadline = deadline;
  std::optional<Sandbox> sb;
  if (contained) {
    SandboxPolicy p;
    p.executable_fd = fd.get();
    p.executable_path = exe;
    UniqueFd stage_fd(::open(stage.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    p.stage_fd = stage_fd.get();
    auto prepared = Sandbox::prepare(p);
    if (!prepared.ok()) {
      out.status = prepared.error();
      return out;
    }
    sb = std::move(prepared).value();
    if (auto st = sb->apply_to(o.spawn); !st.ok()) {
      out.status = st;
      return out;
    }
    o.containment = sb->limits();
  }
  auto s = dpp::HostSession::start(std::move(o));
  if (!s.ok()) {
    out.status = s.error();
    return out;
  }
  auto run = [&]() -> Status {
    DOT_ASSIGN_OR_RETURN(std::string nonce, random_hex32());
    dpp::InitializeParams sent = dpp::hello::initialize_params(assurance, nonce);
    DOT_ASSIGN_OR_RETURN(dpp::InitializeResult echo, s->initialize(sent));
    DOT_TRY(dpp::hello::check_identity(sent, echo, dpp::hello::kPluginId));
    DOT_ASSIGN_OR_RETURN(dpp::PlanResult plan, s->plan());
    DOT_TRY(dpp::hello::check_hello_allowlists(plan));
    DOT_ASSIGN_OR_RETURN(out.artifacts, s->materialize());
    DOT_TRY(dpp::hello::check_artifacts(plan.names, out.artifacts));
    DOT_TRY(s->validate());
    DOT_TRY(s->shutdown());
    return s->finish();
  };
  out.status = run();
  s->abort();
  out.stderr_bytes = s->stderr_bytes();
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(DotHelloContained, WholeSessionAsProcess) {
#ifdef DOT_SANITIZED
  GTEST_SKIP() << "dot-hello is sanitizer-built in this preset and cannot start under a 1 GiB address space";
#endif
  Stage stage;
  const std::string exe = std::string(DOT_BIN_DIR) + "/dot-hello";
  Session s = drive_contained(exe, stage.path, dpp::hello::kAssuranceProcess);
  ASSERT_TRUE(s.status.ok()) << s.status.error().line() << "\nplugin stderr: " << s.stderr_bytes;
  ASSERT_EQ(s.artifacts.artifacts.size(), 2u);
  for (const auto& a : s.artifacts.artifacts) {
    std::string bytes = slurp(stage.path + "/" + a.name);
    EXPECT_EQ(bytes.size(), a.size);
    EXPECT_EQ(sha256_hex(bytes), a.sha256);
  }
}

TEST(DotHelloContained, ProbePluginAsProcess) {
  // The probe speaks enough DPP to be a plugin; contained and doing nothing
  // forbidden it completes a session, and writes its outcome into hello.txt.
  Stage stage;
  fs::path dir = fs::path(stage.path) / "bin";
  fs::create_directory(dir);
  fs::copy_file(std::string(DOT_BIN_DIR) + "/sandbox-probe", dir / "probe-hash");
  fs::path st = fs::path(stage.path) / "stage";
  fs::create_directory(st);
  fs::permissions(st, fs::perms::owner_all);
  Session s = drive_contained((dir / "probe-hash").string(), st.string(), dpp::hello::kAssuranceProcess);
  ASSERT_TRUE(s.status.ok()) << s.status.error().line() << "\nplugin stderr: " << s.stderr_bytes;
  EXPECT_EQ(slurp((st / "hello.txt").string()),
            "probe hash: sha256(abc) ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n");
}

// A probe plugin (a copy of sandbox-probe named probe-<act>) in its own
// folder, with a stage next to it.
struct ProbePlugin {
  Stage dir;
  std::string exe, stage;
  explicit ProbePlugin(const std::string& act) {
    fs::create_directory(fs::path(dir.path) / "bin");
    exe = (fs::path(dir.path) / "bin" / ("probe-" + act)).string();
    fs::copy_file(std::string(DOT_BIN_DIR) + "/sandbox-probe", exe);
    stage = (fs::path(dir.path) / "stage").string();
    fs::create_directory(stage);
    fs::permissions(stage, fs::perms::owner_all);
  }
};

TEST(KillReport, SeccompKillIsNamedWithItsSignalAndLayer) {
  ProbePlugin p("ptrace-parent");
  Session s = drive_contained(p.exe, p.stage, dpp::hello::kAssuranceProcess);
  ASSERT_FALSE(s.status.ok());
  EXPECT_EQ(s.status.error().code, Code::Protocol);
  EXPECT_EQ(s.status.error().kind, "seccomp_kill");
  EXPECT_EQ(s.status.error().detail,
            "the plugin was killed by SIGSYS (signal 31) while core waited for dot.initialize: seccomp blocked a "
            "system call that is not on the allowlist (process containment, seccomp layer)");
}

TEST(KillReport, FileSizeLimitIsNamed) {
  ProbePlugin p("write-1m-sigxfsz");
  Session s = drive_contained(p.exe, p.stage, dpp::hello::kAssuranceProcess);
  ASSERT_FALSE(s.status.ok());
  EXPECT_EQ(s.status.error().code, Code::Protocol);
  EXPECT_EQ(s.status.error().kind, "file_size_limit");
  EXPECT_EQ(s.status.error().detail,
            "the plugin was killed by SIGXFSZ (signal 25) while core waited for dot.initialize: a file it wrote "
            "reached the 65536-byte file-size limit (process containment, RLIMIT_FSIZE)");
  // Uncontained the same plugin writes its megabyte and completes.
  ProbePlugin open("write-1m-sigxfsz");
  Session free_run = drive_contained(open.exe, open.stage, dpp::hello::kAssuranceAudit, false);
  EXPECT_TRUE(free_run.status.ok()) << free_run.status.error().line();
}

TEST(KillReport, UncontainedSigsysIsNotBlamedOnSeccomp) {
  // Under audit dot-core installed no filter: a SIGSYS is reported as a plain
  // death by that signal, never as a containment layer's doing.
  ProbePlugin p("raise-sigsys");
  Session s = drive_contained(p.exe, p.stage, dpp::hello::kAssuranceAudit, false);
  ASSERT_FALSE(s.status.ok());
  EXPECT_EQ(s.status.error().code, Code::Protocol);
  EXPECT_EQ(s.status.error().kind, "killed");
  const std::string& d = s.status.error().detail;
  EXPECT_TRUE(std::regex_match(d, std::regex("the plugin was killed by SIGSYS \\(signal 31\\) while core waited for "
                                             "dot\\.initialize: a bad system call after [0-9]+\\.[0-9][0-9] s of CPU "
                                             "time \\(no containment: audit assurance\\)")))
      << d;
  EXPECT_EQ(d.find("seccomp"), std::string::npos) << d;
}

TEST(KillReport, DeadlineKillIsTheHostsOwn) {
  // Sleeping uses no CPU: no rlimit ends it, the session deadline does, and
  // the host says that it sent the SIGKILL itself.
  ProbePlugin p("sleep");
  Session s = drive_contained(p.exe, p.stage, dpp::hello::kAssuranceProcess, true, std::chrono::milliseconds(300));
  ASSERT_FALSE(s.status.ok());
  EXPECT_EQ(s.status.error().code, Code::Timeout);
  EXPECT_EQ(s.status.error().kind, "timeout");
  EXPECT_EQ(s.status.error().detail,
            "the plugin passed its 300 ms deadline waiting for dot.initialize; dot-core killed its process group "
            "with SIGKILL");
}

}  // namespace
}  // namespace dot
