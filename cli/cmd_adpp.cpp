// dot-core adpp conform: the ADPP v1 conformance suite against a provider.
// The command definition; run_adpp_conform (commands.h) does the work.
#include <memory>

#include "commands.h"
#include "numbers.h"
#include "usage.h"

namespace dot::cli {

void add_adpp_commands(CLI::App& app, Context& ctx) {
  auto* adpp = app.add_subcommand("adpp", "ADPP v1 device providers (framed stdio)");
  adpp->require_subcommand(1);
  auto* conform = adpp->add_subcommand("conform", "Run the ADPP framed-stdio conformance suite against a provider");
  auto args = std::make_shared<AdppConformOptions>();
  add_seconds_option(conform, "--timeout", args->timeout_s, "Controlled window and per-request deadline, seconds",
                     0.05, 600.0)
      ->default_str("3");
  conform->add_flag("--json", args->json, "One JSON document with every case");
  add_repeatable_option(conform, "--case", args->cases, "Run only this case (repeatable, one case per --case)");
  conform->add_option("provider", args->provider, "The provider command line, after --")->required();
  conform->footer(
      "Each case starts a fresh provider with exactly the given argv. One line per case,\n"
      "then `N passed, N failed`; exit 0 only when every case passes, else 1\n"
      "(DOT_E_PROTOCOL: conformance ...).\n"
      "Examples:\n"
      "  dot-core adpp conform -- build/release/bin/adpp-sim --config adpp/examples/basic.textproto\n"
      "  dot-core adpp conform --timeout 1 --json -- ./my-provider --config my.yaml");
  conform->callback([&ctx, args] { ctx.action = [args] { return run_adpp_conform(*args); }; });
}

}  // namespace dot::cli
