#pragma once
// The ADPP conformance suite, each case run against a fresh provider process
// started with exactly the given argv. Two suites, reported apart:
//   profile    what the framed-stdio profile v1 requires (every row of
//              docs/spec/adpp.md's table, the 1 MiB cap both ways, Hello metadata,
//              version and repeat, request_id echo, unknown fields, exit
//              codes): the default, so a provider that meets the profile passes
//              a default run whatever its devices do;
//   semantics  the device semantics of ADPP v1 (list, describe, read, call,
//              health, WaitReady, unknown device/signal/function).
//
// "Controlled" (profile section 4): within the window either a framed
// Response whose status is a defined code other than OK and UNSPECIFIED (an
// exit within the grace period after it must be 0, 2 or 3), or an exit with
// 0, 2 or 3. A hang, a death by signal, an over-cap or unparseable response,
// or any other exit code fails the case.

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/result.h"

namespace dot::adpp {

enum class Suite { Profile, Semantics };
// "profile", "semantics".
std::string_view suite_name(Suite suite) noexcept;

struct ConformanceOptions {
  // The controlled window, also each request's deadline (profile: 3 s).
  std::chrono::milliseconds window{3000};
  // How long to watch for an exit after an error response (profile: 0.5 s).
  std::chrono::milliseconds exit_grace{500};
  // Cases run concurrently, each with its own provider process.
  unsigned jobs = 4;
  // The suites to run (ignored when `only` names cases).
  std::vector<Suite> suites{Suite::Profile};
  // Only the cases with these names, from any suite (the selected suites' cases when empty).
  std::vector<std::string> only;
};

struct CaseInfo {
  std::string_view name;
  Suite suite;
  std::string_view checks;  // one line: what the case sends and requires
};

struct CaseResult {
  std::string name;
  Suite suite = Suite::Profile;
  bool passed = false;
  // Why it failed, or what was observed when it passed.
  std::string detail;
  std::chrono::milliseconds elapsed{0};
};

struct ConformanceReport {
  std::vector<CaseResult> cases;  // in suite order
  std::size_t passed() const noexcept;
  std::size_t failed() const noexcept;
  std::size_t passed(Suite suite) const noexcept;
  std::size_t failed(Suite suite) const noexcept;
  bool all_passed() const noexcept { return failed() == 0; }
};

// Every case, profile cases first, in run order.
std::vector<CaseInfo> conformance_cases();

// Runs the suite. An error only when the provider cannot be started at all
// (Code::Io "spawn"), this process cannot become a child subreaper (Code::Io
// "subreaper"; it does for the run, so that what a provider abandons is
// killed and reaped before the call returns), or `only` names an unknown
// case.
Result<ConformanceReport> run_conformance(const std::vector<std::string>& argv, const ConformanceOptions& options = {});

}  // namespace dot::adpp
