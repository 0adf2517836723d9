#pragma once
// `dot-core adopt`: a root made by the Go reference implementation
// (spec/go-roots.md) becomes a dot-core root in place.
//
// 1. Lock and verify: the reference's own `.dot-lock` is flock()ed
//    exclusively (created 0600 when missing, as every reference command
//    does), so no reference command runs meanwhile, then go::survey.
// 2. Finish, in the reference's own format and write order, what its
//    `recover` / `retry-effects` / `archive` would finish: an interrupted
//    transaction or rollback is rolled back (every target all-before), the
//    pending post-commit effect is run again under its idempotency key, an
//    interrupted archive is completed. Each step is one the reference itself
//    makes, so a kill in the middle leaves a reference root the reference,
//    or `adopt` again, resumes. A target someone edited is refused before
//    anything is written (go::survey), as the reference refuses it.
//
// 3. Import: dot-core's state folder is built beside, as `.dot-adopting`
//    (go::kImportDir): the store keeps the reference's root id, the
//    reference's plugin copy is registered as the root's org.dot.hello with
//    its digest and assurance, and every transaction (each archived
//    generation in the order its journal last changed, then the active one)
//    is recorded with its original plan bytes and ids, its journal replayed
//    state by state, its artifacts, backups and effect ledger, and an ADOPTED
//    event naming where it came from and in which reference state. The
//    adoption record `.dot/adopted.json` says the root was adopted. One
//    rename makes it `.dot`: before it the reference root is intact (a later
//    `adopt` removes the partial folder and starts again), after it the
//    adopted root is complete.
// 4. Cleanup: only then are the reference's files removed (`.dot-next-N`,
//    `.dot-stage`, `.dot-archive`, `.dot-txn`, `.dot-history`, the
//    registration, `.dot-lock`), `.dot-root` last: while the marker is there
//    beside an adopted `.dot`, `adopt` knows the cleanup was interrupted and
//    finishes it; once it is gone, `adopt` is a no-op.
//
// Every durable step is a crash point (test_hooks.h), named in
// adopt_crash_points and docs/engine.md.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/result.h"
#include "dot/core/go_root.h"
#include "dot/core/test_hooks.h"

namespace dot::core::go {

// What `.dot/adopted.json` says (written by the import, compact JSON).
struct AdoptionRecord {
  std::string root_id;
  std::string generation;      // generation_name of the reference root
  std::string state;           // the reference's status word when adopt found it
  std::size_t transactions = 0;
};
inline constexpr std::string_view kAdoptionRecordName = "adopted.json";

// A root whose reference files were already imported: `.dot` holds an
// adoption record. nullopt for any other folder.
struct Adopted {
  AdoptionRecord record;
  bool cleanup_pending = false;  // the reference's `.dot-root` is still there
};
Result<std::optional<Adopted>> find_adoption(const std::string& dir);

enum class AdoptOutcome { Adopted, CleanupFinished, AlreadyAdopted };

struct AdoptResult {
  AdoptOutcome outcome = AdoptOutcome::Adopted;
  Survey found;                     // the root as it was found, before any change
  Survey finished;                  // the root once finished (terminal or idle)
  std::vector<std::string> steps;   // what finishing did, one line each
  AdoptionRecord record;            // what the import recorded
  std::size_t removed = 0;          // reference entries removed by the cleanup
};

// Locks, verifies and finishes the reference root at `dir` (absolute).
// Errors: go::survey's (nothing changed), DOT_E_CONFLICT when a reference
// command holds the lock, DOT_E_POST_COMMIT when the re-run effect fails
// (recorded FAILED in effects.wal, as the reference records it), DOT_E_IO
// for a failed write, fsync or rename (the root stays a reference root the
// next `adopt` resumes).
Result<AdoptResult> adopt(const std::string& dir, const TestHooks& hooks = {});

// The event code that marks a transaction the reference had archived
// (.dot-history/<plan_id>/). Its order among the other archived generations
// is not on disk (their journals' mtimes are the only trace, and a copy or
// a touch changes them), and the reference never rolls an archived
// generation back: neither does `rollback` (recovery.cpp), whatever order
// the import inferred.
inline constexpr std::string_view kArchivedCode = "ARCHIVED";

// The crash points of adopting `survey`'s root (finishing, import, cleanup),
// in the order reached.
std::vector<std::string> adopt_crash_points(const Survey& survey);

}  // namespace dot::core::go
