// dot-core adpp conform, the implementation: runs the ADPP v1 conformance
// suite against a provider. Linked into dot-core-adpp only (commands.h).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "dot/adpp/conformance.h"
#include "output.h"

namespace dot::cli {
namespace {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) out += fmt::format("\\u{:04x}", c);
        else out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

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

  std::string out;
  if (a.json) {
    out += "{\"provider\":[";
    for (std::size_t i = 0; i < a.provider.size(); ++i) out += (i ? "," : "") + json_string(a.provider[i]);
    out += "],\"cases\":[";
    for (std::size_t i = 0; i < r.cases.size(); ++i) {
      const auto& c = r.cases[i];
      out += fmt::format("{}{{\"name\":{},\"passed\":{},\"detail\":{},\"ms\":{}}}", i ? "," : "", json_string(c.name),
                         c.passed ? "true" : "false", json_string(c.detail), c.elapsed.count());
    }
    out += fmt::format("],\"passed\":{},\"failed\":{}}}\n", r.passed(), r.failed());
  } else {
    std::size_t width = 0;
    for (const auto& c : r.cases) width = std::max(width, c.name.size());
    for (const auto& c : r.cases)
      out += fmt::format("{} {:<{}}  {}\n", c.passed ? "PASS" : "FAIL", c.name, width, c.detail);
    out += fmt::format("{} passed, {} failed\n", r.passed(), r.failed());
  }
  if (!write_stdout(out)) return kExitError;
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
