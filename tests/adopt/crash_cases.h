#pragma once
// The cases of the adopt crash matrix (test_adopt.cpp): one per crash point
// core's adopt_crash_points names for the survey of each state's root.
//
// gtest builds a parameter list in every process of a test binary, and
// ctest starts one process per test: computed there, the list made and
// surveyed every state's root (~60 roots) in each of the ~430 processes of
// adopt_tests. So the build computes it once (adopt_crash_list writes it
// to a file, rebuilt whenever core or the generator changes), adopt_tests
// reads that file, and one test of adopt_tests computes it again and
// compares, so a list that is not today's fails.

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "cases.h"
#include "go_root_gen.h"

namespace dot::adopt_test {

struct CrashCase {
  GoGen gen;
  std::string state;
  std::string point;
  bool operator==(const CrashCase&) const = default;
};
inline void PrintTo(const CrashCase& c, std::ostream* os) { *os << gen_name(c.gen) << " " << c.state << " @" << c.point; }

// The root of a crash case (the points depend on it: which slots a rollback
// restores follows from the targets the history left).
inline GoRootSpec crash_spec(const Case& c) { return case_spec(c, true, 1); }

// Makes every state's root (in a scratch folder on a tmpfs when there is
// one: they are only read back), surveys it and lists its crash points. A
// state whose root does not survey is left out (test_go_roots.cpp's survey
// tests report it; test_adopt.cpp's list test fails on it too).
std::vector<CrashCase> compute_crash_cases();

// One line per case: "<generation> <state> <point>" (no field has a space).
std::string crash_cases_text(const std::vector<CrashCase>& cases);
// The cases of such a text; throws std::runtime_error on a malformed line.
std::vector<CrashCase> parse_crash_cases(const std::string& text);

}  // namespace dot::adopt_test
