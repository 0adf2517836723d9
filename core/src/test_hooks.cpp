// The crash, fault and pause points every durable step reports
// (test_hooks.h). Part of dot_core: a TestHooks is armed only by its
// factories, which tests call, or by the environment reader of the test-only
// dot_core_test_hooks library (test_hooks_env.cpp), which only the test-only
// dot-core-hooked links. In every other program these are never armed.
#include "dot/core/test_hooks.h"

#include <csignal>

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

namespace dot::core {

TestHooks TestHooks::crash_at(std::string point) {
  TestHooks h;
  h.crash_at_ = std::move(point);
  return h;
}

TestHooks TestHooks::fault_at(std::string point, int err) {
  TestHooks h;
  h.fault_at_ = std::move(point);
  h.fault_errno_ = err;
  return h;
}

void TestHooks::crash_point(std::string_view point) const {
  if (crash_at_.empty() || point != crash_at_) return;
  // SIGKILL: no destructor, no atexit handler, no flush runs, like a power cut
  // as far as this process is concerned.
  ::kill(::getpid(), SIGKILL);
  for (;;) ::pause();
}

int TestHooks::fault(std::string_view point) const noexcept {
  return (!fault_at_.empty() && point == fault_at_) ? fault_errno_ : 0;
}

void TestHooks::pause_point(std::string_view point) const {
  if (pause_at_.empty() || point != pause_at_) return;
  int fd = ::open(pause_file_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);
  // Bounded: a forgotten pause file must not hang a test run forever.
  for (int i = 0; i < 3000; ++i) {
    struct stat st {};
    if (::stat(pause_file_.c_str(), &st) != 0) return;
    struct timespec ts {
      0, 10 * 1000 * 1000
    };
    ::nanosleep(&ts, nullptr);
  }
}

}  // namespace dot::core
