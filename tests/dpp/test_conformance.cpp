// `dot-core dpp conform` (dpp/conformance.h): the project's conforming
// plugins pass every case of their profile; each broken plugin fails exactly
// the cases its one misbehaviour breaks, with the reason in the detail; and
// the command prints, lists and exits the way `adpp conform` does.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <span>
#include <sstream>

#include <fmt/format.h>

#include "dot/base/json.h"
#include "dot/base/process.h"
#include "dot/dpp/conformance.h"
#include "hostile.h"

namespace dot::dpp::conform {
namespace {

using std::chrono::milliseconds;

std::string bin(std::string_view name) { return fmt::format("{}/{}", DOT_BIN_DIR, name); }

std::set<std::string> all_cases(dpp::Profile p) {
  std::set<std::string> out;
  for (const auto& c : cases(p)) out.emplace(c.name);
  return out;
}

std::string dump(const Report& r) {
  std::string out;
  for (const auto& c : r.cases) out += fmt::format("{} {}: {}\n", c.passed ? "PASS" : "FAIL", c.name, c.detail);
  return out;
}

// The folder the cases of this process make their temporary folders in
// (other tests run dot-core conform at the same time, in $TMPDIR).
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "dpp-conform-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  // What is in it now.
  std::set<std::string> entries() const {
    std::set<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path_)) out.insert(e.path().filename().string());
    return out;
  }

 private:
  std::string path_;
};

const TempDir& temp_dir() {
  static TempDir dir;
  return dir;
}

Report conform(dpp::Profile profile, const std::string& exe, std::vector<std::string> only = {},
               milliseconds deadline = milliseconds(0), std::string id = {}) {
  Options o;
  o.temp_dir = temp_dir().path();
  o.profile = profile;
  o.command = {exe};
  o.only = std::move(only);
  o.deadline = deadline;
  o.id = std::move(id);
  auto r = run(o);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().line());
  return r.ok() ? std::move(r).value() : Report{};
}

std::set<std::string> failed(const Report& r) {
  std::set<std::string> out;
  for (const auto& c : r.cases)
    if (!c.passed) out.insert(c.name);
  return out;
}

TEST(DppConform, TheProjectsPluginsPassEveryCaseOfTheirProfile) {
  struct Good {
    dpp::Profile profile;
    const char* exe;
  };
  for (const Good& g : {Good{dpp::Profile::Hello, "dot-hello"}, Good{dpp::Profile::General, "dpp-example-motd"},
                        Good{dpp::Profile::General, "dpp-general-honest"}}) {
    Report r = conform(g.profile, bin(g.exe));
    EXPECT_EQ(r.cases.size(), cases(g.profile).size()) << g.exe;
    EXPECT_TRUE(r.all_passed()) << g.exe << "\n" << dump(r);
    EXPECT_EQ(r.sha256.size(), 64u);
  }
  // dot-mirror, given a source folder as it is registered with one.
  TempDir src;
  ASSERT_FALSE(src.path().empty());
  std::filesystem::create_directory(src.path() + "/etc");
  std::ofstream(src.path() + "/etc/app.conf") << "key = value\n";
  std::ofstream(src.path() + "/motd") << "Welcome.\n";
  Options mirror;
  mirror.command = {bin("dot-mirror")};
  mirror.id = "org.dot.mirror";
  mirror.inputs = {src.path()};
  mirror.temp_dir = temp_dir().path();
  auto m = run(mirror);
  ASSERT_TRUE(m.ok()) << m.error().line();
  EXPECT_TRUE(m->all_passed()) << dump(*m);
  EXPECT_EQ(m->cases.size(), cases(dpp::Profile::General).size());
  EXPECT_NE(m->cases[0].detail.find("id org.dot.mirror, 2 operations, 2 files staged as claimed"), std::string::npos)
      << m->cases[0].detail;
  // The motd example's echo carries the id it documents.
  Report motd =
      conform(dpp::Profile::General, bin("dpp-example-motd"), {"lifecycle"}, milliseconds(0), "org.example.motd");
  ASSERT_EQ(motd.cases.size(), 1u);
  EXPECT_TRUE(motd.cases[0].passed) << dump(motd);
  EXPECT_NE(motd.cases[0].detail.find("id org.example.motd, 1 operations, 1 files staged as claimed"),
            std::string::npos)
      << motd.cases[0].detail;
}

// One misbehaviour each: the cases that must fail, and what the first of
// them says.
struct Broken {
  dpp::Profile profile;
  const char* exe;
  std::set<std::string> failing;  // empty: every case of the profile
  const char* detail;
  std::vector<std::string> only = {};
  milliseconds deadline{0};
  std::string id = {};
};

const dpp::Profile H = dpp::Profile::Hello;
const dpp::Profile G = dpp::Profile::General;

const std::set<std::string> kHelloAll = {"lifecycle", "fragmented", "coalesced"};

TEST(DppConform, EachBrokenPluginFailsOnItsCase) {
  const Broken kBroken[] = {
      {H, "dpp-hostile-wrong_nonce", kHelloAll, "DOT_E_PLUGIN_IDENTITY: the plugin echoed a different nonce"},
      {H, "dpp-hostile-capabilities_reordered", kHelloAll, "order matters"},
      {H, "dpp-hostile-garbage_before_header", kHelloAll, "DOT_E_PROTOCOL: header"},
      {H, "dpp-hostile-output_after_shutdown", kHelloAll, "after its dot.shutdown response"},
      {H, "dpp-hostile-exit_3_after_clean_session", kHelloAll, "exit 3"},
      {H, "dpp-hostile-sigkill_mid_frame", kHelloAll, "killed by SIGKILL"},
      {H, "dpp-hostile-grandchild_setsid_keeps_running", kHelloAll, "left 1 process running"},
      {H, "dpp-hostile-sleep_past_deadline", {"lifecycle"}, "DOT_E_TIMEOUT", {"lifecycle"}, milliseconds(1000)},
      {G,
       "dpp-hostile-general_writes_outside_stage",
       {"lifecycle", "lifecycle_without_digests", "stage_only_asked"},
       "escaped.txt"},
      {G, "dpp-hostile-general_silent_on_parse_error", {"parse_error"}, "expected error -32700 with id null, got"},
      {G,
       "dpp-hostile-general_result_for_unknown_method",
       {"unknown_method", "method_out_of_order"},
       "expected error -32601 with id 1, got a result"},
      {G,
       "dpp-hostile-general_log_when_not_offered",
       {"lifecycle_without_log"},
       "during dot.plan without negotiating log"},
      {G, "dpp-hostile-general_exit_0_at_early_eof", {"eof_before_shutdown"}, "expected exit 1"},
      // A wrong declared digest: every case that offers digests fails on it.
      {G,
       "dpp-hostile-general_declares_a_wrong_digest",
       {"lifecycle", "lifecycle_without_log", "stage_only_asked", "fragmented", "parse_error", "invalid_request",
        "request_without_id", "unknown_method", "method_out_of_order", "wrong_profile", "wrong_limits",
        "unknown_param"},
       "DOT_E_ARTIFACT_MISMATCH: the artifact of \"etc/app.conf\" claims 12 bytes with SHA-256 "},
      {G, "dpp-hostile-general_stderr_over_max", {}, "more than 65536 bytes on stderr"},
      {G, "dpp-hostile-general_echo_wrong_id", {}, "DOT_E_PLUGIN_IDENTITY", {}, milliseconds(0), "org.dot.hostile"},
      {G, "dpp-hostile-general_sleep_past_deadline", {"lifecycle"}, "DOT_E_TIMEOUT", {"lifecycle"}, milliseconds(1000)},
      // The hello reference plugin does not speak the general profile.
      {G, "dot-hello", {}, "DOT_E_"},
  };
  ASSERT_FALSE(temp_dir().path().empty());
  for (const Broken& b : kBroken) {
    SCOPED_TRACE(b.exe);
    Report r = conform(b.profile, bin(b.exe), b.only, b.deadline, b.id);
    std::set<std::string> want = b.failing.empty() ? all_cases(b.profile) : b.failing;
    EXPECT_EQ(failed(r), want) << dump(r);
    auto first = std::find_if(r.cases.begin(), r.cases.end(), [](const CaseResult& c) { return !c.passed; });
    ASSERT_NE(first, r.cases.end()) << dump(r);
    EXPECT_NE(first->detail.find(b.detail), std::string::npos) << first->detail;
  }
  // Every case's folder (with what a plugin wrote beside its stage) is gone.
  EXPECT_EQ(temp_dir().entries(), std::set<std::string>{});
}

// Without --id the echoed id must still be a plugin id (docs/spec/dpp-general.md):
// every case fails on it, the probes after answering their error.
TEST(DppConform, AnEchoedIdThatIsNoPluginIdFailsEveryCase) {
  Report r = conform(dpp::Profile::General, bin("dpp-hostile-general_echo_malformed_id"));
  EXPECT_EQ(failed(r), all_cases(dpp::Profile::General)) << dump(r);
  for (const auto& c : r.cases)
    EXPECT_NE(c.detail.find("DOT_E_PLUGIN_IDENTITY: the plugin says it is \"hostile\", which is not a plugin id: it "
                            "has no '.'"),
              std::string::npos)
        << c.name << ": " << c.detail;
  // With --id the plain identity check names the difference.
  Report with_id = conform(dpp::Profile::General, bin("dpp-hostile-general_echo_malformed_id"), {"lifecycle"},
                           milliseconds(0), "org.dot.hostile");
  ASSERT_EQ(with_id.cases.size(), 1u);
  EXPECT_NE(with_id.cases[0].detail.find("the plugin says it is \"hostile\", the manifest names \"org.dot.hostile\""),
            std::string::npos)
      << with_id.cases[0].detail;
}

// Every hostile plugin of both catalogues (tests/dpp/hostile/) fails
// conform's lifecycle with the refusal core's own drive gives it
// (tests/dpp/test_hostile*.cpp: its code and detail): conform judges with
// core's checks, so no broken plugin of the project passes it. The hanging
// ones get a 1 s deadline and are judged by their code.
TEST(DppConform, EveryHostilePluginFailsTheLifecycleAsCoreRefusesIt) {
  struct Catalogue {
    dpp::Profile profile;
    std::span<const dpp::hostile::Case> cases;
    std::string id;
  };
  for (const Catalogue& cat :
       {Catalogue{H, dpp::hostile::cases(), ""},
        Catalogue{G, dpp::hostile::general_cases(), std::string(dpp::hostile::kGeneralPluginId)}}) {
    for (const auto& c : cat.cases) {
      SCOPED_TRACE(c.name);
      Options o;
      o.temp_dir = temp_dir().path();
      o.profile = cat.profile;
      o.command = {bin(std::string("dpp-hostile-") + c.name)};
      o.only = {"lifecycle"};
      o.deadline = c.needs_deadline ? milliseconds(1000) : milliseconds(0);
      o.id = cat.id;
      // What core's drive sends the general ones (tests/dpp/drive.h).
      if (cat.profile == G) o.inputs = {"/in"};
      auto ran = run(o);
      ASSERT_TRUE(ran.ok()) << ran.error().line();
      const Report& r = *ran;
      ASSERT_EQ(r.cases.size(), 1u);
      EXPECT_FALSE(r.cases[0].passed);
      EXPECT_EQ(r.cases[0].detail.rfind(fmt::format("{}: ", code_name(c.code)), 0), 0u) << r.cases[0].detail;
      if (!c.needs_deadline) {
        EXPECT_NE(r.cases[0].detail.find(c.detail), std::string::npos) << r.cases[0].detail;
      }
    }
  }
  EXPECT_EQ(temp_dir().entries(), std::set<std::string>{});
}

// conform reads the stage with the planner's own reader (dpp/stage_reader.h):
// each hello plugin that lies about what it staged fails `lifecycle` with
// the code `plan` gives it (tests/core/test_engine.cpp, ArtifactLie).
TEST(DppConform, StagedFileLiesFailTheLifecycleWithPlansCode) {
  const std::pair<const char*, const char*> kLies[] = {
      {"staged_symlink", "DOT_E_PATH_ESCAPE"},   {"replaced_stage", "DOT_E_PATH_ESCAPE"},
      {"wrong_mode", "DOT_E_ARTIFACT_MISMATCH"}, {"wrong_digest", "DOT_E_ARTIFACT_MISMATCH"},
      {"wrong_size", "DOT_E_ARTIFACT_MISMATCH"}, {"changed_bytes", "DOT_E_ARTIFACT_MISMATCH"},
      {"extra_file", "DOT_E_ARTIFACT_MISMATCH"}, {"hard_link", "DOT_E_ARTIFACT_MISMATCH"},
  };
  for (const auto& [lie, code] : kLies) {
    SCOPED_TRACE(lie);
    Report r = conform(dpp::Profile::Hello, bin(std::string("core-artifact-") + lie), {"lifecycle"});
    ASSERT_EQ(r.cases.size(), 1u);
    EXPECT_FALSE(r.cases[0].passed) << dump(r);
    EXPECT_EQ(r.cases[0].detail.rfind(std::string(code) + ": ", 0), 0u) << r.cases[0].detail;
  }
  EXPECT_EQ(temp_dir().entries(), std::set<std::string>{});
}

TEST(DppConform, UnknownCasesAndMissingPluginsAreErrors) {
  Options o;
  o.profile = dpp::Profile::Hello;
  o.command = {bin("dot-hello")};
  o.only = {"parse_error"};  // a general-profile case
  auto r = run(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::NotFound);
  o.only.clear();
  // An id register would refuse: nothing runs.
  o.profile = dpp::Profile::General;
  o.command = {bin("dpp-example-motd")};
  o.id = "Org.example.motd";
  auto bad_id = run(o);
  ASSERT_FALSE(bad_id.ok());
  EXPECT_EQ(bad_id.error().code, Code::Policy);
  EXPECT_EQ(bad_id.error().kind, "plugin_id");
  o.id.clear();
  o.command = {"/nonexistent/plugin"};
  auto missing = run(o);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, Code::Io);
}

// ---- the command ----

struct Ran {
  int code = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

Ran dot_core(std::vector<std::string> args) {
  char tmpl[] = "/tmp/dpp-conform-cli-XXXXXX";
  std::string dir = ::mkdtemp(tmpl) != nullptr ? tmpl : "";
  EXPECT_FALSE(dir.empty());
  std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$@\" </dev/null >\"$D/out\" 2>\"$D/err\"", "sh",
                                   bin("dot-core")};
  argv.insert(argv.end(), args.begin(), args.end());
  SpawnOptions o;
  o.argv = argv;
  o.path = "/bin/sh";
  o.env = {"PATH=/usr/bin:/bin", "D=" + dir};
  o.stdin_mode = o.stdout_mode = o.stderr_mode = StdioMode::DevNull;
  Ran r;
  auto child = spawn(o);
  EXPECT_TRUE(child.ok());
  if (!child.ok()) return r;
  auto st = child->wait_until(Clock::now() + std::chrono::seconds(120));
  EXPECT_TRUE(st.has_value());
  if (st) r.code = st->code;
  r.out = slurp(dir + "/out");
  r.err = slurp(dir + "/err");
  std::filesystem::remove_all(dir);
  return r;
}

TEST(DppConformCli, PassesDotHelloWithOneLinePerCaseAndTheCountsLast) {
  auto r = dot_core({"dpp", "conform", "--profile", "org.dot.hello/v1", "--", bin("dot-hello")});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("org.dot.hello/v1: the DPP hello profile\n", 0), 0u) << r.out;
  for (const auto& c : cases(dpp::Profile::Hello))
    EXPECT_NE(r.out.find(fmt::format("  PASS {}", c.name)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n3 passed, 0 failed\n"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(DppConformCli, AFailureIsItsCaseLineExitOneAndOneErrorLine) {
  auto r = dot_core({"dpp", "conform", "--", bin("dpp-hostile-general_silent_on_parse_error")});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const std::size_t n = cases(dpp::Profile::General).size();
  EXPECT_EQ(r.out.rfind("org.dot.dpp/v1: the DPP general profile\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("  FAIL parse_error "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  PASS lifecycle "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(fmt::format("\n{} passed, 1 failed\n", n - 1)), std::string::npos) << r.out;
  EXPECT_EQ(
      r.err.rfind(fmt::format("DOT_E_PROTOCOL: 1 of {} cases failed; first: parse_error: expected error -32700", n), 0),
      0u)
      << r.err;

  auto j = dot_core({"dpp", "conform", "--json", "--case", "parse_error", "--case", "lifecycle", "--",
                     bin("dpp-hostile-general_silent_on_parse_error")});
  EXPECT_EQ(j.code, 1) << j.out << j.err;
  ASSERT_TRUE(json::parse(j.out).ok()) << j.out;
  EXPECT_NE(j.out.find("\"profile\":\"org.dot.dpp/v1\",\"sha256\":\""), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("{\"name\":\"parse_error\",\"profile\":\"org.dot.dpp/v1\",\"passed\":false,"), std::string::npos)
      << j.out;
  EXPECT_NE(j.out.find("\"profiles\":{\"org.dot.dpp/v1\":{\"passed\":1,\"failed\":1}},\"passed\":1,\"failed\":1}"),
            std::string::npos)
      << j.out;
}

TEST(DppConformCli, ListNamesEveryCaseOfTheProfile) {
  for (auto profile : {dpp::Profile::Hello, dpp::Profile::General}) {
    auto r = dot_core({"dpp", "conform", "--list", "--profile", std::string(profile_name(profile))});
    EXPECT_EQ(r.code, 0) << r.err;
    std::size_t lines = 0;
    for (char c : r.out) lines += c == '\n' ? 1 : 0;
    EXPECT_EQ(lines, cases(profile).size()) << r.out;
    for (const auto& c : cases(profile))
      EXPECT_NE(r.out.find(fmt::format("{} {}", profile_name(profile), c.name)), std::string::npos) << r.out;
  }
}

TEST(DppConformCli, UsageAndCaseErrors) {
  auto none = dot_core({"dpp", "conform"});
  EXPECT_EQ(none.code, 2) << none.err;
  auto profile = dot_core({"dpp", "conform", "--profile", "org.dot.dpp/v2", "--", bin("dot-hello")});
  EXPECT_EQ(profile.code, 2) << profile.err;
  auto unknown = dot_core({"dpp", "conform", "--case", "no_such_case", "--", bin("dpp-example-motd")});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_EQ(unknown.err.rfind("DOT_E_NOT_FOUND: ", 0), 0u) << unknown.err;
  auto bad_id = dot_core({"dpp", "conform", "--id", "motd", "--", bin("dpp-example-motd")});
  EXPECT_EQ(bad_id.code, 1);
  EXPECT_EQ(bad_id.err.rfind("DOT_E_POLICY: plugin id \"motd\" has no '.'", 0), 0u) << bad_id.err;
  EXPECT_TRUE(bad_id.out.empty()) << bad_id.out;
}

}  // namespace
}  // namespace dot::dpp::conform
