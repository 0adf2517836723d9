#pragma once
// Reads and writes on a pipe to or from a child, bounded by one absolute
// deadline. Every wait also drains the child's log streams (`logs`, see
// stream_capture.h): a child blocked writing its stderr must never deadlock a
// host that waits for its stdout. The descriptors are made non-blocking.
//
// Errors:
//   Code::Timeout  kind "timeout"    the deadline passed first
//   Code::Io       kind "closed"     write: the reader is gone (EPIPE); SIGPIPE
//                                    is never raised, whatever its disposition
//   Code::Protocol kind "capture_limit"  a FirstOrFail capture got more than its cap
//   Code::Io       kind "read", "write", "poll"  the system call failed
// Each names `what` ("the provider's stdout"). Callers turn them into their
// protocol's own errors.

#include <cstddef>
#include <span>
#include <string_view>

#include "dot/base/deadline.h"
#include "dot/base/result.h"
#include "dot/base/stream_capture.h"

namespace dot {

using Captures = std::span<StreamCapture* const>;

// Waits until `fd` reports `events` (POLLIN or POLLOUT; a hang-up or an error
// counts as ready, the next read or write tells which) or, when `also` >= 0,
// `also` is readable (a pidfd: the child exited). Returns true when ready,
// false at the deadline. With fd < 0 and also < 0 it waits for the logs
// alone: true once some log had something (or none is open any more).
Result<bool> wait_ready(int fd, short events, Deadline deadline, Captures logs = {}, int also = -1);

// Whether a read of `fd` would not block right now: bytes are waiting, the
// writer is gone (end of stream) or an error is pending; the read says
// which. Never waits: how a protocol layer looks, between its own reads,
// for output nobody asked for yet.
bool readable_now(int fd) noexcept;

// Reads at most `max` (>= 1) bytes as soon as some are there: how many, 0 at
// end of stream.
Result<std::size_t> read_before(int fd, char* buf, std::size_t max, Deadline deadline, Captures logs,
                                std::string_view what);

// Writes every byte before the deadline.
Status write_before(int fd, std::string_view bytes, Deadline deadline, Captures logs, std::string_view what);

// Reads the logs until each has ended or `until` passes (what a child wrote
// before it died is worth keeping).
void drain_until(Captures logs, Deadline until);

}  // namespace dot
