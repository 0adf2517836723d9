#pragma once
// Runs SQL on a root's database with plain SQLite, no store code involved:
// the tests that forge or age a store row (the test links SQLite::SQLite3).

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>

namespace dot::core::testing {

inline void sql(const std::filesystem::path& db, const std::string& statement) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(h, statement.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(h);
}

}  // namespace dot::core::testing
