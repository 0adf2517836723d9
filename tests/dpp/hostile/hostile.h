#pragma once
// The hostile DPP plugins: each case is its own tiny executable
// dpp-hostile-<name> in build/<preset>/bin (a stub main calling run_hostile),
// with the error a host that follows spec/dpp-hello.md must report for it.
// tests/dpp/test_hostile.cpp drives each through HostSession and the hello
// checks; the core engine's tests can run the same executables through
// `dot-core plan` with the same expectations (link dpp_hostile for the table).

#include <cstddef>
#include <span>

#include "dot/base/error.h"

namespace dot::dpp::hostile {

struct Case {
  const char* name;      // executable dpp-hostile-<name>
  int (*run)();          // the plugin's behaviour (its main)
  Code code;             // expected DOT_E_* code
  const char* kind;      // expected error kind
  const char* detail;    // a substring the error detail must contain
  bool needs_deadline;   // only these may take the full 5 s
};

std::span<const Case> cases();
const Case* find(const char* name);

}  // namespace dot::dpp::hostile

// The stub executables call this with their case name.
extern "C" int dot_dpp_run_hostile(const char* name);
