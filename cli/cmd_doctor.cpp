// dot-core doctor: which containment layers this machine provides, so that a
// user knows before a plan whether `process` assurance can be enforced here.

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dot/base/sandbox.h"
#include "json_writer.h"
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

int run_doctor(bool json) {
  const SandboxSupport s = probe_sandbox_support();
  const auto layers = layers_of(s);
  const Status verdict = s.require_complete();
  // Reporting is the command's job: a machine without a layer is not an error here.
  if (json) {
    JsonWriter w;
    w.begin_object();
    w.key("landlock_abi").number(s.landlock_abi);
    w.key("min_landlock_abi").number(kMinLandlockAbi);
    w.key("layers").begin_array();
    for (const auto& l : layers) {
      w.begin_object();
      w.key("name").string(l.name);
      w.key("available").boolean(l.available);
      w.key("detail").string(l.detail);
      w.end_object();
    }
    w.end_array();
    w.key("process_assurance").boolean(verdict.ok());
    if (!verdict.ok()) w.key("missing").string(verdict.error().kind);
    w.end_object();
    return write_stdout(std::move(w).line()) ? kExitOk : kExitError;
  }
  std::string out = fmt::format("{:<14}{:<11}{}\n", "layer", "status", "detail");
  for (const auto& l : layers)
    out += fmt::format("{:<14}{:<11}{}\n", l.name, l.available ? "ok" : "missing", shown(l.detail));
  out += fmt::format("Landlock ABI: {} (at least {} needed)\n", s.landlock_abi, kMinLandlockAbi);
  out += verdict.ok() ? "process assurance: available (plan --require-process-sandbox can run process plugins)\n"
                      : fmt::format("process assurance: unavailable, plans that require it fail with {}\n",
                                    shown(verdict.error().line()));
  return print_text(out) ? kExitOk : kExitError;
}

}  // namespace

void add_doctor_command(CLI::App& app, Context& ctx) {
  auto* cmd =
      add_json_command(app, ctx, "doctor", "Report which process-containment layers this machine supports",
                       "One JSON object: landlock_abi, layers[{name,available,detail}], process_assurance", run_doctor);
  cmd->footer(
      "Process assurance needs every layer: Landlock (ABI 3 or later), seccomp filters with\n"
      "the kill-process action, no_new_privs, dropping every capability, rlimits.\n"
      "Examples:\n"
      "  dot-core doctor\n"
      "  dot-core doctor --json");
}

}  // namespace dot::cli
