#pragma once
// Crash points and I/O fault injection: the test hook of the durable steps.
//
// Every durable step reports its point to the TestHooks of its Root. A
// TestHooks is armed only by its factories (tests call them) or by
// from_environment(), which lives in the test-only dot_core_test_hooks
// library (core/src/test_hooks_env.cpp) and is called only by the test-only
// dot-core-hooked executable (cli/CMakeLists.txt). The product executables do
// not link that library: nothing in them reads the environment and no
// DOT_TEST_* name is in their files, so no variable can crash, stall or fail a
// real command (tests/core/test_engine.cpp checks the built dot-core). An
// unarmed TestHooks costs one test of three empty strings per point.
//
// In dot-core-hooked they are armed through the environment of one process:
//   DOT_TEST_CRASH_AT=<point>          SIGKILL ourselves when <point> is reached
//   DOT_TEST_FAULT=<point>:<ERRNO>     the system call at <point> fails with
//                                      ERRNO (ENOSPC, EIO, ...) instead of running
//   DOT_TEST_PAUSE_AT=<point>:<file>   at <point>, create <file> and wait until
//                                      it is removed (race tests use this window)
// Names are documented in docs/engine.md ("Crash points").

#include <string>
#include <string_view>
#include <vector>

#include "dot/base/result.h"
#include "dot/core/plan_v2.h"

namespace dot::core {

class TestHooks {
 public:
  TestHooks() = default;  // nothing armed
  // Reads the three variables; a malformed value is Code::Validation so a
  // typo in a test never silently disarms a crash point. Defined in the
  // test-only dot_core_test_hooks library.
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
    if (!armed()) return;
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

// The lists below are defined in the test-only dot_core_test_hooks library.

// Every crash point of an apply with `slots` slots and `effects` effects, in
// the order they are reached (the crash matrix iterates over this list).
std::vector<std::string> apply_crash_points(std::size_t slots, std::size_t effects);
// The crash points of `rollback` of a committed transaction.
std::vector<std::string> rollback_crash_points(std::size_t slots);
// The crash points of a retried root-sync (effect `effect` of a plan with
// `slots` slots, run again by `retry-effects` or `recover`), in order.
// A version-2 plan's retry also fsyncs its `folders` touched folders.
std::vector<std::string> retried_effect_crash_points(std::size_t slots, std::size_t effect, std::size_t folders = 0);
// The fault points of the commit for `slots` slots (write, fsync, rename, dir fsync).
std::vector<std::string> commit_fault_points(std::size_t slots);

// What the crash and fault points of a version-2 plan depend on
// (plan_shape of a decoded plan gives it; tests spell theirs out).
struct PlanShape {
  std::size_t folders = 0;    // plan.directories
  std::vector<bool> writes;   // per operation: a write or a link (a temp, a rename), else a remove
  std::vector<bool> existed;  // per operation: the target existed before
  // Per folder of touched_folders(plan): true when apply creates it (then
  // the rollback removes it and has no fsync of it to make).
  std::vector<bool> touched;
  std::size_t effects = 1;
  bool operator==(const PlanShape&) const = default;
};
PlanShape plan_shape(const PlanV2& plan);
// Every crash point of an apply of a version-2 plan, in the order reached
// (apply_v2.cpp), with a kernel whose syncfs reports errors.
std::vector<std::string> apply_v2_crash_points(const PlanShape& shape);
// The crash points of the rollback walk of a version-2 transaction whose
// every operation was applied (every target equals its after).
std::vector<std::string> rollback_v2_crash_points(const PlanShape& shape);
// The fault points of the commit of a version-2 plan (mkdir, temp write,
// syncfs, rename or unlink, folder fsync).
std::vector<std::string> commit_v2_fault_points(const PlanShape& shape);

}  // namespace dot::core
