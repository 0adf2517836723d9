#pragma once
// `dot-core adopt`: a root made by the Go reference implementation
// (docs/spec/go-roots.md) becomes a dot-core root in place.
//
// 1. Lock and verify: the reference's own `.dot-lock` is flock()ed
//    exclusively (created 0600 when missing, as every reference command
//    does), so no reference command runs meanwhile, then survey.
// 2. Finish, in the reference's own format and write order, what its
//    `recover` / `retry-effects` / `archive` would finish: an interrupted
//    transaction or rollback is rolled back (every target all-before), the
//    pending post-commit effect is run again under its idempotency key, an
//    interrupted archive is completed. Each step is one the reference itself
//    makes, so a kill in the middle leaves a reference root the reference,
//    or `adopt` again, resumes. A target someone edited is refused before
//    anything is written (survey), as the reference refuses it.
//
// 3. Import: dot-core's state folder is built beside, as `.dot-adopting`
//    (kImportDir): the store keeps the reference's root id, the
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
// Between a kill after step 3 and the next `adopt`, the root is still one
// the reference reads as valid, and the reference may have been used on it
// (an archive, a new apply, a rollback). So the import also records every
// reference file it covered (`.dot/adopted-entries.json`: what each file is,
// by transaction id, and its SHA-256), and finishing an interrupted cleanup
// first compares the reference's files as they are now with that record:
// it removes them only when every one of them was imported byte for byte,
// and otherwise refuses, naming each entry it did not import. It never
// deletes what it did not import.
//
// The plugin copy is never run by any of this. When it no longer matches
// the manifest's digest (Survey::plugin_untrusted), the root is still
// finished and imported, and no plugin is registered: `plan` then asks for a
// fresh `register`.
//
// Every durable step is a crash point (test_hooks.h), named in
// adopt_crash_points and docs/engine.md.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dot/adopt/go_root.h"
#include "dot/base/result.h"
#include "dot/core/recovery.h"
#include "dot/core/test_hooks.h"

namespace dot::adopt {

// What `.dot/adopted.json` says (written by the import, canonical JSON:
// {"generation":G,"root_id":ID,"state":S,"transactions":N}, G and S the
// names generation_name and ref_state_name give).
struct AdoptionRecord {
  std::string root_id;
  Generation generation = Generation::Unknown;  // of the reference root
  RefState state = RefState::Idle;              // the reference's status word when adopt found it
  std::size_t transactions = 0;
};
inline constexpr std::string_view kAdoptionRecordName = "adopted.json";
// What the import covered: every reference file, as
// {"active":ID,"entries":[[KEY,SHA256],...]} (canonical JSON, entries sorted). KEY names
// what the file is, not where it lies, since the reference moves
// transactions: `txn/<plan_id>/<name>` for a file of a transaction folder
// (`.dot-txn` or `.dot-history/<plan_id>`; `-` for a `.dot-txn` without a
// plan.json), `txn/<plan_id>/stage/<name>` for a staged file (the root's
// `.dot-stage` belongs to the transaction `.dot-txn` holds, `-` when there
// is none), the entry's own name for any other file at the root. ID is the transaction `.dot-txn` held
// (empty when none), which names its files once its plan.json is gone.
inline constexpr std::string_view kImportedEntriesName = "adopted-entries.json";

// A root whose reference files were already imported: `.dot` holds an
// adoption record. nullopt for any other folder.
struct Adopted {
  AdoptionRecord record;
  bool cleanup_pending = false;  // the reference's `.dot-root` is still there
  // With cleanup_pending: the reference's files (paths relative to the root)
  // that the import did not record byte for byte, so the reference made or
  // changed them after the import; while there is any, adopt refuses to
  // finish the cleanup (cleanup_refusal).
  std::vector<std::string> not_imported;
  // With cleanup_pending: the adoption has no kImportedEntriesName (an
  // earlier dot-core made it), so nothing can be told apart.
  bool entry_record_missing = false;
};
// Errors: DOT_E_STORE (adoption_record) for a record adopt does not write,
// DOT_E_VALIDATION (not_reference_root) for a marker of another root,
// DOT_E_PATH_ESCAPE for a symlink, DOT_E_IO.
Result<std::optional<Adopted>> find_adoption(const std::string& dir);

// What `adopt` (and `adopt --dry-run`, which reports the same decision)
// says about an adopted root whose cleanup is pending: nothing when every
// reference file left was imported, else DOT_E_RECOVERY_REQUIRED kind
// not_imported naming each entry the import did not cover (or kind
// no_entry_record when the adoption predates the record of entries).
Status cleanup_refusal(const std::string& dir, const Adopted& a);

enum class AdoptOutcome { Adopted, CleanupFinished, AlreadyAdopted };

struct AdoptResult {
  AdoptOutcome outcome = AdoptOutcome::Adopted;
  Survey found;                    // the root as it was found, before any change
  Survey finished;                 // the root once finished (terminal or idle)
  std::vector<std::string> steps;  // what finishing did, one line each
  AdoptionRecord record;           // what the import recorded
  std::size_t removed = 0;         // reference entries removed by the cleanup
  // Why the reference's plugin copy was not registered (finished.plugin_untrusted).
  std::string plugin_not_registered;
};

// Locks, verifies and finishes the reference root at `dir` (absolute).
// Errors: survey's (nothing changed), cleanup_refusal's for an
// interrupted cleanup beside reference files adopt did not import (nothing
// changed), DOT_E_CONFLICT when a reference
// command holds the lock, DOT_E_POST_COMMIT when the re-run effect fails
// (recorded FAILED in effects.wal, as the reference records it), DOT_E_IO
// for a failed write, fsync or rename (the root stays a reference root the
// next `adopt` resumes).
Result<AdoptResult> adopt(const std::string& dir, const core::TestHooks& hooks = {});

// The event code that marks a transaction the reference had archived
// (.dot-history/<plan_id>/): core's, since core's `rollback` is what refuses
// such a transaction (core/recovery.h, kArchivedEventCode).
inline constexpr std::string_view kArchivedCode = core::kArchivedEventCode;

// The crash points of adopting `survey`'s root (finishing, import, cleanup),
// in the order reached.
std::vector<std::string> adopt_crash_points(const Survey& survey);

}  // namespace dot::adopt
