// RAII descriptors and EINTR-safe I/O helpers (fd.h).
#include "dot/base/fd.h"
#include "dot/base/error_kinds.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace dot {

void UniqueFd::reset(int fd) noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

Result<Pipe> make_pipe(int extra_flags) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | extra_flags) != 0)
    return make_error(base::ErrorKind::Pipe, fmt::format("pipe2 failed: {}", std::strerror(errno)));
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

Status write_all(int fd, std::string_view bytes, std::string_view what) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(base::ErrorKind::Write, fmt::format("cannot write {}: {}", what, std::strerror(errno)));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

Result<std::string> read_all(int fd, std::size_t max_bytes, std::string_view what) {
  std::string out;
  // A regular file's size is known: room for it (and the read that sees
  // its end) up front, so that a large file is not copied as the buffer grows.
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
    out.reserve(std::min(static_cast<std::size_t>(st.st_size), max_bytes) + 1);
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(base::ErrorKind::Read, fmt::format("cannot read {}: {}", what, std::strerror(errno)));
    }
    if (n == 0) break;
    if (out.size() + static_cast<std::size_t>(n) > max_bytes)
      return make_error(base::ErrorKind::FileTooLarge,
                        fmt::format("{} is larger than the limit of {} bytes", what, max_bytes));
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

Result<std::string> read_file(const std::string& path, std::size_t max_bytes) {
  if (path == "-") return read_all(STDIN_FILENO, max_bytes, "standard input");
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return make_error(base::ErrorKind::Open, fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  return read_all(fd.get(), max_bytes, path);
}

void set_nonblocking(int fd, bool on) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return;
  ::fcntl(fd, F_SETFL, on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK));
}

}  // namespace dot
