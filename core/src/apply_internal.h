#pragma once
// Shared by the appliers of both plan versions (applier.cpp, apply_v2.cpp)
// and recovery.cpp; not a public header.

#include <string>
#include <string_view>

#include "dot/base/result.h"
#include "dot/core/applier.h"
#include "dot/core/effects.h"
#include "dot/core/interrupt.h"
#include "dot/core/root.h"
#include "dot/core/target.h"

namespace dot::core {

// DOT_E_RECOVERY_REQUIRED kind tampered naming the stored plan.
Error tampered(std::string_view plan_id, std::string detail);
// The command was interrupted by `sig` and stopped at a safe point in `state`.
Error interrupted_error(const Root& root, int sig, std::string_view plan_id, store::State state);
// A precondition found false before anything was written: the plan becomes
// STALE (a DOT_E_POLICY finding is reported as DOT_E_CONFLICT) and `e`
// comes back saying so; a failing state change is returned instead.
Error make_stale(Root& root, store::TxnId txn, Error e);
// The code an event records for `why` (none for Code::Internal).
inline std::string_view event_code(const Error& why) {
  return why.code == Code::Internal ? std::string_view() : code_name(why.code);
}

// Steps 3 to 7 of apply for a verified, SEALED version-2 plan (apply_v2.cpp).
Result<ApplyOutcome> apply_plan_v2(Root& root, const LoadedPlanV2& plan, InterruptGuard* interrupt,
                                   const ProgressFn& progress = {});
// What a retried root-sync of a version-2 plan makes durable again: every
// operation's path and every touched folder.
SyncTargets sync_targets(const PlanV2& plan);
// rollback_plan's precondition for a version-2 plan: every target still
// equals its `after` (DOT_E_CONFLICT otherwise, nothing changed).
Status check_still_after(Root& root, const LoadedPlanV2& plan);

}  // namespace dot::core
