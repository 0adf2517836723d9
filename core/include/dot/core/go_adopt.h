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
// Every durable step is a crash point (test_hooks.h), named in
// adopt_crash_points and docs/engine.md.

#include <string>
#include <vector>

#include "dot/base/result.h"
#include "dot/core/go_root.h"
#include "dot/core/test_hooks.h"

namespace dot::core::go {

struct AdoptResult {
  Survey found;                     // the root as it was found, before any change
  Survey finished;                  // the root once finished (terminal or idle)
  std::vector<std::string> steps;   // what finishing did, one line each
};

// Locks, verifies and finishes the reference root at `dir` (absolute).
// Errors: go::survey's (nothing changed), DOT_E_CONFLICT when a reference
// command holds the lock, DOT_E_POST_COMMIT when the re-run effect fails
// (recorded FAILED in effects.wal, as the reference records it), DOT_E_IO
// for a failed write, fsync or rename (the root stays a reference root the
// next `adopt` resumes).
Result<AdoptResult> adopt(const std::string& dir, const TestHooks& hooks = {});

// The crash points of finishing `survey`'s root, in the order reached.
std::vector<std::string> adopt_crash_points(const Survey& survey);

}  // namespace dot::core::go
