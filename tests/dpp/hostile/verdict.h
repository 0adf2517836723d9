#pragma once
// The two checks both hostile suites make of their catalogue (hello:
// tests/dpp/test_hostile.cpp, general: tests/dpp/test_hostile_general.cpp):
// the refusal a case must get, and that its list file and its table name the
// same cases, each built as its own executable. Test-side only (gtest).
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <span>
#include <string>

#include "dot/base/error.h"
#include "dot/base/result.h"
#include "hostile.h"

namespace dot::dpp::hostile {

// Refused with the case's code and kind, and a detail holding its text.
inline ::testing::AssertionResult refused_as(const Status& st, const Case& c) {
  if (st.ok()) return ::testing::AssertionFailure() << c.name << " was accepted";
  const Error& e = st.error();
  if (e.code != c.code || e.kind != c.kind)
    return ::testing::AssertionFailure() << c.name << ": expected " << code_name(c.code) << " kind " << c.kind
                                         << ", got " << e.line() << " (kind " << e.kind << ")";
  if (e.detail.find(c.detail) == std::string::npos)
    return ::testing::AssertionFailure() << c.name << ": detail lacks \"" << c.detail << "\": " << e.line();
  return ::testing::AssertionSuccess();
}

// `list_path` (one case name per line, # comments) names exactly the cases
// of `table`, no name twice, each built as bin_dir/dpp-hostile-<name>.
// Returns how many there are.
inline std::size_t expect_catalogue(const char* list_path, std::span<const Case> table, const std::string& bin_dir) {
  std::ifstream list(list_path);
  EXPECT_TRUE(list.good()) << list_path;
  std::set<std::string> listed;
  for (std::string line; std::getline(list, line);)
    if (!line.empty() && line[0] != '#') listed.insert(line);
  std::set<std::string> names;
  for (const auto& c : table) {
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case " << c.name;
    EXPECT_EQ(::access((bin_dir + "/dpp-hostile-" + c.name).c_str(), X_OK), 0) << c.name;
  }
  EXPECT_EQ(listed, names) << list_path;
  return names.size();
}

}  // namespace dot::dpp::hostile
