// The clock of the racy-timestamp rule (racy_time.h).
#include "dot/base/racy_time.h"

#include <time.h>

namespace dot {

std::int64_t realtime_ns() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace dot
