#pragma once
// The rollback walk shared by apply (after a failed commit step), recover and
// `rollback ID`: ROLLING_BACK, every slot restored in reverse order
// (restore_slot), ROLLED_BACK. Idempotent: a crash anywhere in it is
// recovered by running it again.

#include "dot/base/result.h"
#include "dot/core/applier.h"
#include "dot/core/root.h"

namespace dot::core {

// `why` is recorded on the ROLLING_BACK and ROLLED_BACK events (its code may
// be Internal to record none). A target equal to neither snapshot stops the
// walk: the transaction stays ROLLING_BACK and DOT_E_RECOVERY_REQUIRED is
// returned (evidence is preserved, nothing is overwritten).
// `touched` limits the walk to slots [0, touched): apply knows which slots it
// renamed; recovery does not and walks them all.
Status roll_back(Root& root, store::TxnId txn, const LoadedPlan& plan, const Error& why,
                 std::size_t touched = static_cast<std::size_t>(-1));

// DOT_E_RECOVERY_REQUIRED when any transaction is between PREPARED and its end.
Status refuse_if_unfinished(Root& root);

}  // namespace dot::core
