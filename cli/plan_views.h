#pragma once
// What `plan` prints of a version-2 plan for a person at any size: the
// default text (summary, then each operation with its diff, up to a bound),
// --stat (per-path +/- counts, like `git diff --stat`) and --name-status
// (one line per path: A, M or D). Every path goes through the one escaper.

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "dot/core/planner.h"

namespace dot::cli {

// The default text stops adding operations once this many lines are out.
inline constexpr std::size_t kPlanShownLines = 1000;

// One operation of a version-2 plan: a line saying what happens to the path
// (create, change, mode, remove), then a unified diff for text or a one-line
// summary for a binary or large file (or one whose bytes the plan's diff
// budget did not keep).
std::string path_slot_text(const core::PathOperation& op, const core::PathSlot& slot);

// Targets edited by hand since the plan that last wrote them: path -> that
// plan's id (drift, as status reports it).
using EditedTargets = std::map<std::string, std::string, std::less<>>;

// "revert PATH (edited since apply ID)\n" when `path` is an edited target
// (a plan writing it undoes the edit), "" otherwise.
std::string revert_line(const EditedTargets& edited, std::string_view path);

// The header of a sealed version-2 plan, then its folders and operations;
// unless `full`, operations stop after kPlanShownLines lines and a last
// line says how many were left out (each operation after its revert_line) and how to see them (`see_all`: the
// commands to name, e.g. "`dot-core inspect show 3f2a…` or `dot-core plan --full`").
std::string general_plan_text(const core::PlanOutcome& planned, const EditedTargets& edited, bool full,
                              const std::string& see_all);

// --stat: " path | N ++--" per path, then "N path(s) changed, N insertion(s)(+),
// N deletion(s)(-)". A path without both sides' text shows its sizes.
std::string plan_stat_text(const core::PlanOutcome& planned);

// --name-status: "A\tpath" (created), "M\tpath" (content or mode changed),
// "D\tpath" (removed), in plan order.
std::string plan_name_status_text(const core::PlanOutcome& planned);

}  // namespace dot::cli
