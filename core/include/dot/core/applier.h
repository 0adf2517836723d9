#pragma once
// `dot-core apply ID` (docs/spec/transactions.md, "Apply"): load and re-verify the
// sealed plan, check every precondition, PREPARED with backups, COMMITTING,
// one atomic replace per slot, COMMITTED, then the effects and DONE. No
// plugin runs during apply. A sealed plan applies exactly once.

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "dot/base/result.h"
#include "dot/core/interrupt.h"
#include "dot/core/plan.h"
#include "dot/core/plan_v2.h"
#include "dot/core/progress.h"
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
// and then refused with DOT_E_POLICY (kind plan_version): it is no
// version-1 Plan (load_any_verified_plan loads either version).
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

// A stored version-2 plan, re-verified the same way: verify_sealed_plan_v2
// holds, the store checked its files' metadata against the operation rows
// (their bytes are verified as Store::read_file streams them), and its
// backups, once PREPARED, are its `before` snapshots (one per operation).
struct LoadedPlanV2 {
  store::SealedPlan sealed;
  PlanV2 plan;
};
// A stored plan of either version.
using VerifiedPlan = std::variant<LoadedPlan, LoadedPlanV2>;
Result<VerifiedPlan> load_any_verified_plan(Root& root, store::TxnId txn);

struct ApplyOutcome {
  store::TxnId txn = 0;
  std::string plan_id;
  store::State state = store::State::Done;
  std::size_t slots = 0;
};

// A version-2 plan applies the same way over any number of operations with
// its durability batched (docs/engine.md, "Apply of a version-2 plan"):
// every target and parent checked against the plan (STALE otherwise),
// PREPARED with every backup streamed into the store, the created folders,
// every temp file written from its stored artifact, one syncfs per file
// system, COMMITTING, the renames and removals (each target re-checked
// first), one fsync per touched folder, COMMITTED, the effects, DONE.
// Errors: DOT_E_NOT_FOUND (no such plan), DOT_E_POLICY (not SEALED,
// pre-capability, another root), DOT_E_RECOVERY_REQUIRED (an unfinished
// transaction, a tampered plan, or interrupted by a signal: run recover),
// DOT_E_CONFLICT (a target changed: the plan is STALE when found before
// PREPARED, ROLLED_BACK when found at a re-check), DOT_E_COMMIT (I/O error:
// rolled back), DOT_E_PATH_ESCAPE, DOT_E_POST_COMMIT (committed, an effect
// failed: retry-effects).
// `progress` (version-2 plans): after each file written beside its target.
Result<ApplyOutcome> apply_plan(Root& root, std::string_view id, InterruptGuard* interrupt = nullptr,
                                const ProgressFn& progress = {});

}  // namespace dot::core
