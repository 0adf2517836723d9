// The core engine's commands: register, plan, apply, rollback, recover,
// retry-effects, discard, status, export, plan-id. Wiring only: the logic is
// in dot_core. JSON shapes are documented in docs/engine.md.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "armed_hooks.h"
#include "commands.h"

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
#include "json_writer.h"
#include "output.h"
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
  std::string file;
  bool replace = false;
  bool allow_audit = false;
  bool require_sandbox = false;
  bool json = false;
  bool pager = false;
  bool verbose = false;
};

Result<Root> open_root(const EngineOptions& o, Access access) {
  DOT_ASSIGN_OR_RETURN(std::string dir, resolve_root(o.root));
  DOT_ASSIGN_OR_RETURN(core::TestHooks hooks, armed_test_hooks());
  return Root::open(dir, access, std::move(hooks));
}

// The documents of docs/engine.md, keys in sorted order as documented there.
// Both return success whatever the write does: the command's work (a sealed
// plan, an applied one) is done and its exit code reports that work.
int print_json(JsonWriter&& w) {
  (void)write_stdout(std::move(w).line());
  return kExitOk;
}
int print_human(const std::string& text, Paint paint = Paint::None, bool page = false) {
  (void)print_styled(text, paint, page);
  return kExitOk;
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

// A snapshot as the plan holds it (core's one rendering of it: hex digests
// and numbers only, so its canonical encoding cannot fail).
void snapshot_json(JsonWriter& w, const core::Snapshot& s) {
  auto bytes = jcs::encode(core::to_node(s), jcs::Profile::Rfc8785);
  if (bytes.ok())
    w.raw(*bytes);
  else
    w.null();
}

// The first characters of a plan id for human output (shown(): an id read
// back from the store is whatever the row holds).
std::string short_id(std::string_view id) { return shown(id.substr(0, 12)); }

void add_json_flag(CLI::App* cmd, EngineOptions& o) { cmd->add_flag("--json", o.json, "Machine-readable output"); }

void recovered_json(JsonWriter& w, const core::RecoveredTxn& t) {
  w.begin_object();
  w.key("action").string(t.action);
  w.key("from").string(store::state_name(t.from));
  w.key("plan_id").string_or_null(t.plan_id);
  w.key("to").string(store::state_name(t.to));
  w.end_object();
}

int print_recovery(const core::RecoveryReport& r, bool json, std::string_view nothing) {
  if (json) {
    JsonWriter w;
    w.begin_object();
    w.key("changed").boolean(r.changed());
    w.key("left_alone").begin_array();
    for (const auto& l : r.left_alone) {
      w.begin_object();
      w.key("name").string(l.name);
      w.key("why").string(l.why);
      w.end_object();
    }
    w.end_array();
    w.key("stages").begin_array();
    for (const auto& s : r.stages) {
      w.begin_object();
      w.key("entries").number(s.entries);
      w.key("name").string(s.name);
      w.end_object();
    }
    w.end_array();
    w.key("stages_removed").number(r.stages_removed);
    w.key("temp_files_removed").number(r.temp_files_removed);
    w.key("transactions").begin_array();
    for (const auto& t : r.transactions) recovered_json(w, t);
    w.end_array();
    w.end_object();
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
    out += fmt::format("removed leftover stage {} ({} entr{})\n", shown(s.name), s.entries, s.entries == 1 ? "y" : "ies");
  if (r.stages_removed) out += fmt::format("removed {} leftover stage folder(s)\n", r.stages_removed);
  return print_human(out);
}

// ---- register -------------------------------------------------------------
// The manifest keys `register --json` and `status --json` share, in
// canonical order up to "profile" (each caller adds what follows).
void manifest_fields(JsonWriter& w, const core::Manifest& m) {
  w.key("assurance").string(m.assurance);
  w.key("id").string(m.id);
  w.key("inputs").begin_array();
  for (const auto& dir : m.inputs) w.string(dir);
  w.end_array();
  if (m.interpreter) {  // an interpreted plugin only
    w.key("interpreter").begin_object();
    w.key("options").begin_array();
    for (const auto& opt : m.interpreter->options) w.string(opt);
    w.end_array();
    w.key("path").string(m.interpreter->path);
    w.key("runtime").begin_array();
    for (const auto& dir : m.interpreter->runtime) w.string(dir);
    w.end_array();
    w.key("sha256").string(m.interpreter->sha256);
    w.end_object();
  }
  w.key("profile").string(m.profile);
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
  request.replace = o.replace;
  auto reg = core::register_plugin(*root, request);
  if (!reg.ok()) return report(reg.error(), o.json);
  const core::Manifest& m = reg->manifest;
  if (o.json) {
    JsonWriter w;
    w.begin_object();
    manifest_fields(w, m);
    w.key("protocol").number(m.protocol);
    w.key("replaced").boolean(reg->replaced);
    w.key("sha256").string(m.sha256);
    w.end_object();
    return print_json(std::move(w));
  }
  std::string out = fmt::format("{} plugin {} ({}, {} assurance)\nsha256 {}\n", reg->replaced ? "replaced" : "registered",
                                shown(m.id), shown(m.profile), shown(m.assurance), shown(m.sha256));
  for (const auto& dir : m.inputs) out += fmt::format("input  {}\n", shown(dir));
  if (m.interpreter) {
    out += fmt::format("interpreter {} (sha256 {})\n", shown(m.interpreter->path), shown(m.interpreter->sha256));
    for (const auto& dir : m.interpreter->runtime) out += fmt::format("runtime {} (read-only)\n", shown(dir));
  }
  return print_human(out);
}

// ---- plan -----------------------------------------------------------------
// A dot.log message for a person: every field escaped on one line (the
// message is plugin-controlled text; its level and method are checked names).
std::string log_line(const store::LogRecord& l) {
  return fmt::format("log {} during {}: {}\n", shown(l.level), shown(l.method), shown(l.message));
}

void logs_json(JsonWriter& w, const std::vector<store::LogRecord>& logs) {
  w.key("logs").begin_array();
  for (const auto& l : logs) {
    w.begin_object();
    w.key("level").string(l.level);
    w.key("message").string(l.message);
    w.key("method").string(l.method);
    w.end_object();
  }
  w.end_array();
}

// Text a unified diff can show: both sides kept (small), valid UTF-8, no NUL.
bool diffable(const core::PathSlot& s) {
  auto text = [](const std::optional<std::string>& c) {
    return c && utf8_valid_prefix(*c) == c->size() && c->find('\0') == std::string::npos;
  };
  const bool before_ok = !s.before.exists || text(s.before_content);
  return s.action == core::Action::Write && before_ok && text(s.after_content);
}

std::string mode_text(std::uint64_t mode) { return fmt::format("{:04o}", mode); }

// One operation of a version-2 plan for a person: a line saying what happens
// to the path (create, change, mode, remove), then a unified diff for text
// or a one-line summary for a binary or large file.
std::string path_slot_text(const core::PathSlot& s) {
  const std::string path = shown(s.path);
  if (s.action == core::Action::Remove)
    return fmt::format("remove {} ({} bytes, mode {})\n", path, s.before_size, mode_text(s.before.mode));
  std::string out;
  const std::string modes = s.before.mode == s.after.mode
                                ? mode_text(s.after.mode)
                                : fmt::format("{} -> {}", mode_text(s.before.mode), mode_text(s.after.mode));
  if (!s.before.exists)
    out += fmt::format("create {} (mode {}, {} bytes)\n", path, mode_text(s.after.mode), s.after_size);
  else if (s.before.sha256 != s.after.sha256)
    out += fmt::format("change {} (mode {}, {} -> {} bytes)\n", path, modes, s.before_size, s.after_size);
  else
    out += fmt::format("mode {} {}\n", path, modes);
  if (s.before.exists && s.before.sha256 == s.after.sha256) return out;
  if (diffable(s)) {
    out += core::unified_diff(core::PlannedSlot{s.path, s.before_content.value_or(""), *s.after_content});
    return out;
  }
  out += fmt::format("binary or large {}: {} -> {} bytes, sha256 {} -> {}\n", path,
                     s.before.exists ? std::to_string(s.before_size) : std::string("(absent)"), s.after_size,
                     s.before.exists ? s.before.sha256.substr(0, 12) : std::string("-"), s.after.sha256.substr(0, 12));
  return out;
}

int print_general_plan(const EngineOptions& o, const core::PlanOutcome& planned, const Root& root) {
  const core::PlanV2& plan = planned.plan_v2;
  if (o.json) {
    JsonWriter w;
    w.begin_object();
    w.key("directories").begin_array();
    for (const auto& d : plan.directories) {
      w.begin_object();
      w.key("mode").number(d.mode);
      w.key("path").string(d.path);
      w.end_object();
    }
    w.end_array();
    logs_json(w, planned.logs);
    w.key("operations").begin_array();
    for (const auto& s : planned.path_slots) {
      const bool text = diffable(s);
      w.begin_object();
      w.key("action").string(core::action_name(s.action));
      w.key("after");
      snapshot_json(w, s.after);
      w.key("before");
      snapshot_json(w, s.before);
      w.key("binary").boolean(s.action == core::Action::Write && !text);
      w.key("diff");
      if (text)
        w.string(core::unified_diff(core::PlannedSlot{s.path, s.before_content.value_or(""), *s.after_content}));
      else
        w.null();
      w.key("path").string(s.path);
      w.end_object();
    }
    w.end_array();
    w.key("plan_id").string_or_null(planned.plan_id);
    w.key("proposal_id").string(plan.proposal_id);
    w.key("state").string(planned.no_changes ? store::kNoChangesCode : "SEALED");
    w.key("version").number(plan.version);
    w.end_object();
    return print_json(std::move(w));
  }
  if (planned.no_changes)
    return print_human(fmt::format("no changes: every target already holds what the plugin proposes\nproposal    {}\n",
                                   plan.proposal_id));
  std::string out = fmt::format("sealed plan {} (version 2, plugin {})\nproposal    {}\n", planned.plan_id,
                                shown(plan.plugin_id), plan.proposal_id);
  out += fmt::format("{} operation(s), {} folder(s) to create, {} effect(s): root-sync\n\n", plan.operations.size(),
                     plan.directories.size(), plan.effects.size());
  for (const auto& d : plan.directories) out += fmt::format("create folder {}/ (mode {})\n", shown(d.path), mode_text(d.mode));
  for (const auto& s : planned.path_slots) out += path_slot_text(s);
  out += fmt::format("\napply it with: {} {}\n", store::command_for(root.layout(), "apply"), short_id(planned.plan_id));
  return print_human(out, Paint::Diff, o.pager);
}

int run_plan(const EngineOptions& o) {
  if (o.allow_audit == o.require_sandbox) {
    std::fputs("plan: exactly one of --allow-audit-plugin or --require-process-sandbox is required\n", stderr);
    return kExitUsage;
  }
  auto root = open_root(o, Access::Mutating);
  if (!root.ok()) return report(root.error(), o.json);
  core::InterruptGuard interrupt;
  core::PlanOptions options;
  options.consent = o.require_sandbox ? core::Assurance::Process : core::Assurance::Audit;
  options.plugin_id = o.plugin_id;
  options.interrupt = &interrupt;
  // --verbose: each dot.log message on stderr as it arrives, escaped.
  if (o.verbose)
    options.on_log = [](const store::LogRecord& l) {
      const std::string line = log_line(l);
      std::fwrite(line.data(), 1, line.size(), stderr);
    };
  auto planned = core::make_plan(*root, options);
  if (!planned.ok()) return report_interruptible(planned.error(), o.json, interrupt);
  // The plan stands; a stage that could not be removed is only said (on
  // stderr: --json keeps stdout one object), and `recover` removes it.
  if (!planned->stage_left.empty()) {
    const std::string line = fmt::format("warning: the stage could not be removed ({}): `{}` removes it\n",
                                         shown(planned->stage_left), store::command_for(root->layout(), "recover"));
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
  if (planned->version == core::kPlanVersion2) return print_general_plan(o, *planned, *root);
  const core::Plan& plan = planned->plan;
  // The plan is sealed (or, changing nothing, recorded as such) from here
  // on: nothing below may report a failure for it (the output is JSON for
  // any bytes the artifacts hold). Like `terraform plan`, a plan that changes
  // nothing is a success: exit 0, "no changes", no plan id.
  if (o.json) {
    JsonWriter w;
    w.begin_object();
    w.key("effects").begin_array();
    for (const auto& e : *plan.effects) {
      w.begin_object();
      w.key("failure_policy").string(e.failure_policy);
      w.key("kind").string(e.kind);
      w.key("target").string(e.target);
      w.end_object();
    }
    w.end_array();
    w.key("operations").begin_array();
    for (std::size_t i = 0; i < plan.operations.size(); ++i) {
      const auto& op = plan.operations[i];
      std::string diff = core::unified_diff(planned->slots[i]);
      // A diff of content that is not UTF-8 has no exact JSON string: it is
      // left out and flagged; the human output shows it byte for byte.
      bool binary = utf8_valid_prefix(diff) != diff.size();
      w.begin_object();
      w.key("after");
      snapshot_json(w, op.after);
      w.key("before");
      snapshot_json(w, op.before);
      w.key("binary").boolean(binary);
      w.key("diff");
      if (binary)
        w.null();
      else
        w.string(diff);
      w.key("name").string(op.name);
      w.key("slot").number(i);
      w.end_object();
    }
    w.end_array();
    w.key("plan_id").string_or_null(planned->plan_id);
    w.key("proposal_id").string(plan.proposal_id);
    w.key("state").string(planned->no_changes ? store::kNoChangesCode : "SEALED");
    w.end_object();
    return print_json(std::move(w));
  }
  if (planned->no_changes)
    return print_human(fmt::format("no changes: every target already holds what the plugin proposes\nproposal    {}\n",
                                   plan.proposal_id));
  std::string out = fmt::format("sealed plan {}\nproposal    {}\n", planned->plan_id, plan.proposal_id);
  out += fmt::format("{} operation(s), {} effect(s): root-sync\n\n", plan.operations.size(), plan.effects->size());
  // Each line of a diff is the plugin's bytes: print_text shows every
  // control in them (ESC, CR, BS, C1...) as \xNN, line by line.
  for (const auto& slot : planned->slots) out += core::unified_diff(slot);
  out += fmt::format("\napply it with: {} {}\n", store::command_for(root->layout(), "apply"), short_id(planned->plan_id));
  return print_human(out, Paint::Diff, o.pager);
}

// ---- apply / rollback / discard -------------------------------------------
int run_apply(const EngineOptions& o) {
  auto root = open_root(o, Access::Mutating);
  if (!root.ok()) return report(root.error(), o.json);
  core::InterruptGuard interrupt;
  auto applied = core::apply_plan(*root, o.id, &interrupt);
  if (!applied.ok()) return report_interruptible(applied.error(), o.json, interrupt);
  if (o.json) {
    JsonWriter w;
    w.begin_object();
    w.key("operations").number(applied->slots);
    w.key("plan_id").string(applied->plan_id);
    w.key("state").string(store::state_name(applied->state));
    w.end_object();
    return print_json(std::move(w));
  }
  return print_human(fmt::format("applied {}: {} target(s) committed, root-sync done ({})\n", short_id(applied->plan_id),
                                 applied->slots, store::state_name(applied->state)));
}

int run_rollback(const EngineOptions& o) {
  auto root = open_root(o, Access::Mutating);
  if (!root.ok()) return report(root.error(), o.json);
  auto r = core::rollback_plan(*root, o.id);
  if (!r.ok()) return report(r.error(), o.json);
  if (o.json) {
    JsonWriter w;
    recovered_json(w, *r);
    return print_json(std::move(w));
  }
  return print_human(fmt::format("rolled back {}: every target restored ({} -> {})\n", short_id(r->plan_id),
                                 store::state_name(r->from), store::state_name(r->to)));
}

int run_discard(const EngineOptions& o) {
  auto root = open_root(o, Access::Mutating);
  if (!root.ok()) return report(root.error(), o.json);
  auto r = core::discard_plan(*root, o.id);
  if (!r.ok()) return report(r.error(), o.json);
  if (o.json) {
    JsonWriter w;
    w.begin_object().key("plan_id").string(*r).key("state").string("DISCARDED").end_object();
    return print_json(std::move(w));
  }
  return print_human(fmt::format("discarded {}\n", short_id(*r)));
}

int run_recover(const EngineOptions& o) {
  auto root = open_root(o, Access::Mutating);
  if (!root.ok()) return report(root.error(), o.json);
  auto r = core::recover(*root);
  if (!r.ok()) return report(r.error(), o.json);
  return print_recovery(*r, o.json, "nothing to recover");
}

int run_retry_effects(const EngineOptions& o) {
  auto root = open_root(o, Access::Mutating);
  if (!root.ok()) return report(root.error(), o.json);
  auto r = core::retry_effects(*root);
  if (!r.ok()) return report(r.error(), o.json);
  return print_recovery(*r, o.json, "no pending effects");
}

// ---- status / export / plan-id ---------------------------------------------
// A transaction as one short word: its plan id, else its proposal id, else its row.
std::string txn_label(const store::TxnSummary& t) {
  const std::string& id = t.plan_id.empty() ? t.proposal_id : t.plan_id;
  return id.empty() ? fmt::format("{}{}", store::kRowIdPrefix, t.id) : short_id(id);
}

// The JSON records of `status --json`, one writer each.
void write_manifest(JsonWriter& w, const core::ListedPlugin& p) {
  if (!p.manifest) {
    w.null();
    return;
  }
  w.begin_object();
  manifest_fields(w, *p.manifest);
  w.key("sha256").string(p.manifest->sha256);
  w.end_object();
}

void write_drift(JsonWriter& w, const core::Drift& d) {
  w.begin_object();
  w.key("name").string(d.name);
  w.key("plan_id").string(d.plan_id);
  w.key("reason").string(core::drift_reason_name(d.reason));
  w.end_object();
}

// A transaction by its ids, its plugin and its status; `state` adds the
// stored state beside the status shown.
void write_txn(JsonWriter& w, const store::TxnSummary& t, bool state) {
  w.begin_object();
  w.key("plan_id").string_or_null(t.plan_id);
  w.key("plugin_id").string(t.plugin_id);
  w.key("proposal_id").string_or_null(t.proposal_id);
  if (state) w.key("state").string(store::state_name(t.state));
  w.key("status").string(store::display_status(t));
  w.end_object();
}

int print_status_json(const core::Root& root, const core::StatusView& v) {
  JsonWriter w;
  w.begin_object();
  w.key("drift").begin_array();
  for (const auto& d : v.drift) write_drift(w, d);
  w.end_array();
  w.key("last");
  if (v.newest)
    write_txn(w, *v.newest, false);
  else
    w.null();
  // "plugin": the root's only plugin (null with none or several);
  // "plugins": every one, by id.
  w.key("plugin");
  if (v.plugins.size() == 1)
    write_manifest(w, v.plugins.front());
  else
    w.null();
  w.key("plugins").begin_array();
  for (const auto& p : v.plugins) write_manifest(w, p);
  w.end_array();
  w.key("recovery_required").boolean(!v.unfinished.empty());
  w.key("root").string(root.layout().root);
  w.key("root_id").string(root.root_id());
  w.key("sealed").begin_array();
  for (const auto& t : v.sealed)
    w.begin_object().key("plan_id").string(t.plan_id).key("plugin_id").string(t.plugin_id).end_object();
  w.end_array();
  w.key("transactions").number(v.transactions);
  w.key("unfinished").begin_array();
  for (const auto& t : v.unfinished) write_txn(w, t, true);
  w.end_array();
  w.end_object();
  return print_json(std::move(w));
}

std::string status_plugins_text(const core::Root& root, const std::vector<core::ListedPlugin>& plugins) {
  if (plugins.empty()) return fmt::format("plugin   none registered (run {})\n", core::register_command(root.layout()));
  std::string out;
  for (const auto& p : plugins) {
    if (!p.manifest) {
      out += fmt::format("plugin   {} (its stored manifest does not decode)\n", shown(p.record.plugin_id));
      continue;
    }
    const core::Manifest& m = *p.manifest;
    out += fmt::format("plugin   {} ({}, {} assurance) sha256 {}\n", shown(m.id), shown(m.profile),
                       shown(m.assurance), shown(m.sha256));
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
                       shown(t.plugin_id), store::command_for(root.layout(), core::finishing_command(t.state)),
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
  return o.json ? print_status_json(*root, *view) : print_status_text(*root, *view);
}

int run_export(const EngineOptions& o) {
  auto root = open_root(o, Access::ReadOnly);
  if (!root.ok()) return report(root.error(), true);
  auto txn = root->store().find(o.id);
  if (!txn.ok()) return report(txn.error(), true);
  auto detail = root->store().detail(*txn);
  if (!detail.ok()) return report(detail.error(), true);
  if (detail->canonical_plan.empty())
    return report(make_error(Code::NotFound, "not_sealed",
                             fmt::format("{} has no sealed plan ({})", o.id, store::state_name(detail->summary.state))),
                  true);
  // The stored bytes exactly as hashed; handed out only when they hash to
  // their plan_id and pass every check a load makes.
  if (sha256_hex(detail->canonical_plan) != detail->summary.plan_id)
    return report(make_error(Code::RecoveryRequired, "tampered",
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
    w.begin_object();
    w.key("matches");
    if (doc->claimed_plan_id.empty())
      w.null();
    else
      w.boolean(true);
    w.key("plan_id").string(doc->plan_id);
    w.key("proposal_id").string(doc->proposal_id);
    w.end_object();
    return print_json(std::move(w));
  }
  return print_human(doc->plan_id + "\n");
}

}  // namespace

// `store check` judges every stored plan with the check every load makes.
void add_store_commands(CLI::App& app, Context& ctx) { add_store_group(app, ctx, core::judge_sealed_plan); }

void add_engine_commands(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<EngineOptions>();

  auto* reg = app.add_subcommand("register", "Pin a copy of a plugin executable under its plugin id");
  add_root_option(reg, o->root);
  reg->add_option("--plugin", o->plugin,
                  "Absolute path of the plugin (an ELF executable, or a #! script whose interpreter is one)")
      ->required();
  reg->add_option("--assurance", o->assurance, "audit | process")->required()->check(CLI::IsMember({"audit", "process"}));
  reg->add_option("--id", o->plugin_id,
                  "Plugin id, like org.example.tool (default org.dot.hello); unique in the root");
  reg->add_option("--profile", o->profile,
                  "org.dot.dpp/v1 | org.dot.hello/v1 (default org.dot.hello/v1, only for org.dot.hello)")
      ->check(CLI::IsMember({"org.dot.dpp/v1", "org.dot.hello/v1"}));
  reg->add_option("--input", o->inputs,
                  "A directory the plugin may read (absolute, no symlink on the way; repeatable, at most 16, "
                  "kept in this order; org.dot.dpp/v1 only)");
  reg->add_flag("--replace", o->replace,
                "Swap the plugin registered under this id (only when no transaction is unfinished)");
  add_json_flag(reg, *o);
  // The example names the reference plugin installed with this dot-core,
  // when there is one. (The callback adds to the footer text, which CLI11
  // copies from the parent: it is cleared first.)
  reg->footer(std::string())->footer([] {
    return "Without --id and --profile: the hello plugin (--id org.dot.hello --profile org.dot.hello/v1).\n"
           "Examples:\n  dot-core register --root ~/managed --plugin " +
           shown(reference_plugin_path().value_or("/abs/path/to/plugin")) +
           " --assurance audit\n"
           "  dot-core register --root ~/managed --plugin /abs/path/to/dot-mirror --id org.dot.mirror \\\n"
           "      --profile org.dot.dpp/v1 --assurance process --input /home/me/dotfiles";
  });
  reg->callback([&ctx, o] { ctx.action = [o] { return run_register(*o); }; });

  auto* plan = app.add_subcommand("plan", "Run the plugin, verify what it staged, seal and store the plan");
  add_root_option(plan, o->root);
  auto* audit = plan->add_flag("--allow-audit-plugin", o->allow_audit, "Consent to run the plugin without containment");
  auto* sandbox = plan->add_flag("--require-process-sandbox", o->require_sandbox,
                                 "Run the plugin only under Linux process containment (fails closed)");
  audit->excludes(sandbox);
  plan->add_option("--plugin", o->plugin_id, "The registered plugin id to run (needed when the root has several)");
  add_json_flag(plan, *o);
  plan->add_flag("--pager", o->pager, "Show the plan and its diff through $PAGER (default less -R) on a terminal");
  plan->add_flag("--verbose", o->verbose, "Show the plugin's dot.log messages on stderr as they arrive");
  plan->footer("Exactly one of --allow-audit-plugin and --require-process-sandbox.\nExamples:\n"
               "  dot-core plan --root ~/managed --allow-audit-plugin\n"
               "  dot-core plan --root ~/managed --plugin org.dot.mirror --require-process-sandbox");
  plan->callback([&ctx, o] { ctx.action = [o] { return run_plan(*o); }; });

  auto* apply = app.add_subcommand("apply", "Apply a sealed plan atomically, then run its root-sync effect");
  add_root_option(apply, o->root);
  apply->add_option("ID", o->id, "Plan id or a unique prefix of at least 8 hex characters")->required();
  add_json_flag(apply, *o);
  apply->footer("Example:\n  dot-core apply --root ~/managed 3f2a1b2c");
  apply->callback([&ctx, o] { ctx.action = [o] { return run_apply(*o); }; });

  auto* rollback = app.add_subcommand("rollback", "Undo the newest applied transaction");
  add_root_option(rollback, o->root);
  rollback->add_option("ID", o->id, "Plan id or unique prefix")->required();
  add_json_flag(rollback, *o);
  rollback->footer("Every target must still equal what the plan wrote.\nExample:\n  dot-core rollback --root ~/managed 3f2a1b2c");
  rollback->callback([&ctx, o] { ctx.action = [o] { return run_rollback(*o); }; });

  auto* recover = app.add_subcommand("recover", "Finish or roll back an interrupted transaction (never runs the plugin)");
  add_root_option(recover, o->root);
  add_json_flag(recover, *o);
  recover->footer("Example:\n  dot-core recover --root ~/managed");
  recover->callback([&ctx, o] { ctx.action = [o] { return run_recover(*o); }; });

  auto* retry = app.add_subcommand("retry-effects", "Resume the post-commit effects of a COMMITTED transaction");
  add_root_option(retry, o->root);
  add_json_flag(retry, *o);
  retry->footer("Example:\n  dot-core retry-effects --root ~/managed");
  retry->callback([&ctx, o] { ctx.action = [o] { return run_retry_effects(*o); }; });

  auto* discard = app.add_subcommand("discard", "Discard a sealed plan you will not apply");
  add_root_option(discard, o->root);
  discard->add_option("ID", o->id, "Plan id or unique prefix")->required();
  add_json_flag(discard, *o);
  discard->footer("Example:\n  dot-core discard --root ~/managed 3f2a1b2c");
  discard->callback([&ctx, o] { ctx.action = [o] { return run_discard(*o); }; });

  auto* status = app.add_subcommand("status", "Show the root, its plugins, unfinished transactions and drifted targets (read-only)");
  add_root_option(status, o->root);
  add_json_flag(status, *o);
  status->footer("Example:\n  dot-core status --root ~/managed --json");
  status->callback([&ctx, o] { ctx.action = [o] { return run_status(*o); }; });

  auto* exp = app.add_subcommand("export", "Print the sealed plan document {plan, plan_id} (canonical JSON)");
  add_root_option(exp, o->root);
  exp->add_option("ID", o->id, "Plan id or unique prefix")->required();
  exp->footer("Example:\n  dot-core export --root ~/managed 3f2a1b2c > plan.json && dot-core plan-id plan.json");
  exp->callback([&ctx, o] { ctx.action = [o] { return run_export(*o); }; });

  auto* pid = app.add_subcommand("plan-id", "Re-hash a plan document and print its plan_id");
  pid->add_option("FILE", o->file, "A sealed plan document {plan, plan_id} or a bare plan object ('-' for stdin)")
      ->required();
  add_json_flag(pid, *o);
  pid->footer("A claimed plan_id or proposal_id that does not match is DOT_E_VALIDATION.\nExample:\n"
              "  dot-core plan-id plan.json");
  pid->callback([&ctx, o] { ctx.action = [o] { return run_plan_id(*o); }; });
}

}  // namespace dot::cli
