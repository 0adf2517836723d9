// Running only what was hashed: an executable copied into a sealed memfd and executed from it (sealed_executable.h).
#include "dot/base/sealed_executable.h"
#include "dot/base/error_kinds.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "dot/base/sha256.h"

namespace dot {
namespace {

// Linux 6.3 UAPI, newer than Debian 12's headers: a memfd that may be
// executed (with vm.memfd_noexec set, one created without it may not), and
// the seal that freezes its mode bits.
constexpr unsigned kMfdExec = 0x0010U;
constexpr int kSealExec = 0x0020;

constexpr int kContentSeals = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;

Error io_error(std::string_view what, std::string detail) {
  return make_error(base::ErrorKind::SealedExec, fmt::format("{}: {}", what, detail));
}

Result<UniqueFd> create_memfd(std::string_view what) {
  UniqueFd fd(::memfd_create("dot-sealed-exec", MFD_CLOEXEC | MFD_ALLOW_SEALING | kMfdExec));
  // Before 6.3 the flag is unknown (EINVAL) and every memfd is executable.
  if (!fd && errno == EINVAL) fd.reset(::memfd_create("dot-sealed-exec", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) {
    int e = errno;
    if (e == EACCES)
      return io_error(what,
                      "the kernel refuses executable memory files (vm.memfd_noexec = 2), so the checked "
                      "bytes cannot be executed from a sealed copy");
    return io_error(what, fmt::format("memfd_create failed: {}", std::strerror(e)));
  }
  return fd;
}

}  // namespace

Result<void> seal_memfd_contents(int memfd, std::string_view what) {
  // F_SEAL_WRITE is refused with EBUSY while any page of the file holds a
  // reference beyond the page cache's own. With nobody mapping the file, such
  // references are transient (a page still in another CPU's LRU batch, or
  // isolated by compaction); the kernel waits about 150 ms for them before
  // giving up, which a loaded machine can exceed. So EBUSY is asked again a
  // bounded number of times; a writable shared mapping, which never goes away
  // by itself, still ends in an error instead of a hang.
  constexpr int kAttempts = 8;
  int e = 0;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    // F_SEAL_SEAL last in the same call: no seal can be removed or added after.
    if (::fcntl(memfd, F_ADD_SEALS, kContentSeals | kSealExec | F_SEAL_SEAL) == 0) {
      e = 0;
      break;
    }
    e = errno;
    // Before 6.3 F_SEAL_EXEC is unknown (EINVAL); the content seals are what matter.
    if (e == EINVAL) {
      if (::fcntl(memfd, F_ADD_SEALS, kContentSeals | F_SEAL_SEAL) == 0) {
        e = 0;
        break;
      }
      e = errno;
    }
    if (e != EBUSY) break;
  }
  if (e == EBUSY)
    return io_error(what, fmt::format("sealing the copy failed {} times: the kernel still sees a writer of its "
                                      "pages (a writable shared mapping of it): {}",
                                      kAttempts, std::strerror(e)));
  if (e != 0) return io_error(what, fmt::format("sealing the copy failed: {}", std::strerror(e)));
  int seals = ::fcntl(memfd, F_GET_SEALS);
  if (seals < 0 || (seals & (kContentSeals | F_SEAL_SEAL)) != (kContentSeals | F_SEAL_SEAL))
    return io_error(what, "the copy is not sealed against writes");
  return {};
}

Result<SealedExecutable> seal_executable(int source_fd, std::string_view what, std::uint64_t max_bytes) {
  DOT_ASSIGN_OR_RETURN(UniqueFd mem, create_memfd(what));

  std::vector<char> buf(1 << 16);
  std::uint64_t off = 0;
  for (;;) {
    ssize_t n = ::pread(source_fd, buf.data(), buf.size(), static_cast<off_t>(off));
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error(what, fmt::format("cannot read it: {}", std::strerror(errno)));
    }
    if (n == 0) break;
    off += static_cast<std::uint64_t>(n);
    if (off > max_bytes)
      return make_error(base::ErrorKind::FileTooLarge, fmt::format("{} is larger than {} bytes", what, max_bytes));
    DOT_TRY(write_all(mem.get(), std::string_view(buf.data(), static_cast<std::size_t>(n)), "the sealed copy"));
  }

  DOT_TRY(seal_memfd_contents(mem.get(), what));

  // Hashed only now, from the sealed copy: whatever was written into the memfd
  // before the seals (by us, or by anyone who reached it through /proc), the
  // digest names the bytes that can still be read, which are the ones exec reads.
  SealedExecutable out;
  DOT_ASSIGN_OR_RETURN(out.sha256, sha256_fd_hex(mem.get(), "the sealed copy"));
  struct stat st {};
  if (::fstat(mem.get(), &st) != 0) return io_error(what, fmt::format("fstat failed: {}", std::strerror(errno)));
  out.size = static_cast<std::uint64_t>(st.st_size);
  out.fd = std::move(mem);
  return out;
}

Result<SealedExecutable> seal_executable_file(const std::string& path, std::string_view what, std::uint64_t max_bytes) {
  // O_NONBLOCK: opening a fifo planted under the name must not hang us.
  UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!file) return make_error(base::ErrorKind::Open, fmt::format("cannot open {}: {}", what, std::strerror(errno)));
  struct stat st {};
  if (::fstat(file.get(), &st) != 0) return io_error(what, fmt::format("fstat failed: {}", std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    return make_error(base::ErrorKind::NotRegular, fmt::format("{} is not a regular file", what));
  DOT_ASSIGN_OR_RETURN(SealedExecutable sealed, seal_executable(file.get(), what, max_bytes));
  // Checked on the sealed copy: the bytes that would run.
  char magic[2] = {0, 0};
  if (::pread(sealed.fd.get(), magic, 2, 0) == 2 && magic[0] == '#' && magic[1] == '!')
    return make_error(base::ErrorKind::Script,
                      fmt::format("{} is a #! script: its interpreter would open it again by path, so the bytes "
                                  "hashed would not be the bytes run; only executables that run from their own "
                                  "bytes (ELF) are started",
                                  what));
  return sealed;
}

bool is_sealed_memfd(int fd) noexcept {
  int seals = ::fcntl(fd, F_GET_SEALS);
  return seals >= 0 && (seals & F_SEAL_WRITE) != 0;
}

}  // namespace dot
