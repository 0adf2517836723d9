// Tests only: crash and fault points armed from the DOT_TEST_* variables (test_hooks.h).
#include "dot/core/error_kinds.h"
#include "dot/core/test_hooks.h"

// Tests only (the dot_core_test_hooks library, core/CMakeLists.txt): arming
// the points from the DOT_TEST_* variables, and the lists of points the crash
// matrices iterate over. No product program links this file, so no product
// program reads those variables or holds their names.

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <fmt/format.h>

namespace dot::core {
namespace {

int errno_from_name(std::string_view name) {
  for (int e = 1; e < 256; ++e) {
    const char* n = ::strerrorname_np(e);
    if (n && name == n) return e;
  }
  return 0;
}

// "<point>:<rest>" split at the last ':' (points contain no ':').
bool split_point(std::string_view value, std::string& point, std::string& rest) {
  auto colon = value.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == value.size()) return false;
  point = std::string(value.substr(0, colon));
  rest = std::string(value.substr(colon + 1));
  return true;
}

}  // namespace

Result<TestHooks> TestHooks::from_environment() {
  TestHooks h;
  if (const char* crash = std::getenv("DOT_TEST_CRASH_AT"); crash && *crash) h.crash_at_ = crash;
  if (const char* fault = std::getenv("DOT_TEST_FAULT"); fault && *fault) {
    std::string rest;
    if (!split_point(fault, h.fault_at_, rest) || (h.fault_errno_ = errno_from_name(rest)) == 0)
      return make_error(
          core::ErrorKind::TestHook,
          fmt::format("DOT_TEST_FAULT=\"{}\" is not <point>:<ERRNO name> (e.g. commit.slot0.fsync:EIO)", fault));
  }
  if (const char* pause = std::getenv("DOT_TEST_PAUSE_AT"); pause && *pause) {
    if (!split_point(pause, h.pause_at_, h.pause_file_) || h.pause_file_.front() != '/')
      return make_error(core::ErrorKind::TestHook,
                        fmt::format("DOT_TEST_PAUSE_AT=\"{}\" is not <point>:<absolute file>", pause));
  }
  return h;
}

std::vector<std::string> apply_crash_points(std::size_t slots, std::size_t effects) {
  // store.* points are reported by the store right after its SQLite commit.
  std::vector<std::string> points = {"store.prepare", "store.transition.COMMITTING"};
  for (std::size_t i = 0; i < slots; ++i) {
    points.push_back(fmt::format("commit.slot{}.temp_synced", i));
    points.push_back(fmt::format("commit.slot{}.renamed", i));
    points.push_back(fmt::format("commit.slot{}.dir_synced", i));
  }
  points.push_back("store.transition.COMMITTED");
  for (std::size_t i = 0; i < effects; ++i) {
    points.push_back(fmt::format("store.effect.{}.ATTEMPTED", i));
    points.push_back(fmt::format("effect{}.synced", i));
    points.push_back(fmt::format("store.effect.{}.SUCCEEDED", i));
  }
  points.push_back("store.transition.DONE");
  return points;
}

std::vector<std::string> rollback_crash_points(std::size_t slots) {
  std::vector<std::string> points = {"store.transition.ROLLING_BACK"};
  for (std::size_t i = slots; i-- > 0;) {
    points.push_back(fmt::format("rollback.slot{}.restored", i));
    points.push_back(fmt::format("rollback.slot{}.dir_synced", i));
  }
  points.push_back("store.transition.ROLLED_BACK");
  return points;
}

std::vector<std::string> retried_effect_crash_points(std::size_t slots, std::size_t effect, std::size_t folders) {
  std::vector<std::string> points = {fmt::format("store.effect.{}.ATTEMPTED", effect)};
  for (std::size_t i = 0; i < slots; ++i) points.push_back(fmt::format("effect{}.slot{}.synced", effect, i));
  for (std::size_t j = 0; j < folders; ++j) points.push_back(fmt::format("effect{}.dir{}.synced", effect, j));
  points.push_back(fmt::format("effect{}.synced", effect));
  points.push_back(fmt::format("store.effect.{}.SUCCEEDED", effect));
  points.push_back("store.transition.DONE");
  return points;
}

std::vector<std::string> commit_fault_points(std::size_t slots) {
  std::vector<std::string> points;
  for (std::size_t i = 0; i < slots; ++i) {
    points.push_back(fmt::format("commit.slot{}.write", i));
    points.push_back(fmt::format("commit.slot{}.fsync", i));
    points.push_back(fmt::format("commit.slot{}.rename", i));
    points.push_back(fmt::format("commit.slot{}.dirsync", i));
  }
  return points;
}

PlanShape plan_shape(const PlanV2& plan) {
  PlanShape shape;
  shape.folders = plan.directories.size();
  for (const auto& op : plan.operations) {
    shape.writes.push_back(op.action != Action::Remove);  // a temp, then a rename
    shape.existed.push_back(op.before.exists);
  }
  std::set<std::string, std::less<>> created;
  for (const auto& folder : plan.directories) created.insert(folder.path);
  for (const auto& folder : touched_folders(plan)) shape.touched.push_back(created.contains(folder));
  shape.effects = plan.effects.size();
  return shape;
}

std::vector<std::string> apply_v2_crash_points(const PlanShape& shape) {
  std::vector<std::string> points = {"store.prepare"};
  for (std::size_t f = 0; f < shape.folders; ++f) points.push_back(fmt::format("apply.folder{}.created", f));
  for (std::size_t i = 0; i < shape.writes.size(); ++i)
    if (shape.writes[i]) points.push_back(fmt::format("apply.op{}.temp_written", i));
  points.push_back("apply.temps_synced");
  points.push_back("store.transition.COMMITTING");
  for (std::size_t i = 0; i < shape.writes.size(); ++i)
    points.push_back(fmt::format("apply.op{}.{}", i, shape.writes[i] ? "renamed" : "removed"));
  for (std::size_t j = 0; j < shape.touched.size(); ++j) points.push_back(fmt::format("apply.dir{}.synced", j));
  points.push_back("store.transition.COMMITTED");
  for (std::size_t e = 0; e < shape.effects; ++e) {
    points.push_back(fmt::format("store.effect.{}.ATTEMPTED", e));
    points.push_back(fmt::format("effect{}.synced", e));
    points.push_back(fmt::format("store.effect.{}.SUCCEEDED", e));
  }
  points.push_back("store.transition.DONE");
  return points;
}

std::vector<std::string> rollback_v2_crash_points(const PlanShape& shape) {
  std::vector<std::string> points = {"store.transition.ROLLING_BACK"};
  bool temps = false;
  for (std::size_t i = shape.existed.size(); i-- > 0;)
    if (shape.existed[i]) {
      points.push_back(fmt::format("rollback.op{}.temp_written", i));
      temps = true;
    }
  if (temps) points.push_back("rollback.temps_synced");
  for (std::size_t i = shape.existed.size(); i-- > 0;) points.push_back(fmt::format("rollback.op{}.restored", i));
  for (std::size_t f = shape.folders; f-- > 0;) points.push_back(fmt::format("rollback.folder{}.removed", f));
  for (std::size_t j = 0; j < shape.touched.size(); ++j)
    if (!shape.touched[j]) points.push_back(fmt::format("rollback.dir{}.synced", j));
  points.push_back("store.transition.ROLLED_BACK");
  return points;
}

std::vector<std::string> commit_v2_fault_points(const PlanShape& shape) {
  std::vector<std::string> points;
  for (std::size_t f = 0; f < shape.folders; ++f) points.push_back(fmt::format("apply.folder{}.mkdir", f));
  for (std::size_t i = 0; i < shape.writes.size(); ++i)
    if (shape.writes[i]) points.push_back(fmt::format("apply.op{}.write", i));
  points.push_back("apply.syncfs");
  for (std::size_t i = 0; i < shape.writes.size(); ++i)
    points.push_back(fmt::format("apply.op{}.{}", i, shape.writes[i] ? "rename" : "unlink"));
  for (std::size_t j = 0; j < shape.touched.size(); ++j) points.push_back(fmt::format("apply.dir{}.fsync", j));
  return points;
}

}  // namespace dot::core
