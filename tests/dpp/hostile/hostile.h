#pragma once
// The hostile DPP plugins: each case is its own tiny executable
// dpp-hostile-<name> in build/<preset>/bin (a stub main calling run_hostile),
// with the error a host that follows docs/spec/dpp-hello.md must report for it.
// tests/dpp/test_hostile.cpp drives each through HostSession and the hello
// checks; the core engine's tests can run the same executables through
// `dot-core plan` with the same expectations (link dpp_hostile for the table).

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "dot/base/error.h"

namespace dot::dpp::hostile {

struct Case {
  const char* name;      // executable dpp-hostile-<name>
  int (*run)();          // the plugin's behaviour (its main); null for a script
  Code code;             // expected DOT_E_* code
  const char* kind;      // expected error kind
  const char* detail;    // a substring the error detail must contain
  bool needs_deadline;   // only these may take the full deadline
};

std::span<const Case> cases();
const Case* find(const char* name);

// The two helpers every case is written with (both catalogues):
// "Content-Length: N\r\n\r\n" + body, and `s` with the first `from`
// replaced by `to` (exit 99 when the honest body lacks it: a broken case).
std::string frame(std::string_view body);
std::string replace(std::string s, std::string_view from, std::string_view to);

// The general profile's cases (tests/dpp/hostile/general.cpp, listed in
// general_cases.list, names starting "general_"): honest org.dot.dpp/v1
// plugins on the runtime (dot/dpp/runtime.h) breaking one rule each. They
// echo the id below and the inputs they are sent; `needs_deadline` cases are
// driven with a short deadline_ms (tests/dpp/test_hostile_general.cpp).
inline constexpr std::string_view kGeneralPluginId = "org.dot.hostile";
std::span<const Case> general_cases();
const Case* find_general(const char* name);
// The honest plugin they are made from (executable dpp-general-honest).
int run_general_honest();

// The broken plugins of `dot-core dpp conform` (conform_cases.list, in
// general.cpp): honest on core's own lifecycle, each wrong in one answer the
// profile requires (code, kind and detail: what conform reports).
std::span<const Case> conform_cases();
const Case* find_conform(const char* name);

// The interpreted cases (interpreted_cases.list, names starting "py_";
// verdicts in interpreted.cpp, behaviours in interpreted.py): Python scripts
// built as dpp-hostile-<name>, `run` null. dpp-hostile-py_honest is the
// honest script they are made from.
std::span<const Case> interpreted_cases();

}  // namespace dot::dpp::hostile

// The stub executables call this with their case name.
extern "C" int dot_dpp_run_hostile(const char* name);
