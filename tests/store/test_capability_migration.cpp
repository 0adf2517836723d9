// Pre-capability (schema version 1) fixtures of vectors/store/: each builds a
// version-1 database with transactions in every state; opening migrates it to
// the current version with every plan id and plan byte unchanged, and the
// migrated store verifies, checks clean and inspects.
#include <sqlite3.h>
#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <map>
#include <sstream>

#include "dot/base/jcs.h"
#include "dot/store/root.h"
#include "helpers.h"
#include "run_cli.h"
#include "schema.h"

namespace dot::store {
namespace {

using testing::TempDir;

std::string fixture_path(const std::string& name) { return std::string(DOT_SOURCE_DIR) + "/vectors/store/" + name; }

// Builds the database a fixture script describes, exactly as sqlite3 would.
void build(const std::string& script, const std::string& db_path) {
  std::string sql = testing::slurp(fixture_path(script));
  ASSERT_FALSE(sql.empty()) << script;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << script << ": " << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

struct RawRow {
  std::string state;
  std::string plan_id;
  std::string canonical;
};

// Runs `query` on the file with plain SQLite, read-only (no store code
// involved): `row` sees each row.
void each_row(const std::string& db_path, const char* query, const std::function<void(sqlite3_stmt*)>& row) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, query, -1, &s, nullptr), SQLITE_OK) << query;
  while (sqlite3_step(s) == SQLITE_ROW) row(s);
  sqlite3_finalize(s);
  sqlite3_close(db);
}

// What the file holds: every transaction with its plan, and user_version
// (-1 when it cannot be read).
std::map<std::int64_t, RawRow> raw_rows(const std::string& db_path, int* user_version) {
  std::map<std::int64_t, RawRow> rows;
  each_row(db_path,
           "SELECT txn.id, txn.state, txn.plan_id, plan.canonical FROM txn "
           "LEFT JOIN plan ON plan.txn_id = txn.id ORDER BY txn.id",
           [&](sqlite3_stmt* s) {
             RawRow r;
             r.state = reinterpret_cast<const char*>(sqlite3_column_text(s, 1));
             if (auto p = sqlite3_column_text(s, 2)) r.plan_id = reinterpret_cast<const char*>(p);
             if (auto b = sqlite3_column_blob(s, 3))
               r.canonical.assign(static_cast<const char*>(b), static_cast<std::size_t>(sqlite3_column_bytes(s, 3)));
             rows[sqlite3_column_int64(s, 0)] = r;
           });
  *user_version = -1;
  each_row(db_path, "PRAGMA user_version", [&](sqlite3_stmt* s) { *user_version = sqlite3_column_int(s, 0); });
  return rows;
}

// A fixture script built into `db_path`, and what plain SQLite reads back.
struct Built {
  std::map<std::int64_t, RawRow> rows;
  int version = 0;
};
Built built(const std::string& script, const std::string& db_path) {
  build(script, db_path);
  Built b;
  b.rows = raw_rows(db_path, &b.version);
  return b;
}

// store check finds nothing wrong.
void expect_checks_clean(Store& store) {
  auto check = store.check();
  ASSERT_OK(check);
  EXPECT_TRUE(check->problems.empty()) << check->problems.front();
}

// The plan ids the generator printed in the script's header, so the test
// pins them independently of what the database holds.
std::map<std::int64_t, std::string> header_plan_ids(const std::string& script) {
  // Lines "--   3 SEALED       <64 hex>" (std::regex trips a false GCC 12
  // -Wmaybe-uninitialized under ASan, so split by hand).
  std::map<std::int64_t, std::string> ids;
  std::istringstream in(testing::slurp(fixture_path(script)));
  std::string l;
  while (std::getline(in, l)) {
    if (l.rfind("-- ", 0) != 0) continue;
    std::istringstream words(l.substr(3));
    std::string number, state, id, extra;
    if (!(words >> number >> state >> id) || (words >> extra)) continue;
    if (number.find_first_not_of("0123456789") != std::string::npos || !is_sha256_hex(id)) continue;
    ids[std::stoll(number)] = id;
  }
  return ids;
}

class capability : public ::testing::TestWithParam<const char*> {};

TEST_P(capability, FixtureMigratesWithPlanIdsUnchanged) {
  TempDir t;
  std::string db_path = t / "store.db";
  const Built fixture = built(GetParam(), db_path);
  ASSERT_EQ(fixture.version, 1);
  const auto& before = fixture.rows;
  ASSERT_FALSE(before.empty());
  auto pinned = header_plan_ids(GetParam());
  ASSERT_FALSE(pinned.empty());

  std::vector<std::string> points;
  OpenOptions o;
  o.commit_hook = [&](std::string_view p) { points.emplace_back(p); };
  auto store = Store::open(db_path, o);
  ASSERT_OK(store);
  EXPECT_EQ(store->opened_version(), 1);
  EXPECT_EQ(points, std::vector<std::string>{fmt::format("store.migrate.{}", kSchemaVersion)});

  int version = 0;
  auto after = raw_rows(db_path, &version);
  EXPECT_EQ(version, kSchemaVersion);
  ASSERT_EQ(after.size(), before.size());
  for (const auto& [id, row] : before) {
    SCOPED_TRACE(fmt::format("transaction {} ({})", id, row.state));
    EXPECT_EQ(after[id].plan_id, row.plan_id);
    EXPECT_EQ(after[id].canonical, row.canonical);
    EXPECT_EQ(after[id].state, row.state);
    auto sum = store->summary(id);
    ASSERT_OK(sum);
    EXPECT_EQ(state_name(sum->state), row.state);
    EXPECT_FALSE(sum->effect_count.has_value()) << "a pre-capability plan has no effect count";
    if (row.plan_id.empty()) continue;
    EXPECT_EQ(pinned[id], row.plan_id);
    EXPECT_EQ(sha256_hex(row.canonical), row.plan_id);
    EXPECT_EQ(row.canonical.find("\"effects\""), std::string::npos);
    // The stored bytes are the canonical (JCS hello profile) form of themselves.
    auto canonical = jcs::canonicalize_text(row.canonical, jcs::Profile::Hello);
    ASSERT_OK(canonical);
    EXPECT_EQ(*canonical, row.canonical);
    auto plan = store->load_sealed(id);
    ASSERT_OK(plan);
    EXPECT_EQ(plan->plan_id, row.plan_id);
    EXPECT_EQ(plan->canonical_plan, row.canonical);
    EXPECT_FALSE(plan->effect_count.has_value());
    EXPECT_TRUE(plan->effects.empty());
    EXPECT_EQ(plan->artifacts.size(), 2u);
    EXPECT_EQ(plan->backups.empty(), row.state == "SEALED" || row.state == "DISCARDED" || row.state == "STALE");
    auto found = store->find(row.plan_id.substr(0, 8));
    ASSERT_OK(found);
    EXPECT_EQ(*found, id);
  }
  expect_checks_clean(*store);

  // A second open finds the current version and migrates nothing.
  points.clear();
  auto again = Store::open(db_path, o);
  ASSERT_OK(again);
  EXPECT_EQ(again->opened_version(), kSchemaVersion);
  EXPECT_TRUE(points.empty());
}

TEST_P(capability, MigrationFillsPathOwnersFromTheAppliedHistory) {
  // Schema version 5 derives every path's owner from the history a root
  // already has: each fixture has a DONE hello plan, so both hello targets
  // belong to org.dot.hello, written by its newest DONE or COMMITTED
  // transaction (what the raw rows say, independently).
  TempDir t;
  std::string db_path = t / "store.db";
  TxnId newest_applied = 0;
  for (const auto& [id, row] : built(GetParam(), db_path).rows)
    if (row.state == "DONE" || row.state == "COMMITTED") newest_applied = id;
  ASSERT_NE(newest_applied, 0);
  auto store = Store::open(db_path);
  ASSERT_OK(store);
  auto owned = store->owned_paths("org.dot.hello");
  ASSERT_OK(owned);
  EXPECT_EQ(*owned, (std::vector<std::string>{"hello.txt", "welcome.txt"}));
  auto owners = store->owners_of(std::vector<std::string_view>{"welcome.txt"});
  ASSERT_OK(owners);
  ASSERT_EQ(owners->size(), 1u);
  EXPECT_EQ(owners->front().txn, newest_applied);
  expect_checks_clean(*store);
}

TEST_P(capability, InspectShowsTheUnmigratedFixture) {
  // inspect on a root whose database is still version 1: it migrates on open
  // and shows every plan exactly as hashed.
  TempDir t;
  std::string root = t / "root";
  ASSERT_EQ(::mkdir(root.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((root + "/.dot").c_str(), 0700), 0);
  const auto rows = built(GetParam(), root + "/.dot/store.db").rows;

  auto list = testing::run_program({testing::dot_core(), "inspect", "list", "--root", root, "--json", "--limit", "0"},
                                   t.path());
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out.front(), '[');
  for (const auto& [id, row] : rows) {
    EXPECT_NE(list.out.find(fmt::format("\"id\":{},", id)), std::string::npos) << id;
    EXPECT_NE(list.out.find(fmt::format("\"state\":\"{}\"", row.state)), std::string::npos) << row.state;
    if (row.plan_id.empty()) continue;
    EXPECT_NE(list.out.find(row.plan_id), std::string::npos);
    auto show = testing::run_program(
        {testing::dot_core(), "inspect", "show", "--root", root, row.plan_id.substr(0, 10), "--json"}, t.path());
    ASSERT_EQ(show.exit_code, 0) << show.err;
    EXPECT_NE(show.out.find("\"plan\":" + row.canonical + ","), std::string::npos) << show.out;
    EXPECT_NE(show.out.find("\"plan_id\":\"" + row.plan_id + "\""), std::string::npos);
    EXPECT_NE(show.out.find("\"effects\":[]"), std::string::npos);
    EXPECT_NE(show.out.find("\"effect_count\":null"), std::string::npos);
    auto human = testing::run_program({testing::dot_core(), "inspect", "show", "--root", root, row.plan_id}, t.path());
    ASSERT_EQ(human.exit_code, 0) << human.err;
    EXPECT_NE(human.out.find(row.state), std::string::npos);
    auto events =
        testing::run_program({testing::dot_core(), "inspect", "events", "--root", root, row.plan_id}, t.path());
    ASSERT_EQ(events.exit_code, 0) << events.err;
    EXPECT_NE(events.out.find("PROPOSING"), std::string::npos);
  }
  // store check judges every plan as a load would: the fixtures' snapshots
  // are sealed by uid and gid 0, which only root's plans may be.
  auto check = testing::run_program({testing::dot_core(), "store", "check", "--root", root}, t.path());
  EXPECT_EQ(check.exit_code, ::geteuid() == 0 && ::getegid() == 0 ? 0 : 1) << check.out << check.err;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, capability,
                         ::testing::Values("v1-all-states.sql", "v1-unfinished-prepared.sql",
                                           "v1-unfinished-committing.sql", "v1-unfinished-committed.sql",
                                           "v1-unfinished-rolling-back.sql"));

TEST(capability, AllStatesFixtureHoldsEveryState) {
  TempDir t;
  build("v1-all-states.sql", t / "store.db");
  auto store = Store::open(t / "store.db");
  ASSERT_OK(store);
  for (State s : all_states()) {
    auto rows = store->list({s, 0});
    ASSERT_OK(rows);
    EXPECT_EQ(rows->size(), 1u) << state_name(s);
  }
  auto abandoned = store->list({State::Abandoned, 1});
  ASSERT_OK(abandoned);
  auto d = store->detail(abandoned->front().id);
  ASSERT_OK(d);
  EXPECT_EQ(d->summary.code, "DOT_E_PROTOCOL");
  EXPECT_FALSE(d->plugin_stderr.empty());
}

TEST(capability, MigratedPreCapabilityCommitHasNoLedgerAndCompletes) {
  TempDir t;
  build("v1-unfinished-committed.sql", t / "store.db");
  auto store = Store::open(t / "store.db");
  ASSERT_OK(store);
  auto flying = store->in_flight();
  ASSERT_OK(flying);
  ASSERT_EQ(flying->size(), 1u);
  TxnId id = flying->front().id;
  EXPECT_EQ(flying->front().state, State::Committed);
  ASSERT_ERR(store->effect_attempt(id, 0), Code::RecoveryRequired);
  ASSERT_OK(store->transition(id, State::Done));
  expect_checks_clean(*store);
}

TEST(capability, FailedMigrationLeavesVersionOneUntouched) {
  // A version-1 database that already has a table the migration creates: the
  // migration fails half-way and must roll back entirely.
  TempDir t;
  std::string db_path = t / "store.db";
  build("v1-all-states.sql", db_path);
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE effect (x INTEGER)", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  auto store = Store::open(db_path);
  ASSERT_ERR(store, Code::Store);
  int version = 0;
  auto rows = raw_rows(db_path, &version);
  EXPECT_EQ(version, 1);
  EXPECT_EQ(rows.size(), 11u);
  // The ALTER TABLE of the same migration was rolled back too.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  EXPECT_NE(sqlite3_exec(db, "SELECT effect_count FROM plan", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
}

}  // namespace
}  // namespace dot::store

namespace dot::store {
namespace {

// The plugin rows as plain SQLite sees them: "id sha256 manifest registered_at" per row.
std::vector<std::string> raw_plugin_rows(const std::string& db_path) {
  std::vector<std::string> out;
  each_row(db_path,
           "SELECT plugin_id || ' ' || sha256 || ' ' || CAST(manifest AS TEXT) || ' ' || "
           "registered_at_ms FROM plugin ORDER BY plugin_id",
           [&](sqlite3_stmt* s) { out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(s, 0))); });
  return out;
}

TEST(capability, VersionThreeRootKeepsItsOnePluginAndTakesMore) {
  // A database exactly as a version-3 release left it (the v1 fixture with
  // the migrations to 2 and 3): its one plugin row (id = 1, the hello
  // plugin) moves to the version-4 table with every byte unchanged, and the
  // migrated root takes a second plugin beside it.
  TempDir t;
  std::string db_path = t / "store.db";
  build("v1-all-states.sql", db_path);
  {
    detail::Db db;
    ASSERT_OK(db.open(db_path, false, 5000));
    auto txn = detail::WriteTxn::begin(db);
    ASSERT_OK(txn);
    ASSERT_OK(detail::migrate(db, 1, 3));
    ASSERT_OK(txn->commit());
  }
  int version = 0;
  (void)raw_rows(db_path, &version);
  ASSERT_EQ(version, 3);
  const auto before = raw_plugin_rows(db_path);
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before.front().rfind("org.dot.hello ", 0), 0u) << before.front();
  {
    // Version 3's plugin table holds one row only.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
    EXPECT_NE(sqlite3_exec(db,
                           "INSERT INTO plugin VALUES (2, 'org.dot.mirror', "
                           "'3333333333333333333333333333333333333333333333333333333333333333', x'7b7d', 1)",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }

  auto store = Store::open(db_path);
  ASSERT_OK(store);
  EXPECT_EQ(store->opened_version(), 3);
  (void)raw_rows(db_path, &version);
  EXPECT_EQ(version, kSchemaVersion);
  EXPECT_EQ(raw_plugin_rows(db_path), before);
  auto hello = store->plugin("org.dot.hello");
  ASSERT_OK(hello);
  ASSERT_TRUE(hello->has_value());
  EXPECT_EQ((*hello)->manifest,
            "{\"assurance\":\"audit\",\"id\":\"org.dot.hello\",\"profile\":\"org.dot.hello/v1\",\"protocol\":1,"
            "\"sha256\":\"ce800245ffe6724eeb4e42648927c1dfb11d35234dfacdb02068455a0c995df1\"}");
  PluginRecord mirror{"org.dot.mirror", testing::hex64('3'), "{}", 0};
  ASSERT_OK(store->register_plugin(mirror, false));
  auto all = store->plugins();
  ASSERT_OK(all);
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].plugin_id, "org.dot.hello");
  EXPECT_EQ((*all)[1].plugin_id, "org.dot.mirror");
  EXPECT_EQ(raw_plugin_rows(db_path).front(), before.front());
  expect_checks_clean(*store);
}

}  // namespace
}  // namespace dot::store
