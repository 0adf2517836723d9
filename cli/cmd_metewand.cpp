// metewand hello: run the Metewand v1 hello handshake against a worker
// executable and print what was negotiated. How the worker is found, sealed,
// started and swept is metewand's (dot/metewand/launch.h); this file parses
// the options and prints.
#include <chrono>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "numbers.h"
#include "usage.h"
#include "dot/base/jcs.h"
#include "dot/metewand/hello.h"
#include "dot/metewand/launch.h"
#include "output.h"

namespace dot::cli {
namespace {

// --timeout: a millisecond at least (the deadline is counted in whole
// milliseconds), a day at most.
constexpr double kMinTimeoutS = 0.001;
constexpr double kMaxTimeoutS = 86400;

struct HelloOptions {
  std::string role = "implementation";
  std::string worker_id;
  double timeout_s = 5.0;
  std::vector<std::string> select;
  std::vector<std::string> command;  // WORKER [ARGS...]
  bool json = false;
};

int run_hello(const HelloOptions& o) {
  using namespace metewand;
  HelloRun run;
  auto role = role_from_name(o.role);
  if (!role) return report(make_error(Code::Validation, "role", fmt::format("unknown role {}", o.role)), o.json);
  run.role = *role;
  for (const auto& name : o.select) {
    auto cap = capability_from_name(name);
    if (!cap) return report(make_error(Code::Validation, "capability", fmt::format("unknown capability {}", name)), o.json);
    run.selected.push_back(*cap);
  }
  run.command = o.command;
  run.worker_id = o.worker_id;
  run.timeout = std::chrono::milliseconds(static_cast<long long>(std::ceil(o.timeout_s * 1000)));
  auto negotiated = hello_worker(run);
  if (!negotiated.ok()) return report(negotiated.error(), o.json);

  auto bytes = jcs::encode(negotiated->to_node(), jcs::Profile::Metewand);
  if (!bytes.ok()) return report(bytes.error(), o.json);
  *bytes += '\n';
  if (!write_stdout(*bytes)) return report(make_error(Code::Io, "write", "cannot write standard output"), o.json);
  return kExitOk;
}

}  // namespace

void add_metewand_commands(CLI::App& app, Context& ctx) {
  auto* group = app.add_subcommand("metewand", "Metewand v1 worker protocol");
  group->require_subcommand(1);
  auto* hello = group->add_subcommand("hello", "Run the hello handshake against a worker and print the result");
  auto o = std::make_shared<HelloOptions>();
  hello->add_option("--role", o->role, "Worker role")
      ->check(CLI::IsMember({"dataset_materializer", "implementation", "problem_evaluator"}));
  hello->add_option("--worker-id", o->worker_id,
                    "Expected resolved identity (default: mw1-resolved-worker- + SHA-256 of WORKER)");
  add_seconds_option(hello, "--timeout", o->timeout_s, "Seconds for the handshake and for the worker's exit (default 5)",
                     kMinTimeoutS, kMaxTimeoutS);
  add_repeatable_option(hello, "--select", o->select,
                        "Capability to select (repeatable, one per --select; implementation role only)");
  hello->add_flag("--json", o->json, "Errors also as JSON on standard output");
  hello->add_option("command", o->command, "WORKER [ARGS...] after --")->required();
  hello->footer(
      "Prints {\"capabilities\":[...],\"protocol\":1,\"role\":R,\"sdk\":...,\"selected\":[...],\"worker_id\":W}\n"
      "on success (exit 0); otherwise the typed error (a FrameError, correlation or handshake\n"
      "error name, or the worker's failure code) and exit 1.\n"
      "Examples:\n"
      "  dot-core metewand hello -- ./my-worker --verbose\n"
      "  dot-core metewand hello --role problem_evaluator --timeout 2 -- /opt/eval/worker\n");
  hello->callback([&ctx, o] { ctx.action = [o] { return run_hello(*o); }; });
}

}  // namespace dot::cli
