// SIGINT and SIGTERM during a mutating command: the plugin's group killed, a safe stop (interrupt.h).
#include "dot/core/interrupt.h"

#include <signal.h>

namespace dot::core {
namespace {

// Written by the handler, read by the command: sig_atomic_t is the only type
// a handler may store to.
volatile std::sig_atomic_t g_signal = 0;
volatile std::sig_atomic_t g_plugin_group = 0;

extern "C" void on_interrupt(int sig) {
  g_signal = sig;
  pid_t group = static_cast<pid_t>(g_plugin_group);
  if (group > 0) ::kill(-group, SIGKILL);  // async-signal-safe
}

}  // namespace

InterruptGuard::InterruptGuard() {
  g_signal = 0;
  g_plugin_group = 0;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking wait returns EINTR promptly
  ::sigaction(SIGINT, &sa, &old_int_);
  ::sigaction(SIGTERM, &sa, &old_term_);
}

InterruptGuard::~InterruptGuard() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
  g_plugin_group = 0;
}

int InterruptGuard::signal() const noexcept { return static_cast<int>(g_signal); }

void InterruptGuard::set_plugin_group(pid_t pgid) noexcept { g_plugin_group = static_cast<std::sig_atomic_t>(pgid); }

}  // namespace dot::core
