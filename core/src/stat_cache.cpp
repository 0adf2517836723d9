// The stat cache of plan and status (stat_cache.h): one lookup, in observe.
#include "dot/core/stat_cache.h"

namespace dot::core {

bool stat_entry_matches(const store::StatEntry& e, const beneath::FileObservation& now) {
  if (now.type != beneath::FileType::Regular) return false;
  const bool same = e.dev == static_cast<std::int64_t>(now.dev) && e.ino == static_cast<std::int64_t>(now.ino) &&
                    e.size == static_cast<std::int64_t>(now.size) && e.mtime_ns == now.mtime_ns &&
                    e.ctime_ns == now.ctime_ns && e.mode == static_cast<std::int64_t>(now.mode) &&
                    e.uid == static_cast<std::int64_t>(now.uid) && e.gid == static_cast<std::int64_t>(now.gid);
  return same && settled_before(e.mtime_ns, e.ctime_ns, e.recorded_ns);
}

Result<beneath::FileObservation> StatCache::observe(int root_fd, std::string_view path, std::size_t max_bytes) {
  if (!folders_ || folders_->root_fd() != root_fd) folders_.emplace(root_fd);
  if (auto now = folders_->stat(path); now && now->type == beneath::FileType::Regular && now->size <= max_bytes) {
    DOT_ASSIGN_OR_RETURN(std::optional<store::StatEntry> entry, store_.stat_entry(path));
    if (entry && stat_entry_matches(*entry, *now)) {
      ++hits_;
      now->sha256 = std::move(entry->sha256);
      return *now;
    }
  }
  // Taken before the bytes are read: a write after it shows a later time.
  const std::int64_t read_at = clock_();
  DOT_ASSIGN_OR_RETURN(beneath::FileObservation o, beneath::observe_beneath(root_fd, path, {.max_bytes = max_bytes}));
  if (o.type != beneath::FileType::Regular || o.too_large || o.sha256.empty()) return o;
  ++reads_;
  seen_.push_back(store::StatEntry{.path = std::string(path),
                                   .dev = static_cast<std::int64_t>(o.dev),
                                   .ino = static_cast<std::int64_t>(o.ino),
                                   .size = static_cast<std::int64_t>(o.size),
                                   .mtime_ns = o.mtime_ns,
                                   .ctime_ns = o.ctime_ns,
                                   .mode = o.mode,
                                   .uid = o.uid,
                                   .gid = o.gid,
                                   .sha256 = o.sha256,
                                   .recorded_ns = read_at});
  return o;
}

Status StatCache::save() {
  if (seen_.empty()) return {};
  DOT_TRY(store_.remember_stats(seen_));
  seen_.clear();
  return {};
}

}  // namespace dot::core
