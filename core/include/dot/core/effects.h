#pragma once
// Post-commit effects (spec/transactions.md step 6). root-sync is the only
// effect driver: an fsync of the managed root directory. No command, path,
// hook or user-controlled executable is ever run.
//
// Ledger per (plan, index): ATTEMPTED (durable) -> run -> SUCCEEDED | FAILED;
// at-least-once: an ATTEMPTED entry found after a crash is run again.

#include <vector>

#include "dot/base/result.h"
#include "dot/core/plan.h"
#include "dot/core/root.h"

namespace dot::core {

// True for the one effect core knows how to run.
bool is_root_sync(const Effect& effect) noexcept;

// Runs every effect of a COMMITTED transaction (`plan` has effects) whose
// ledger entry is not SUCCEEDED, in order, then moves it to DONE. The first
// failure is recorded FAILED and returned as DOT_E_POST_COMMIT (the
// transaction stays COMMITTED; `retry-effects` resumes). An effect with an
// earlier ATTEMPTED or FAILED entry is a retry: root-sync then re-opens and
// fsyncs every target of the plan before the root (a failed fsync may have
// dropped what it could not write). Crash points store.effect.<i>.ATTEMPTED,
// on a retry effect<i>.slot<N>.synced per slot, effect<i>.synced,
// store.effect.<i>.SUCCEEDED, store.transition.DONE; fault points
// effect<i>.slot<N>.sync (a retry) and effect<i>.sync.
Status run_effects(Root& root, store::TxnId txn, const std::string& plan_id, const Plan& plan);

}  // namespace dot::core
