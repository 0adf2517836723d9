#pragma once
// The stat cache of plan and status, like git's index: for each target core
// observed, the stat fields that change whenever its content can have, with
// the SHA-256 of the content then (store table stat_cache). A target whose
// stat still matches is not read again, unless the racy-timestamp rule
// (dot/base/racy_time.h) says its times prove nothing.
//
// Only what core observes to propose or to judge drift goes through it;
// apply re-checks every target by its content (recheck_target), never by
// its stat, so a wrong entry can cost a refused apply, never a wrong write.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/beneath.h"
#include "dot/base/racy_time.h"
#include "dot/base/result.h"
#include "dot/store/store.h"

namespace dot::core {

// Whether `entry` may be trusted for a file that shows `now` (every stat
// field equal, and the entry not racy).
bool stat_entry_matches(const store::StatEntry& entry, const beneath::FileObservation& now);

class StatCache {
 public:
  using Clock = std::function<std::int64_t()>;
  explicit StatCache(store::Store& store, Clock clock = realtime_ns) : store_(store), clock_(std::move(clock)) {}

  // observe_beneath of `path`, answered from the cache when the target's
  // stat matches its entry (one fstatat in its folder, nothing opened or
  // read: beneath::FolderStat); otherwise the target is read and hashed,
  // and what was seen is kept for save(). Errors are observe_beneath's and
  // the store's.
  Result<beneath::FileObservation> observe(int root_fd, std::string_view path, std::size_t max_bytes);

  // The entries of the targets read since the last save, in one store
  // transaction (none: nothing written).
  Status save();

  std::size_t read_count() const noexcept { return reads_; }  // targets read and hashed
  std::size_t hit_count() const noexcept { return hits_; }    // targets answered from the cache

 private:
  store::Store& store_;
  Clock clock_;
  std::optional<beneath::FolderStat> folders_;  // of the last root observed in
  std::vector<store::StatEntry> seen_;
  std::size_t reads_ = 0;
  std::size_t hits_ = 0;
};

}  // namespace dot::core
