// The host's read-back of a plugin's stage, held to the claims (stage_reader.h).
#include "dot/dpp/stage_reader.h"
#include "dot/dpp/error_kinds.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "dot/base/beneath.h"
#include "dot/base/sha256.h"
#include "dot/base/utf8.h"
#include "dot/dpp/hello.h"

namespace dot::dpp {
namespace {

constexpr std::size_t kReadChunk = 256 * 1024;

std::string quoted(std::string_view path) { return fmt::format("\"{}\"", shown(path.substr(0, 512))); }

Error mismatch(std::string detail) { return make_error(dpp::ErrorKind::Artifact, std::move(detail)); }

Error staged_symlink(std::string_view path) {
  return make_error(dpp::ErrorKind::StagedSymlink,
                    fmt::format("staged {} is or passes through a symlink (never followed)", quoted(path)));
}

// Opens a staged entry as itself: a symlink anywhere on the way or as the
// entry is a staged symlink; any other failure to open is a missing file.
Result<UniqueFd> open_entry(int stage_fd, std::string_view path) {
  auto fd = beneath::open_beneath(stage_fd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (fd.ok()) return fd;
  if (fd.error().code == Code::PathEscape) return staged_symlink(path);
  return mismatch(fmt::format("staged {} cannot be opened: {}", quoted(path), fd.error().detail));
}

// The file behind `fd` is what a staged artifact must be.
Result<struct stat> regular_single_link(int fd, std::string_view path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return beneath::errno_error(errno, "fstat", quoted(path));
  if (!S_ISREG(st.st_mode))
    return mismatch(fmt::format("staged {} is a {}, not a regular file", quoted(path),
                                beneath::file_type_name(beneath::file_type(st.st_mode))));
  if (st.st_nlink != 1)
    return mismatch(
        fmt::format("staged {} has {} hard links (a staged file has exactly 1)", quoted(path), st.st_nlink));
  return st;
}

}  // namespace

Result<UniqueFd> open_staged_file(int stage_fd, std::string_view path) {
  DOT_ASSIGN_OR_RETURN(UniqueFd fd, open_entry(stage_fd, path));
  DOT_ASSIGN_OR_RETURN(struct stat st, regular_single_link(fd.get(), path));
  (void)st;
  return fd;
}

StagedClaim claimed(const general::Artifact& claim) {
  return StagedClaim{claim.path, Sha256Digest::from_hex(claim.sha256).value_or(Sha256Digest()), claim.size};
}

ClaimCheck::ClaimCheck(std::size_t writes, std::function<StagedClaim(std::size_t)> write_at)
    : writes_(writes), write_at_(std::move(write_at)) {}

void ClaimCheck::take(const general::Artifact& claim) {
  const std::size_t i = taken_++;
  if (order_) return;
  if (i >= writes_) {
    order_ = mismatch(fmt::format("artifact {} stands for no write of the plan", quoted(claim.path)));
    return;
  }
  const StagedClaim write = write_at_(i);
  if (claim.path != write.path) {
    order_ = mismatch(fmt::format("artifact {} where the write of {} comes (operation order)", quoted(claim.path),
                                  quoted(write.path)));
    return;
  }
  if (!declared_ && !write.sha256.empty() && (!(write.sha256 == claim.sha256) || claim.size != write.size))
    declared_ = mismatch(fmt::format(
        "the artifact of {} claims {} bytes with SHA-256 {}, but dot.plan declared {} bytes with SHA-256 {}",
        quoted(claim.path), claim.size, shown(std::string_view(claim.sha256).substr(0, 64)), write.size,
        write.sha256.hex()));
}

Status ClaimCheck::finish() const {
  if (order_) return *order_;
  if (taken_ < writes_)
    return mismatch(fmt::format("no artifact for the write of {} (operation order)", quoted(write_at_(taken_).path)));
  if (declared_) return *declared_;
  return {};
}

Status read_stage(int stage_fd, std::span<const StagedClaim> claimed) {
  auto buf = std::make_unique<char[]>(kReadChunk);
  for (const StagedClaim& a : claimed) {
    DOT_ASSIGN_OR_RETURN(UniqueFd fd, open_entry(stage_fd, a.path));
    DOT_ASSIGN_OR_RETURN(struct stat st, regular_single_link(fd.get(), a.path));
    if (static_cast<std::uint64_t>(st.st_size) != a.size)
      return mismatch(
          fmt::format("staged {} has {} bytes but the plugin claimed {}", quoted(a.path), st.st_size, a.size));
    // Up to one byte past the claim: a file that grows while it is read is
    // seen growing, never cut at its claim.
    Sha256 hash;
    std::uint64_t done = 0;
    for (;;) {
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kReadChunk, a.size + 1 - done));
      ssize_t n = ::pread(fd.get(), buf.get(), want, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return beneath::errno_error(errno, "read", quoted(a.path));
      if (n == 0) break;
      done += static_cast<std::uint64_t>(n);
      if (done > a.size)
        return mismatch(fmt::format("staged {} grew past its claimed {} bytes while read", quoted(a.path), a.size));
      hash.update(std::string_view(buf.get(), static_cast<std::size_t>(n)));
    }
    if (done != a.size)
      return mismatch(fmt::format("staged {} has {} bytes but the plugin claimed {}", quoted(a.path), done, a.size));
    const Sha256Digest sha256(hash.finish());
    if (sha256 != a.sha256)
      return mismatch(
          fmt::format("staged {} has sha256 {} but the plugin claimed {}", quoted(a.path), sha256.hex(),
                      a.sha256.empty() ? std::string("no SHA-256 (not 64 lowercase hex digits)") : a.sha256.hex()));
  }
  return {};
}

Status check_stage_holds_only(int stage_fd, std::span<const StagedClaim> claimed) {
  // Views into the claims: a folder is a prefix of a claimed path.
  std::set<std::string_view> files, folders;
  for (const StagedClaim& a : claimed) {
    files.insert(a.path);
    for (std::size_t slash = a.path.find('/'); slash != std::string_view::npos; slash = a.path.find('/', slash + 1))
      folders.insert(a.path.substr(0, slash));
  }
  // Breadth first, one folder descriptor open at a time (each reopened
  // beneath the stage, symlinks refused), however deep the paths go.
  std::deque<std::string> queue{""};
  while (!queue.empty()) {
    const std::string folder = std::move(queue.front());
    queue.pop_front();
    UniqueFd dir;
    if (folder.empty()) {
      dir.reset(::fcntl(stage_fd, F_DUPFD_CLOEXEC, 0));
      if (!dir) return beneath::errno_error(errno, "dup", "the stage");
    } else {
      auto opened = beneath::open_beneath(stage_fd, folder, O_RDONLY | O_DIRECTORY);
      if (!opened.ok()) {
        if (opened.error().code == Code::PathEscape) return staged_symlink(folder);
        return mismatch(fmt::format("staged folder {} cannot be opened: {}", quoted(folder), opened.error().detail));
      }
      dir = std::move(opened).value();
    }
    DOT_ASSIGN_OR_RETURN(std::vector<std::string> names, beneath::list_entries(dir.get()));
    for (const auto& name : names) {
      const std::string path = folder.empty() ? name : folder + "/" + name;
      struct stat st {};
      if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) continue;
        return beneath::errno_error(errno, "stat", quoted(path));
      }
      if (S_ISLNK(st.st_mode)) return staged_symlink(path);
      if (files.contains(path)) {
        if (!S_ISREG(st.st_mode) || st.st_nlink != 1)
          return mismatch(fmt::format("staged {} changed after it was read", quoted(path)));
        continue;
      }
      if (folders.contains(path) && S_ISDIR(st.st_mode)) {
        queue.push_back(path);
        continue;
      }
      return mismatch(fmt::format("the stage holds {} ({}), which no artifact names", quoted(path),
                                  beneath::file_type_name(beneath::file_type(st.st_mode))));
    }
  }
  return {};
}

Result<std::vector<std::string>> read_hello_stage(int stage_fd, const MaterializeResult& claimed) {
  std::vector<std::string> contents;
  for (const auto& a : claimed.artifacts) {
    DOT_ASSIGN_OR_RETURN(
        beneath::FileObservation o,
        beneath::observe_beneath(stage_fd, a.name, {.max_bytes = hello::kMaxArtifactSize, .keep_content = true}));
    if (o.type == beneath::FileType::Symlink)
      return make_error(dpp::ErrorKind::StagedSymlink, fmt::format("staged {} is a symlink", a.name));
    if (!o.exists()) return mismatch(fmt::format("staged {} is missing", a.name));
    if (o.type != beneath::FileType::Regular)
      return mismatch(fmt::format("staged {} is a {}, not a regular file", a.name, beneath::file_type_name(o.type)));
    if (o.nlink != 1) return mismatch(fmt::format("staged {} has {} hard links", a.name, o.nlink));
    if (o.mode != hello::kArtifactMode)
      return mismatch(fmt::format("staged {} has mode {:04o}, not {:04o}", a.name, o.mode, hello::kArtifactMode));
    if (o.too_large || o.size == 0 || o.size > hello::kMaxArtifactSize)
      return mismatch(fmt::format("staged {} has a size outside 1..{}", a.name, hello::kMaxArtifactSize));
    if (o.size != a.size)
      return mismatch(fmt::format("staged {} has {} bytes but the plugin claimed {}", a.name, o.size, a.size));
    if (o.sha256 != a.sha256)
      return mismatch(fmt::format("staged {} has sha256 {} but the plugin claimed {}", a.name, o.sha256, a.sha256));
    contents.push_back(std::move(o.content));
  }
  return contents;
}

Status check_hello_stage_holds_only(int stage_fd, const MaterializeResult& claimed) {
  DOT_ASSIGN_OR_RETURN(std::vector<std::string> present, beneath::list_entries(stage_fd));
  std::set<std::string, std::less<>> expected;
  for (const auto& a : claimed.artifacts) expected.insert(a.name);
  for (const auto& n : present)
    if (!expected.contains(n)) return mismatch(fmt::format("the stage holds {} which no artifact names", n));
  return {};
}

}  // namespace dot::dpp
