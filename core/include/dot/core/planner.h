#pragma once
// `dot-core plan`: drives the root's plugin one call at a time (dpp::HostSession),
// applying core's policy between the calls, and seals the result:
//
//   pinned plugin opened and hashed -> PROPOSING -> spawn from that descriptor
//   -> dot.initialize, identity check -> dot.plan, hello allowlists -> observe
//   every target (policy) -> proposal_id (recorded) -> dot.materialize -> read
//   and verify every staged file itself -> dot.validate -> dot.shutdown ->
//   plugin exit 0, group reaped -> seal (plan bytes, artifacts) -> SEALED.
//
// Any failure after PROPOSING leaves an ABANDONED proposal with its code and
// the plugin's stderr; no target is ever written by `plan`. A proposal whose
// every target already equals its `after` snapshot changes nothing: it is not
// sealed but ends ABANDONED with the reason store::kNoChangesCode, which is
// an outcome, not an error (docs/engine.md, "Plan").

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "dot/base/result.h"
#include "dot/core/interrupt.h"
#include "dot/core/plan.h"
#include "dot/core/registry.h"
#include "dot/core/root.h"
#include "dot/store/records.h"

namespace dot::core {

struct PlanOptions {
  // What the user asked for: --allow-audit-plugin (Audit) or
  // --require-process-sandbox (Process). It must match the manifest's
  // assurance (DOT_E_POLICY otherwise). Process runs the plugin inside
  // dot::Sandbox (base/sandbox.h), prepared for the pinned descriptor and this
  // plan's stage; a kernel without a layer fails closed with
  // DOT_E_SANDBOX_UNAVAILABLE before anything is recorded or started.
  Assurance consent = Assurance::Audit;
  // The plugin to run (`plan --plugin ID`); empty: the root's only plugin
  // (registered_plugin's rules and errors).
  std::string plugin_id;
  std::chrono::milliseconds deadline{5000};
  // Signals: the plugin's group is killed on SIGINT/SIGTERM.
  InterruptGuard* interrupt = nullptr;
  // Test hook: runs after the pinned plugin was hashed and before it is
  // spawned from the same descriptor (the identity race test swaps the file).
  void (*after_hash)(void* ctx) = nullptr;
  void* after_hash_ctx = nullptr;
};

struct PlannedSlot {
  std::string name;
  std::string before;  // bytes of the target ("" when absent)
  std::string after;   // staged bytes
};

struct PlanOutcome {
  store::TxnId txn = 0;
  Plan plan;
  // True when every operation's after equals its before: nothing was sealed,
  // plan_id is empty, the proposal is ABANDONED with kNoChangesCode.
  bool no_changes = false;
  std::string plan_id;
  std::vector<PlannedSlot> slots;
  std::string plugin_stderr;
};

// Errors carry their DOT_E_* code; after PROPOSING the proposal is ABANDONED
// with that code before the error is returned.
Result<PlanOutcome> make_plan(Root& root, const PlanOptions& options);

// A unified diff of one slot (libdtl), "--- a/NAME" / "+++ b/NAME" headers.
std::string unified_diff(const PlannedSlot& slot);

}  // namespace dot::core
