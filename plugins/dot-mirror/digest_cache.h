#pragma once
// dot-mirror's cache of source digests, kept in the folder core grants with
// the "cache" capability (docs/spec/dpp-general.md, "The plugin's cache"):
// for each source file hashed, the stat fields that change whenever its
// bytes can have, with the SHA-256 read then. A file whose stat still
// matches, and whose times had settled when it was read (the racy rule,
// dot/base/racy_time.h), is not read again: a no-change plan of a large tree
// costs a walk, not a read of every file.
//
// The cache is a convenience, never a source of truth: a cache that is
// missing, of another source folder, or not one this code wrote is an empty
// cache (every file read again), and a wrong digest from it is caught where
// every digest is: the staged bytes must hash to what dot.plan declared.
//
// A file of the cache (text, one record per line):
//   dot-mirror digests 1 <source dev> <source ino>
//   <sha256 hex> <size> <dev> <ino> <mode> <mtime ns> <ctime ns> <recorded ns> <path>
//   ...
//   end <number of records>
// every number in decimal without sign or leading zero (times may be
// negative: a file from before 1970), paths by the protocol's path rules
// (no control byte, so never a newline) in strictly ascending byte order.
//
// The cache is `digests` in the cache folder, then `digests.1`, `digests.2`
// and so on while it needs more: each file is a whole cache of its records,
// the paths ascending from one file to the next, and none is larger than
// the plugin may write (max_file_bytes: under process assurance a larger
// write is killed by RLIMIT_FSIZE, and 100,000 records of 64-byte paths are
// 21 MB). Each record is a statement about one file that the racy rule
// checks on its own, so files of two saves (a crash between two renames)
// are as good as one save's, as long as the paths still ascend.

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/result.h"
#include "dot/base/sha256.h"

namespace dot::mirror {

// What tells that a file changed between two looks at it: device, inode,
// mode, size, mtime and ctime.
struct Seen {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  std::uint32_t mode = 0;
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  Seen() = default;  // a link's: nothing is staged for it
  explicit Seen(const struct stat& st);
  bool operator==(const Seen&) const = default;
};

// The source folder a cache belongs to.
struct SourceId {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  bool operator==(const SourceId&) const = default;
};

struct CachedDigest {
  std::string path;
  Seen seen;
  std::int64_t recorded_ns = 0;  // CLOCK_REALTIME before the bytes were read
  Digest sha256{};
  bool operator==(const CachedDigest&) const = default;
};

// The records of a cache file's bytes, for `source`. Errors: Code::Validation
// kind digest_cache naming the line and what is wrong with it (another
// source folder, another version, a malformed or unordered record, a
// missing or wrong end line).
Result<std::vector<CachedDigest>> decode_digest_cache(std::string_view bytes, const SourceId& source);
// The bytes of a cache file of `records` (in strictly ascending path order),
// whole or handed to `write` in chunks as they are encoded.
std::string encode_digest_cache(const std::vector<CachedDigest>& records, const SourceId& source);
Status write_digest_cache(std::span<const CachedDigest* const> records, const SourceId& source,
                          const std::function<Status(std::string_view)>& write);

// One plan's use of the cache: what the last plan left (load), looked up
// per file, and what this plan saw (record, keep), written back only when
// it differs.
class DigestCache {
 public:
  // The cache of `source` in `folder`; a missing file is an empty cache, any
  // other problem too, said in `*why_empty` (for a warning).
  static DigestCache load(const std::string& folder, const SourceId& source, std::string* why_empty);

  // The digest of `path` when its record's stat equals `now` and its times
  // had settled when it was read; the record is kept for the next plan.
  std::optional<Digest> lookup(std::string_view path, const Seen& now);
  // A file read and hashed by this plan (its record replaces any older one).
  void record(CachedDigest fresh);

  // Writes what this plan looked up or recorded as the new cache, in files
  // of at most `max_file_bytes` (each a temporary file renamed over the old
  // one; the old cache's files beyond the new one's removed), unless it is
  // what was loaded.
  Status save(const std::string& folder, std::uint64_t max_file_bytes);

  std::size_t hits() const noexcept { return hits_; }
  std::size_t misses() const noexcept { return misses_; }

 private:
  // This plan's record of index i: loaded_[i], or fresh_[i - loaded_.size()].
  const CachedDigest& at(std::uint32_t i) const { return i < loaded_.size() ? loaded_[i] : fresh_[i - loaded_.size()]; }

  SourceId source_;
  std::vector<CachedDigest> loaded_;  // ascending by path
  std::vector<CachedDigest> fresh_;   // read by this plan, in walk order
  // This plan's records in walk order, as indices (at(); the cache file's
  // 512 MiB and max_operations keep both lists far below 2^32): a record looked
  // up is the loaded one, never a copy (at 100,000 files a copy of each
  // was 12 MB while the walk held its own).
  std::vector<std::uint32_t> next_;
  std::size_t hits_ = 0;
  std::size_t misses_ = 0;
};

}  // namespace dot::mirror
