// A child's log stream read without blocking and kept within its byte cap (stream_capture.h).
#include "dot/base/stream_capture.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace dot {

StreamCapture::StreamCapture(UniqueFd fd, std::size_t cap, Keep keep, std::string what)
    : fd_(std::move(fd)), cap_(cap), keep_(keep), what_(std::move(what)) {
  if (fd_) set_nonblocking(fd_.get(), true);
}

void StreamCapture::drain() {
  // Four pipe-fulls at most per call: the caller's wait loop comes back, and
  // its deadline still bounds the whole exchange.
  constexpr int kMaxReads = 4;
  char buf[16384];
  for (int i = 0; i < kMaxReads && fd_; ++i) {
    ssize_t n = ::read(fd_.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) {
      --i;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {  // the end, or an error: either way nothing more comes
      fd_.reset();
      return;
    }
    auto got = static_cast<std::size_t>(n);
    total_ += got;
    if (keep_ == Keep::Last) {
      kept_.append(buf, got);
      if (kept_.size() > cap_) kept_.erase(0, kept_.size() - cap_);
    } else {
      std::size_t room = cap_ - std::min(cap_, kept_.size());
      kept_.append(buf, std::min(room, got));
    }
  }
}

}  // namespace dot
