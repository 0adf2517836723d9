// dot-core adpp conform, the implementation: runs the ADPP v1 conformance
// suite against a provider.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "dot/adpp/conformance.h"
#include "json_writer.h"
#include "output.h"

namespace dot::cli {

int run_adpp_conform(const AdppConformOptions& a) {
  if (a.provider.empty())
    return report(make_error(Code::Validation, "usage", "no provider given: dot-core adpp conform -- PROVIDER [ARGS...]"),
                  a.json);
  adpp::ConformanceOptions options;
  options.window = std::chrono::milliseconds(static_cast<long long>(std::llround(a.timeout_s * 1000.0)));
  options.only = a.cases;
  auto result = adpp::run_conformance(a.provider, options);
  if (!result.ok()) return report(result.error(), a.json);
  const auto& r = *result;

  if (a.json) {
    JsonWriter w;
    w.begin_object();
    w.key("provider").begin_array();
    for (const auto& arg : a.provider) w.string(arg);
    w.end_array();
    w.key("cases").begin_array();
    for (const auto& c : r.cases) {
      w.begin_object();
      w.key("name").string(c.name);
      w.key("passed").boolean(c.passed);
      w.key("detail").string(c.detail);
      w.key("ms").number(c.elapsed.count());
      w.end_object();
    }
    w.end_array();
    w.key("passed").number(r.passed());
    w.key("failed").number(r.failed());
    w.end_object();
    if (!write_stdout(std::move(w).line())) return kExitError;
  } else {
    // A case's detail quotes what the provider sent (its stderr, its words).
    std::size_t width = 0;
    for (const auto& c : r.cases) width = std::max(width, c.name.size());
    std::string out;
    for (const auto& c : r.cases)
      out += fmt::format("{} {:<{}}  {}\n", c.passed ? "PASS" : "FAIL", c.name, width, shown(c.detail));
    out += fmt::format("{} passed, {} failed\n", r.passed(), r.failed());
    if (!print_text(out)) return kExitError;
  }
  if (r.all_passed()) return kExitOk;
  std::string first;
  for (const auto& c : r.cases)
    if (!c.passed) {
      first = fmt::format("{}: {}", c.name, c.detail);
      break;
    }
  // The JSON document above already carries the verdict: only stderr gets the error line.
  return report(make_error(Code::Protocol, "conformance",
                           fmt::format("{} of {} cases failed; first: {}", r.failed(), r.cases.size(), first)),
                false);
}

}  // namespace dot::cli
