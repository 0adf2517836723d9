// dot-core dpp conform: what a DPP profile requires of a plugin, checked
// against the plugin run the way dot-core runs it (dpp/conformance.h).
// Every rule is in dot_dpp, beside the protocol it checks; this file prints
// the conformance commands' way (conform_output.h).
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "conform_command.h"
#include "conform_output.h"
#include "dot/dpp/conformance.h"
#include "dot/dpp/general.h"
#include "dot/dpp/hello.h"
#include "numbers.h"
#include "output.h"
#include "usage.h"

namespace dot::cli {
namespace {

struct DppConformOptions {
  std::string profile{dpp::general::kProfile};
  std::string id;
  std::vector<std::string> inputs;
  double timeout_s = 0;  // 0: the profile's deadline
  bool json = false;
  bool list = false;
  bool require_sandbox = false;
  std::string assurance;  // "" | "audit" | "process" (--assurance)
  std::vector<std::string> cases;
  std::vector<std::string> plugin;
};

dpp::Profile profile_of(const std::string& name) {
  return name == dpp::hello::kProfile ? dpp::Profile::Hello : dpp::Profile::General;
}

ConformPrint profile_group(dpp::Profile profile) {
  ConformPrint p;
  p.group_key = "profile";
  p.groups = {{dpp::conform::profile_name(profile),
               profile == dpp::Profile::Hello ? "the DPP hello profile" : "the DPP general profile"}};
  return p;
}

int run_dpp_conform(const DppConformOptions& a) {
  const dpp::Profile profile = profile_of(a.profile);
  ConformPrint p = profile_group(profile);
  const std::string_view group = p.groups.front().name;
  auto infos = dpp::conform::cases(profile);
  if (a.list) {
    for (const auto& c : infos) p.cases.push_back({c.name, group, c.checks, false, {}, 0});
    return print_conform_list(p, a.json);
  }
  dpp::conform::Options o;
  o.profile = profile;
  o.command = a.plugin;
  o.id = a.id;
  o.inputs = a.inputs;
  o.deadline = std::chrono::milliseconds(static_cast<long long>(std::llround(a.timeout_s * 1000.0)));
  o.only = a.cases;
  // --assurance process and --require-process-sandbox are one request: run
  // every case as plan runs a plugin registered with process assurance.
  const bool contained = a.require_sandbox || a.assurance == "process";
  o.process_sandbox = contained;
  auto result = dpp::conform::run(o);
  if (!result.ok()) return report(result.error(), a.json);
  add_verdicts(p, result->cases, group);
  p.head = [&](JsonWriter& w) {
    w.key("plugin").string_array(a.plugin);
    w.key("profile").string(group);
    w.key("sha256").string(result->sha256);
    w.key("contained").boolean(contained);
  };
  return print_conform_report(p, a.json);
}

}  // namespace

void add_dpp_commands(CLI::App& app, Context& ctx) {
  auto* dpp_group = app.add_subcommand("dpp", "DPP plugins: check one against its profile");
  dpp_group->require_subcommand(1);
  auto* conform = dpp_group->add_subcommand(
      "conform", "Run the DPP conformance cases against a plugin, launched the way dot-core launches it");
  auto args = std::make_shared<DppConformOptions>();
  conform
      ->add_option("--profile", args->profile, "org.dot.dpp/v1 (the general profile, the default) or org.dot.hello/v1")
      ->check(CLI::IsMember({std::string(dpp::general::kProfile), std::string(dpp::hello::kProfile)}))
      ->default_str(std::string(dpp::general::kProfile));
  conform->add_option("--id", args->id,
                      "General profile: the id the plugin is registered with; its echo must carry it (default: any)");
  add_repeatable_option(conform, "--input", args->inputs,
                        "General profile: a folder sent in dot.initialize's inputs (repeatable, in order)");
  add_seconds_option(conform, "--timeout", args->timeout_s,
                     "Each case's deadline, seconds (default: the profile's: 5 for a whole hello run, 60 for "
                     "each wait of a general one)",
                     0.05, 600.0);
  auto* assurance =
      conform
          ->add_option("--assurance", args->assurance,
                       "audit (the default: uncontained) or process: run every case contained as plan runs a plugin "
                       "registered with --assurance process, and send required_assurance \"process\"")
          ->check(CLI::IsMember({"audit", "process"}));
  conform
      ->add_flag("--require-process-sandbox", args->require_sandbox,
                 "The same as --assurance process: the plugin may write only in its stage (without it, writes "
                 "elsewhere are not seen)")
      ->excludes(assurance);
  conform->add_flag("--json", args->json, "One JSON document with every case");
  add_repeatable_option(conform, "--case", args->cases, "Run only this case (repeatable, one case per --case)");
  conform->add_flag("--list", args->list, "List the profile's cases with what each checks; run nothing");
  conform->add_option("plugin", args->plugin, "The plugin's path and arguments, after --");
  conform->footer(
      "Each case runs a fresh plugin process the way dot-core does: executed from a sealed, hashed copy,\n"
      "environment exactly LANG=C and DOT_STAGE_ROOT, working directory a fresh empty stage (in a fresh\n"
      "folder that must hold nothing else afterwards), own process group, the profile's deadline and\n"
      "stdout/stderr caps; contained as a process-assurance plugin with --assurance process (else a\n"
      "write outside the stage and the folder around it is not seen).\n"
      "One line per case, then `N passed, N failed`; exit 0 only when every case\n"
      "passes, else 1 (DOT_E_PROTOCOL: N of M cases failed; first: ...).\n"
      "Examples:\n"
      "  dot-core dpp conform -- build/release/bin/dpp-example-motd\n"
      "  dot-core dpp conform --profile org.dot.hello/v1 -- build/release/bin/dot-hello\n"
      "  dot-core dpp conform --id org.example.motd --case parse_error --json -- ./my-plugin\n"
      "  dot-core dpp conform --id org.example.motd --assurance process -- ./my-plugin\n"
      "  dot-core dpp conform --list");
  set_conform_action(conform, ctx, args, &DppConformOptions::plugin, "plugin (the command line after --)",
                     run_dpp_conform);
}

}  // namespace dot::cli
