#include "dot/core/drift.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "dot/base/beneath.h"
#include "dot/core/plan.h"
#include "dot/core/target.h"

namespace dot::core {
namespace {

// Why `now` is not `after` (nullopt: it is).
std::optional<Drift> compare(const Operation& op, const beneath::FileObservation& now) {
  const Snapshot& want = op.after;
  Drift d;
  d.name = op.name;
  if (!now.exists()) {
    if (!want.exists) return std::nullopt;
    d.reason = DriftReason::Missing;
    d.found = "missing";
    return d;
  }
  if (now.type != beneath::FileType::Regular) {
    d.reason = DriftReason::NotRegular;
    d.found = fmt::format("a {}, not a regular file", beneath::file_type_name(now.type));
    return d;
  }
  if (!want.exists) {
    // The plan left no file here (a rolled-forward removal): one appeared.
    d.reason = DriftReason::Content;
    d.found = "a file where the plan left none";
    return d;
  }
  Snapshot have = snapshot_of(now);
  if (now.too_large || have.sha256 != want.sha256) {
    d.reason = DriftReason::Content;
    d.found = "other content";
    return d;
  }
  if (have.mode != want.mode) {
    d.reason = DriftReason::Mode;
    d.found = fmt::format("mode {:04o}, the plan wrote {:04o}", have.mode, want.mode);
    return d;
  }
  if (have.uid != want.uid || have.gid != want.gid) {
    d.reason = DriftReason::Owner;
    d.found = fmt::format("owner {}:{}, the plan wrote {}:{}", have.uid, have.gid, want.uid, want.gid);
    return d;
  }
  return std::nullopt;
}

}  // namespace

std::string_view drift_reason_name(DriftReason reason) noexcept {
  switch (reason) {
    case DriftReason::Missing: return "missing";
    case DriftReason::NotRegular: return "not_regular";
    case DriftReason::Content: return "content";
    case DriftReason::Mode: return "mode";
    case DriftReason::Owner: return "owner";
  }
  return "content";
}

Result<std::vector<Drift>> find_drift(Root& root) {
  DOT_ASSIGN_OR_RETURN(auto applied, root.store().applied_plans());
  std::vector<Drift> out;
  std::set<std::string> seen;  // newest plan first: the first to name a target wins
  for (const auto& p : applied) {
    DOT_ASSIGN_OR_RETURN(Plan plan, decode_canonical_plan(p.canonical_plan));
    for (const Operation& op : plan.operations) {
      if (!seen.insert(op.name).second) continue;
      // decode_canonical_plan checked the name against the slot pattern: one
      // entry directly under the root.
      DOT_ASSIGN_OR_RETURN(beneath::FileObservation now,
                           beneath::observe_beneath(root.root_fd(), op.name, {.max_bytes = kMaxTargetBytes}));
      if (auto d = compare(op, now)) {
        d->plan_id = p.plan_id;
        out.push_back(std::move(*d));
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const Drift& a, const Drift& b) { return a.name < b.name; });
  return out;
}

}  // namespace dot::core
