#pragma once
// Runs SQL on a root's database with plain SQLite, no store code involved:
// the tests that forge or age a store row (the test links SQLite::SQLite3):
// one statement at a time (sql) or with bound values (Sql).

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

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

// One statement with bound text/blob/integer/NULL values, on a connection of
// the test's own (as an attacker with write access to the file would have).
class Sql {
 public:
  explicit Sql(const std::filesystem::path& db) {
    EXPECT_EQ(sqlite3_open(db.c_str(), &h_), SQLITE_OK);
    sqlite3_busy_timeout(h_, 5000);
  }
  ~Sql() { sqlite3_close(h_); }
  Sql(const Sql&) = delete;
  Sql& operator=(const Sql&) = delete;

  using Value = std::optional<std::string>;  // nullopt: NULL
  // Runs `statement`; returns the first column of every row.
  std::vector<std::string> run(const std::string& statement, const std::vector<Value>& values = {}) {
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(h_, statement.c_str(), -1, &s, nullptr), SQLITE_OK) << sqlite3_errmsg(h_);
    for (std::size_t i = 0; i < values.size(); ++i) {
      int col = static_cast<int>(i + 1);
      if (!values[i])
        sqlite3_bind_null(s, col);
      else
        sqlite3_bind_text(s, col, values[i]->data(), static_cast<int>(values[i]->size()), SQLITE_TRANSIENT);
    }
    std::vector<std::string> rows;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      const void* p = sqlite3_column_blob(s, 0);
      rows.emplace_back(p ? static_cast<const char*>(p) : "", static_cast<std::size_t>(sqlite3_column_bytes(s, 0)));
    }
    EXPECT_EQ(rc, SQLITE_DONE) << statement << ": " << sqlite3_errmsg(h_);
    sqlite3_finalize(s);
    return rows;
  }

 private:
  sqlite3* h_ = nullptr;
};

}  // namespace dot::core::testing
