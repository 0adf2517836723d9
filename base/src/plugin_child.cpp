// PluginChild (plugin_child.h): the one child-process session every protocol
// host builds on; spawn, deadline I/O, logs, the end and the orphan sweep.

#include "dot/base/plugin_child.h"

#include "dot/base/error_kinds.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace dot {
namespace {

// How long a child whose output just ended gets to finish dying before its
// exit status is read (see signal_death).
constexpr std::chrono::milliseconds kDeathGrace{200};
// Without a pidfd (a kernel before 5.3) an exit is polled this often.
constexpr std::chrono::milliseconds kExitPoll{10};

// Bytes our side wrote that the child has not read yet.
int unread_input(int fd) noexcept {
  int pending = 0;
  if (::ioctl(fd, FIONREAD, &pending) != 0) return 0;
  return pending;
}

// Whether the pipe's reader is gone (POLLERR on the write end).
bool reader_gone(int fd) noexcept {
  pollfd p{fd, POLLOUT, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
}

}  // namespace

Result<PluginChild> PluginChild::spawn(PluginChildOptions o) {
  PluginChild c;
  if (o.sweep_orphans) DOT_TRY(become_child_subreaper());
  c.sweep_ = o.sweep_orphans;
  // The protocol streams keep the names their hosts always gave them.
  c.input_what_ = o.protocol_fds ? std::string("the request stream") : fmt::format("{}'s stdin", o.name);
  c.output_what_ = o.protocol_fds ? std::string("the protocol stream") : fmt::format("{}'s stdout", o.name);
  c.cap_ = o.output_cap;
  SpawnOptions& so = o.spawn;
  so.stdout_mode = so.stderr_mode = StdioMode::Pipe;
  // so.keep_fds are the caller's (an interpreted plugin's sealed script);
  // the protocol's own pipes join them.
  std::optional<Pipe> requests, responses;
  if (o.protocol_fds) {
    DOT_ASSIGN_OR_RETURN(requests, make_pipe());
    DOT_ASSIGN_OR_RETURN(responses, make_pipe());
    so.stdin_mode = StdioMode::DevNull;
    so.keep_fds.push_back({requests->read.get(), o.protocol_fds->first});
    so.keep_fds.push_back({responses->write.get(), o.protocol_fds->second});
  } else {
    so.stdin_mode = StdioMode::Pipe;
  }
  DOT_ASSIGN_OR_RETURN(c.child_, dot::spawn(so));
  if (o.protocol_fds) {
    c.input_ = std::move(requests->write);
    c.output_ = std::move(responses->read);
    c.out_ = StreamCapture(std::move(c.child_.stdout_fd()), o.stdout_log_cap, StreamCapture::Keep::First,
                           fmt::format("{}'s stdout", o.name));
  } else {
    c.input_ = std::move(c.child_.stdin_fd());
    c.output_ = std::move(c.child_.stdout_fd());
  }
  c.err_ =
      StreamCapture(std::move(c.child_.stderr_fd()), o.stderr_cap, o.stderr_keep, fmt::format("{}'s stderr", o.name));
  c.point_captures();
  set_nonblocking(c.input_.get(), true);
  set_nonblocking(c.output_.get(), true);
  // One page: a single unread byte fills the pipe, so POLLOUT says when the
  // child has read it.
  if (o.paced_input && ::fcntl(c.input_.get(), F_SETPIPE_SZ, static_cast<int>(::sysconf(_SC_PAGESIZE))) < 0)
    return make_error(base::ErrorKind::Pipe,
                      fmt::format("cannot shrink {}'s input pipe: {}", o.name, std::strerror(errno)));
  return c;
}

PluginChild::PluginChild(PluginChild&& o) noexcept
    : child_(std::move(o.child_)),
      input_(std::move(o.input_)),
      output_(std::move(o.output_)),
      err_(std::move(o.err_)),
      out_(std::move(o.out_)),
      input_what_(std::move(o.input_what_)),
      output_what_(std::move(o.output_what_)),
      deadline_(o.deadline_),
      cap_(o.cap_),
      output_total_(o.output_total_),
      output_ended_(o.output_ended_),
      sweep_(o.sweep_),
      killed_(std::exchange(o.killed_, true)) {
  point_captures();
}

PluginChild& PluginChild::operator=(PluginChild&& o) noexcept {
  if (this == &o) return *this;
  kill_all();
  child_ = std::move(o.child_);
  input_ = std::move(o.input_);
  output_ = std::move(o.output_);
  err_ = std::move(o.err_);
  out_ = std::move(o.out_);
  sweep_ = o.sweep_;
  input_what_ = std::move(o.input_what_);
  output_what_ = std::move(o.output_what_);
  deadline_ = o.deadline_;
  cap_ = o.cap_;
  output_total_ = o.output_total_;
  output_ended_ = o.output_ended_;
  killed_ = std::exchange(o.killed_, true);
  point_captures();
  return *this;
}

void PluginChild::point_captures() noexcept {
  ncaptures_ = 0;
  captures_[ncaptures_++] = &err_;
  if (!out_.what().empty()) captures_[ncaptures_++] = &out_;
}

Status PluginChild::write(std::string_view bytes) {
  if (!input_) return make_error(base::ErrorKind::Closed, fmt::format("{} is closed", input_what_));
  return write_before(input_.get(), bytes, deadline_, logs(), input_what_);
}

Status PluginChild::write_paced(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    DOT_TRY(write(bytes.substr(i, 1)));
    const int fd = input_.get();
    // Until the child has read the byte, exited, or closed its input (the
    // rest is not written: the caller reads what it answered).
    while (unread_input(fd) > 0) {
      if (child_.pidfd() >= 0 && readable_now(child_.pidfd())) return {};
      if (reader_gone(fd)) return {};
      DOT_ASSIGN_OR_RETURN(bool ready, wait_ready(fd, POLLOUT, deadline_, logs(), child_.pidfd()));
      if (!ready) return timeout_error(fmt::format("no reading of {} before the deadline", input_what_));
    }
  }
  return {};
}

// Counts `n` bytes just read; the end of the output at 0.
Result<std::size_t> PluginChild::take(std::size_t n) {
  if (n == 0) output_ended_ = true;
  output_total_ += n;
  return n;
}

// Reading one byte past the cap proves the overflow.
std::size_t PluginChild::room(std::size_t max) const noexcept {
  if (cap_ == 0) return max;
  return static_cast<std::size_t>(std::min<std::uint64_t>(max, cap_ + 1 - std::min(output_total_, cap_)));
}

Result<std::size_t> PluginChild::read(char* buf, std::size_t max) {
  if (output_ended()) return std::size_t{0};
  DOT_ASSIGN_OR_RETURN(std::size_t n, read_before(output_.get(), buf, room(max), deadline_, logs(), output_what_));
  return take(n);
}

Result<std::size_t> PluginChild::read_now(char* buf, std::size_t max) {
  if (output_ended()) return std::size_t{0};
  for (;;) {
    ssize_t n = ::read(output_.get(), buf, room(max));
    if (n >= 0) return take(static_cast<std::size_t>(n));
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return std::size_t{0};
    return make_error(base::ErrorKind::Read, fmt::format("cannot read {}: {}", output_what_, std::strerror(errno)));
  }
}

bool PluginChild::output_waiting() const noexcept { return !output_ended() && readable_now(output_.get()); }

Result<bool> PluginChild::wait_output_or_exit(bool watch_output) {
  const int out = watch_output ? output_fd() : -1;
  const int pid = child_.reaped() ? -1 : child_.pidfd();
  if (out < 0 && pid < 0) {
    if (!child_.reaped()) (void)child_.wait_until(std::min(deadline_, Clock::now() + kExitPoll));
    return !deadline_passed();
  }
  return wait_ready(out, POLLIN, deadline_, logs(), pid);
}

std::optional<ExitStatus> PluginChild::wait_exit() {
  for (;;) {
    if (auto s = child_.try_wait()) return s;
    if (deadline_passed()) return std::nullopt;
    if (child_.pidfd() < 0) {
      for (StreamCapture* log : logs()) log->drain();
      (void)child_.wait_until(std::min(deadline_, Clock::now() + kExitPoll));
      continue;
    }
    auto ready = wait_ready(-1, 0, deadline_, logs(), child_.pidfd());
    // A log past its cap stops being drained; the exit is still awaited.
    if (!ready.ok()) return child_.wait_until(deadline_);
  }
}

std::size_t PluginChild::kill_survivors() {
  // Everything the child left behind was re-parented to us when it exited:
  // running leftovers (a setsid grandchild holding the output open, too).
  std::size_t survivors = sweep_ ? kill_orphans() : 0;
  if (child_.group_alive()) {
    child_.kill_group();
    if (sweep_) survivors += kill_orphans();
    ++survivors;
  }
  return survivors;
}

void PluginChild::kill_all(std::chrono::milliseconds log_grace) noexcept {
  if (killed_) return;
  killed_ = true;
  if (child_.pid() > 0) {
    child_.kill_and_reap();
    if (sweep_) kill_orphans();
    child_.kill_group();
  }
  input_.reset();
  // What the group wrote before it died is still worth keeping.
  if (log_grace.count() > 0) {
    drain_until(logs(), Clock::now() + log_grace);
  } else {
    for (StreamCapture* log : logs())
      if (!log->over_limit()) log->drain();
  }
  err_.close();
  out_.close();
  output_.reset();
}

std::optional<SignalDeath> PluginChild::signal_death(bool output_just_ended, const SandboxLimits* containment) {
  if (child_.pid() <= 0 || killed_) return std::nullopt;
  std::optional<ExitStatus> status;
  if (!child_.reaped() && output_just_ended)
    status = child_.wait_until(std::min(deadline_, Clock::now() + kDeathGrace));
  else
    status = child_.try_wait();
  if (!status || status->signal == 0) return std::nullopt;
  return explain_signal_death(*status, containment);
}

}  // namespace dot
