// dot-mirror (org.dot.mirror): the general-profile plugin (docs/spec/dpp-general.md)
// that proposes that the managed root mirror one source folder, SRC, its one
// input. docs/user-guide.md ("dot-mirror") says what it does for a user.
//
// dot.initialize: exactly one input (else -32602), opened once
//   (O_NOFOLLOW); every later read is beneath that descriptor, so the folder
//   walked and the folder copied are the same whatever the path names later.
// dot.plan: walks SRC through descriptors (openat2 beneath SRC, no symlink on
//   any component, fstatat without following), one folder open at a time
//   (under process assurance a plugin has 32 descriptors), with an explicit
//   stack: the depth is bounded by the path rules (a folder whose path
//   breaks them is not entered; 4095 bytes allow at most 2048 levels).
//   Each regular file is one `write`, its mode kept (mapped_mode); each
//   folder on the way to a write is named in `directories` with its own mode
//   (mapped_folder_mode), used when core creates it; each `managed` path
//   that SRC no longer has as a regular file one `remove`. Each symlink is
//   one `link` holding its text verbatim (read with readlinkat, never
//   followed; absolute text too). What cannot be proposed is skipped with a
//   dot.log warning: a symlink whose text the protocol refuses (not UTF-8),
//   FIFOs, sockets, devices, a file over max_file_bytes, and names
//   the protocol's path rules refuse (dpp::check_path, the rule core itself
//   applies, so the plugin never sends a path core would refuse).
//   Ignored, without a warning (a git dotfiles repository as the source):
//   every entry named `.git` (a repository's folder, a submodule's file),
//   the top `.dotignore`, and what its rules ignore (gitignore syntax,
//   dot/base/ignore_rules.h; an ignored folder is not entered).
//   A managed path the walk skipped or ignored is neither written nor
//   removed: a removal is proposed only for what SRC no longer holds.
//   Each regular file is read once, in chunks, to declare its SHA-256 and
//   size (digests, when core offers them), checked before and after to be
//   the file it listed; with the "cache" capability too, only when its
//   stat differs from what the last plan recorded in the cache folder
//   (digest_cache.h), so that a plan of an unchanged tree reads no file.
// dot.materialize: copies each file core asks for (every write without
//   digests; with them only those whose target differs) into the stage in
//   chunks (copy_staged_file), after checking that it is the file dot.plan
//   saw (device, inode, size, mode, mtime and ctime), and again after the
//   copy, its bytes hashing to what dot.plan declared; a file that changed
//   is an error response naming it.
//
// What cannot be mirrored is an error response (-32000), never a partial
// plan that would remove what it could not see: sources over
// max_total_bytes together, more operations than max_operations, a folder
// of SRC that cannot be read, a `.dotignore` that is not a rule file.
//
// The id echoed is the one dot-core registered the plugin under
// (DOT_PLUGIN_ID), so that a root can mirror several sources, each under its
// own `register --id`; org.dot.mirror without it.
#include <sys/stat.h>

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "digest_cache.h"
#include "dot/base/beneath.h"
#include "dot/base/error_kinds.h"
#include "dot/base/fd.h"
#include "dot/base/ignore_rules.h"
#include "dot/base/racy_time.h"
#include "dot/base/sha256.h"
#include "dot/base/utf8.h"
#include "dot/dpp/error_kinds.h"
#include "dot/dpp/path_rules.h"
#include "dot/dpp/runtime.h"
#include "error_kinds.h"

namespace dot::mirror {
namespace {

namespace g = dot::dpp::general;

constexpr std::string_view kId = "org.dot.mirror";
// The source's ignore file, read from its top folder only.
constexpr std::string_view kIgnoreFile = ".dotignore";

// A source file's mode as the plan asks for it, never granting more: the
// permission bits kept as they are (0640 stays 0640, 0750 stays 0750)
// except that write stays the owner's alone (a group's write bit is
// dropped: whether the target's group is the owner's private one is not
// this plugin's to know) and set-id and sticky bits are dropped. The
// owner's read bit is added, the one bit granted: dot-core must read what
// it backs up and compares.
std::uint32_t mapped_mode(mode_t mode) { return (mode & 0755) | 0400; }
// A source folder's mode for the folder core creates in its place: the same
// rule, with the owner's read, write and search bits (core enters and
// writes the folders it creates).
std::uint64_t mapped_folder_mode(mode_t mode) { return (mode & 0755) | 0700; }

// A source path in a message: plugin-side text, escaped (dot::shown) and
// cut, so that a message stays within dot.log's 4096 bytes.
std::string show(std::string_view path) {
  constexpr std::size_t kShown = 256;
  std::string out = "\"" + shown(path.substr(0, kShown)) + "\"";
  if (path.size() > kShown) out += fmt::format(" ({} bytes)", path.size());
  return out;
}

// A regular file of SRC as dot.plan saw it (a write): what materialize
// copies, how it tells that the file changed in between, and the digest
// dot.plan declared; or one of its symlinks (a link: its text verbatim,
// never followed; nothing is staged for it).
// (One per source file, 100,000 of them at once: the members are ordered so
// that it is 128 bytes, and a link's text is behind a pointer.)
struct SourceFile {
  std::string path;
  Seen seen;
  std::unique_ptr<std::string> link_text{};
  std::optional<Digest> sha256{};  // read at plan time when digests are declared
  std::uint32_t mode = 0;          // mapped; 0 for a link
};
static_assert(sizeof(SourceFile) <= 128);

// The folder prefixes of `path` ("a" and "a/b" of "a/b/c").
template <typename F>
void for_each_parent(std::string_view path, F&& f) {
  for (auto slash = path.find('/'); slash != std::string_view::npos; slash = path.find('/', slash + 1))
    f(path.substr(0, slash));
}

// dot.log warnings within max_log_messages (counted over the whole run):
// each is sent while room is left for the two closing lines; the rest are
// counted and summed up in one. Nothing is sent when log was not negotiated.
class Notes {
 public:
  Notes(g::Context& ctx, std::uint64_t& sent) : ctx_(ctx), sent_(sent) {}

  void warn(const std::string& message) {
    if (sent_ + kClosing < ctx_.initialize_params().limits.max_log_messages) {
      send("warning", message);
    } else {
      ++held_;
    }
  }
  // The summary of what was held back, then `line` at info.
  void close(const std::string& line) {
    if (held_ > 0)
      send("warning", fmt::format("{} more entries of the source were skipped (not listed: at most {} "
                                  "dot.log messages per run)",
                                  held_, ctx_.initialize_params().limits.max_log_messages));
    send("info", line);
  }

 private:
  static constexpr std::uint64_t kClosing = 2;
  void send(std::string_view level, const std::string& message) {
    if (ctx_.log_negotiated() && ctx_.log(level, message).ok()) ++sent_;
  }
  g::Context& ctx_;
  std::uint64_t& sent_;
  std::uint64_t held_ = 0;
};

class Mirror final : public g::Plugin {
 public:
  std::string id() const override { return id_; }
  bool wants_log() const override { return true; }
  bool declares_digests() const override { return true; }
  bool keeps_cache() const override { return true; }

  Status initialize(g::Context&, const g::InitializeParams& params) override {
    if (params.inputs.size() != 1)
      return g::invalid_params(
          fmt::format("dot-mirror takes exactly one input (the folder to mirror), "
                      "given {}; register it with one --input",
                      params.inputs.size()));
    const std::string& src = params.inputs[0];
    if (src.empty() || src.front() != '/')
      return g::invalid_params(fmt::format("the input {} is not an absolute path", show(src)));
    auto fd = beneath::open_root(src);
    if (!fd.ok()) {
      Error e = std::move(fd).error();
      e.detail = fmt::format("cannot open the source folder: {}", e.detail);
      return e;
    }
    src_ = std::move(fd).value();
    src_name_ = src;
    struct stat st {};
    if (::fstat(src_.get(), &st) != 0) return beneath::errno_error(errno, "fstat", src);
    src_id_ = SourceId{st.st_dev, st.st_ino};
    return {};
  }

  Status plan_each(g::Context& ctx, const std::vector<std::string>& managed, g::OperationOut& out) override {
    const g::Limits& limits = ctx.initialize_params().limits;
    DOT_TRY(check_managed(managed));
    Notes notes(ctx, logs_sent_);
    // The digests an earlier plan read, when core keeps a cache folder for
    // this plugin (only digests are cached: without them nothing is read).
    const std::string* cache_folder = ctx.digests_negotiated() ? ctx.cache_folder() : nullptr;
    if (cache_folder) {
      std::string why_empty;
      cache_.emplace(DigestCache::load(*cache_folder, src_id_, &why_empty));
      if (!why_empty.empty())
        notes.warn(fmt::format("the digest cache was set aside ({}): every file is read", why_empty));
    }
    DOT_TRY(walk(notes, limits, ctx.digests_negotiated()));
    std::size_t cache_hits = 0;
    if (cache_) {
      if (auto saved = cache_->save(*cache_folder, limits.max_file_bytes); !saved.ok())
        notes.warn(fmt::format("the digest cache could not be written ({}): the next plan reads every file again",
                               saved.error().message()));
      // Saved, it is no longer needed: its records (two per file, about
      // 25 MB at 100,000 files) go before the operations are built.
      cache_hits = cache_->hits();
      cache_.reset();
    }
    std::size_t held = 0;
    const std::vector<std::string_view> removed = removals(notes, managed, held);
    defer_clashes(notes, removed);
    if (files_.size() + removed.size() > limits.max_operations)
      return make_error(dpp::ErrorKind::MaxOperations,
                        fmt::format("mirroring {} takes {} operations ({} writes, {} removals), more than "
                                    "max_operations {}",
                                    show(src_name_), files_.size() + removed.size(), files_.size(), removed.size(),
                                    limits.max_operations));
    // The operations are the writes and links (files_) and the removals,
    // both in path order, merged: std::string compares as unsigned bytes,
    // UTF-8 byte order. Sound by construction; checked with core's own
    // rules all the same, so that a source changing under the walk (a name
    // listed twice) is this plugin's error and never a plan core refuses.
    // Only then is each operation built and handed on (the runtime sends
    // them in batches): the plan never exists whole.
    const auto each = [&](auto&& take) -> Status {
      std::size_t r = 0;
      for (const SourceFile& f : files_) {
        for (; r < removed.size() && removed[r] < f.path; ++r) DOT_TRY(take(nullptr, removed[r]));
        DOT_TRY(take(&f, f.path));
      }
      for (; r < removed.size(); ++r) DOT_TRY(take(nullptr, removed[r]));
      return {};
    };
    {
      std::vector<std::string_view> paths;
      std::vector<std::string_view> writes;
      paths.reserve(files_.size() + removed.size());
      Status refused;
      DOT_TRY(each([&](const SourceFile* f, std::string_view path) -> Status {
        paths.push_back(path);
        if (f && !f->link_text) writes.push_back(path);
        if (refused.ok())
          refused =
              dpp::check_proposed_operation(f ? dpp::ProposedOperation{f->link_text ? "link" : "write", f->mode, path,
                                                                       f->link_text ? &*f->link_text : nullptr}
                                              : dpp::ProposedOperation{"remove", 0, path, nullptr});
        return {};
      }));
      Status st = dpp::check_plan_paths(paths);
      if (st.ok()) st = refused;
      if (!st.ok())
        return make_error(ErrorKind::InvalidPlan,
                          fmt::format("the walk of {} gave a plan core would refuse (did it change meanwhile?): {}",
                                      show(src_name_), st.error().message()));
      DOT_TRY(collect_folders(writes));
    }
    notes.close(fmt::format(
        "mirroring {}: {} files to write, {} managed paths to remove, {} entries skipped, "
        "{} ignored, {} managed paths kept as they are; {} files read to hash, {} known from the cache",
        show(src_name_), files_.size(), removed.size(), skipped_.size(), ignored_.size(), held, hashed_, cache_hits));
    return each([&](const SourceFile* f, std::string_view path) -> Status {
      if (!f) return out.add({"remove", 0, std::string(path)});
      if (f->link_text) return out.add(g::link_operation(f->path, *f->link_text));
      std::optional<g::Digest> declared;
      if (f->sha256) declared = g::Digest{to_hex(*f->sha256), static_cast<std::uint64_t>(f->seen.size)};
      return out.add({"write", f->mode, f->path, std::nullopt, std::move(declared)});
    });
  }

  std::vector<g::FolderRequest> folders() const override { return folders_; }

  // Each file staged is handed on at once (the runtime sends full batches):
  // the artifacts of 100,000 files, a path and a digest each, are never
  // listed whole.
  Status materialize_each(g::Context& ctx, const std::string& stage, g::ArtifactOut& out) override {
    for (const std::string& path : ctx.paths_to_stage()) {
      // The runtime holds the paths asked for to the plan's writes.
      const SourceFile* file = find_file(path);
      if (file == nullptr || file->link_text)
        return g::invalid_params(
            fmt::format("dot.materialize asks for {}, which this plan does not write", show(path)));
      DOT_ASSIGN_OR_RETURN(g::Artifact art, stage_one(*file, stage));
      DOT_TRY(out.add(std::move(art)));
    }
    return {};
  }

 private:
  // The write or link of `path` in files_ (in path order), or nullptr.
  const SourceFile* find_file(std::string_view path) const {
    auto it = std::lower_bound(files_.begin(), files_.end(), path,
                               [](const SourceFile& f, std::string_view p) { return f.path < p; });
    return it == files_.end() || it->path != path ? nullptr : &*it;
  }

  // The managed paths SRC no longer holds at all (views into `managed`);
  // one the walk skipped or ignored is kept and counted in `held`.
  std::vector<std::string_view> removals(Notes& notes, const std::vector<std::string>& managed,
                                         std::size_t& held) const {
    std::vector<std::string_view> removed;
    for (const auto& path : managed) {
      if (find_file(path) != nullptr) continue;
      if (auto why = held_by_walk(path)) {
        ++held;
        notes.warn(fmt::format("{} is managed and the source {}: left as it is (still managed)", show(path), *why));
        continue;
      }
      removed.push_back(path);
    }
    return removed;
  }

  // No path of a plan may be a parent folder of another: a path that is a
  // file on one side and a folder on the other is removed first, and the
  // write waits for the next plan (what it needs: the old side gone). The
  // writes that wait leave files_.
  void defer_clashes(Notes& notes, const std::vector<std::string_view>& removed) {
    const std::unordered_set<std::string_view> removed_set(removed.begin(), removed.end());
    // Copies, not views: files_ is compacted below while they are looked up.
    std::unordered_set<std::string> deferred;
    for (std::string_view r : removed)
      for_each_parent(r, [&](std::string_view parent) {
        if (find_file(parent) != nullptr && deferred.emplace(parent).second)
          notes.warn(
              fmt::format("{} waits for the next plan: the root still holds managed files beneath it, which "
                          "this plan removes; once it is applied and the folder is gone (dot-core never "
                          "removes a folder it did not create), plan again",
                          show(parent)));
      });
    for (const auto& f : files_)
      for_each_parent(f.path, [&](std::string_view parent) {
        if (removed_set.count(parent) && deferred.emplace(f.path).second)
          notes.warn(
              fmt::format("{} waits for the next plan: the managed file {} is in its way and this plan "
                          "removes it",
                          show(f.path), show(parent)));
      });
    if (!deferred.empty()) std::erase_if(files_, [&](const SourceFile& f) { return deferred.count(f.path) > 0; });
  }

  // Every parent folder of a write, with the source folder's mode, in
  // ascending byte order (what dot.plan's `directories` holds; core uses a
  // mode only for a folder it creates).
  Status collect_folders(std::span<const std::string_view> writes) {
    folders_.clear();
    // The folders of the writes only: the protocol names a folder's mode
    // for a write's parents (a folder holding only links is created 0700,
    // as core creates any folder it is given no mode for). `writes` is in
    // path order, so the paths beneath a folder ("a/" up to "a0") follow
    // one another: a folder is new unless the write before lies beneath it
    // too. Listed in the order found ("a-c" of "a-c/x" comes before "a" of
    // "a/b"), then sorted.
    std::vector<std::string_view> paths;
    std::string_view before;
    for (std::string_view write : writes) {
      for_each_parent(write, [&](std::string_view p) {
        if (!(before.size() > p.size() && before.starts_with(p) && before[p.size()] == '/')) paths.push_back(p);
      });
      before = write;
    }
    std::sort(paths.begin(), paths.end());
    for (std::string_view path : paths) {
      // Every folder on the way to a file was seen by the walk that found it.
      auto seen = folder_modes_.find(path);
      if (seen == folder_modes_.end())
        return make_error(ErrorKind::InvalidPlan, fmt::format("the folder {} was not walked", show(path)));
      folders_.push_back(g::FolderRequest{mapped_folder_mode(seen->second), std::string(path)});
    }
    std::vector<dpp::ProposedFolder> checked;
    for (const auto& f : folders_) checked.push_back({f.mode, f.path});
    if (auto st = dpp::check_proposed_folders(checked, writes); !st.ok())
      return make_error(ErrorKind::InvalidPlan, fmt::format("the folders of {} gave a plan core would refuse: {}",
                                                            show(src_name_), st.error().message()));
    return {};
  }

  // The file opened again beneath SRC, checked to be the one dot.plan saw.
  Result<UniqueFd> reopen(const SourceFile& f) const {
    // O_NONBLOCK: a FIFO put in the file's place must not stall the open.
    auto fd = beneath::open_beneath(src_.get(), f.path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
    if (!fd.ok()) return changed(f, fd.error().message());
    DOT_TRY(still_seen(f, fd->get(), "its size, inode, mode or times differ"));
    return std::move(fd).value();
  }

  Status still_seen(const SourceFile& f, int fd, std::string_view why) const {
    struct stat now {};
    if (::fstat(fd, &now) != 0) return beneath::errno_error(errno, "fstat", f.path);
    if (!(Seen(now) == f.seen)) return changed(f, why);
    return {};
  }

  Result<g::Artifact> stage_one(const SourceFile& f, const std::string& stage) const {
    DOT_ASSIGN_OR_RETURN(UniqueFd fd, reopen(f));
    // At most the size dot.plan saw (within max_file_bytes, take()).
    auto art = g::copy_staged_file(stage, f.path, fd.get(), static_cast<std::uint64_t>(f.seen.size));
    if (!art.ok()) {
      if (art.error().is(dpp::ErrorKind::TooLarge)) return changed(f, "it grew");
      return art.error();
    }
    DOT_TRY(still_seen(f, fd.get(), "it changed while it was copied"));
    if (art->size != static_cast<std::uint64_t>(f.seen.size) || (f.sha256 && art->sha256 != to_hex(*f.sha256)))
      return changed(f, "its bytes differ from what dot.plan read");
    return std::move(art).value();
  }

  // The one read of a file at plan time: its digest, streamed in chunks.
  Status hash(SourceFile& f) const {
    DOT_ASSIGN_OR_RETURN(UniqueFd fd, reopen(f));
    Sha256 h;
    std::vector<std::uint8_t> chunk(std::size_t{64} << 10);
    std::uint64_t read = 0;
    // No read for the end of the file once the size seen is read: a file
    // that grew since shows it in the fstat below (size or times).
    while (read < static_cast<std::uint64_t>(f.seen.size)) {
      const ssize_t n = ::read(fd.get(), chunk.data(), chunk.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return beneath::errno_error(errno, "read", f.path);
      if (n == 0) break;
      read += static_cast<std::uint64_t>(n);
      if (read > static_cast<std::uint64_t>(f.seen.size)) return changed(f, "it grew while it was read");
      h.update(std::span<const std::uint8_t>(chunk.data(), static_cast<std::size_t>(n)));
    }
    DOT_TRY(still_seen(f, fd.get(), "it changed while it was read"));
    if (read != static_cast<std::uint64_t>(f.seen.size)) return changed(f, "it shrank while it was read");
    f.sha256 = h.finish();
    return {};
  }

  Error changed(const SourceFile& f, std::string_view why) const {
    return make_error(ErrorKind::SourceChanged, fmt::format("{} in {} changed since dot.plan ({}); plan again",
                                                            show(f.path), show(src_name_), why));
  }

  // `managed` is core's: paths of its plan model, ascending, none a folder of
  // another. Anything else is not a list this plugin can act on.
  static Status check_managed(const std::vector<std::string>& managed) {
    std::unordered_set<std::string_view> all;
    for (std::size_t i = 0; i < managed.size(); ++i) {
      if (auto st = dpp::check_path(managed[i]); !st.ok())
        return g::invalid_params(fmt::format("managed: {}", st.error().detail));
      if (i > 0 && !(managed[i - 1] < managed[i]))
        return g::invalid_params(
            fmt::format("managed: {} is not after {} in ascending byte order", show(managed[i]), show(managed[i - 1])));
      all.insert(managed[i]);
    }
    for (const auto& path : managed) {
      Status bad;
      for_each_parent(path, [&](std::string_view parent) {
        if (bad.ok() && all.count(parent))
          bad = g::invalid_params(
              fmt::format("managed: {} is a folder of {}; it cannot be a file too", show(parent), show(path)));
      });
      DOT_TRY(bad);
    }
    return {};
  }

  // Every regular file of SRC into files_, skipping (with a warning) what
  // cannot be proposed. Folders are read one at a time, each opened beneath
  // SRC's descriptor by its relative path.
  Status walk(Notes& notes, const g::Limits& limits, bool digests) {
    hashed_ = 0;
    files_.clear();
    folder_modes_.clear();
    skipped_.clear();
    ignored_.clear();
    DOT_ASSIGN_OR_RETURN(IgnoreRules rules, read_ignore_file());
    std::uint64_t total = 0;
    std::vector<std::string> pending{""};  // folders to read; "" is SRC itself
    while (!pending.empty()) {
      const std::string dir = std::move(pending.back());
      pending.pop_back();
      UniqueFd held;
      if (!dir.empty()) {
        auto opened = beneath::open_beneath(src_.get(), dir, O_RDONLY | O_DIRECTORY);
        if (!opened.ok()) return unreadable(dir, opened.error());
        held = std::move(opened).value();
      }
      const int fd = dir.empty() ? src_.get() : held.get();
      auto names = beneath::list_entries(fd);
      if (!names.ok()) return unreadable(dir, names.error());
      // Sorted, so that the warnings come in the same order on every run.
      std::sort(names->begin(), names->end());
      std::vector<std::string> subfolders;
      for (const auto& name : *names) {
        const std::string path = dir.empty() ? name : dir + "/" + name;
        struct stat st {};
        if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
          if (errno == ENOENT) continue;  // gone since it was listed
          return unreadable(path, beneath::errno_error(errno, "fstatat", path));
        }
        const bool folder = S_ISDIR(st.st_mode);
        if (name == ".git" || (dir.empty() && name == kIgnoreFile) || rules.ignored(path, folder)) {
          ignored_.insert(path);
          continue;
        }
        if (auto rule = dpp::check_path(path); !rule.ok()) {
          skip(path, "has a name there the plan cannot carry");
          notes.warn(fmt::format("skipped {}: {} (the plan cannot carry it)",
                                 folder ? "a folder and everything in it" : "an entry", rule.error().detail));
          continue;
        }
        if (folder) {
          folder_modes_[path] = st.st_mode;
          subfolders.push_back(path);
        } else if (S_ISREG(st.st_mode)) {
          DOT_TRY(take(notes, path, st, total, limits, digests));
        } else if (S_ISLNK(st.st_mode)) {
          DOT_TRY(take_link(notes, fd, name, path, limits));
        } else {
          skip(path, "holds no regular file there");
          notes.warn(fmt::format("skipped {}: a {}, not a regular file", show(path),
                                 beneath::file_type_name(beneath::file_type(st.st_mode))));
        }
      }
      // Depth first, in name order.
      pending.insert(pending.end(), std::make_move_iterator(subfolders.rbegin()),
                     std::make_move_iterator(subfolders.rend()));
    }
    // Depth first is not byte order ("a-b" sorts before "a/x"); the writes
    // and their artifacts go in the plan's order.
    std::sort(files_.begin(), files_.end(), [](const SourceFile& a, const SourceFile& b) { return a.path < b.path; });
    return {};
  }

  // A regular file into files_; read to hash it only when dot.plan declares
  // digests (without them nothing needs its bytes before dot.materialize).
  // One over max_file_bytes is skipped (a large file in a dotfiles
  // repository does not stop the rest).
  Status take(Notes& notes, const std::string& path, const struct stat& st, std::uint64_t& total,
              const g::Limits& limits, bool digests) {
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size > limits.max_file_bytes) {
      skip(path, "holds a file over max_file_bytes there");
      notes.warn(
          fmt::format("skipped {}: {} bytes, more than max_file_bytes {}", show(path), size, limits.max_file_bytes));
      return {};
    }
    total += size;
    if (total > limits.max_total_bytes)
      return make_error(dpp::ErrorKind::MaxTotalBytes,
                        fmt::format("the files of {} hold more than max_total_bytes {} together", show(src_name_),
                                    limits.max_total_bytes));
    if (files_.size() >= limits.max_operations)
      return make_error(dpp::ErrorKind::MaxOperations, fmt::format("{} holds more than max_operations {} regular files",
                                                                   show(src_name_), limits.max_operations));
    files_.push_back(SourceFile{path, Seen(st), nullptr, std::nullopt, mapped_mode(st.st_mode)});
    return digests ? digest(files_.back()) : Status{};
  }

  // A file's digest from the cache when its record still holds, else read.
  Status digest(SourceFile& f) {
    if (cache_)
      if (auto known = cache_->lookup(f.path, f.seen)) {
        f.sha256 = *known;
        return {};
      }
    // Taken before the bytes are read: a write after it shows a later time.
    const std::int64_t read_at = realtime_ns();
    DOT_TRY(hash(f));
    ++hashed_;
    if (cache_) cache_->record(CachedDigest{f.path, f.seen, read_at, *f.sha256});
    return {};
  }

  // A symlink of SRC as a link with its text verbatim (the link itself is
  // read, never followed); a text the protocol refuses is skipped with a
  // warning, like a name it refuses.
  Status take_link(Notes& notes, int dir_fd, const std::string& name, const std::string& path,
                   const g::Limits& limits) {
    std::string text(dpp::kMaxLinkTextBytes + 1, '\0');
    const ssize_t n = ::readlinkat(dir_fd, name.c_str(), text.data(), text.size());
    if (n < 0) {
      if (errno == ENOENT || errno == EINVAL) return {};  // gone, or no longer a link, since it was listed
      return unreadable(path, beneath::errno_error(errno, "readlinkat", path));
    }
    text.resize(static_cast<std::size_t>(n));
    if (auto rule = dpp::check_link_text(path, text); !rule.ok()) {
      skip(path, "holds a symlink the plan cannot carry there");
      notes.warn(fmt::format("skipped the symlink {}: {}", show(path), rule.error().detail));
      return {};
    }
    if (files_.size() >= limits.max_operations)
      return make_error(dpp::ErrorKind::MaxOperations, fmt::format("{} holds more than max_operations {} entries",
                                                                   show(src_name_), limits.max_operations));
    files_.push_back(SourceFile{path, Seen{}, std::make_unique<std::string>(std::move(text))});
    return {};
  }

  // The top `.dotignore`, when SRC has one: a regular file (a symlink or
  // anything else there is an error, as a file that cannot be read is).
  Result<IgnoreRules> read_ignore_file() const {
    auto fd = beneath::open_beneath(src_.get(), kIgnoreFile, O_RDONLY | O_NOCTTY | O_NONBLOCK);
    if (!fd.ok()) {
      struct stat st {};
      if (::fstatat(src_.get(), std::string(kIgnoreFile).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
        return IgnoreRules{};
      return unreadable(kIgnoreFile, std::move(fd).error());
    }
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0) return unreadable(kIgnoreFile, beneath::errno_error(errno, "fstat", kIgnoreFile));
    if (!S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) > kMaxIgnoreFileBytes)
      return make_error(base::ErrorKind::IgnoreFile,
                        fmt::format("{} in {} is not a regular file of at most {} bytes", show(kIgnoreFile),
                                    show(src_name_), kMaxIgnoreFileBytes));
    // One that grew past the limit since the fstat is a read error.
    auto text = read_all(fd->get(), kMaxIgnoreFileBytes, kIgnoreFile);
    if (!text.ok()) return unreadable(kIgnoreFile, std::move(text).error());
    auto rules = IgnoreRules::parse(*text);
    if (!rules.ok()) {
      Error e = std::move(rules).error();
      e.detail = fmt::format("{} in {}, {}", show(kIgnoreFile), show(src_name_), e.detail);
      return e;
    }
    return rules;
  }

  void skip(const std::string& path, std::string_view why) { skipped_.emplace(path, why); }

  // Why a managed path that no write names stays as it is: the walk skipped
  // or ignored it or a folder above it. nullopt: SRC no longer has it.
  std::optional<std::string> held_by_walk(std::string_view path) const {
    std::optional<std::string> why;
    auto look = [&](std::string_view p) {
      if (why) return;
      if (auto s = skipped_.find(p); s != skipped_.end())
        why = s->second;
      else if (ignored_.count(p))
        why = "ignores it (.git, .dotignore)";
    };
    look(path);
    for_each_parent(path, look);
    return why;
  }

  Error unreadable(std::string_view path, Error e) const {
    e.detail = fmt::format("cannot read {} in {}: {}", path.empty() ? std::string("the top folder") : show(path),
                           show(src_name_), e.detail);
    return e;
  }

  UniqueFd src_;
  std::string src_name_;
  SourceId src_id_;
  std::optional<DigestCache> cache_;  // during dot.plan, with "cache" and digests negotiated
  std::size_t hashed_ = 0;            // files dot.plan read to hash
  // The writes of the plan, in path order. A deque: grown file by file
  // without a moment where the old and the new copy of the list are both
  // held, nor room kept for a quarter more (16 MB at 100,000 files).
  std::deque<SourceFile> files_;
  std::map<std::string, mode_t, std::less<>> folder_modes_;  // every folder walked
  std::vector<g::FolderRequest> folders_;                    // the writes' parent folders, ascending
  std::uint64_t logs_sent_ = 0;
  // What the last walk left out: each skipped entry with why, each ignored
  // one (folders not entered).
  std::map<std::string, std::string, std::less<>> skipped_;
  std::set<std::string, std::less<>> ignored_;
  const std::string id_ = g::registered_id(kId);
};

}  // namespace
}  // namespace dot::mirror

int main() {
  // Large buffers (a plan's lists, the digest cache's text) are mapped on
  // their own and given back when freed. Left to itself, glibc raises this
  // threshold to the size of each such buffer it frees, so the next ones,
  // up to 32 MiB, come from the heap and stay there once freed: at 100,000
  // files that kept the plugin at 68 MiB instead of 53 (mallopt(3)).
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  dot::mirror::Mirror plugin;
  return dot::dpp::general::serve(plugin);
}
