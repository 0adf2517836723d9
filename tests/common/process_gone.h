#pragma once
// Test helper shared by the process-level tests: whether a process has
// ended. Dead means no such process, or a zombie (an orphaned descendant is
// re-parented to whoever reaps here, which may be slow, or never in a
// container). Waits up to 1 s for it: a process killed under load takes a
// moment to die, and a survivor is still a survivor after 1 s.

#include <signal.h>
#include <sys/types.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace dot {

inline bool process_gone(pid_t pid) {
  for (int i = 0; i < 200; ++i) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    auto close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z') return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

}  // namespace dot
