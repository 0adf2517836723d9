#pragma once
// `dot-core dpp conform`: what a DPP profile requires of a plugin, checked
// case by case against the plugin run exactly as dot-core runs it. The
// executable is copied into a sealed memfd, hashed and executed from that
// descriptor (dot/base/sealed_executable.h); each case gets its own process
// through dpp::HostSession (exact environment LANG=C and DOT_STAGE_ROOT, the
// stage as working directory, own process group, the profile's deadline,
// stdout and stderr caps, group and orphans killed and reaped on every path)
// and its own fresh temporary folder holding only the stage, removed
// afterwards. The verdicts are the rules core itself applies, all of them the
// protocol's and in this module: the identity check, the hello allowlists or
// the general path rules (path_rules.h), the artifact claims read back from
// the stage (stage_reader.h).
//
// Uncontained (audit, the default) a plugin can write anywhere its user can,
// and conform sees only the stage and the folder around it: the lifecycle's
// verdict says so. With Options::process_sandbox every case runs contained as
// `plan --require-process-sandbox` runs a process-assurance plugin
// (dot/base/sandbox.h, the same limits per profile: containment_limits in
// host_session.h): the kernel lets the plugin write in its stage and nowhere
// else, so "nothing written elsewhere" is then verified.
//
// Two profiles, the cases of each fixed (cases()):
//   org.dot.hello/v1  the lifecycle; fragmented and coalesced delivery.
//   org.dot.dpp/v1    the same, with and without log offered; then the
//                     plugin's side of error handling: one request core
//                     itself never sends, the JSON-RPC error the profile
//                     requires for it (code and id), and the whole lifecycle
//                     after it on the same process (it keeps reading); and
//                     stdin closed before dot.shutdown: exit 1.

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/result.h"
#include "dot/dpp/host_session.h"

namespace dot::dpp::conform {

struct Options {
  dpp::Profile profile = dpp::Profile::General;
  // The plugin: an executable path (a bare name is searched in PATH), then
  // its arguments. It runs with argv[0] "dot-plugin" as under dot-core,
  // followed by these arguments.
  std::vector<std::string> command;
  // General profile: the id the echo must carry (what it would be registered
  // with; one register would refuse is DOT_E_POLICY before anything runs);
  // empty accepts any id that is one (docs/spec/dpp-general.md's pattern). The
  // hello profile's id is org.dot.hello.
  std::string id;
  // General profile: the inputs sent in dot.initialize (absolute folders).
  std::vector<std::string> inputs;
  // The deadline; 0: the profile's (5 s for the whole hello invocation,
  // 60 s for each wait of a general one). The fragmented case gets twice that and 2 s: its byte-by-byte
  // delivery is slow by design, and not the plugin's doing.
  std::chrono::milliseconds deadline{0};
  // Where each case's temporary folder is made (empty: $TMPDIR, else /tmp).
  std::string temp_dir;
  // Only these cases (empty: every case of the profile). They run one at a
  // time, each with its own plugin process.
  std::vector<std::string> only;
  // Contain every case (see above); dot.initialize then asks for assurance
  // "process". The general profile's inputs are readable, nothing else but
  // what the loader needs.
  bool process_sandbox = false;
};

struct CaseInfo {
  std::string_view name;
  std::string_view checks;  // one line: what the case sends and requires
};

struct CaseResult {
  std::string name;
  bool passed = false;
  // Why it failed, or what was observed when it passed (plugin-controlled
  // text in it is the caller's to escape).
  std::string detail;
  std::chrono::milliseconds elapsed{0};
};

struct Report {
  std::string sha256;  // of the sealed executable that ran
  std::vector<CaseResult> cases;
  std::size_t passed() const noexcept;
  std::size_t failed() const noexcept { return cases.size() - passed(); }
  bool all_passed() const noexcept { return failed() == 0; }
};

// "org.dot.hello/v1" | "org.dot.dpp/v1".
std::string_view profile_name(dpp::Profile profile) noexcept;
// The cases of a profile, in run order.
std::vector<CaseInfo> cases(dpp::Profile profile);

// Runs the cases. An error only when nothing can run: the executable cannot
// be found, opened or sealed (Code::Io, a script Code::Policy), `id` is not
// a plugin id (Code::Policy), no temporary folder can be made, `only`
// names a case the profile does not have (Code::NotFound), or, with
// process_sandbox, the kernel lacks a containment layer
// (Code::SandboxUnavailable, naming it) or an input folder cannot be opened
// (Code::Io).
Result<Report> run(const Options& options);

}  // namespace dot::dpp::conform
