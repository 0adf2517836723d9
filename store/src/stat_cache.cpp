// The stat cache's rows (store.h, "the stat cache"): what core last saw of
// each target, so that an unchanged target is not read again.
#include <fmt/format.h>

#include "dot/store/error_kinds.h"
#include "store_impl.h"

namespace dot::store {

Result<std::optional<StatEntry>> Store::stat_entry(std::string_view path) {
  auto& db = impl_->db;
  DOT_ASSIGN_OR_RETURN(auto s, db.query("SELECT dev, ino, size, mtime_ns, ctime_ns, mode, uid, gid, sha256, "
                                        "recorded_ns FROM stat_cache WHERE path = ?1",
                                        path));
  DOT_ASSIGN_OR_RETURN(bool row, s.step());
  if (!row) return std::optional<StatEntry>();
  StatEntry e;
  e.path = path;
  s.columns(0, e.dev, e.ino, e.size, e.mtime_ns, e.ctime_ns, e.mode, e.uid, e.gid, e.sha256, e.recorded_ns);
  return std::optional<StatEntry>(std::move(e));
}

Store::ReadScope::ReadScope(std::unique_ptr<detail::ReadTxn> txn) : txn_(std::move(txn)) {}
Store::ReadScope::ReadScope(ReadScope&&) noexcept = default;
Store::ReadScope::~ReadScope() = default;

Result<Store::ReadScope> Store::read_scope() {
  DOT_ASSIGN_OR_RETURN(detail::ReadTxn txn, detail::ReadTxn::begin(impl_->db));
  return ReadScope(std::make_unique<detail::ReadTxn>(std::move(txn)));
}

Status Store::remember_stats(const std::vector<StatEntry>& entries) {
  DOT_TRY(impl_->writable());
  for (const StatEntry& e : entries)
    if (e.sha256.size() != 64 || !is_lower_hex(e.sha256) || e.size < 0)
      return make_error(store::ErrorKind::StatEntry,
                        fmt::format("the stat of \"{}\" carries digest \"{}\" and size {}: a digest is 64 "
                                    "lowercase hex characters and a size is not negative",
                                    e.path.substr(0, 512), e.sha256.substr(0, 80), e.size));
  if (entries.empty()) return {};
  auto& db = impl_->db;
  DOT_ASSIGN_OR_RETURN(auto txn, detail::WriteTxn::begin(db));
  for (const StatEntry& e : entries) {
    DOT_TRY(
        db.run("INSERT OR REPLACE INTO stat_cache (path, dev, ino, size, mtime_ns, ctime_ns, mode, uid, gid, "
               "sha256, recorded_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
               e.path, e.dev, e.ino, e.size, e.mtime_ns, e.ctime_ns, e.mode, e.uid, e.gid, e.sha256, e.recorded_ns));
  }
  DOT_TRY(txn.commit());
  impl_->fire("store.stat_cache");
  return {};
}

}  // namespace dot::store
