#pragma once
// The seccomp program of a contained plugin, compiled in sandbox_seccomp.cpp
// and installed by sandbox.cpp. Not installed: only base/src includes it.

#include <linux/filter.h>
#include <sys/types.h>

#include <cstddef>
#include <vector>

#include "dot/base/result.h"

namespace dot::sandbox_detail {

// The allowlist as classic BPF. It is compiled in the parent, but some rules
// compare a system call's target (a pid, a thread group, a process group)
// with the plugin's own pid, which exists only after fork: the comparisons
// are compiled against placeholders, and the instructions that hold them are
// listed here so that the child can write its pid in before installing the
// program (bind_to_self).
struct SeccompProgram {
  std::vector<sock_filter> insns;
  std::vector<std::size_t> self_slots;   // compare with the plugin's pid
  std::vector<std::size_t> group_slots;  // compare with minus its pid: its own process group
};

// Errors: DOT_E_SANDBOX_UNAVAILABLE, kind "seccomp".
Result<SeccompProgram> build_seccomp_filter();

// Between fork and exec, in the child: writes `self` (its getpid(), which
// exec keeps) into the placeholders. No allocation, no lock, no system call.
void bind_to_self(SeccompProgram& program, pid_t self) noexcept;

}  // namespace dot::sandbox_detail
