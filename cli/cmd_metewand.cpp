// metewand hello | run | conform: the Metewand v1 worker protocol against a
// worker executable. How the worker is found, sealed, started, driven and
// swept is metewand's (dot/metewand/launch.h, conformance.h); this file
// parses the options and prints.
#include <chrono>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "conform_command.h"
#include "conform_output.h"
#include "dot/base/error_kinds.h"
#include "dot/base/jcs.h"
#include "dot/metewand/conformance.h"
#include "dot/metewand/hello.h"
#include "dot/metewand/launch.h"
#include "dot/metewand/operations.h"
#include "error_kinds.h"
#include "json_writer.h"
#include "numbers.h"
#include "output.h"
#include "usage.h"

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
  if (!role) return report(make_error(cli::ErrorKind::Role, fmt::format("unknown role {}", o.role)), o.json);
  run.role = *role;
  for (const auto& name : o.select) {
    auto cap = capability_from_name(name);
    if (!cap) return report(make_error(cli::ErrorKind::Capability, fmt::format("unknown capability {}", name)), o.json);
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
  if (!write_stdout(*bytes)) return report(stdout_error(), o.json);
  return kExitOk;
}

struct RunOptions {
  std::string role = "implementation";
  std::string worker_id;
  std::vector<std::string> select;
  bool select_given = false;
  double timeout_s = 30.0;
  // Per phase, seconds; 0: --timeout. Indexed by Phase (Start unused).
  double phase_timeout_s[8] = {};
  // The requests' members (the public protocol's names).
  std::string source_dir, output_dir, dataset_dir, result_dir, metrics_path;
  std::string problem_contract_id;
  std::string dataset_parameters = "{}", problem_parameters = "{}", implementation_parameters = "{}";
  std::size_t dataset_seed = 0, implementation_seed = 0;
  bool no_reset = false;
  std::vector<std::string> command;
  bool json = false;
};

Error usage_error(ErrorKind kind, std::string detail) { return make_error(kind, std::move(detail)); }

// A JSON object option, as the node the request carries.
Result<jcs::Node> object_option(ErrorKind kind, const std::string& name, const std::string& text) {
  auto doc = json::parse(text);
  if (!doc.ok() || !doc->root().is_object()) return usage_error(kind, fmt::format("{} must be one JSON object", name));
  return jcs::Node::from(doc->root());
}

// --timeout for every phase, then each --PHASE-timeout given over it.
void set_timeouts(const RunOptions& o, metewand::SessionRun& run) {
  using metewand::Phase;
  run.timeouts.set_all(std::chrono::milliseconds(static_cast<long long>(std::ceil(o.timeout_s * 1000))));
  for (Phase p : {Phase::Hello, Phase::Materialize, Phase::Prepare, Phase::Execute, Phase::Reset, Phase::Evaluate,
                  Phase::Shutdown}) {
    double seconds = o.phase_timeout_s[static_cast<std::size_t>(p)];
    if (seconds <= 0) continue;
    auto ms = std::chrono::milliseconds(static_cast<long long>(std::ceil(seconds * 1000)));
    switch (p) {
      case Phase::Hello:
        run.timeouts.hello = ms;
        break;
      case Phase::Materialize:
        run.timeouts.materialize = ms;
        break;
      case Phase::Prepare:
        run.timeouts.prepare = ms;
        break;
      case Phase::Execute:
        run.timeouts.execute = ms;
        break;
      case Phase::Reset:
        run.timeouts.reset = ms;
        break;
      case Phase::Evaluate:
        run.timeouts.evaluate = ms;
        break;
      case Phase::Shutdown:
        run.timeouts.shutdown = ms;
        break;
      case Phase::Start:
        break;
    }
  }
}

// The role's requests, in order, from the options it needs.
Status add_requests(const RunOptions& o, metewand::SessionRun& run) {
  using namespace metewand;
  auto need = [&](const char* option, const std::string& value) -> Status {
    if (value.empty())
      return usage_error(cli::ErrorKind::MissingOption, fmt::format("a {} session needs {}", o.role, option));
    return {};
  };
  auto text = [](const std::string& v) { return jcs::Node::string(v); };
  auto seed = [](std::size_t v) { return jcs::Node::integer(static_cast<std::int64_t>(v)); };
  switch (run.role) {
    case WorkerRole::DatasetMaterializer: {
      DOT_TRY(need("--source-dir", o.source_dir));
      DOT_TRY(need("--output-dir", o.output_dir));
      DOT_ASSIGN_OR_RETURN(jcs::Node params,
                           object_option(ErrorKind::DatasetParameters, "--dataset-parameters", o.dataset_parameters));
      jcs::Node m = jcs::Node::object();
      m.set("source_dir", text(o.source_dir)).set("dataset_parameters", std::move(params));
      m.set("dataset_seed", seed(o.dataset_seed)).set("output_dir", text(o.output_dir));
      run.requests.emplace_back(Method::Materialize, std::move(m));
      break;
    }
    case WorkerRole::Implementation: {
      DOT_TRY(need("--dataset-dir", o.dataset_dir));
      DOT_TRY(need("--problem-contract-id", o.problem_contract_id));
      DOT_TRY(need("--result-dir", o.result_dir));
      DOT_ASSIGN_OR_RETURN(jcs::Node problem,
                           object_option(ErrorKind::ProblemParameters, "--problem-parameters", o.problem_parameters));
      DOT_ASSIGN_OR_RETURN(jcs::Node impl, object_option(ErrorKind::ImplementationParameters,
                                                         "--implementation-parameters", o.implementation_parameters));
      jcs::Node p = jcs::Node::object();
      p.set("dataset_dir", text(o.dataset_dir)).set("problem_contract_id", text(o.problem_contract_id));
      p.set("problem_parameters", std::move(problem)).set("implementation_parameters", std::move(impl));
      p.set("implementation_seed", seed(o.implementation_seed));
      run.requests.emplace_back(Method::Prepare, std::move(p));
      jcs::Node e = jcs::Node::object();
      e.set("result_dir", text(o.result_dir));
      run.requests.emplace_back(Method::Execute, std::move(e));
      if (!o.no_reset) run.requests.emplace_back(Method::Reset, jcs::Node::object());
      break;
    }
    case WorkerRole::ProblemEvaluator: {
      DOT_TRY(need("--dataset-dir", o.dataset_dir));
      DOT_TRY(need("--problem-contract-id", o.problem_contract_id));
      DOT_TRY(need("--result-dir", o.result_dir));
      DOT_TRY(need("--metrics-path", o.metrics_path));
      DOT_ASSIGN_OR_RETURN(jcs::Node problem,
                           object_option(ErrorKind::ProblemParameters, "--problem-parameters", o.problem_parameters));
      jcs::Node v = jcs::Node::object();
      v.set("dataset_dir", text(o.dataset_dir)).set("problem_contract_id", text(o.problem_contract_id));
      v.set("problem_parameters", std::move(problem)).set("result_dir", text(o.result_dir));
      v.set("metrics_path", text(o.metrics_path));
      run.requests.emplace_back(Method::Evaluate, std::move(v));
      break;
    }
  }
  return {};
}

Result<metewand::SessionRun> session_run(const RunOptions& o) {
  using namespace metewand;
  SessionRun run;
  auto role = role_from_name(o.role);
  if (!role) return usage_error(cli::ErrorKind::Role, fmt::format("unknown role {}", o.role));
  run.role = *role;
  run.command = o.command;
  run.worker_id = o.worker_id;
  // An implementation session executes one-shot, so it selects one_shot
  // unless --select says otherwise; the other roles take no capability.
  if (!o.select_given && run.role == WorkerRole::Implementation) run.selected = {Capability::OneShot};
  for (const auto& name : o.select) {
    auto cap = capability_from_name(name);
    if (!cap) return usage_error(cli::ErrorKind::Capability, fmt::format("unknown capability {}", name));
    run.selected.push_back(*cap);
  }
  set_timeouts(o, run);
  DOT_TRY(add_requests(o, run));
  return run;
}

std::string canonical_or_empty(const jcs::Node& node) {
  auto bytes = jcs::encode(node, jcs::Profile::Metewand);
  return bytes.ok() ? *bytes : std::string();
}

// A line the worker sent, as RFC 8785 JSON (it passed the strict reader, so
// it has one), or null when there was none.
std::string line_json(const std::string& line) {
  if (line.empty()) return "null";
  auto doc = json::parse(line);
  if (!doc.ok()) return "null";
  auto bytes = jcs::canonicalize(doc->root(), jcs::Profile::Rfc8785);
  return bytes.ok() ? *bytes : std::string("null");
}

// What a successful phase produced, for the text report.
std::string outcome(const metewand::PhaseRecord& r) {
  using namespace metewand;
  if (r.negotiated) {
    std::string sdk =
        r.negotiated->sdk ? fmt::format("{} {}", r.negotiated->sdk->name, r.negotiated->sdk->version) : "null";
    return fmt::format(
        "protocol {}, sdk {}, capabilities {}, selected {}", r.negotiated->protocol, sdk,
        canonical_or_empty(r.negotiated->to_node().get("capabilities") ? *r.negotiated->to_node().get("capabilities")
                                                                       : jcs::Node::array()),
        canonical_or_empty(*r.negotiated->to_node().get("selected")));
  }
  if (r.success) {
    if (r.success->method == Method::Materialize) return fmt::format("manifest {}", r.success->manifest);
    if (r.success->method == Method::Execute)
      return fmt::format(
          "manifest {}, implementation_time_ns {}, statistics {}", r.success->manifest,
          r.success->implementation_time_ns ? std::to_string(*r.success->implementation_time_ns) : "null",
          canonical_or_empty(r.success->statistics));
    return "acknowledged";
  }
  if (r.exit) return fmt::format("acknowledged, worker {}", r.exit->describe());
  return {};
}

int run_session_command(const RunOptions& o) {
  using namespace metewand;
  auto run = session_run(o);
  if (!run.ok()) return report(run.error(), o.json);
  auto result = run_session(*run);
  if (!result.ok()) return report(result.error(), o.json);
  const SessionReport& rep = *result;
  if (o.json) {
    JsonWriter w;
    w.begin_object();
    w.key("worker").string_array(o.command);
    w.key("worker_id").string(rep.worker_id);
    w.key("role").string(o.role);
    w.key("phases").begin_array();
    for (const auto& r : rep.phases) {
      w.begin_object();
      w.key("phase").string(phase_name(r.phase));
      w.key("ok").boolean(r.ok());
      w.key("request").raw(line_json(r.request));
      w.key("response").raw(line_json(r.response));
      w.key("ms").number(static_cast<long long>(r.took.count()));
      if (r.error) {
        Error e = r.error->to_error();
        w.key("error").begin_object();
        w.key("code").string(code_name(e.code)).key("kind").string(e.kind).key("detail").string(e.detail);
        w.end_object();
      }
      if (r.exit) w.key("exit").string(r.exit->describe());
      w.end_object();
    }
    w.end_array();
    w.key("ok").boolean(rep.ok());
    w.end_object();
    if (!write_stdout(std::move(w).line())) return kExitError;
  } else {
    std::string out;
    for (const auto& r : rep.phases) {
      if (r.ok())
        out += fmt::format("{:<11} ok    {:>6} ms  {}\n", phase_name(r.phase), r.took.count(), shown(outcome(r)));
      else
        out += fmt::format("{:<11} FAIL  {:>6} ms  {}: {}\n", phase_name(r.phase), r.took.count(),
                           shown(r.error->name()), shown(r.error->message()));
    }
    if (!print_text(out)) return kExitError;
  }
  if (rep.ok()) return kExitOk;
  auto first = std::find_if(rep.phases.begin(), rep.phases.end(), [](const PhaseRecord& r) { return !r.ok(); });
  // The JSON document already carries the phases: only stderr gets the error line.
  return report(first->error->to_error(), false);
}

struct ConformOptions {
  std::string role = "implementation";
  double timeout_s = 5.0;
  std::vector<std::string> cases;
  bool list = false;
  bool json = false;
  std::vector<std::string> command;
};

int run_conform(const ConformOptions& o) {
  using namespace metewand;
  auto role = role_from_name(o.role);
  if (!role) return report(usage_error(cli::ErrorKind::Role, fmt::format("unknown role {}", o.role)), o.json);
  ConformPrint p;
  p.group_key = "role";
  p.groups = {{role_name(*role), "the Metewand worker protocol, version 1"}};
  const std::string_view group = p.groups.front().name;
  auto infos = conformance_cases(*role);
  if (o.list) {
    for (const auto& c : infos) p.cases.push_back({c.name, group, c.checks, false, {}, 0});
    return print_conform_list(p, o.json);
  }
  ConformanceOptions options;
  options.command = o.command;
  options.role = *role;
  options.deadline = std::chrono::milliseconds(static_cast<long long>(std::ceil(o.timeout_s * 1000)));
  options.only = o.cases;
  auto result = run_conformance(options);
  if (!result.ok()) return report(result.error(), o.json);
  add_verdicts(p, result->cases, group);
  p.head = [&](JsonWriter& w) {
    w.key("worker").string_array(o.command);
    w.key("role").string(group);
    w.key("sha256").string(result->sha256);
  };
  return print_conform_report(p, o.json);
}

void add_role_option(CLI::App* cmd, std::string& role, const char* description) {
  cmd->add_option("--role", role, description)
      ->check(CLI::IsMember({"dataset_materializer", "implementation", "problem_evaluator"}));
}

void add_worker_id_option(CLI::App* cmd, std::string& worker_id) {
  cmd->add_option("--worker-id", worker_id,
                  "Expected resolved identity (default: mw1-resolved-worker- + SHA-256 of WORKER)");
}

void add_hello_command(CLI::App* group, Context& ctx) {
  auto* hello = group->add_subcommand("hello", "Run the hello handshake against a worker and print the result");
  auto o = std::make_shared<HelloOptions>();
  add_role_option(hello, o->role, "Worker role");
  add_worker_id_option(hello, o->worker_id);
  add_seconds_option(hello, "--timeout", o->timeout_s,
                     "Seconds for the handshake and for the worker's exit (default 5)", kMinTimeoutS, kMaxTimeoutS);
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

void add_run_command(CLI::App* group, Context& ctx) {
  auto* run = group->add_subcommand("run", "Drive one whole session: hello, the role's requests, shutdown");
  auto r = std::make_shared<RunOptions>();
  add_role_option(run, r->role, "Worker role (default implementation)");
  add_worker_id_option(run, r->worker_id);
  add_repeatable_option(run, "--select", r->select,
                        "Capability to select (repeatable; default one_shot for implementation, none otherwise)")
      ->each([r](const std::string&) { r->select_given = true; });
  add_seconds_option(run, "--timeout", r->timeout_s, "Seconds for every phase (default 30)", kMinTimeoutS,
                     kMaxTimeoutS);
  for (metewand::Phase p :
       {metewand::Phase::Hello, metewand::Phase::Materialize, metewand::Phase::Prepare, metewand::Phase::Execute,
        metewand::Phase::Reset, metewand::Phase::Evaluate, metewand::Phase::Shutdown}) {
    std::string name(metewand::phase_name(p));
    add_seconds_option(run, "--" + name + "-timeout", r->phase_timeout_s[static_cast<std::size_t>(p)],
                       fmt::format("Seconds for the {} phase (default --timeout)", name), kMinTimeoutS, kMaxTimeoutS);
  }
  run->add_option("--source-dir", r->source_dir, "materialize: source_dir");
  run->add_option("--output-dir", r->output_dir, "materialize: output_dir");
  run->add_option("--dataset-parameters", r->dataset_parameters,
                  "materialize: dataset_parameters, a JSON object (default {})");
  add_count_option(run, "--dataset-seed", r->dataset_seed, "materialize: dataset_seed (default 0)",
                   metewand::kMaxSafeInteger);
  run->add_option("--dataset-dir", r->dataset_dir, "prepare, evaluate: dataset_dir");
  run->add_option("--problem-contract-id", r->problem_contract_id, "prepare, evaluate: problem_contract_id");
  run->add_option("--problem-parameters", r->problem_parameters,
                  "prepare, evaluate: problem_parameters, a JSON object (default {})");
  run->add_option("--implementation-parameters", r->implementation_parameters,
                  "prepare: implementation_parameters, a JSON object (default {})");
  add_count_option(run, "--implementation-seed", r->implementation_seed, "prepare: implementation_seed (default 0)",
                   metewand::kMaxSafeInteger);
  run->add_option("--result-dir", r->result_dir, "execute, evaluate: result_dir");
  run->add_option("--metrics-path", r->metrics_path, "evaluate: metrics_path");
  run->add_flag("--no-reset", r->no_reset, "implementation: skip the reset after execute");
  run->add_flag("--json", r->json, "One JSON document: each phase with its request, response, timing and error");
  run->add_option("command", r->command, "WORKER [ARGS...] after --")->required();
  run->footer(
      "Requests, in order, then shutdown: dataset_materializer materialize; implementation prepare,\n"
      "execute, reset; problem_evaluator evaluate. The first failed phase ends the requests; shutdown\n"
      "still runs when the worker is usable. One line per phase `PHASE ok|FAIL MS ms DETAIL`; exit 0\n"
      "when every phase succeeded, else 1 with the first failure on stderr (DOT_E_TIMEOUT for a\n"
      "deadline, DOT_E_PROTOCOL for the rest, the worker's failure code as the kind).\n"
      "Examples:\n"
      "  dot-core metewand run --role implementation --dataset-dir d --problem-contract-id c \\\n"
      "      --result-dir r -- ./my-worker\n"
      "  dot-core metewand run --role problem_evaluator --dataset-dir d --problem-contract-id c \\\n"
      "      --result-dir r --metrics-path m.json --evaluate-timeout 2 --json -- ./evaluator\n");
  run->callback([&ctx, r] { ctx.action = [r] { return run_session_command(*r); }; });
}

void add_conform_command(CLI::App* group, Context& ctx) {
  auto* conform = group->add_subcommand("conform", "Check a worker against the Metewand v1 protocol, case by case");
  auto c = std::make_shared<ConformOptions>();
  add_role_option(conform, c->role, "The role to check the worker in (default implementation)");
  add_seconds_option(conform, "--timeout", c->timeout_s, "Every phase's deadline in every case, seconds (default 5)",
                     kMinTimeoutS, kMaxTimeoutS);
  add_repeatable_option(conform, "--case", c->cases, "Run only this case (repeatable, one case per --case)");
  conform->add_flag("--list", c->list, "List the role's cases with what each checks; run nothing");
  conform->add_flag("--json", c->json, "One JSON document with every case");
  conform->add_option("command", c->command, "WORKER [ARGS...] after --");
  conform->footer(
      "Each case runs a fresh worker the way `metewand run` does (sealed and hashed, exact environment,\n"
      "its own process group, swept afterwards). One line per case, then `N passed, N failed`; exit 0\n"
      "only when every case passes, else 1 (DOT_E_PROTOCOL: N of M cases failed; first: ...).\n"
      "Examples:\n"
      "  dot-core metewand conform -- build/release/bin/metewand-example-worker\n"
      "  dot-core metewand conform --role problem_evaluator --timeout 2 --json -- /usr/bin/python3 worker.py\n"
      "  dot-core metewand conform --list --role dataset_materializer\n");
  set_conform_action(conform, ctx, c, &ConformOptions::command, "command (the worker command line after --)",
                     run_conform);
}

}  // namespace

void add_metewand_commands(CLI::App& app, Context& ctx) {
  auto* group = app.add_subcommand("metewand", "Metewand v1 worker protocol");
  group->require_subcommand(1);
  group->footer(
      "Examples:\n"
      "  dot-core metewand hello -- ./my-worker\n"
      "  dot-core metewand run --role dataset_materializer --source-dir src --output-dir out \\\n"
      "      --dataset-parameters '{\"rows\":100}' --dataset-seed 17 -- ./my-worker\n"
      "  dot-core metewand conform --role implementation -- /usr/bin/python3 worker.py\n"
      "Run `dot-core metewand COMMAND --help` for the options of a command.");
  add_hello_command(group, ctx);
  add_run_command(group, ctx);
  add_conform_command(group, ctx);
}

}  // namespace dot::cli
