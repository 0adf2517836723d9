#pragma once
// The rollback walk shared by apply (after a failed commit step), recover and
// `rollback ID`: ROLLING_BACK, every slot restored in reverse order
// (restore_slot), ROLLED_BACK. Idempotent: a crash anywhere in it is
// recovered by running it again.

#include <vector>

#include "dot/base/result.h"
#include "dot/core/applier.h"
#include "dot/core/root.h"
#include "dot/core/target.h"

namespace dot::core {

// `why` is recorded on the ROLLING_BACK and ROLLED_BACK events (its code may
// be Internal to record none). A target equal to neither snapshot stops the
// walk: the transaction stays ROLLING_BACK and DOT_E_RECOVERY_REQUIRED is
// returned (evidence is preserved, nothing is overwritten).
// `touched` limits the walk to slots [0, touched): apply knows which slots it
// renamed; recovery does not and walks them all.
// First the temp files of this plan (temp_name of every slot, both phases)
// are removed from the root (counted, and what it left alone reported, in
// `cleanup` when given); nothing else named like a temp file is touched.
Status roll_back(Root& root, store::TxnId txn, const LoadedPlan& plan, const Error& why,
                 std::size_t touched = static_cast<std::size_t>(-1), TempCleanup* cleanup = nullptr);

// What an apply of a version-2 plan changed before it failed: the folders
// it created (by index in plan.directories) and the operations it renamed
// or removed. Recovery does not know and passes none: then every folder and
// operation is looked at.
struct AppliedSoFar {
  std::vector<bool> folders;
  std::vector<bool> operations;
};
// The rollback walk of a version-2 plan (docs/engine.md, "Rollback of a
// version-2 plan"): ROLLING_BACK; the temp files of an interrupted commit or
// rollback of this plan (temp_name of every operation, both phases, and
// nothing else) removed from their folders (counted, and what it left
// alone reported, in `cleanup` when given); every target looked at in
// reverse order: equal to its before, left; equal to its after, restored (a
// temp file streamed from its backup, or the file removed when it did not
// exist); equal to neither, left untouched (evidence); the temp files made
// durable at once (syncfs), then the renames and removals; the created
// folders removed deepest first, only when empty; every touched folder
// fsynced; then ROLLED_BACK, or, when some target equalled neither, still
// ROLLING_BACK and DOT_E_RECOVERY_REQUIRED naming them. Idempotent.
// Crash points store.transition.ROLLING_BACK, rollback.op<N>.temp_written,
// rollback.temps_synced, rollback.op<N>.restored, rollback.folder<N>.removed,
// rollback.dir<N>.synced, store.transition.ROLLED_BACK.
Status roll_back(Root& root, store::TxnId txn, const LoadedPlanV2& plan, const Error& why,
                 const AppliedSoFar* so_far = nullptr, TempCleanup* cleanup = nullptr);

// DOT_E_RECOVERY_REQUIRED when any transaction is between PREPARED and its end.
Status refuse_if_unfinished(Root& root);

}  // namespace dot::core
