// dot-core doctor: which containment layers this machine provides, so that a
// user knows before a plan whether `process` assurance can be enforced here.

#include <fmt/format.h>

#include "commands.h"
#include "dot/base/jcs.h"
#include "dot/base/sandbox.h"
#include "output.h"

namespace dot::cli {
namespace {

struct Layer {
  const char* name;
  bool available;
  std::string detail;
};

std::vector<Layer> layers_of(const SandboxSupport& s) {
  return {{"landlock", s.landlock(), s.landlock_detail},
          {"seccomp", s.seccomp, s.seccomp_detail},
          {"no_new_privs", s.no_new_privs, s.no_new_privs_detail},
          {"capabilities", s.capabilities, s.capabilities_detail},
          {"rlimits", s.rlimits, s.rlimits_detail}};
}

std::string json_string(std::string_view s) {
  std::string out;
  jcs::append_string(out, s);
  return out;
}

int run_doctor(bool json) {
  const SandboxSupport s = probe_sandbox_support();
  const auto layers = layers_of(s);
  const Status verdict = s.require_complete();
  std::string out;
  if (json) {
    out = fmt::format("{{\"landlock_abi\":{},\"min_landlock_abi\":{},\"layers\":[", s.landlock_abi, kMinLandlockAbi);
    for (std::size_t i = 0; i < layers.size(); ++i)
      out += fmt::format("{}{{\"name\":\"{}\",\"available\":{},\"detail\":{}}}", i ? "," : "", layers[i].name,
                         layers[i].available ? "true" : "false", json_string(layers[i].detail));
    out += fmt::format("],\"process_assurance\":{}", verdict.ok() ? "true" : "false");
    if (!verdict.ok()) out += fmt::format(",\"missing\":\"{}\"", verdict.error().kind);
    out += "}\n";
  } else {
    out = fmt::format("{:<14}{:<11}{}\n", "layer", "status", "detail");
    for (const auto& l : layers)
      out += fmt::format("{:<14}{:<11}{}\n", l.name, l.available ? "ok" : "missing", l.detail);
    out += fmt::format("Landlock ABI: {} (at least {} needed)\n", s.landlock_abi, kMinLandlockAbi);
    out += verdict.ok() ? "process assurance: available (plan --require-process-sandbox can run process plugins)\n"
                        : fmt::format("process assurance: unavailable, plans that require it fail with {}\n",
                                      verdict.error().line());
  }
  // Reporting is the command's job: a machine without a layer is not an error here.
  return write_stdout(out) ? kExitOk : kExitError;
}

}  // namespace

void add_doctor_command(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("doctor", "Report which process-containment layers this machine supports");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "One JSON object: landlock_abi, layers[{name,available,detail}], process_assurance");
  cmd->footer(
      "Process assurance needs every layer: Landlock (ABI 3 or later), seccomp filters with\n"
      "the kill-process action, no_new_privs, dropping every capability, rlimits.\n"
      "Examples:\n"
      "  dot-core doctor\n"
      "  dot-core doctor --json");
  cmd->callback([&ctx, json] { ctx.action = [json] { return run_doctor(*json); }; });
}

}  // namespace dot::cli
