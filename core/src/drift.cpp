// Drift: managed targets that no longer hold what their last plan wrote (drift.h).
#include "dot/core/drift.h"

#include <algorithm>
#include <cerrno>
#include <set>

#include <fmt/format.h>

#include "dot/base/beneath.h"
#include "dot/base/byte_stream.h"
#include "dot/core/plan.h"
#include "dot/core/plan_v2.h"
#include "dot/core/stat_cache.h"
#include "dot/core/target.h"
#include "dot/dpp/general.h"
#include "plan_v2_reader.h"

namespace dot::core {
namespace {

// "owner U:G, the plan wrote U:G" when `uid`:`gid` is not the owner the
// plan wrote (a link and a file are owned alike).
std::optional<std::string> other_owner(std::uint64_t uid, std::uint64_t gid, const Snapshot& want) {
  if (uid == want.uid && gid == want.gid) return std::nullopt;
  return fmt::format("owner {}:{}, the plan wrote {}:{}", uid, gid, want.uid, want.gid);
}

// Why `now` is not `want`, what the plan left at `name` (nullopt: it is).
std::optional<Drift> compare(std::string_view name, const Snapshot& want, const beneath::FileObservation& now) {
  auto drift = [name](DriftReason reason, std::string found) {
    return std::optional<Drift>(Drift{std::string(name), reason, {}, std::move(found)});
  };
  if (!now.exists()) return want.exists ? drift(DriftReason::Missing, "missing") : std::nullopt;
  if (now.type == beneath::FileType::Symlink && want.is_link()) {
    // A link the plan made: its text is what it holds (never followed).
    if (now.too_large || now.link_text != want.link_text)
      return drift(DriftReason::Content, "a symlink with other link text");
    if (auto owner = other_owner(now.uid, now.gid, want)) return drift(DriftReason::Owner, *owner);
    return std::nullopt;
  }
  if (want.is_link())
    return drift(DriftReason::NotRegular,
                 fmt::format("a {}, not the symlink the plan made", beneath::file_type_name(now.type)));
  if (now.type != beneath::FileType::Regular)
    return drift(DriftReason::NotRegular, fmt::format("a {}, not a regular file", beneath::file_type_name(now.type)));
  // The plan left no file here (a rolled-forward removal): one appeared.
  if (!want.exists) return drift(DriftReason::Content, "a file where the plan left none");
  Snapshot have = snapshot_of(now);
  if (now.too_large || have.sha256 != want.sha256) return drift(DriftReason::Content, "other content");
  if (have.mode != want.mode)
    return drift(DriftReason::Mode, fmt::format("mode {:04o}, the plan wrote {:04o}", have.mode, want.mode));
  if (auto owner = other_owner(have.uid, have.gid, want)) return drift(DriftReason::Owner, *owner);
  return std::nullopt;
}

}  // namespace

std::string_view drift_reason_name(DriftReason reason) noexcept {
  switch (reason) {
    case DriftReason::Missing:
      return "missing";
    case DriftReason::NotRegular:
      return "not_regular";
    case DriftReason::Content:
      return "content";
    case DriftReason::Mode:
      return "mode";
    case DriftReason::Owner:
      return "owner";
  }
  return "content";
}

Result<std::vector<Drift>> find_drift(Root& root, const std::set<std::string, std::less<>>* only) {
  DOT_ASSIGN_OR_RETURN(auto applied, root.store().applied_plans());
  std::vector<Drift> out;
  std::set<std::string> seen;  // newest plan first: the first to name a target wins
  // A forgotten path is judged only against a plan applied after it was
  // released (store::Store::release_paths).
  DOT_ASSIGN_OR_RETURN(auto released, root.store().released_paths());
  // The plan's stat cache: a target whose stat matches is not read. Only
  // read here (status is read-only): plan keeps the entries current.
  StatCache cache(root.store());
  auto judge = [&](const store::AppliedPlan& p, const std::string& name, const Snapshot& after,
                   std::size_t max_bytes) -> Status {
    if (only && !only->count(name)) return {};
    if (!seen.insert(name).second) return {};
    if (auto r = released.find(name); r != released.end() && p.id <= r->second) return {};
    auto now = cache.observe(root.root_fd(), name, max_bytes);
    std::optional<Drift> d;
    if (now.ok()) {
      d = compare(name, after, *now);
    } else if (now.error().code == Code::PathEscape || beneath::error_errno(now.error()) == ENOTDIR) {
      // A version-2 path whose folder became a symlink or a file: the
      // target is not there as a file of its own (nothing is followed).
      d = Drift{name, DriftReason::NotRegular, {}, "a symlink or a file where a folder on its path was"};
    } else {
      return std::move(now).error();
    }
    if (d) {
      d->plan_id = p.plan_id;
      out.push_back(std::move(*d));
    }
    return {};
  };
  for (const auto& p : applied) {
    if (p.streamed) {
      // Read as it streams (a plan of 100,000 operations is never held
      // whole); the reader checked every path against dpp/path_rules.h. A
      // plan that turns out tampered fails the whole call: what was judged
      // of it is never shown.
      PlanV2Reader reader(
          [&](PathOperation&& op) { return judge(p, op.path, op.after, dpp::general::kLimits.max_file_bytes); });
      DOT_TRY(root.store().read_plan_text(p.id, reader));
      DOT_TRY(reader.finish());
      continue;
    }
    StringSink text;
    DOT_TRY(root.store().read_plan_text(p.id, text));
    DOT_ASSIGN_OR_RETURN(Plan plan, decode_canonical_plan(text.out));
    // decode_canonical_plan checked each name against the slot pattern: one
    // entry directly under the root.
    for (const Operation& op : plan.operations) DOT_TRY(judge(p, op.name, op.after, kMaxTargetBytes));
  }
  std::sort(out.begin(), out.end(), [](const Drift& a, const Drift& b) { return a.name < b.name; });
  return out;
}

}  // namespace dot::core
