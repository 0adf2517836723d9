#pragma once
// Crash points and I/O fault injection: the test hook of the durable steps.
//
// The release binary supports them on purpose (CI runs the crash matrix on the
// release build). They are armed only through the environment of one process:
//   DOT_TEST_CRASH_AT=<point>          SIGKILL ourselves when <point> is reached
//   DOT_TEST_FAULT=<point>:<ERRNO>     the system call at <point> fails with
//                                      ERRNO (ENOSPC, EIO, ...) instead of running
//   DOT_TEST_PAUSE_AT=<point>:<file>   at <point>, create <file> and wait until
//                                      it is removed (race tests use this window)
// Names are documented in docs/engine.md ("Crash points"). An unset variable
// costs one string comparison per point.

#include <string>
#include <string_view>
#include <vector>

#include "dot/base/result.h"

namespace dot::core {

class TestHooks {
 public:
  TestHooks() = default;  // nothing armed
  // Reads the three variables; a malformed value is Code::Validation so a
  // typo in a test never silently disarms a crash point.
  static Result<TestHooks> from_environment();

  static TestHooks crash_at(std::string point);
  static TestHooks fault_at(std::string point, int err);

  // SIGKILLs the process when `point` is the armed crash point.
  void crash_point(std::string_view point) const;
  // The errno to inject at `point`, or 0.
  int fault(std::string_view point) const noexcept;
  // Blocks while the pause file exists when `point` is the armed pause point.
  void pause_point(std::string_view point) const;
  // Every durable step is both a crash point and a pause point.
  void reached(std::string_view point) const {
    pause_point(point);
    crash_point(point);
  }

  bool armed() const noexcept { return !crash_at_.empty() || !fault_at_.empty() || !pause_at_.empty(); }

 private:
  std::string crash_at_;
  std::string fault_at_;
  int fault_errno_ = 0;
  std::string pause_at_;
  std::string pause_file_;
};

// Every crash point of an apply with `slots` slots and `effects` effects, in
// the order they are reached (the crash matrix iterates over this list).
std::vector<std::string> apply_crash_points(std::size_t slots, std::size_t effects);
// The crash points of `rollback` of a committed transaction.
std::vector<std::string> rollback_crash_points(std::size_t slots);
// The fault points of the commit for `slots` slots (write, fsync, rename, dir fsync).
std::vector<std::string> commit_fault_points(std::size_t slots);

}  // namespace dot::core
