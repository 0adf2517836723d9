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
#include "dot/core/plan_v2.h"
#include "dot/core/root.h"
#include "dot/store/records.h"

namespace dot::core {

// The checks of a stored plan that need none of its blobs, made on every
// load (load_verified_plan below, export) and by `store check` (its
// Store::PlanJudge): the bytes decode as a canonical plan whose proposal_id
// recomputes and equals the stored one, sealed for `root_id`, whose effect
// count and operation rows are the stored ones, and which keeps every rule
// `plan` enforced when it sealed (plan.h check_plan_invariants): a row edited
// in the database with its ids recomputed is still refused. Anything else is
// DOT_E_RECOVERY_REQUIRED (kind tampered) or DOT_E_POLICY (another root's plan).
// A version-2 plan (sealed.streamed) is verified with verify_sealed_plan_v2
// and then refused with DOT_E_POLICY (kind plan_version): this build seals
// version-2 plans but cannot apply them yet.
Result<Plan> verify_sealed_plan(const store::SealedPlan& sealed, std::string_view root_id);
// The same checks of a version-2 plan: canonical RFC 8785 bytes decoding as
// a sealed plan, bound to its stored proposal document (plan_v2.h
// check_proposal_binding) and its stored proposal id, sealed for `root_id`,
// its effect count and operation rows (path, before and after digests) the
// stored ones.
Result<PlanV2> verify_sealed_plan_v2(const store::SealedPlan& sealed, std::string_view root_id);
// verify_sealed_plan as the store's plan judge (Store::check): `store check`.
Status judge_sealed_plan(const store::SealedPlan& sealed, std::string_view root_id);

// A stored plan, re-verified: the store recomputed plan_id from the stored
// bytes and checked every blob; verify_sealed_plan holds; its artifacts are
// its `after` and its backups its `before`. Anything else is
// DOT_E_RECOVERY_REQUIRED (tampered) or DOT_E_POLICY (another root's plan).
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
