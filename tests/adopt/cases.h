#pragma once
// The parameter of the tests that run once per state of docs/spec/go-roots.md
// section 8 and per reader generation (test_go_roots.cpp, test_adopt.cpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "go_root_gen.h"

namespace dot::adopt_test {

inline std::string gen_name(GoGen g) { return g == GoGen::Effects ? "effects" : "pre-capability"; }

struct Case {
  GoGen gen;
  std::string state;
};

// How a case shows in test output (and in ctest's list): its generation and
// state, not its bytes.
inline void PrintTo(const Case& c, std::ostream* os) { *os << gen_name(c.gen) << " " << c.state; }

inline std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (GoGen g : {GoGen::PreCapability, GoGen::Effects})
    for (const auto& s : go_states(g)) out.push_back({g, s});
  return out;
}

// The root a test makes for a case: hello.txt there before the first apply
// or not, `history` archived generations before the state (none after a
// bare init), the seed following user_file (so both roots differ).
inline GoRootSpec case_spec(const Case& c, bool user_file, int history, const std::string& assurance = "audit") {
  GoRootSpec s;
  s.gen = c.gen;
  s.state = c.state;
  s.user_file = user_file;
  s.history = c.state == "idle-after-init" ? 0 : history;
  s.seed = static_cast<unsigned>(user_file + 3);
  s.assurance = assurance;
  return s;
}

inline std::string case_name(const ::testing::TestParamInfo<Case>& c) {
  std::string n = gen_name(c.param.gen) + "_" + c.param.state;
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

}  // namespace dot::adopt_test
