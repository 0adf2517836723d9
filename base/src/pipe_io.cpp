// Reads and writes on a child's pipes within one absolute deadline, its logs drained meanwhile (pipe_io.h).
#include "dot/base/pipe_io.h"
#include "dot/base/error_kinds.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>

#include <fmt/format.h>

#include "dot/base/deadline.h"

namespace dot {

int poll_timeout_ms(Deadline deadline) noexcept {
  auto now = std::chrono::steady_clock::now();
  if (now >= deadline) return 0;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
  return static_cast<int>(std::min<long long>(ms, 60'000));
}

Error timeout_error(std::string detail) { return make_error(base::ErrorKind::Timeout, std::move(detail)); }

namespace {

constexpr std::size_t kMaxLogs = 4;

Error no_before_deadline(std::string_view what) {
  return timeout_error(fmt::format("no {} before the deadline", what));
}

Status check_limits(Captures logs) {
  for (StreamCapture* log : logs)
    if (log->over_limit())
      return make_error(base::ErrorKind::CaptureLimit,
                        fmt::format("{} had more than {} bytes", log->what(), log->cap()));
  return {};
}

// write() that reports EPIPE instead of raising SIGPIPE, whatever the
// process's disposition (a library cannot own it): SIGPIPE is blocked for
// this thread during the call, and one the write raised is consumed before
// the old mask returns, unless one was already pending for someone else.
ssize_t write_no_sigpipe(int fd, const char* data, std::size_t size) {
  sigset_t pipe_set, old_set, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigemptyset(&pending);
  ::sigpending(&pending);
  bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  ::pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  ssize_t n = ::write(fd, data, size);
  int saved = errno;
  if (n < 0 && saved == EPIPE && !was_pending) {
    timespec zero{};
    while (::sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  errno = saved;
  return n;
}

}  // namespace

Result<bool> wait_ready(int fd, short events, Deadline deadline, Captures logs, int also) {
  if (logs.size() > kMaxLogs) return make_error(base::ErrorKind::PollSetup, "too many log streams to watch");
  for (;;) {
    pollfd p[2 + kMaxLogs];
    StreamCapture* watched[2 + kMaxLogs] = {};
    nfds_t n = 0;
    if (fd >= 0) p[n++] = {fd, events, 0};
    if (also >= 0) p[n++] = {also, POLLIN, 0};
    const nfds_t targets = n;
    for (StreamCapture* log : logs) {
      if (!log->open()) continue;
      watched[n] = log;
      p[n++] = {log->fd(), POLLIN, 0};
    }
    if (targets == 0 && n == 0) return true;
    int timeout = poll_timeout_ms(deadline);
    if (timeout == 0) return false;
    int r = ::poll(p, n, timeout);
    if (r < 0) {
      if (errno == EINTR) continue;
      return make_error(base::ErrorKind::Poll, fmt::format("poll failed: {}", std::strerror(errno)));
    }
    if (r == 0) continue;  // the deadline check above ends the loop
    bool logged = false;
    for (nfds_t i = targets; i < n; ++i) {
      if (p[i].revents == 0) continue;
      watched[i]->drain();
      logged = true;
    }
    DOT_TRY(check_limits(logs));
    for (nfds_t i = 0; i < targets; ++i)
      if (p[i].revents != 0) return true;
    if (targets == 0 && logged) return true;
  }
}

bool readable_now(int fd) noexcept {
  pollfd p{fd, POLLIN, 0};
  // A hang-up or an error is reported alone (without POLLIN) for a drained
  // pipe whose writer is gone: readable too, the read returns 0 or fails.
  return ::poll(&p, 1, 0) == 1;
}

Result<std::size_t> read_before(int fd, char* buf, std::size_t max, Deadline deadline, Captures logs,
                                std::string_view what) {
  set_nonblocking(fd, true);
  // Nothing is taken after the deadline, even what is already there: one
  // verdict for a late peer whatever the scheduling.
  if (std::chrono::steady_clock::now() >= deadline) return no_before_deadline(what);
  for (;;) {
    ssize_t n = ::read(fd, buf, max);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return make_error(base::ErrorKind::Read, fmt::format("cannot read {}: {}", what, std::strerror(errno)));
    DOT_ASSIGN_OR_RETURN(bool ready, wait_ready(fd, POLLIN, deadline, logs));
    if (!ready) return no_before_deadline(what);
  }
}

Status write_before(int fd, std::string_view bytes, Deadline deadline, Captures logs, std::string_view what) {
  set_nonblocking(fd, true);
  if (!bytes.empty() && std::chrono::steady_clock::now() >= deadline)
    return no_before_deadline(fmt::format("room in {}", what));
  while (!bytes.empty()) {
    ssize_t n = write_no_sigpipe(fd, bytes.data(), bytes.size());
    if (n >= 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EPIPE)
      return make_error(base::ErrorKind::Closed, fmt::format("{} is closed: its reader is gone", what));
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return make_error(base::ErrorKind::Write, fmt::format("cannot write {}: {}", what, std::strerror(errno)));
    // The pipe is full: wait for room (draining the logs meanwhile).
    DOT_ASSIGN_OR_RETURN(bool ready, wait_ready(fd, POLLOUT, deadline, logs));
    if (!ready) return no_before_deadline(fmt::format("room in {}", what));
  }
  return {};
}

void drain_until(Captures logs, Deadline until) {
  auto any_open = [&] {
    return std::any_of(logs.begin(), logs.end(), [](const StreamCapture* l) { return l->open(); });
  };
  while (any_open()) {
    auto r = wait_ready(-1, 0, until, logs);
    if (!r.ok() || !*r) return;
  }
}

}  // namespace dot
