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
  Status lookup_failed;
  std::int64_t read_at = 0;
  bool hit = false;
  beneath::ObserveOptions options{.max_bytes = max_bytes};
  options.known_digest = [&](const beneath::FileObservation& st) -> std::optional<std::string> {
    auto entry = store_.stat_entry(path);
    if (!entry.ok()) {
      lookup_failed = std::move(entry).error();
      return std::nullopt;
    }
    if (*entry && stat_entry_matches(**entry, st)) {
      hit = true;
      return std::move((*entry)->sha256);
    }
    // Taken before the bytes are read: a write after it shows a later time.
    read_at = clock_();
    return std::nullopt;
  };
  DOT_ASSIGN_OR_RETURN(beneath::FileObservation o, beneath::observe_beneath(root_fd, path, options));
  DOT_TRY(std::move(lookup_failed));
  if (o.type != beneath::FileType::Regular || o.too_large || o.sha256.empty()) return o;
  if (hit) {
    ++hits_;
    return o;
  }
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
