#pragma once
// Post-commit effects (docs/spec/transactions.md step 6). root-sync is the only
// effect driver: an fsync of the managed root directory. No command, path,
// hook or user-controlled executable is ever run.
//
// Ledger per (plan, index): ATTEMPTED (durable) -> run -> SUCCEEDED | FAILED;
// at-least-once: an ATTEMPTED entry found after a crash is run again.

#include <string>
#include <string_view>
#include <vector>

#include "dot/base/result.h"
#include "dot/core/plan.h"
#include "dot/core/root.h"

namespace dot::core {

// True for the one effect core knows how to run.
bool is_root_sync(const Effect& effect) noexcept;

// What a retried root-sync makes durable again before the root itself: the
// targets of the plan (paths beneath the root) and, for a version-2 plan,
// every folder it touched (plan_v2.h touched_folders; "" is the root).
// The files are views into the plan, which outlives the effects it runs (a
// plan of 100,000 paths is not copied to name them).
struct SyncTargets {
  std::vector<std::string_view> files;
  std::vector<std::string> folders;
};

// Runs every effect of a COMMITTED transaction whose ledger entry is not
// SUCCEEDED, in order, then moves it to DONE. The first failure is recorded
// FAILED and returned as DOT_E_POST_COMMIT (the transaction stays COMMITTED;
// `retry-effects` resumes). An effect with an earlier ATTEMPTED or FAILED
// entry is a retry: root-sync then re-opens and fsyncs every target and
// folder in `targets` before the root (a failed fsync may have dropped what
// it could not write). Crash points store.effect.<i>.ATTEMPTED, on a retry
// effect<i>.slot<N>.synced per file and effect<i>.dir<N>.synced per folder,
// effect<i>.synced, store.effect.<i>.SUCCEEDED, store.transition.DONE; fault
// points effect<i>.slot<N>.sync and effect<i>.dir<N>.sync (a retry) and
// effect<i>.sync.
Status run_effects(Root& root, store::TxnId txn, const std::string& plan_id, const std::vector<Effect>& effects,
                   const SyncTargets& targets);
// A version-1 plan (it has effects): its slots are the files.
Status run_effects(Root& root, store::TxnId txn, const std::string& plan_id, const Plan& plan);

}  // namespace dot::core
