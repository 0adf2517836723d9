// dot-core adpp conform, the implementation: runs the ADPP v1 conformance
// suites against a provider.
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
namespace {

constexpr adpp::Suite kSuites[] = {adpp::Suite::Profile, adpp::Suite::Semantics};

std::string_view suite_title(adpp::Suite s) {
  return s == adpp::Suite::Profile ? "the framed-stdio profile v1" : "the device semantics of ADPP v1";
}

int list_cases(bool json) {
  auto cases = adpp::conformance_cases();
  if (json) {
    JsonWriter w;
    w.begin_array();
    for (const auto& c : cases) {
      w.begin_object();
      w.key("name").string(c.name);
      w.key("suite").string(adpp::suite_name(c.suite));
      w.key("checks").string(c.checks);
      w.end_object();
    }
    w.end_array();
    return write_stdout(std::move(w).line()) ? kExitOk : kExitError;
  }
  std::size_t width = 0;
  for (const auto& c : cases) width = std::max(width, c.name.size());
  std::string out;
  for (const auto& c : cases) out += fmt::format("{:<9} {:<{}}  {}\n", adpp::suite_name(c.suite), c.name, width, c.checks);
  return print_text(out) ? kExitOk : kExitError;
}

}  // namespace

int run_adpp_conform(const AdppConformOptions& a) {
  if (a.list) return list_cases(a.json);
  if (a.provider.empty())
    return report(make_error(Code::Validation, "usage", "no provider given: dot-core adpp conform -- PROVIDER [ARGS...]"),
                  a.json);
  adpp::ConformanceOptions options;
  options.window = std::chrono::milliseconds(static_cast<long long>(std::llround(a.timeout_s * 1000.0)));
  options.only = a.cases;
  if (a.suite == "semantics") options.suites = {adpp::Suite::Semantics};
  if (a.suite == "all") options.suites = {adpp::Suite::Profile, adpp::Suite::Semantics};
  auto result = adpp::run_conformance(a.provider, options);
  if (!result.ok()) return report(result.error(), a.json);
  const auto& r = *result;
  auto ran = [&](adpp::Suite s) { return r.passed(s) + r.failed(s) > 0; };

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
      w.key("suite").string(adpp::suite_name(c.suite));
      w.key("passed").boolean(c.passed);
      w.key("detail").string(c.detail);
      w.key("ms").number(c.elapsed.count());
      w.end_object();
    }
    w.end_array();
    w.key("suites").begin_object();
    for (auto s : kSuites) {
      if (!ran(s)) continue;
      w.key(adpp::suite_name(s)).begin_object();
      w.key("passed").number(r.passed(s));
      w.key("failed").number(r.failed(s));
      w.end_object();
    }
    w.end_object();
    w.key("passed").number(r.passed());
    w.key("failed").number(r.failed());
    w.end_object();
    if (!write_stdout(std::move(w).line())) return kExitError;
  } else {
    // A case's detail quotes what the provider sent (its stderr, its words).
    std::size_t width = 0;
    for (const auto& c : r.cases) width = std::max(width, c.name.size());
    std::string out;
    for (auto s : kSuites) {
      if (!ran(s)) continue;
      out += fmt::format("{}: {}\n", adpp::suite_name(s), suite_title(s));
      for (const auto& c : r.cases)
        if (c.suite == s)
          out += fmt::format("  {} {:<{}}  {}\n", c.passed ? "PASS" : "FAIL", c.name, width, shown(c.detail));
      out += fmt::format("  {}: {} passed, {} failed\n", adpp::suite_name(s), r.passed(s), r.failed(s));
    }
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
