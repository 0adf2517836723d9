#pragma once
// Deadlines are absolute points on the monotonic clock (dot::Clock in
// process.h): one deadline covers a whole exchange (a write and the answer to
// it), so a peer that trickles its bytes one at a time cannot stretch it.

#include <chrono>
#include <string>

#include "dot/base/error.h"

namespace dot {

using Deadline = std::chrono::steady_clock::time_point;

// The timeout for poll() that ends no earlier than `deadline`: 0 once it has
// passed, else the milliseconds left rounded up, at most 60 s (callers loop
// and ask again).
int poll_timeout_ms(Deadline deadline) noexcept;

// THE timeout error, the one every layer and protocol reports when a deadline
// passes: Code::Timeout, kind "timeout", `detail` saying which deadline and
// what was awaited. Every host constructs its timeouts here, so a timeout is
// never another code.
Error timeout_error(std::string detail);

}  // namespace dot
