#pragma once
// The JSON writers of the engine's records (core's views: registrations,
// plans, applies, recovery reports, status), one per record type, in the
// shapes docs/engine.md documents with their keys in sorted order. The
// engine's commands (cmd_engine.cpp) only choose between these and their text.

#include <string>
#include <string_view>

#include "dot/core/applier.h"
#include "dot/core/drift.h"
#include "dot/core/plan.h"
#include "dot/core/plan_document.h"
#include "dot/core/planner.h"
#include "dot/core/recovery.h"
#include "dot/core/registry.h"
#include "dot/core/status.h"
#include "json_writer.h"

namespace dot::cli {

// Text a unified diff can show: both sides kept (small), valid UTF-8, no NUL.
// The JSON and the text of a version-2 plan show a diff for exactly these.
bool diffable(const core::PathOperation& op, const core::PathSlot& s);

// A snapshot as the plan holds it (core's one rendering of it).
void write_snapshot(JsonWriter& w, const core::Snapshot& s);
void write_recovered_txn(JsonWriter& w, const core::RecoveredTxn& t);
void write_recovery_report(JsonWriter& w, const core::RecoveryReport& r);
// The manifest members `register --json` and `status --json` share, in
// canonical order up to "profile" (each caller adds what follows).
void write_manifest_members(JsonWriter& w, const core::Manifest& m);
void write_registration(JsonWriter& w, const core::Registration& r);
// A plugin as `status` lists it: its manifest, or null when it does not decode.
void write_listed_plugin(JsonWriter& w, const core::ListedPlugin& p);
void write_drift(JsonWriter& w, const core::Drift& d);
// `plan --json` for a version-1 (hello) plan and a version-2 (general) plan.
void write_hello_plan(JsonWriter& w, const core::PlanOutcome& planned);
void write_general_plan(JsonWriter& w, const core::PlanOutcome& planned);
void write_apply_outcome(JsonWriter& w, const core::ApplyOutcome& a);
void write_discarded(JsonWriter& w, const std::string& plan_id);
// `forget --json` and `unregister --json`: the paths released.
void write_forgotten(JsonWriter& w, const std::vector<store::PathOwner>& released);
void write_unregistered(JsonWriter& w, const core::Unregistered& u);
// `status --json`: the view and the root it was read from.
void write_status(JsonWriter& w, std::string_view root_dir, std::string_view root_id, const core::StatusView& v);
// `plan-id --json`.
void write_plan_document_ids(JsonWriter& w, const core::PlanDocument& doc);

}  // namespace dot::cli
