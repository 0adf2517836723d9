// The racy-timestamp rule's times (racy_time.h).
#include "dot/base/racy_time.h"

#include <limits>

namespace dot {

std::int64_t nanoseconds_of(const timespec& t) noexcept {
  std::int64_t ns = 0;
  if (__builtin_mul_overflow(static_cast<std::int64_t>(t.tv_sec), std::int64_t{1000000000}, &ns) ||
      __builtin_add_overflow(ns, static_cast<std::int64_t>(t.tv_nsec), &ns))
    return t.tv_sec < 0 ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max();
  return ns;
}

std::int64_t realtime_ns() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return nanoseconds_of(ts);
}

}  // namespace dot
