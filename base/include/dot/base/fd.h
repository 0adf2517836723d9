#pragma once
// RAII for file descriptors and small, EINTR-safe I/O helpers.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "dot/base/result.h"

namespace dot {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(std::exchange(o.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  explicit operator bool() const noexcept { return valid(); }
  int release() noexcept { return std::exchange(fd_, -1); }
  void reset(int fd = -1) noexcept;

 private:
  int fd_ = -1;
};

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};
// pipe2 with O_CLOEXEC (plus `extra_flags`, e.g. O_NONBLOCK).
Result<Pipe> make_pipe(int extra_flags = 0);

// Writes every byte, retrying on EINTR and short writes (blocking fds).
// Errors are Code::Io naming `what`.
Status write_all(int fd, std::string_view bytes, std::string_view what = "output");
// Reads until EOF or `max_bytes`; more than max_bytes is Code::Io "too_large".
Result<std::string> read_all(int fd, std::size_t max_bytes, std::string_view what = "input");
// Reads a whole file (or stdin for "-") of at most max_bytes.
Result<std::string> read_file(const std::string& path, std::size_t max_bytes);

void set_nonblocking(int fd, bool on);

}  // namespace dot
