#pragma once
// Crash points and I/O fault injection: the test hook of the durable steps.
//
// Compiled in only where DOT_TEST_HOOKS is defined: the test-only copy of the
// engine (the dot_core_hooked library and the dot-core-hooked executable,
// built with the tests; core/CMakeLists.txt, cli/CMakeLists.txt). The product
// executables never see the define: there TestHooks is an empty class whose
// members are inline no-ops, nothing reads the environment, and no DOT_TEST_*
// name is in the binary, so no variable can crash, stall or fail a real
// command (tests/core/test_engine.cpp checks the built dot-core).
//
// In the hooked build they are armed only through the environment of one
// process:
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
#include "dot/core/plan_v2.h"

namespace dot::core {

// The two classes live in different inline namespaces so that code compiled
// against one and a library built with the other fail to link (every function
// taking a TestHooks is mangled with it) instead of silently disagreeing.
#ifdef DOT_TEST_HOOKS
inline namespace hooked {

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

}  // namespace hooked

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
  std::size_t folders = 0;      // plan.directories
  std::vector<bool> writes;     // per operation: a write (else a remove)
  std::vector<bool> existed;    // per operation: the target existed before
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

#else  // the product: nothing armed, ever

inline namespace unhooked {

class TestHooks {
 public:
  static Result<TestHooks> from_environment() { return TestHooks{}; }
  void crash_point(std::string_view) const noexcept {}
  int fault(std::string_view) const noexcept { return 0; }
  void pause_point(std::string_view) const noexcept {}
  void reached(std::string_view) const noexcept {}
  bool armed() const noexcept { return false; }
};

}  // namespace unhooked

#endif

}  // namespace dot::core
