// dot-core adpp conform: the ADPP v1 conformance suite against a provider.
// The command definition; run_adpp_conform (commands.h) does the work.
#include <memory>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "conform_command.h"
#include "numbers.h"
#include "usage.h"

namespace dot::cli {

namespace {

struct ClientVerb {
  const char* name;
  const char* description;
  const char* example;  // the words between the verb and --
};
constexpr ClientVerb kClientVerbs[] = {
    {"hello", "Say Hello to a provider and print its answer", ""},
    {"list", "List a provider's devices (ListDevices)", "--health"},
    {"describe", "Describe devices: identity, signals, functions (DescribeDevice, one per --device)",
     "--device tempctl0"},
    {"read", "Read signals of a device (ReadSignals, one per --device)", "--device tempctl0 --signal temp_c"},
    {"call", "Call a function of a device (Call), arguments as a JSON object",
     "--device tempctl0 --function set_setpoint --args '{\"value\": 25}'"},
    {"health", "Ask a provider for its health (GetHealth)", ""},
    {"wait-ready", "Wait until a provider is ready (WaitReady)", "--max-wait 2"},
};

// One subcommand per request type. Each starts the provider, says Hello,
// sends its request(s) and closes stdin (cli/adpp_client.cpp).
void add_adpp_client_commands(CLI::App* adpp, Context& ctx) {
  for (const auto& v : kClientVerbs) {
    auto* cmd = adpp->add_subcommand(v.name, v.description);
    auto args = std::make_shared<AdppClientOptions>();
    args->verb = v.name;
    cmd->add_flag("--json", args->json, "One JSON line per answer (protobuf JSON mapping, .proto field names)");
    add_seconds_option(cmd, "--timeout", args->timeout_s, "Deadline of each request, seconds", 0.05, 600.0)
        ->default_str("5");
    std::string verb = v.name;
    if (verb == "list") cmd->add_flag("--health", args->health, "Ask for each device's health too");
    if (verb == "describe" || verb == "read")
      add_repeatable_option(cmd, "--device", args->devices, "A device id (repeatable: one request per device)")
          ->required();
    if (verb == "call") {
      add_repeatable_option(cmd, "--device", args->devices, "The device id")->required();
      cmd->add_option("--function", args->function, "The function: its function_id (digits) or its name")->required();
      cmd->add_option("--args", args->args,
                      "Arguments as a JSON object, name -> value; typed as the device declares them")
          ->default_str("{}");
    }
    if (verb == "read")
      add_repeatable_option(cmd, "--signal", args->signals, "A signal id (repeatable; none: the default signals)");
    if (verb == "wait-ready")
      add_seconds_option(cmd, "--max-wait", args->max_wait_s, "max_wait_ms_hint for the provider, seconds", 0, 3600);
    cmd->add_option("provider", args->provider, "The provider command line, after --")->required();
    cmd->footer(std::string("Prints the provider's answer as a table, or with --json one line per answer.\n"
                            "An error status from the provider is printed and exits 1 (DOT_E_PROTOCOL\n"
                            "provider_status); a crash, malformed or over-cap frame is DOT_E_PROTOCOL, a\n"
                            "request past --timeout DOT_E_TIMEOUT.\n"
                            "Example:\n  dot-core adpp ") +
                v.name + (*v.example != 0 ? " " : "") + v.example +
                " -- build/release/bin/adpp-sim --config adpp/examples/basic.textproto");
    cmd->callback([&ctx, args] {
      if (args->verb == "call" && args->devices.size() != 1)
        throw CLI::ValidationError("--device", "call takes exactly one --device");
      ctx.action = [args] { return run_adpp_client(*args); };
    });
  }
}

}  // namespace

void add_adpp_commands(CLI::App& app, Context& ctx) {
  auto* adpp = app.add_subcommand("adpp", "ADPP v1 device providers (framed stdio)");
  adpp->require_subcommand(1);
  auto* conform = adpp->add_subcommand("conform", "Run the ADPP framed-stdio conformance suite against a provider");
  auto args = std::make_shared<AdppConformOptions>();
  add_seconds_option(conform, "--timeout", args->timeout_s, "Controlled window and per-request deadline, seconds", 0.05,
                     600.0)
      ->default_str("3");
  conform->add_flag("--json", args->json, "One JSON document with every case");
  conform
      ->add_option("--suite", args->suite,
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
  add_adpp_client_commands(adpp, ctx);
  set_conform_action(conform, ctx, args, &AdppConformOptions::provider, "provider (the command line after --)",
                     run_adpp_conform);
}

}  // namespace dot::cli
