// dot-core adpp conform, the implementation: runs the ADPP v1 conformance
// suites against a provider and prints them the conformance commands' way
// (conform_output.h).
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "commands.h"
#include "conform_output.h"
#include "dot/adpp/conformance.h"
#include "error_kinds.h"
#include "output.h"

namespace dot::cli {
namespace {

ConformPrint suites() {
  ConformPrint p;
  p.group_key = "suite";
  p.groups = {{adpp::suite_name(adpp::Suite::Profile), "the framed-stdio profile v1"},
              {adpp::suite_name(adpp::Suite::Semantics), "the device semantics of ADPP v1"}};
  return p;
}

}  // namespace

int run_adpp_conform(const AdppConformOptions& a) {
  ConformPrint p = suites();
  if (a.list) {
    auto cases = adpp::conformance_cases();
    for (const auto& c : cases) p.cases.push_back({c.name, adpp::suite_name(c.suite), c.checks, false, {}, 0});
    return print_conform_list(p, a.json);
  }
  if (a.provider.empty())
    return report(make_error(cli::ErrorKind::Usage, "no provider given: dot-core adpp conform -- PROVIDER [ARGS...]"),
                  a.json);
  adpp::ConformanceOptions options;
  options.window = std::chrono::milliseconds(static_cast<long long>(std::llround(a.timeout_s * 1000.0)));
  options.only = a.cases;
  if (a.suite == "semantics") options.suites = {adpp::Suite::Semantics};
  if (a.suite == "all") options.suites = {adpp::Suite::Profile, adpp::Suite::Semantics};
  auto result = adpp::run_conformance(a.provider, options);
  if (!result.ok()) return report(result.error(), a.json);
  for (const auto& c : result->cases)
    p.cases.push_back({c.name, adpp::suite_name(c.suite), {}, c.passed, c.detail, c.elapsed.count()});
  p.head = [&](JsonWriter& w) { w.key("provider").string_array(a.provider); };
  return print_conform_report(p, a.json);
}

}  // namespace dot::cli
