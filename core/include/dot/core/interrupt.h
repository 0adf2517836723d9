#pragma once
// SIGINT and SIGTERM during a mutating command (docs/spec/transactions.md,
// "Interruptions"): while an InterruptGuard lives, the signals do not kill us.
// During `plan` the handler SIGKILLs the plugin's process group at once (the
// session then fails and the proposal is ABANDONED); during `apply` the
// command notices at its next safe point and stops, leaving a state that
// `recover` finishes.
//
// The flag and the group id are the one piece of process-global state here:
// a signal handler can reach nothing else. Only one guard may exist at a time.

#include <sys/types.h>

#include <csignal>

namespace dot::core {

class InterruptGuard {
 public:
  InterruptGuard();   // installs the handlers
  ~InterruptGuard();  // restores the previous ones
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  // The signal received (SIGINT or SIGTERM), or 0.
  int signal() const noexcept;
  bool interrupted() const noexcept { return signal() != 0; }
  // The process group to SIGKILL when a signal arrives (0: none).
  void set_plugin_group(pid_t pgid) noexcept;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace dot::core
