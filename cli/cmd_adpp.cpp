// dot-core adpp conform: the ADPP v1 conformance suite against a provider.
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "dot/adpp/conformance.h"
#include "output.h"

namespace dot::cli {
namespace {

struct ConformArgs {
  double timeout_s = 3.0;
  bool json = false;
  std::vector<std::string> cases;
  std::vector<std::string> provider;
};

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

int run_conform(const ConformArgs& a) {
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

}  // namespace

void add_adpp_commands(CLI::App& app, Context& ctx) {
  auto* adpp = app.add_subcommand("adpp", "ADPP v1 device providers (framed stdio)");
  adpp->require_subcommand(1);
  auto* conform = adpp->add_subcommand("conform", "Run the ADPP framed-stdio conformance suite against a provider");
  auto args = std::make_shared<ConformArgs>();
  conform->add_option("--timeout", args->timeout_s, "Controlled window and per-request deadline, seconds")
      ->check(CLI::Range(0.05, 600.0))
      ->capture_default_str();
  conform->add_flag("--json", args->json, "One JSON document with every case");
  conform->add_option("--case", args->cases, "Run only this case (repeatable)");
  conform->add_option("provider", args->provider, "The provider command line, after --")->required();
  conform->footer(
      "Each case starts a fresh provider with exactly the given argv. One line per case,\n"
      "then `N passed, N failed`; exit 0 only when every case passes, else 1\n"
      "(DOT_E_PROTOCOL: conformance ...).\n"
      "Examples:\n"
      "  dot-core adpp conform -- build/release/bin/adpp-sim --config adpp/examples/basic.textproto\n"
      "  dot-core adpp conform --timeout 1 --json -- ./my-provider --config my.yaml");
  conform->callback([&ctx, args] { ctx.action = [args] { return run_conform(*args); }; });
}

}  // namespace dot::cli
