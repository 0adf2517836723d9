// The core engine's commands: register, plan, apply, rollback, recover,
// retry-effects, discard, status, export, plan-id. Wiring only: the logic is
// in dot_core. JSON shapes are documented in docs/engine.md.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "armed_hooks.h"
#include "commands.h"
#include "dot/core/error_kinds.h"
#include "dot/store/error_kinds.h"

#include "dot/base/fd.h"
#include "dot/base/jcs.h"
#include "dot/base/sha256.h"
#include "dot/core/applier.h"
#include "dot/core/drift.h"
#include "dot/core/interrupt.h"
#include "dot/core/plan.h"
#include "dot/core/plan_document.h"
#include "dot/core/plan_v2.h"
#include "dot/core/planner.h"
#include "dot/core/recovery.h"
#include "dot/core/registry.h"
#include "dot/core/root.h"
#include "dot/core/status.h"
#include "engine_json.h"
#include "hints.h"
#include "json_writer.h"
#include "output.h"
#include "plan_views.h"
#include "progress_line.h"
#include "root_option.h"
#include "style.h"

namespace dot::cli {
namespace {

using core::Access;
using core::Root;

struct EngineOptions {
  std::string root;
  std::string id;
  std::string plugin;
  std::string assurance;
  std::string plugin_id;             // register --id
  std::string profile;               // register --profile
  std::vector<std::string> inputs;   // register --input
  std::vector<std::string> runtime;  // register --runtime
  std::vector<std::string> exclude;  // plan --exclude
  std::vector<std::string> paths;    // forget PATH...
  bool forget = false;               // unregister --forget
  std::string file;
  bool replace = false;
  bool allow_audit = false;
  bool require_sandbox = false;
  bool json = false;
  bool pager = false;
  bool verbose = false;
  bool stat = false;               // plan --stat
  bool name_status = false;        // plan --name-status
  bool full = false;               // plan --full
  bool quiet = false;              // plan/apply --quiet: no progress line
  std::string progress = "auto";   // plan/apply --progress
  bool detailed_exitcode = false;  // plan --detailed-exitcode
  bool exit_code = false;          // status --exit-code
};

// The progress line of a command: never with --json or --quiet.
ProgressWhen progress_for(const EngineOptions& o) {
  return o.json || o.quiet ? ProgressWhen::Never : progress_when(o.progress);
}

Result<Root> open_root(const EngineOptions& o, Access access) {
  DOT_ASSIGN_OR_RETURN(std::string dir, resolve_root(o.root));
  DOT_ASSIGN_OR_RETURN(core::TestHooks hooks, armed_test_hooks());
  return Root::open(dir, access, std::move(hooks), command_for);
}

// The documents of docs/engine.md, keys in sorted order as documented there.
// Both return success whatever the write does: the command's work (a sealed
// plan, an applied one) is done and its exit code reports that work.
int print_json(JsonWriter&& w) {
  (void)write_stdout(std::move(w).line());
  return kExitOk;
}
// A writer whose document goes to stdout as it is written (print_json
// writes the rest): a plan's grows with its paths and its diffs.
JsonWriter stdout_json() {
  return JsonWriter([](std::string_view text) { return write_stdout(text); });
}
int print_human(const std::string& text, Paint paint = Paint::None, bool page = false) {
  (void)print_styled(text, paint, page);
  return kExitOk;
}
// A command's result, rendered once per format: with --json by the record's
// one JSON writer (engine_json.h), else as its text for a person.
template <typename Record>
int print_record(bool json, const Record& record, void (*write)(JsonWriter&, const std::type_identity_t<Record>&),
                 std::string (*text)(const std::type_identity_t<Record>&)) {
  if (!json) return print_human(text(record));
  JsonWriter w = stdout_json();
  write(w, record);
  return print_json(std::move(w));
}

// The error of a command an InterruptGuard watched: after its DOT_E line, a
// command a signal stopped exits 128 + the signal (130 for SIGINT, 143 for
// SIGTERM), as a shell reports a process the signal killed, so scripts see
// the interruption; the state it left is what the engine promises
// (docs/spec/transactions.md, "Interruptions").
int report_interruptible(const Error& error, bool json, const core::InterruptGuard& interrupt) {
  int code = report(error, json);
  return interrupt.interrupted() ? 128 + interrupt.signal() : code;
}

// The first characters of a plan id for human output (shown(): an id read
// back from the store is whatever the row holds).
std::string short_id(std::string_view id) { return shown(id.substr(0, 12)); }

void add_json_flag(CLI::App* cmd, EngineOptions& o) { cmd->add_flag("--json", o.json, "Machine-readable output"); }

int print_recovery(const core::RecoveryReport& r, bool json, std::string_view nothing) {
  if (json) {
    JsonWriter w;
    write_recovery_report(w, r);
    return print_json(std::move(w));
  }
  std::string out;
  // The name is whatever the directory holds: shown(), like every such field.
  for (const auto& l : r.left_alone) out += fmt::format("left alone: {}: {}\n", shown(l.name), l.why);
  // "Nothing to recover" only when nothing is left either: what was left
  // alone is listed above, and said to remain.
  if (!r.changed() && r.left_alone.empty()) return print_human(fmt::format("{}\n", nothing));
  if (!r.changed())
    return print_human(fmt::format("{}nothing removed or rolled back; {} entr{} left alone (listed above)\n", out,
                                   r.left_alone.size(), r.left_alone.size() == 1 ? "y" : "ies"));
  for (const auto& t : r.transactions)
    out += fmt::format("{:<12}  {:<12} -> {:<12}  {}\n", t.plan_id.empty() ? "(proposal)" : short_id(t.plan_id),
                       store::state_name(t.from), store::state_name(t.to), t.action);
  if (r.temp_files_removed) out += fmt::format("removed {} leftover temp file(s)\n", r.temp_files_removed);
  for (const auto& s : r.stages)
    out +=
        fmt::format("removed leftover stage {} ({} entr{})\n", shown(s.name), s.entries, s.entries == 1 ? "y" : "ies");
  if (r.stages_removed) out += fmt::format("removed {} leftover stage folder(s)\n", r.stages_removed);
  return print_human(out);
}

// ---- register -------------------------------------------------------------
std::string registration_text(const core::Registration& r) {
  const core::Manifest& m = r.manifest;
  std::string out = fmt::format("{} plugin {} ({}, {} assurance)\nsha256 {}\n", r.replaced ? "replaced" : "registered",
                                shown(m.id), shown(m.profile), shown(m.assurance), shown(m.sha256));
  if (m.audit_consent) out += "consent recorded: every plan runs it uncontained, with your rights\n";
  for (const auto& dir : m.inputs) out += fmt::format("input  {}\n", shown(dir));
  if (m.interpreter) {
    out += fmt::format("interpreter {} (sha256 {})\n", shown(m.interpreter->path), shown(m.interpreter->sha256));
    for (const auto& dir : m.interpreter->runtime) out += fmt::format("runtime {} (read-only)\n", shown(dir));
  }
  return out;
}

int run_register(const EngineOptions& o) {
  auto assurance = core::assurance_from_name(o.assurance);
  if (!assurance.ok()) return report(assurance.error(), o.json);
  auto root = open_root(o, Access::Mutating);
  if (!root.ok()) return report(root.error(), o.json);
  core::RegisterRequest request;
  request.plugin_path = o.plugin;
  request.id = o.plugin_id;
  request.profile = o.profile;
  request.assurance = *assurance;
  request.inputs = o.inputs;
  request.runtime = o.runtime;
  request.replace = o.replace;
  request.allow_audit = o.allow_audit;
  auto reg = core::register_plugin(*root, request);
  if (!reg.ok()) return report(reg.error(), o.json);
  return print_record(o.json, *reg, write_registration, registration_text);
}

// ---- unregister / forget ------------------------------------------------------
// Releasing ownership never touches a file: the text says so, and what the
// next plan of the plugin does with a file it still proposes.
std::string released_text(const std::vector<store::PathOwner>& released) {
  std::string out;
  for (const auto& r : released)
    out += fmt::format("stopped managing {} (owned by {} since transaction {}); the file is left as it is\n",
                       shown(r.path), shown(r.plugin_id), r.txn);
  return out;
}

std::string forgotten_text(const std::vector<store::PathOwner>& released) {
  return released_text(released) +
         "a plugin that still proposes one takes it over again at its next plan: leave it out in the plugin's "
         "source (dot-mirror: .dotignore) or with `plan --exclude`\n";
}

std::string unregistered_text(const core::Unregistered& u) {
  return fmt::format("unregistered {}\n", shown(u.plugin_id)) + released_text(u.released);
}

int run_forget(const EngineOptions& o) {
  auto root = open_root(o, Access::Mutating);
  if (!root.ok()) return report(root.error(), o.json);
  std::vector<std::string> paths;
  for (const auto& typed : o.paths) {
    auto rel = path_in_root(root->layout().root, typed);
    if (!rel.ok()) return report(rel.error(), o.json);
    paths.push_back(std::move(*rel));
  }
  auto released = core::forget_paths(*root, paths);
  if (!released.ok()) return report(released.error(), o.json);
  return print_record(o.json, *released, write_forgotten, forgotten_text);
}

int run_unregister(const EngineOptions& o) {
  auto root = open_root(o, Access::Mutating);
  if (!root.ok()) return report(root.error(), o.json);
  auto done = core::unregister_plugin(*root, o.id, o.forget);
  if (!done.ok()) return report(done.error(), o.json);
  if (!done->copy_left.empty()) {
    const std::string line =
        fmt::format("warning: the pinned copy or the cache folder could not be removed ({})\n", shown(done->copy_left));
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
  return print_record(o.json, *done, write_unregistered, unregistered_text);
}

// ---- plan -----------------------------------------------------------------
// A dot.log message for a person: every field escaped on one line (the
// message is plugin-controlled text; its level and method are checked names).
std::string log_line(const store::LogRecord& l) {
  return fmt::format("log {} during {}: {}\n", shown(l.level), shown(l.method), shown(l.message));
}

// The targets of `planned` edited since the plan that last wrote them
// (drift): path -> that plan's id. A plan writing one of them reverts the
// edit and says so. Only the plan's own paths are observed again.
EditedTargets edited_targets(Root& root, const core::PlanOutcome& planned) {
  EditedTargets out;
  std::set<std::string, std::less<>> paths;
  for (const auto& slot : planned.slots) paths.insert(slot.name);
  // path_slots: one per sealed operation (none when nothing changes).
  for (std::size_t i = 0; i < planned.path_slots.size(); ++i) paths.insert(planned.plan_v2.operations[i].path);
  auto drift = core::find_drift(root, &paths);
  if (!drift.ok()) return out;  // only a label is lost; the plan stands
  for (auto& d : *drift) out.emplace(std::move(d.name), std::move(d.plan_id));
  return out;
}

// A version-1 plan for a person: its diffs.
std::string hello_plan_text(const core::PlanOutcome& planned, const EditedTargets& edited) {
  const core::Plan& plan = planned.plan;
  std::string out = fmt::format("sealed plan {}\nproposal    {}\n", planned.plan_id, plan.proposal_id);
  out += fmt::format("{} operation(s), {} effect(s): root-sync\n\n", plan.operations.size(), plan.effects->size());
  // Each line of a diff is the plugin's bytes: print_text shows every
  // control in them (ESC, CR, BS, C1...) as \xNN, line by line.
  for (const auto& slot : planned.slots) out += revert_line(edited, slot.name) + core::unified_diff(slot);
  return out;
}

// The plan is sealed (or, changing nothing, recorded as such) from here
// on: nothing below may report a failure for it (the output is JSON for
// any bytes the artifacts hold). Like `terraform plan`, a plan that changes
// nothing is a success: exit 0, "no changes", no plan id.
int print_plan(const EngineOptions& o, const core::PlanOutcome& planned, Root& root) {
  const bool general = planned.version == core::kPlanVersion2;
  if (o.json) {
    JsonWriter w = stdout_json();
    if (general)
      write_general_plan(w, planned);
    else
      write_hello_plan(w, planned);
    return print_json(std::move(w));
  }
  // The plugin's warnings (what it skipped, and why) are counted on every
  // plan and listed by --verbose, so that nothing is left out unsaid.
  const std::size_t warned = static_cast<std::size_t>(
      std::count_if(planned.logs.begin(), planned.logs.end(), [](const auto& l) { return l.level == "warning"; }));
  const std::string warnings =
      warned == 0 || o.verbose
          ? std::string()
          : fmt::format("the plugin sent {} warning(s), about entries it skipped and the like: `{}` shows them\n",
                        warned, command_for(root.layout().root, "plan --verbose"));
  if (planned.no_changes)
    return print_human(
        fmt::format("no changes: every target already holds what the plugin proposes\nproposal    {}\n{}",
                    general ? planned.plan_v2.proposal_id : planned.plan.proposal_id, warnings));
  // --stat and --name-status: a version-1 plan has few slots; its full text is shown.
  if (general && o.name_status) return print_human(plan_name_status_text(planned));
  if (general && o.stat) return print_human(plan_stat_text(planned));
  const std::string see_all = fmt::format("`{} {}` or `{}`", command_for(root.layout().root, "inspect show"),
                                          short_id(planned.plan_id), command_for(root.layout().root, "plan --full"));
  const EditedTargets edited = edited_targets(root, planned);
  std::string out = general ? general_plan_text(planned, edited, o.full, see_all) : hello_plan_text(planned, edited);
  if (!warnings.empty()) out += "\n" + warnings;
  out += fmt::format("\napply it with: {} {}\n", command_for(root.layout().root, "apply"), short_id(planned.plan_id));
  return print_human(out, Paint::Diff, o.pager);
}

core::PlanOptions plan_options(const EngineOptions& o, core::InterruptGuard& interrupt, ProgressLine* progress) {
  core::PlanOptions options;
  // No flag: what `register` recorded (planner.h); a flag overrides it.
  if (o.require_sandbox) options.consent = core::Assurance::Process;
  if (o.allow_audit) options.consent = core::Assurance::Audit;
  options.plugin_id = o.plugin_id;
  options.exclude = o.exclude;
  options.interrupt = &interrupt;
  if (progress)
    options.on_progress = [progress](const core::Progress& p) { progress->update(p.done, p.total, p.bytes); };
  // --verbose: each dot.log message on stderr as it arrives, escaped.
  if (o.verbose)
    options.on_log = [](const store::LogRecord& l) {
      const std::string line = log_line(l);
      std::fwrite(line.data(), 1, line.size(), stderr);
    };
  return options;
}

int run_plan(const EngineOptions& o) {
  auto root = open_root(o, Access::Mutating);
  if (!root.ok()) return report(root.error(), o.json);
  core::InterruptGuard interrupt;
  ProgressLine progress(progress_for(o), "plan", "targets observed");
  auto planned = core::make_plan(*root, plan_options(o, interrupt, &progress));
  progress.finish();
  if (!planned.ok()) return report_interruptible(planned.error(), o.json, interrupt);
  // The plan stands; a stage that could not be removed is only said (on
  // stderr: --json keeps stdout one object), and `recover` removes it.
  if (!planned->stage_left.empty()) {
    const std::string line = fmt::format("warning: the stage could not be removed ({}): `{}` removes it\n",
                                         shown(planned->stage_left), command_for(root->layout().root, "recover"));
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
  const int printed = print_plan(o, *planned, *root);
  // Terraform's rule for scripts: 0 no changes, 1 an error, 2 a sealed plan
  // with changes.
  if (o.detailed_exitcode && !planned->no_changes) return kExitChanges;
  return printed;
}

// ---- apply / rollback / discard -------------------------------------------
std::string applied_text(const core::ApplyOutcome& a) {
  return fmt::format("applied {}: {} target(s) committed, root-sync done ({})\n", short_id(a.plan_id), a.slots,
                     store::state_name(a.state));
}

std::string rolled_back_text(const core::RecoveredTxn& r) {
  return fmt::format("rolled back {}: every target restored ({} -> {})\n", short_id(r.plan_id),
                     store::state_name(r.from), store::state_name(r.to));
}

std::string discarded_text(const std::string& plan_id) { return fmt::format("discarded {}\n", short_id(plan_id)); }

int run_apply(const EngineOptions& o) {
  auto root = open_root(o, Access::Mutating);
  if (!root.ok()) return report(root.error(), o.json);
  // No id: the one sealed plan waiting, named before it is applied.
  std::string id = o.id;
  std::string chosen;
  if (id.empty()) {
    auto waiting = core::only_sealed_plan(*root);
    if (!waiting.ok()) return report(waiting.error(), o.json);
    id = waiting->plan_id;
    chosen =
        fmt::format("applying {}, the one sealed plan waiting (from {})\n", short_id(id), shown(waiting->plugin_id));
  }
  core::InterruptGuard interrupt;
  ProgressLine progress(progress_for(o), "apply", "files written");
  auto applied = core::apply_plan(*root, id, &interrupt,
                                  [&progress](const core::Progress& p) { progress.update(p.done, p.total, p.bytes); });
  progress.finish();
  if (!applied.ok()) return report_interruptible(applied.error(), o.json, interrupt);
  if (!o.json && !chosen.empty()) return print_human(chosen + applied_text(*applied));
  return print_record(o.json, *applied, write_apply_outcome, applied_text);
}

// A command whose work is one core call on the root: open it for changes,
// call, then print what the call returns.
template <typename Act, typename Print>
int run_on_root(const EngineOptions& o, Act&& act, Print&& print) {
  auto root = open_root(o, Access::Mutating);
  if (!root.ok()) return report(root.error(), o.json);
  auto done = act(*root);
  if (!done.ok()) return report(done.error(), o.json);
  return print(*done);
}

int run_rollback(const EngineOptions& o) {
  return run_on_root(
      o, [&](Root& root) { return core::rollback_plan(root, o.id); },
      [&](const core::RecoveredTxn& r) { return print_record(o.json, r, write_recovered_txn, rolled_back_text); });
}

int run_discard(const EngineOptions& o) {
  return run_on_root(
      o, [&](Root& root) { return core::discard_plan(root, o.id); },
      [&](const std::string& id) { return print_record(o.json, id, write_discarded, discarded_text); });
}

int run_recover(const EngineOptions& o) {
  return run_on_root(
      o, [](Root& root) { return core::recover(root); },
      [&](const core::RecoveryReport& r) { return print_recovery(r, o.json, "nothing to recover"); });
}

int run_retry_effects(const EngineOptions& o) {
  return run_on_root(
      o, [](Root& root) { return core::retry_effects(root); },
      [&](const core::RecoveryReport& r) { return print_recovery(r, o.json, "no pending effects"); });
}

// ---- status / export / plan-id ---------------------------------------------
// The command that finishes a transaction in `state`: only a COMMITTED
// transaction has effects left to retry; everything else is `recover`.
std::string_view finishing_command(store::State state) noexcept {
  return state == store::State::Committed ? "retry-effects" : "recover";
}

// A transaction as one short word: its plan id, else its proposal id, else its row.
std::string txn_label(const store::TxnSummary& t) {
  const std::string& id = t.plan_id.empty() ? t.proposal_id : t.plan_id;
  return id.empty() ? fmt::format("{}{}", store::kRowIdPrefix, t.id) : short_id(id);
}

int print_status_json(const core::Root& root, const core::StatusView& v) {
  JsonWriter w;
  write_status(w, root.layout().root, root.root_id(), v);
  return print_json(std::move(w));
}

std::string status_plugins_text(const core::Root& root, const std::vector<core::ListedPlugin>& plugins) {
  if (plugins.empty()) return fmt::format("plugin   none registered (run {})\n", core::register_command(root));
  std::string out;
  for (const auto& p : plugins) {
    if (!p.manifest) {
      out += fmt::format("plugin   {} (its stored manifest does not decode)\n", shown(p.record.plugin_id));
      continue;
    }
    const core::Manifest& m = *p.manifest;
    out +=
        fmt::format("plugin   {} ({}, {} assurance{}) sha256 {}\n", shown(m.id), shown(m.profile), shown(m.assurance),
                    m.audit_consent ? ", consent to run uncontained recorded" : "", shown(m.sha256));
    for (const auto& dir : m.inputs) out += fmt::format("  input  {}\n", shown(dir));
  }
  return out;
}

int print_status_text(const core::Root& root, const core::StatusView& v) {
  std::string out = fmt::format("root     {}\nroot id  {}\n", shown(root.layout().root), shown(root.root_id()));
  out += status_plugins_text(root, v.plugins);
  out += fmt::format("transactions  {}\n", v.transactions);
  if (v.unfinished.empty()) out += "unfinished    none\n";
  for (const auto& t : v.unfinished)
    out += fmt::format("unfinished    {}  {}  from {}  (run {}{})\n", txn_label(t), store::display_status(t),
                       shown(t.plugin_id), command_for(root.layout().root, finishing_command(t.state)),
                       t.state == store::State::Proposing ? "; or a plan is running now" : "");
  out += fmt::format("sealed, waiting for apply  {}\n", v.sealed.size());
  for (const auto& t : v.sealed) out += fmt::format("  {}  from {}\n", shown(t.plan_id), shown(t.plugin_id));
  if (v.newest)
    out += fmt::format("last          {}  {}  from {}\n", txn_label(*v.newest), store::display_status(*v.newest),
                       shown(v.newest->plugin_id));
  // Targets that no longer hold what the last applied plan wrote.
  if (v.drift.empty()) {
    out += "drift         none\n";
  } else {
    out += fmt::format("drift         {} target(s) differ from what the last applied plan wrote\n", v.drift.size());
    for (const auto& d : v.drift)
      out += fmt::format("  {}  {} (plan {})\n", shown(d.name), shown(d.found), short_id(d.plan_id));
  }
  return print_human(out, Paint::States);
}

int run_status(const EngineOptions& o) {
  auto root = open_root(o, Access::ReadOnly);
  if (!root.ok()) return report(root.error(), o.json);
  auto view = core::read_status(*root);
  if (!view.ok()) return report(view.error(), o.json);
  const int printed = o.json ? print_status_json(*root, *view) : print_status_text(*root, *view);
  // --exit-code, like `git diff --exit-code`: 1 when a target drifted.
  if (o.exit_code && !view->drift.empty()) return kExitDrift;
  return printed;
}

int run_export(const EngineOptions& o) {
  auto root = open_root(o, Access::ReadOnly);
  if (!root.ok()) return report(root.error(), true);
  auto txn = root->store().find(o.id);
  if (!txn.ok()) return report(txn.error(), true);
  auto detail = root->store().detail(*txn);
  if (!detail.ok()) return report(detail.error(), true);
  if (detail->canonical_plan.empty())
    return report(make_error(store::ErrorKind::NotSealed,
                             fmt::format("{} has no sealed plan ({})", o.id, store::state_name(detail->summary.state))),
                  true);
  // The stored bytes exactly as hashed; handed out only when they hash to
  // their plan_id and pass every check a load makes.
  if (sha256_hex(detail->canonical_plan) != detail->summary.plan_id)
    return report(make_error(core::ErrorKind::Tampered,
                             fmt::format("stored plan {} does not hash to its plan_id", detail->summary.plan_id)),
                  true);
  store::SealedPlan sealed;
  sealed.id = *txn;
  sealed.state = detail->summary.state;
  sealed.plan_id = detail->summary.plan_id;
  sealed.proposal_id = detail->summary.proposal_id;
  sealed.canonical_plan = detail->canonical_plan;
  sealed.effect_count = detail->summary.effect_count;
  sealed.operations = detail->operations;
  sealed.streamed = detail->streamed;
  sealed.proposal_document = detail->proposal_document;
  sealed.pruned = detail->summary.pruned;
  // The proposal travels with a version-2 plan; `store prune` dropped it.
  if (detail->streamed && detail->proposal_document.empty())
    return report(make_error(store::ErrorKind::Pruned,
                             fmt::format("{} was pruned (store prune): its proposal document, which a version-2 plan "
                                         "is exported with, is no longer kept",
                                         o.id)),
                  true);
  if (auto verified = core::judge_sealed_plan(sealed, root->root_id()); !verified.ok())
    return report(verified.error(), true);
  JsonWriter w;
  w.begin_object().key("plan").raw(detail->canonical_plan).key("plan_id").string(detail->summary.plan_id);
  // A version-2 plan's proposal_id is checked against its proposal document
  // (plan_document.h): it travels with the plan.
  if (detail->streamed) w.key("proposal").raw(detail->proposal_document);
  w.end_object();
  return print_json(std::move(w));
}

int run_plan_id(const EngineOptions& o) {
  auto text = read_file(o.file, core::kMaxPlanDocumentBytes);
  if (!text.ok()) return report(text.error(), o.json);
  auto doc = core::decode_plan_document(*text);
  if (!doc.ok()) return report(doc.error(), o.json);
  if (o.json) {
    JsonWriter w;
    write_plan_document_ids(w, *doc);
    return print_json(std::move(w));
  }
  return print_human(doc->plan_id + "\n");
}

void add_register_command(CLI::App& app, Context& ctx, const std::shared_ptr<EngineOptions>& o) {
  auto* reg = app.add_subcommand("register", "Pin a copy of a plugin executable under its plugin id");
  add_root_option(reg, o->root);
  reg->add_option("--plugin", o->plugin,
                  "Absolute path of the plugin (an ELF executable, or a #! script whose interpreter is one)")
      ->required();
  reg->add_option("--assurance", o->assurance, "audit | process")
      ->required()
      ->check(CLI::IsMember({"audit", "process"}));
  reg->add_option("--id", o->plugin_id, "Plugin id, like org.example.tool (default org.dot.hello); unique in the root");
  reg->add_option("--profile", o->profile,
                  "org.dot.dpp/v1 | org.dot.hello/v1 (default org.dot.hello/v1, only for org.dot.hello)")
      ->check(CLI::IsMember({"org.dot.dpp/v1", "org.dot.hello/v1"}));
  reg->add_option("--input", o->inputs,
                  "A directory the plugin may read (absolute, no symlink on the way; repeatable, at most 16, "
                  "kept in this order; org.dot.dpp/v1 only)");
  reg->add_option("--runtime", o->runtime,
                  "A folder a #! script's interpreter may read under process assurance, besides those derived from "
                  "it (absolute, no symlink on the way; repeatable, at most 16)");
  reg->add_flag("--replace", o->replace,
                "Swap the plugin registered under this id (only when no transaction is unfinished)");
  reg->add_flag("--allow-audit-plugin", o->allow_audit,
                "Consent once to run this audit-assurance plugin uncontained: every plan then runs it without a flag "
                "(recorded; status shows it)");
  add_json_flag(reg, *o);
  // The example names the reference plugin installed with this dot-core,
  // when there is one. (The callback adds to the footer text, which CLI11
  // copies from the parent: it is cleared first.)
  reg->footer(std::string())->footer([] {
    return "Without --id and --profile: the hello plugin (--id org.dot.hello --profile org.dot.hello/v1).\n"
           "Examples:\n  dot-core register --root ~/managed --plugin " +
           shown(reference_plugin_path().value_or("/abs/path/to/plugin")) +
           " --assurance audit --allow-audit-plugin\n"
           "  dot-core register --root ~/managed --plugin /abs/path/to/dot-mirror --id org.dot.mirror \\\n"
           "      --profile org.dot.dpp/v1 --assurance process --input /home/me/dotfiles";
  });
  reg->callback([&ctx, o] { ctx.action = [o] { return run_register(*o); }; });
}

// --progress and --quiet of plan and apply.
void add_progress_options(CLI::App* cmd, EngineOptions& o) {
  cmd->add_option("--progress", o.progress,
                  "auto (a progress line on a terminal after about a second), always, or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->add_flag("--quiet", o.quiet, "No progress line");
}

void add_plan_command(CLI::App& app, Context& ctx, const std::shared_ptr<EngineOptions>& o) {
  auto* plan = app.add_subcommand("plan", "Run the plugin, verify what it staged, seal and store the plan");
  add_root_option(plan, o->root);
  auto* audit = plan->add_flag("--allow-audit-plugin", o->allow_audit,
                               "Consent to run an audit-assurance plugin uncontained, this time (overrides register)");
  auto* sandbox = plan->add_flag("--require-process-sandbox", o->require_sandbox,
                                 "Run the plugin only under Linux process containment (fails closed; overrides "
                                 "register)");
  audit->excludes(sandbox);
  plan->add_flag(
      "--detailed-exitcode", o->detailed_exitcode,
      "Exit 0 when nothing changes, 2 when a plan with changes was sealed, 1 on any error (Terraform's rule)");
  plan->add_option("--plugin", o->plugin_id, "The registered plugin id to run (needed when the root has several)");
  add_json_flag(plan, *o);
  plan->add_flag("--pager", o->pager, "Show the plan and its diff through $PAGER (default less -R) on a terminal");
  plan->add_flag("--verbose", o->verbose, "Show the plugin's dot.log messages on stderr as they arrive");
  auto* stat = plan->add_flag("--stat", o->stat, "Show per-path counts of added and removed lines (git diff --stat)");
  auto* names = plan->add_flag("--name-status", o->name_status, "Show one line per path: A (create), M, D (remove)");
  stat->excludes(names);
  plan->add_flag(
      "--full", o->full,
      fmt::format("Show every operation's diff (by default the output stops after {} lines)", kPlanShownLines));
  add_progress_options(plan, *o);
  plan->add_option("--exclude", o->exclude,
                   "Leave paths matching GLOB out of the plan (repeatable; gitignore-style: *, **, ?, a trailing / "
                   "for folders, a leading / anchors at the root); recorded in the plan")
      ->type_name("GLOB");
  plan->footer(
      "Without a flag the plugin runs as registered: contained for process assurance; for audit assurance only\n"
      "with the consent given at `register --allow-audit-plugin`.\nExamples:\n"
      "  dot-core plan\n"
      "  dot-core plan --root ~/managed --plugin org.dot.mirror\n"
      "  dot-core plan --exclude '*.swp' --exclude /.cache/\n"
      "  dot-core plan --stat\n"
      "  dot-core plan --name-status | grep '^D'\n"
      "  dot-core plan --detailed-exitcode --json > plan.json; [ $? -eq 2 ] && dot-core apply");
  plan->callback([&ctx, o] { ctx.action = [o] { return run_plan(*o); }; });
}

// A command on a root that takes at most an ID: its options are --root, the
// ID when it has one, --json when it has it.
struct RootCommand {
  const char* name;
  const char* description;
  const char* id_help;  // nullptr: no ID argument
  bool id_optional;     // apply: the one sealed plan waiting when left out
  bool json;
  const char* footer;
  int (*run)(const EngineOptions&);
};

// In the order `dot-core --help` lists them, after register and plan.
constexpr RootCommand kRootCommands[] = {
    {"apply", "Apply a sealed plan atomically, then run its root-sync effect",
     "Plan id or a unique prefix of at least 4 hex characters (default: the one sealed plan waiting)", true, true,
     "Without ID: the one sealed plan waiting (several: they are listed and nothing is applied).\nExamples:\n"
     "  dot-core apply\n  dot-core apply --root ~/managed 3f2a",
     run_apply},
    {"status", "Show the root, its plugins, unfinished transactions and drifted targets (read-only)", nullptr, false,
     true,
     "With --exit-code it exits 1 when a target drifted.\nExamples:\n  dot-core status\n"
     "  dot-core status --root ~/managed --json",
     run_status},
    {"rollback", "Undo the newest applied transaction", "Plan id or unique prefix (at least 4 hex characters)", false,
     true, "Every target must still equal what the plan wrote.\nExample:\n  dot-core rollback --root ~/managed 3f2a",
     run_rollback},
    {"recover", "Finish or roll back an interrupted transaction (never runs the plugin)", nullptr, false, true,
     "Example:\n  dot-core recover --root ~/managed", run_recover},
    {"retry-effects", "Resume the post-commit effects of a COMMITTED transaction", nullptr, false, true,
     "Example:\n  dot-core retry-effects --root ~/managed", run_retry_effects},
    {"discard", "Discard a sealed plan you will not apply", "Plan id or unique prefix (at least 4 hex characters)",
     false, true, "Example:\n  dot-core discard --root ~/managed 3f2a", run_discard},
    {"export", "Print the sealed plan document {plan, plan_id} (canonical JSON)",
     "Plan id or unique prefix (at least 4 hex characters)", false, false,
     "Example:\n  dot-core export --root ~/managed 3f2a > plan.json && dot-core plan-id plan.json", run_export},
};

void add_root_command(CLI::App& app, Context& ctx, const std::shared_ptr<EngineOptions>& o, const RootCommand& c) {
  auto* cmd = app.add_subcommand(c.name, c.description);
  add_root_option(cmd, o->root);
  if (c.id_help) {
    auto* id = cmd->add_option("ID", o->id, c.id_help);
    if (!c.id_optional) id->required();
  }
  if (c.json) add_json_flag(cmd, *o);
  if (c.run == run_apply) add_progress_options(cmd, *o);
  if (c.run == run_status)
    cmd->add_flag("--exit-code", o->exit_code, "Exit 1 when a target drifted from what the last applied plan wrote");
  cmd->footer(c.footer);
  auto* run = c.run;
  cmd->callback([&ctx, o, run] { ctx.action = [o, run] { return run(*o); }; });
}

void add_release_commands(CLI::App& app, Context& ctx, const std::shared_ptr<EngineOptions>& o) {
  auto* unreg = app.add_subcommand("unregister", "Remove a plugin from the root (its files stay as they are)");
  add_root_option(unreg, o->root);
  unreg->add_option("ID", o->id, "The registered plugin id")->required();
  unreg->add_flag("--forget", o->forget,
                  "Also stop managing every path the plugin manages (refused without it while there are any); "
                  "the files stay as they are");
  add_json_flag(unreg, *o);
  unreg->footer(
      "Refused while a plan of the plugin is sealed (apply or discard it) or in flight (recover).\nExamples:\n"
      "  dot-core unregister org.example.tool\n"
      "  dot-core unregister --forget org.dot.mirror");
  unreg->callback([&ctx, o] { ctx.action = [o] { return run_unregister(*o); }; });

  auto* forget = app.add_subcommand("forget", "Stop managing paths; their files stay as they are");
  add_root_option(forget, o->root);
  forget->add_option("PATH", o->paths, "A managed path (relative to the current directory, or absolute)")->required();
  add_json_flag(forget, *o);
  forget->footer(
      "All or nothing: a path no plugin manages is an error and nothing is forgotten.\nExamples:\n"
      "  dot-core forget ~/.vimrc\n"
      "  cd ~/.config && dot-core forget git/config");
  forget->callback([&ctx, o] { ctx.action = [o] { return run_forget(*o); }; });
}

void add_plan_id_command(CLI::App& app, Context& ctx, const std::shared_ptr<EngineOptions>& o) {
  auto* pid = app.add_subcommand("plan-id", "Re-hash a plan document and print its plan_id");
  pid->add_option("FILE", o->file, "A sealed plan document {plan, plan_id} or a bare plan object ('-' for stdin)")
      ->required();
  add_json_flag(pid, *o);
  pid->footer(
      "A claimed plan_id or proposal_id that does not match is DOT_E_VALIDATION.\nExample:\n"
      "  dot-core plan-id plan.json");
  pid->callback([&ctx, o] { ctx.action = [o] { return run_plan_id(*o); }; });
}

}  // namespace

// `store check` judges every stored plan with the check every load makes.
void add_store_commands(CLI::App& app, Context& ctx) { add_store_group(app, ctx, core::judge_sealed_plan); }

void add_engine_commands(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<EngineOptions>();
  add_register_command(app, ctx, o);
  add_plan_command(app, ctx, o);
  for (const RootCommand& c : kRootCommands) add_root_command(app, ctx, o, c);
  add_release_commands(app, ctx, o);
  add_plan_id_command(app, ctx, o);
}

}  // namespace dot::cli
