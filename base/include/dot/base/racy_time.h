#pragma once
// The racy-timestamp rule of every stat cache (core's of its targets,
// dot-mirror's of its sources), as git's index has it: a digest taken at
// `recorded_ns` stands for a file whose stat still matches only if the file
// last changed (mtime and ctime) at least one granule before that moment. A
// write in the same granule as the read leaves the same times, so a file
// changed that late proves nothing: it is read again, and the entry taken
// then, later, is trusted.

#include <time.h>

#include <cstdint>

namespace dot {

// The coarsest timestamp granule trusted: FAT keeps 2 s; the kernel's file
// times come from a coarse clock that lags CLOCK_REALTIME by up to a tick.
inline constexpr std::int64_t kRacyGranuleNs = 2'000'000'000;

// A time in nanoseconds since the epoch, saturated: anyone can set an mtime
// centuries away (touch -d), and int64 nanoseconds end in 2262. A saturated
// time is never older than a cache entry, so the racy rule reads such a
// file again instead of trusting it. Every file time a stat cache compares
// (core's, dot-mirror's) and the clock below go through it.
std::int64_t nanoseconds_of(const timespec& t) noexcept;

// CLOCK_REALTIME in nanoseconds (the clock file times are written with).
std::int64_t realtime_ns();

// Whether a digest taken at `recorded_ns` (CLOCK_REALTIME, read before the
// bytes were) may stand for a file whose times are these.
constexpr bool settled_before(std::int64_t mtime_ns, std::int64_t ctime_ns, std::int64_t recorded_ns) {
  const std::int64_t trusted_before = recorded_ns - kRacyGranuleNs;
  return mtime_ns < trusted_before && ctime_ns < trusted_before;
}

}  // namespace dot
