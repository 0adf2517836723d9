// The JSON writers of the store's records (store_json.h): the one place each
// record's --json shape is written.
#include "store_json.h"

#include <string>

#include <fmt/format.h>

#include "dot/base/sha256.h"
#include "output.h"

namespace dot::cli {
namespace {

// A stored canonical JSON document under `key`, exactly as hashed, when its
// bytes still hash to `id`; bytes that do not are shown as the string
// `<key>_text` so the output stays JSON. `<key>_verified` says which.
void write_hashed_document(JsonWriter& w, std::string_view key, const std::string& bytes, std::string_view id) {
  const bool verified = !bytes.empty() && sha256_hex(bytes) == id;
  w.key(key);
  if (verified)
    w.raw(bytes);
  else
    w.null();
  w.key(fmt::format("{}_verified", key)).boolean(verified);
  if (!bytes.empty() && !verified) w.key(fmt::format("{}_text", key)).string(bytes);
}

}  // namespace

void write_time_or_null(JsonWriter& w, std::int64_t unix_ms) {
  if (unix_ms == 0)
    w.null();
  else
    w.string(format_time_ms(unix_ms));
}

void write_summary_members(JsonWriter& w, const store::TxnSummary& t) {
  w.key("id").number(t.id);
  w.key("plan_id").string_or_null(t.plan_id);
  w.key("proposal_id").string_or_null(t.proposal_id);
  w.key("state").string(store::state_name(t.state));
  w.key("created_at");
  write_time_or_null(w, t.created_at_ms);
  w.key("updated_at");
  write_time_or_null(w, t.updated_at_ms);
  w.key("plugin_id").string(t.plugin_id);
  w.key("code").string_or_null(t.code);
  w.key("operation_count").number(t.operation_count);
  w.key("effect_count");
  if (t.effect_count)
    w.number(*t.effect_count);
  else
    w.null();
  w.key("pruned").boolean(t.pruned);
  w.key("status").string(store::display_status(t));
}

void write_summary(JsonWriter& w, const store::TxnSummary& t) {
  w.begin_object();
  write_summary_members(w, t);
  w.end_object();
}

void write_txn_brief(JsonWriter& w, const store::TxnSummary& t, bool with_state) {
  w.begin_object();
  w.key("plan_id").string_or_null(t.plan_id);
  w.key("plugin_id").string(t.plugin_id);
  w.key("proposal_id").string_or_null(t.proposal_id);
  if (with_state) w.key("state").string(store::state_name(t.state));
  w.key("status").string(store::display_status(t));
  w.end_object();
}

void write_sealed_txn(JsonWriter& w, const store::TxnSummary& t) {
  w.begin_object().key("plan_id").string(t.plan_id).key("plugin_id").string(t.plugin_id).end_object();
}

void write_event(JsonWriter& w, const store::Event& e) {
  w.begin_object();
  w.key("seq").number(e.seq);
  w.key("state").string(store::state_name(e.state));
  w.key("at").string(format_time_ms(e.at_ms));
  w.key("code").string_or_null(e.code);
  w.key("detail").string_or_null(e.detail);
  w.end_object();
}

void write_effect_entry(JsonWriter& w, const store::EffectEntry& e) {
  w.begin_object();
  w.key("index").number(e.index);
  w.key("state").string(store::effect_state_name(e.state));
  w.key("idempotency_key").string(e.idempotency_key);
  w.key("attempts").number(e.attempts);
  w.key("updated_at");
  write_time_or_null(w, e.updated_at_ms);
  w.key("code").string_or_null(e.code);
  w.key("detail").string_or_null(e.detail);
  w.end_object();
}

void write_operation_summary(JsonWriter& w, std::size_t slot, const store::OperationSummary& op) {
  w.begin_object().key("slot").number(slot).key("name").string(op.name);
  w.key("before_sha256").string(op.before_sha256).key("after_sha256").string(op.after_sha256).end_object();
}

void write_log(JsonWriter& w, const store::LogRecord& l) {
  w.begin_object().key("level").string(l.level).key("message").string(l.message);
  w.key("method").string(l.method).end_object();
}

void write_logs_member(JsonWriter& w, const std::vector<store::LogRecord>& logs) {
  w.key("logs").array_of(logs, write_log);
}

void write_txn_detail(JsonWriter& w, const store::TxnDetail& d) {
  w.begin_object();
  write_summary_members(w, d.summary);
  w.key("plugin_digest").string_or_null(d.plugin_digest);
  w.key("started_at");
  write_time_or_null(w, d.started_at_ms);
  w.key("finished_at");
  write_time_or_null(w, d.finished_at_ms);
  w.key("detail").string_or_null(d.detail);
  // The plan (sealed rows) and the proposal document (every proposal since
  // schema version 3: what the plugin proposed).
  write_hashed_document(w, "plan", d.canonical_plan, d.summary.plan_id);
  write_hashed_document(w, "proposal", d.proposal_document, d.summary.proposal_id);
  w.key("operations").begin_array();
  for (std::size_t i = 0; i < d.operations.size(); ++i) write_operation_summary(w, i, d.operations[i]);
  w.end_array();
  w.key("effects").array_of(d.effects, write_effect_entry);
  w.key("events").array_of(d.events, write_event);
  w.key("backups").boolean(d.has_backups);
  // A general-profile proposal's dot.log messages, exact.
  write_logs_member(w, d.logs);
  if (!d.plugin_stderr.empty()) {
    w.key("plugin_stderr").string(d.plugin_stderr);
    w.key("plugin_stderr_truncated").boolean(d.plugin_stderr_truncated);
  }
  w.end_object();
}

}  // namespace dot::cli
