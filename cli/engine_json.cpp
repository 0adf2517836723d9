// The JSON writers of the engine's records (engine_json.h): the one place
// each document of docs/engine.md is written.
#include "engine_json.h"

#include <optional>
#include <string>

#include "dot/base/jcs.h"
#include "dot/base/utf8.h"
#include "store_json.h"

namespace dot::cli {
namespace {

// The state a plan ends in: sealed, or recorded as changing nothing.
std::string_view plan_state(const core::PlanOutcome& planned) {
  return planned.no_changes ? store::kNoChangesCode : "SEALED";
}

// The members every plan document ends with, in sorted order after
// "operations": its ids and its state.
void write_plan_ids(JsonWriter& w, const core::PlanOutcome& planned, std::string_view proposal_id) {
  w.key("plan_id").string_or_null(planned.plan_id);
  w.key("proposal_id").string(proposal_id);
  w.key("state").string(plan_state(planned));
}

void write_effect(JsonWriter& w, const core::Effect& e) {
  w.begin_object().key("failure_policy").string(e.failure_policy).key("kind").string(e.kind);
  w.key("target").string(e.target).end_object();
}

// One operation of a version-1 plan with its slot's diff. A diff of content
// that is not UTF-8 has no exact JSON string: it is left out and flagged;
// the human output shows it byte for byte.
void write_hello_operation(JsonWriter& w, std::size_t slot, const core::Operation& op, const core::PlannedSlot& s) {
  const std::string diff = core::unified_diff(s);
  const bool binary = utf8_valid_prefix(diff) != diff.size();
  w.begin_object();
  w.key("after");
  write_snapshot(w, op.after);
  w.key("before");
  write_snapshot(w, op.before);
  w.key("binary").boolean(binary);
  w.key("diff");
  if (binary)
    w.null();
  else
    w.string(diff);
  w.key("name").string(op.name);
  w.key("slot").number(slot);
  w.end_object();
}

void write_folder(JsonWriter& w, const core::Folder& d) {
  w.begin_object().key("mode").number(d.mode).key("path").string(d.path).end_object();
}

// One operation of a version-2 plan: a diff for text, null and "binary" for
// the rest.
void write_path_slot(JsonWriter& w, const core::PathOperation& op, const core::PathSlot& s) {
  const bool text = diffable(op, s);
  w.begin_object();
  w.key("action").string(core::action_name(op.action));
  w.key("after");
  write_snapshot(w, op.after);
  w.key("before");
  write_snapshot(w, op.before);
  w.key("binary").boolean(op.action == core::Action::Write && !text);
  w.key("diff");
  if (text)
    w.string(core::unified_diff(core::PlannedSlot{op.path, s.before_content().value_or(""), *s.after_content()}));
  else
    w.null();
  w.key("path").string(op.path);
  w.key("take_over").boolean(s.take_over);
  w.end_object();
}

}  // namespace

bool diffable(const core::PathOperation& op, const core::PathSlot& s) {
  auto text = [](const std::optional<std::string>& c) {
    return c && utf8_valid_prefix(*c) == c->size() && c->find('\0') == std::string::npos;
  };
  // A link replaced by a file: the file's bytes are all new.
  const bool before_ok = !op.before.exists || op.before.is_link() || text(s.before_content());
  return op.action == core::Action::Write && before_ok && text(s.after_content());
}

void write_snapshot(JsonWriter& w, const core::Snapshot& s) {
  // Hex digests, numbers and (a symlink's) valid UTF-8 text: its
  // canonical encoding cannot fail, and JSON escapes every control byte.
  auto bytes = jcs::encode(core::to_node(s), jcs::Profile::Rfc8785);
  if (bytes.ok())
    w.raw(*bytes);
  else
    w.null();
}

void write_recovered_txn(JsonWriter& w, const core::RecoveredTxn& t) {
  w.begin_object().key("action").string(t.action).key("from").string(store::state_name(t.from));
  w.key("plan_id").string_or_null(t.plan_id).key("to").string(store::state_name(t.to)).end_object();
}

void write_recovery_report(JsonWriter& w, const core::RecoveryReport& r) {
  w.begin_object();
  w.key("changed").boolean(r.changed());
  w.key("left_alone").begin_array();
  for (const auto& l : r.left_alone) w.begin_object().key("name").string(l.name).key("why").string(l.why).end_object();
  w.end_array();
  w.key("stages").begin_array();
  for (const auto& s : r.stages)
    w.begin_object().key("entries").number(s.entries).key("name").string(s.name).end_object();
  w.end_array();
  w.key("stages_removed").number(r.stages_removed);
  w.key("temp_files_removed").number(r.temp_files_removed);
  w.key("transactions").array_of(r.transactions, write_recovered_txn);
  w.end_object();
}

void write_manifest_members(JsonWriter& w, const core::Manifest& m) {
  w.key("assurance").string(m.assurance);
  // Only when recorded, as in the manifest (register --allow-audit-plugin).
  if (m.audit_consent) w.key("audit_consent").boolean(true);
  w.key("id").string(m.id);
  w.key("inputs").string_array(m.inputs);
  if (m.interpreter) {  // an interpreted plugin only
    w.key("interpreter").begin_object();
    w.key("options").string_array(m.interpreter->options);
    w.key("path").string(m.interpreter->path);
    w.key("runtime").string_array(m.interpreter->runtime);
    w.key("sha256").string(m.interpreter->sha256);
    w.end_object();
  }
  w.key("profile").string(m.profile);
}

void write_registration(JsonWriter& w, const core::Registration& r) {
  w.begin_object();
  write_manifest_members(w, r.manifest);
  w.key("protocol").number(r.manifest.protocol);
  w.key("replaced").boolean(r.replaced);
  w.key("sha256").string(r.manifest.sha256);
  w.end_object();
}

void write_listed_plugin(JsonWriter& w, const core::ListedPlugin& p) {
  if (!p.manifest) {
    w.null();
    return;
  }
  w.begin_object();
  write_manifest_members(w, *p.manifest);
  w.key("sha256").string(p.manifest->sha256);
  w.end_object();
}

void write_drift(JsonWriter& w, const core::Drift& d) {
  w.begin_object().key("name").string(d.name).key("plan_id").string(d.plan_id);
  w.key("reason").string(core::drift_reason_name(d.reason)).end_object();
}

void write_hello_plan(JsonWriter& w, const core::PlanOutcome& planned) {
  const core::Plan& plan = planned.plan;
  w.begin_object();
  w.key("effects").array_of(*plan.effects, write_effect);
  w.key("operations").begin_array();
  for (std::size_t i = 0; i < plan.operations.size(); ++i)
    write_hello_operation(w, i, plan.operations[i], planned.slots[i]);
  w.end_array();
  write_plan_ids(w, planned, plan.proposal_id);
  w.end_object();
}

void write_general_plan(JsonWriter& w, const core::PlanOutcome& planned) {
  const core::PlanV2& plan = planned.plan_v2;
  w.begin_object();
  w.key("directories").array_of(plan.directories, write_folder);
  w.key("exclude").begin_array();
  for (const auto& pattern : plan.exclude) w.string(pattern);
  w.end_array();
  w.key("excluded").number(planned.excluded);
  write_logs_member(w, planned.logs);
  w.key("operations").begin_array();
  for (std::size_t i = 0; i < planned.path_slots.size(); ++i)
    write_path_slot(w, plan.operations[i], planned.path_slots[i]);
  w.end_array();
  write_plan_ids(w, planned, plan.proposal_id);
  w.key("version").number(plan.version);
  w.end_object();
}

void write_apply_outcome(JsonWriter& w, const core::ApplyOutcome& a) {
  w.begin_object().key("operations").number(a.slots).key("plan_id").string(a.plan_id);
  w.key("state").string(store::state_name(a.state)).end_object();
}

void write_discarded(JsonWriter& w, const std::string& plan_id) {
  w.begin_object().key("plan_id").string(plan_id).key("state").string("DISCARDED").end_object();
}

namespace {

void write_released(JsonWriter& w, const std::vector<store::PathOwner>& released) {
  w.key("released").array_of(released, [](JsonWriter& a, const store::PathOwner& r) {
    a.begin_object().key("path").string(r.path).key("plugin_id").string(r.plugin_id).key("txn").number(r.txn);
    a.end_object();
  });
}

}  // namespace

void write_forgotten(JsonWriter& w, const std::vector<store::PathOwner>& released) {
  w.begin_object();
  write_released(w, released);
  w.end_object();
}

void write_unregistered(JsonWriter& w, const core::Unregistered& u) {
  w.begin_object().key("plugin_id").string(u.plugin_id);
  write_released(w, u.released);
  w.end_object();
}

void write_status(JsonWriter& w, std::string_view root_dir, std::string_view root_id, const core::StatusView& v) {
  w.begin_object();
  w.key("drift").array_of(v.drift, write_drift);
  w.key("last");
  if (v.newest)
    write_txn_brief(w, *v.newest, false);
  else
    w.null();
  // "plugin": the root's only plugin (null with none or several);
  // "plugins": every one, by id.
  w.key("plugin");
  if (v.plugins.size() == 1)
    write_listed_plugin(w, v.plugins.front());
  else
    w.null();
  w.key("plugins").array_of(v.plugins, write_listed_plugin);
  w.key("recovery_required").boolean(!v.unfinished.empty());
  w.key("root").string(root_dir);
  w.key("root_id").string(root_id);
  w.key("sealed").array_of(v.sealed, write_sealed_txn);
  w.key("transactions").number(v.transactions);
  w.key("unfinished").begin_array();
  for (const auto& t : v.unfinished) write_txn_brief(w, t, true);
  w.end_array();
  w.end_object();
}

void write_plan_document_ids(JsonWriter& w, const core::PlanDocument& doc) {
  w.begin_object();
  // true when the document claimed a plan_id (decoding checked it), null for a bare plan.
  w.key("matches");
  if (doc.claimed_plan_id.empty())
    w.null();
  else
    w.boolean(true);
  w.key("plan_id").string(doc.plan_id);
  w.key("proposal_id").string(doc.proposal_id);
  w.end_object();
}

}  // namespace dot::cli
