#pragma once
// The ADPP conformance suite: the framed-stdio cases of the profile (every
// row of spec/adpp.md's table) plus the core semantic checks, each run
// against a fresh provider process started with exactly the given argv.
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

struct ConformanceOptions {
  // The controlled window, also each request's deadline (profile: 3 s).
  std::chrono::milliseconds window{3000};
  // How long to watch for an exit after an error response (profile: 0.5 s).
  std::chrono::milliseconds exit_grace{500};
  // Cases run concurrently, each with its own provider process.
  unsigned jobs = 4;
  // Only the cases with these names (all when empty).
  std::vector<std::string> only;
};

struct CaseResult {
  std::string name;
  bool passed = false;
  // Why it failed, or what was observed when it passed.
  std::string detail;
  std::chrono::milliseconds elapsed{0};
};

struct ConformanceReport {
  std::vector<CaseResult> cases;  // in suite order
  std::size_t passed() const noexcept;
  std::size_t failed() const noexcept;
  bool all_passed() const noexcept { return failed() == 0; }
};

// Names of every case in suite order.
std::vector<std::string_view> conformance_case_names();

// Runs the suite. An error only when the provider cannot be started at all
// (Code::Io "spawn") or `only` names an unknown case.
Result<ConformanceReport> run_conformance(const std::vector<std::string>& argv,
                                          const ConformanceOptions& options = {});

}  // namespace dot::adpp
