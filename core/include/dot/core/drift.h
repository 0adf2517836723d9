#pragma once
// Drift: managed targets that no longer hold what the plan that last wrote
// them left there. `status` shows it; it reads, never writes.

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "dot/base/result.h"
#include "dot/core/root.h"

namespace dot::core {

enum class DriftReason {
  Missing,     // the target is gone
  NotRegular,  // something else is there now (a symlink, a directory, a FIFO...)
  Content,     // other bytes (or more than a target may hold)
  Mode,        // same bytes, other permission bits
  Owner,       // same bytes and mode, other uid or gid
};
// "missing", "not_regular", "content", "mode", "owner" (the JSON values).
std::string_view drift_reason_name(DriftReason reason) noexcept;

struct Drift {
  std::string name;
  DriftReason reason = DriftReason::Content;
  std::string plan_id;  // the plan that wrote the target last
  std::string found;    // for people: what is there now ("a symlink", "mode 0644", ...)
};

// For every target a DONE or COMMITTED transaction wrote, the newest such
// plan's `after` snapshot against the target observed now, beneath the
// root's descriptor without following symlinks and without opening anything
// but a regular file (a FIFO is never opened for reading). A target whose
// newest plan left it absent is drift when it exists. One reason per target,
// the first that applies in the order of DriftReason. Name order. With
// `only`, just those targets are observed and judged (what `plan` asks
// about the paths it writes: a plan of one edit in a tree of 100,000 files
// observes one target again, not all of them).
Result<std::vector<Drift>> find_drift(Root& root, const std::set<std::string, std::less<>>* only = nullptr);

}  // namespace dot::core
