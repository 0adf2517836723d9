#pragma once
// The JSON writers of the store's records (dot/store/records.h), one per
// record type, in the shapes docs/store.md and docs/engine.md document. Every
// command that prints one of these records with --json writes it here, so a
// record has one JSON shape wherever it appears (inspect, status, plan).

#include <cstdint>
#include <string_view>
#include <vector>

#include "dot/store/records.h"
#include "json_writer.h"

namespace dot::cli {

// A time as RFC 3339 UTC with milliseconds; 0 (not set) is null.
void write_time_or_null(JsonWriter& w, std::int64_t unix_ms);

// The members of a transaction's summary row as `inspect list` and
// `inspect show` give them (id ... pruned, then status), into the open object.
void write_summary_members(JsonWriter& w, const store::TxnSummary& t);
// One `inspect list` row: the summary members as an object.
void write_summary(JsonWriter& w, const store::TxnSummary& t);
// A transaction as `status` names one: its ids, its plugin and its status;
// with_state adds the stored state beside the status shown.
void write_txn_brief(JsonWriter& w, const store::TxnSummary& t, bool with_state);
// A sealed plan waiting for apply, as `status` lists it: {plan_id, plugin_id}.
void write_sealed_txn(JsonWriter& w, const store::TxnSummary& t);

void write_event(JsonWriter& w, const store::Event& e);
void write_effect_entry(JsonWriter& w, const store::EffectEntry& e);
// One operation row of a stored plan, with its slot number.
void write_operation_summary(JsonWriter& w, std::size_t slot, const store::OperationSummary& op);
void write_log(JsonWriter& w, const store::LogRecord& l);
// The member "logs": every dot.log message of a proposal, in order.
void write_logs_member(JsonWriter& w, const std::vector<store::LogRecord>& logs);

// The whole of `inspect show --json`.
void write_txn_detail(JsonWriter& w, const store::TxnDetail& d);

}  // namespace dot::cli
