// The store's SQLite connection treats the file as untrusted data
// (docs/threat-model.md): defensive mode on, trusted_schema off.
#include <sqlite3.h>

#include "helpers.h"
#include "sqlite.h"

namespace dot::store {
namespace {

using testing::TempDir;

int db_config(sqlite3* h, int op) {
  int value = -1;
  EXPECT_EQ(sqlite3_db_config(h, op, -1, &value), SQLITE_OK);
  return value;
}

// Store::create and Store::open both come through Db::open.
TEST(StoreConnection, IsDefensiveAndDistrustsTheSchema) {
  TempDir t;
  const std::string path = t / "store.db";
  ASSERT_OK(Store::create(path, testing::hex64('a')));
  detail::Db db;
  ASSERT_OK(db.open(path, false, 1000));
  EXPECT_EQ(db_config(db.handle(), SQLITE_DBCONFIG_DEFENSIVE), 1);
  EXPECT_EQ(db_config(db.handle(), SQLITE_DBCONFIG_TRUSTED_SCHEMA), 0);
  // What defensive mode means: even with writable_schema asked for, the
  // schema cannot be rewritten through the store's connection.
  const char* edit = "UPDATE sqlite_schema SET sql = replace(sql, 'CHECK (id = 1)', '') WHERE name = 'root'";
  ASSERT_OK(db.exec("PRAGMA writable_schema = ON", "writable_schema"));
  EXPECT_FALSE(db.exec(edit, "editing the schema").ok());
  db.close();
  // The control: an ordinary connection can, so the refusal above is the
  // store's configuration and not SQLite's default.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(raw, "PRAGMA writable_schema = ON", nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(raw, edit, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(raw);
  sqlite3_close(raw);
}

}  // namespace
}  // namespace dot::store
