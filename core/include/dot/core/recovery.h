#pragma once
// Recovery, rollback, effect retry and discard (docs/spec/transactions.md,
// "Recover"). Recovery never runs the plugin; every step is idempotent, so a
// crash during recovery is recovered again.

#include <string>
#include <string_view>
#include <vector>

#include "dot/base/result.h"
#include "dot/core/root.h"
#include "dot/core/target.h"
#include "dot/store/records.h"

namespace dot::core {

struct RecoveredTxn {
  std::string plan_id;
  store::State from = store::State::Prepared;
  store::State to = store::State::RolledBack;
  std::string action;  // "rolled back", "effects resumed", "completed (pre-capability)", "abandoned"
};

// A leftover stage folder `recover` removed: its path below the root and how
// many entries went (the folder included).
struct RemovedStage {
  std::string name;
  std::size_t entries = 0;
};

struct RecoveryReport {
  std::vector<RecoveredTxn> transactions;
  std::size_t temp_files_removed = 0;
  // What is still there and was not removed, and why: entries named like
  // temp files that no unfinished transaction's journal names, stages that
  // could not be removed.
  std::vector<LeftAlone> left_alone;
  std::size_t stages_removed = 0;  // stages.size()
  std::vector<RemovedStage> stages;
  bool changed() const noexcept { return !transactions.empty() || temp_files_removed || stages_removed; }
};

// PREPARED/COMMITTING/ROLLING_BACK: rolled back in reverse slot order (a
// target equal to neither snapshot is left untouched and the whole command
// fails DOT_E_RECOVERY_REQUIRED); COMMITTED: effects resumed (pre-capability:
// complete without a ledger, moved to DONE); PROPOSING left by a killed
// `plan`: ABANDONED. Every leftover stage folder is removed completely
// (each named in `stages`); each rollback removes the temp files its own
// journal names (temp_name), nothing else; what is left (a stage that cannot
// be removed, anything else named like a temp file) is reported in
// left_alone and never stops the rollback.
Result<RecoveryReport> recover(Root& root);

// The event code that marks a transaction the Go reference had archived
// (written by adopt, dot/adopt/adopt.h). Its order among the other archived
// generations is not on disk (their journals' mtimes are the only trace, and
// a copy or a touch changes them), and the reference never rolls an archived
// generation back: neither does rollback_plan, whatever order the import
// inferred.
inline constexpr std::string_view kArchivedEventCode = "ARCHIVED";

// Undoes the newest COMMITTED or DONE transaction while every target still
// equals its `after` (DOT_E_CONFLICT otherwise, nothing changed). Older ones:
// DOT_E_POLICY (kind archived for a kArchivedEventCode transaction).
Result<RecoveredTxn> rollback_plan(Root& root, std::string_view id);

// Resumes the effects of every COMMITTED transaction.
Result<RecoveryReport> retry_effects(Root& root);

// SEALED -> DISCARDED; any other state is DOT_E_POLICY.
Result<std::string> discard_plan(Root& root, std::string_view id);

}  // namespace dot::core
