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
  conform->add_option("--suite", args->suite,
                      "profile (the framed-stdio profile v1, the default), semantics (device semantics) or all")
      ->check(CLI::IsMember({"profile", "semantics", "all"}))
      ->default_str("profile");
  add_repeatable_option(conform, "--case", args->cases,
                        "Run only this case, from any suite (repeatable, one case per --case)");
  conform->add_flag("--list", args->list, "List every case with its suite and what it checks; run nothing");
  conform->add_option("provider", args->provider, "The provider command line, after --");
  conform->footer(
      "Each case starts a fresh provider with exactly the given argv. One line per case under a\n"
      "heading per suite, then `N passed, N failed`; exit 0 only when every case passes, else 1\n"
      "(DOT_E_PROTOCOL: conformance ...).\n"
      "Examples:\n"
      "  dot-core adpp conform -- build/release/bin/adpp-sim --config adpp/examples/basic.textproto\n"
      "  dot-core adpp conform --suite all --timeout 1 --json -- ./my-provider --config my.yaml\n"
      "  dot-core adpp conform --list");
  conform->callback([&ctx, args] {
    // The provider is required unless --list (a usage error, exit 2, like any missing argument).
    if (!args->list && args->provider.empty()) throw CLI::RequiredError("provider (the command line after --)");
    ctx.action = [args] { return run_adpp_conform(*args); };
  });
}

}  // namespace dot::cli
