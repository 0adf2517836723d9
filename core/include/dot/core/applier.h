#pragma once
// `dot-core apply ID` (spec/transactions.md, "Apply"): load and re-verify the
// sealed plan, check every precondition, PREPARED with backups, COMMITTING,
// one atomic replace per slot, COMMITTED, then the effects and DONE. No
// plugin runs during apply. A sealed plan applies exactly once.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/result.h"
#include "dot/core/interrupt.h"
#include "dot/core/plan.h"
#include "dot/core/root.h"
#include "dot/store/records.h"

namespace dot::core {

// A stored plan, re-verified: the store recomputed plan_id from the stored
// bytes and checked every blob; here the bytes decode as a canonical plan of
// this root whose proposal_id recomputes and whose artifacts are its `after`
// and backups its `before`. Anything else is DOT_E_RECOVERY_REQUIRED
// (tampered) or DOT_E_POLICY (another root's plan).
struct LoadedPlan {
  store::SealedPlan sealed;
  Plan plan;
  // Bytes per slot: the artifact (after) and, once PREPARED, the backup
  // (nullopt when the target did not exist).
  std::vector<std::string> after;
  std::vector<std::optional<std::string>> before;
};
Result<LoadedPlan> load_verified_plan(Root& root, store::TxnId txn);

struct ApplyOutcome {
  store::TxnId txn = 0;
  std::string plan_id;
  store::State state = store::State::Done;
  std::size_t slots = 0;
};

// Errors: DOT_E_NOT_FOUND (no such plan), DOT_E_POLICY (not SEALED,
// pre-capability, another root), DOT_E_RECOVERY_REQUIRED (an unfinished
// transaction, a tampered plan, or interrupted by a signal: run recover),
// DOT_E_CONFLICT (a target changed: the plan is STALE when found before
// PREPARED, ROLLED_BACK when found at a re-check), DOT_E_COMMIT (I/O error:
// rolled back), DOT_E_PATH_ESCAPE, DOT_E_POST_COMMIT (committed, an effect
// failed: retry-effects).
Result<ApplyOutcome> apply_plan(Root& root, std::string_view id, InterruptGuard* interrupt = nullptr);

}  // namespace dot::core
