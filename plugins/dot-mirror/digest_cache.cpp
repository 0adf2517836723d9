// dot-mirror's cache of source digests (digest_cache.h).
#include "digest_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "dot/base/beneath.h"
#include "dot/base/fd.h"
#include "dot/base/racy_time.h"
#include "dot/dpp/path_rules.h"
#include "error_kinds.h"

namespace dot::mirror {
namespace {

constexpr std::string_view kFileName = "digests";
constexpr std::string_view kTempName = "digests.new";
constexpr std::string_view kMagic = "dot-mirror digests 1";
// All its files together. A record is at most about 4.2 KiB (a path of 4095
// bytes); the cache of max_operations files stays well inside this.
constexpr std::size_t kMaxCacheBytes = std::size_t{512} << 20;

// The name of the cache's file `part`: digests, digests.1, digests.2...
std::string part_name(std::size_t part) {
  return part == 0 ? std::string(kFileName) : fmt::format("{}.{}", kFileName, part);
}

Error bad(std::size_t line, std::string_view what) {
  return make_error(ErrorKind::DigestCache, fmt::format("line {}: {}", line, what));
}

// Reads one decimal number, spelled exactly as fmt writes it (no sign but
// a minus, no leading zero), followed by one space, or, when it is the
// `last` of its line, by nothing: the file is canonical, so decoding and
// encoding again gives its bytes.
template <typename T>
bool take_number(std::string_view& rest, T& out, bool last = false) {
  const auto space = rest.find(' ');
  if (last != (space == std::string_view::npos)) return false;
  const std::string_view token = rest.substr(0, space);
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), out);
  if (ec != std::errc() || end != token.data() + token.size() || fmt::format("{}", out) != token) return false;
  rest = last ? std::string_view() : rest.substr(space + 1);
  return true;
}

bool take_digest(std::string_view& rest, Digest& out) {
  if (rest.size() < 65 || rest[64] != ' ') return false;
  const auto digest = Sha256Digest::from_hex(rest.substr(0, 64));
  if (!digest) return false;
  out = digest->bytes();
  rest.remove_prefix(65);
  return true;
}

// The three kinds of line, each written in one place only.
void append_header(std::string& out, const SourceId& source) {
  fmt::format_to(std::back_inserter(out), "{} {} {}\n", kMagic, source.dev, source.ino);
}
void append_record(std::string& out, const CachedDigest& r) {
  fmt::format_to(std::back_inserter(out), "{} {} {} {} {} {} {} {} {}\n", to_hex(r.sha256), r.seen.size, r.seen.dev,
                 r.seen.ino, r.seen.mode, r.seen.mtime_ns, r.seen.ctime_ns, r.recorded_ns, r.path);
}
void append_end(std::string& out, std::size_t count) { fmt::format_to(std::back_inserter(out), "end {}\n", count); }

Result<CachedDigest> decode_record(std::string_view line, std::size_t number) {
  CachedDigest r;
  std::string_view rest = line;
  if (!take_digest(rest, r.sha256)) return bad(number, "no SHA-256 of 64 lowercase hex digits");
  if (!take_number(rest, r.seen.size) || r.seen.size < 0 || !take_number(rest, r.seen.dev) ||
      !take_number(rest, r.seen.ino) || !take_number(rest, r.seen.mode) || !take_number(rest, r.seen.mtime_ns) ||
      !take_number(rest, r.seen.ctime_ns) || !take_number(rest, r.recorded_ns))
    return bad(number, "a number is missing or not written as this cache writes it");
  if (!S_ISREG(r.seen.mode)) return bad(number, "the mode is not a regular file's");
  if (auto rule = dpp::check_path(rest); !rule.ok()) return bad(number, rule.error().detail);
  r.path = std::string(rest);
  return r;
}

}  // namespace

Seen::Seen(const struct stat& st)
    : dev(st.st_dev),
      ino(st.st_ino),
      mode(st.st_mode),
      size(st.st_size),
      mtime_ns(nanoseconds_of(st.st_mtim)),
      ctime_ns(nanoseconds_of(st.st_ctim)) {}

Result<std::vector<CachedDigest>> decode_digest_cache(std::string_view bytes, const SourceId& source) {
  std::vector<CachedDigest> records;
  // One record per line but two: room for them up front (a list grown
  // record by record held both its old and its new copy, 12 MB each at
  // 100,000 files), never more than the bytes can hold (a record's line
  // has a digest, seven numbers and a path: at least 81 bytes), whatever
  // the file holds.
  constexpr std::size_t kShortestRecordLine = 64 + 1 + 7 * 2 + 1 + 1;
  records.reserve(std::min(static_cast<std::size_t>(std::count(bytes.begin(), bytes.end(), '\n')),
                           bytes.size() / kShortestRecordLine));
  std::size_t number = 0;
  bool ended = false;
  while (!bytes.empty()) {
    const auto newline = bytes.find('\n');
    if (newline == std::string_view::npos) return bad(number + 1, "it does not end with a newline");
    const std::string_view line = bytes.substr(0, newline);
    bytes.remove_prefix(newline + 1);
    ++number;
    if (ended) return bad(number, "a line after the end line");
    if (number == 1) {
      std::string_view rest = line;
      SourceId of;
      if (!rest.starts_with(kMagic) || rest.size() == kMagic.size() || rest[kMagic.size()] != ' ')
        return bad(number, fmt::format("not \"{} <dev> <ino>\"", kMagic));
      rest.remove_prefix(kMagic.size() + 1);
      if (!take_number(rest, of.dev) || !take_number(rest, of.ino, /*last=*/true))
        return bad(number, "the source folder is not two numbers");
      if (!(of == source)) return bad(number, "the cache is another source folder's");
      continue;
    }
    if (line.starts_with("end ")) {
      std::string_view rest = line.substr(4);
      std::size_t count = 0;
      if (!take_number(rest, count, /*last=*/true) || count != records.size())
        return bad(number, fmt::format("the end line does not count the {} records", records.size()));
      ended = true;
      continue;
    }
    DOT_ASSIGN_OR_RETURN(CachedDigest r, decode_record(line, number));
    if (!records.empty() && !(records.back().path < r.path))
      return bad(number, "the paths are not in strictly ascending byte order");
    records.push_back(std::move(r));
  }
  if (number == 0) return bad(1, "it is empty");
  if (!ended) return bad(number, "no end line (a cache cut short)");
  return records;
}

Status write_digest_cache(std::span<const CachedDigest* const> records, const SourceId& source,
                          const std::function<Status(std::string_view)>& write) {
  // Handed over about 64 KiB at a time: the text of 100,000 records (15 MB)
  // is never held whole.
  constexpr std::size_t kChunkBytes = 64 * 1024;
  std::string out;
  append_header(out, source);
  for (const CachedDigest* record : records) {
    append_record(out, *record);
    if (out.size() >= kChunkBytes) {
      DOT_TRY(write(out));
      out.clear();
    }
  }
  append_end(out, records.size());
  return write(out);
}

std::string encode_digest_cache(const std::vector<CachedDigest>& records, const SourceId& source) {
  std::string out;
  std::vector<const CachedDigest*> each;
  for (const auto& r : records) each.push_back(&r);
  (void)write_digest_cache(each, source, [&out](std::string_view chunk) {
    out += chunk;
    return Status{};
  });
  return out;
}

DigestCache DigestCache::load(const std::string& folder, const SourceId& source, std::string* why_empty) {
  DigestCache cache;
  cache.source_ = source;
  auto fail = [&](std::string why) {
    if (why_empty) *why_empty = std::move(why);
    cache.loaded_.clear();
    return std::move(cache);
  };
  // The files in order until the first that is missing, within one budget.
  std::size_t budget = kMaxCacheBytes;
  for (std::size_t part = 0;; ++part) {
    const std::string path = folder + "/" + part_name(part);
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (!fd) {
      if (errno == ENOENT) return cache;
      return fail(fmt::format("{}: {}", path, std::strerror(errno)));
    }
    auto bytes = read_all(fd.get(), budget, path);
    if (!bytes.ok()) return fail(bytes.error().message());
    budget -= bytes->size();
    auto records = decode_digest_cache(*bytes, source);
    if (!records.ok()) return fail(fmt::format("{}: {}", path, records.error().detail));
    if (part == 0) {
      // Taken whole (the usual cache is one file): appended record by record
      // it would be held twice at its largest.
      cache.loaded_ = std::move(records).value();
      continue;
    }
    if (!records->empty() && !cache.loaded_.empty() && !(cache.loaded_.back().path < records->front().path))
      return fail(fmt::format("{}: its first path does not come after the last of {}", path, part_name(part - 1)));
    cache.loaded_.insert(cache.loaded_.end(), std::make_move_iterator(records->begin()),
                         std::make_move_iterator(records->end()));
  }
}

std::optional<Digest> DigestCache::lookup(std::string_view path, const Seen& now) {
  auto it = std::lower_bound(loaded_.begin(), loaded_.end(), path,
                             [](const CachedDigest& r, std::string_view p) { return r.path < p; });
  if (it == loaded_.end() || it->path != path || !(it->seen == now) ||
      !settled_before(now.mtime_ns, now.ctime_ns, it->recorded_ns))
    return std::nullopt;
  ++hits_;
  next_.push_back(static_cast<std::uint32_t>(it - loaded_.begin()));
  return it->sha256;
}

void DigestCache::record(CachedDigest fresh) {
  ++misses_;
  next_.push_back(static_cast<std::uint32_t>(loaded_.size() + fresh_.size()));
  fresh_.push_back(std::move(fresh));
}

Status DigestCache::save(const std::string& folder, std::uint64_t max_file_bytes) {
  std::stable_sort(next_.begin(), next_.end(),
                   [this](std::uint32_t a, std::uint32_t b) { return at(a).path < at(b).path; });
  // A path walked twice (a source changing under the walk) keeps its last
  // record: unique from the back keeps the last of each run, at the end.
  next_.erase(next_.begin(), std::unique(next_.rbegin(), next_.rend(), [this](std::uint32_t a, std::uint32_t b) {
                               return at(a).path == at(b).path;
                             }).base());
  bool same = next_.size() == loaded_.size();
  for (std::size_t k = 0; same && k < next_.size(); ++k) same = at(next_[k]) == loaded_[k];
  if (same) return {};
  std::vector<const CachedDigest*> records;
  records.reserve(next_.size());
  for (std::uint32_t i : next_) records.push_back(&at(i));
  // Where each file ends: as many records as fit, by the exact size of
  // their lines, all decided before anything is written.
  std::string scratch;
  auto size_of = [&scratch](auto append, const auto& what) {
    scratch.clear();
    append(scratch, what);
    return scratch.size();
  };
  auto end_line = [&](std::size_t count) { return size_of(append_end, count); };
  const std::size_t header = size_of(append_header, source_);
  std::vector<std::size_t> ends;  // one past each file's last record
  std::size_t from = 0;
  std::size_t bytes = header;
  for (std::size_t k = 0; k < records.size(); ++k) {
    const CachedDigest& r = *records[k];
    const std::size_t line = size_of(append_record, r);
    if (k > from && bytes + line + end_line(k - from + 1) > max_file_bytes) {
      ends.push_back(k);
      from = k;
      bytes = header;
    }
    if (bytes + line + end_line(1) > max_file_bytes)
      return make_error(ErrorKind::DigestCache,
                        fmt::format("the record of {} alone is over the {}-byte file limit", r.path, max_file_bytes));
    bytes += line;
  }
  ends.push_back(records.size());

  UniqueFd dir(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) return beneath::errno_error(errno, "open", folder);
  const std::string temp(kTempName);
  std::size_t part = 0;
  for (std::size_t begin = 0; std::size_t end : ends) {
    UniqueFd out(::openat(dir.get(), temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!out) return beneath::errno_error(errno, "open", folder + "/" + temp);
    DOT_TRY(write_digest_cache(std::span(records).subspan(begin, end - begin), source_,
                               [&](std::string_view chunk) { return write_all(out.get(), chunk, temp); }));
    out.reset();
    // No fsync: a cache lost or cut short by a crash is an empty one.
    if (::renameat(dir.get(), temp.c_str(), dir.get(), part_name(part).c_str()) != 0)
      return beneath::errno_error(errno, "rename", folder + "/" + temp);
    ++part;
    begin = end;
  }
  // The files of a larger cache before this one.
  for (;; ++part) {
    if (::unlinkat(dir.get(), part_name(part).c_str(), 0) == 0) continue;
    if (errno == ENOENT) return {};
    return beneath::errno_error(errno, "unlink", folder + "/" + part_name(part));
  }
}

}  // namespace dot::mirror
