// Pre-capability transactions (docs/spec/transactions.md): the version-1 store
// fixtures of vectors/store/, migrated by opening them, then driven through
// the real dot-core: unfinished ones roll back (or complete, when COMMITTED,
// without a ledger), and a pre-capability SEALED plan is never newly applied.
#include <regex>

#include <sqlite3.h>

#include "engine_harness.h"

namespace dot::core::testing {
namespace {

struct FixtureTxn {
  int row = 0;
  std::string state;
  std::string plan_id;
};

std::vector<FixtureTxn> fixture_txns(const std::string& sql_text) {
  std::vector<FixtureTxn> out;
  std::regex line(R"(--\s+(\d+) ([A-Z_]+)\s+([0-9a-f]{64}|-))");
  for (auto it = std::sregex_iterator(sql_text.begin(), sql_text.end(), line); it != std::sregex_iterator(); ++it)
    out.push_back(FixtureTxn{std::stoi((*it)[1]), (*it)[2], (*it)[3]});
  return out;
}

// The bytes the fixture generator (vectors/store/make_v1_fixtures.py) wrote.
std::string fixture_hello(int row) { return "Hello from fixture plan " + std::to_string(row) + "\n"; }
std::string fixture_welcome(int row) { return "Welcome, fixture plan " + std::to_string(row) + "\n"; }
const std::string kOldWelcome = "old welcome\n";

class capability : public EngineTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the fixtures' snapshots are owned by uid 0";
    EngineTest::SetUp();
  }
  // Replaces the root's database with the version-1 fixture.
  std::vector<FixtureTxn> load_fixture(const std::string& name) {
    std::string sql_text = slurp(fs::path(DOT_SOURCE_DIR) / "vectors" / "store" / name);
    fs::path db = root_ / ".dot" / "store.db";
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
    sqlite3* h = nullptr;
    EXPECT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(h, sql_text.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(h);
    return fixture_txns(sql_text);
  }
  FixtureTxn find(const std::vector<FixtureTxn>& txns, const std::string& state) {
    for (const auto& t : txns)
      if (t.state == state) return t;
    ADD_FAILURE() << "fixture has no " << state;
    return {};
  }
};

TEST_F(capability, UnfinishedPreparedRollsBack) {
  auto t = find(load_fixture("v1-unfinished-prepared.sql"), "PREPARED");
  spit(root_ / "welcome.txt", kOldWelcome);  // nothing was renamed yet
  CmdResult blocked = core({"plan", "--allow-audit-plugin"});
  EXPECT_NE(blocked.err.find("DOT_E_RECOVERY_REQUIRED"), std::string::npos) << blocked.err;
  CmdResult rec = core({"recover"});
  ASSERT_EQ(rec.code, 0) << rec.err;
  EXPECT_EQ(state_of(t.plan_id), "ROLLED_BACK");
  EXPECT_FALSE(fs::exists(root_ / "hello.txt"));
  EXPECT_EQ(welcome(), kOldWelcome);
  EXPECT_EQ(store_problems(), "");
}

TEST_F(capability, UnfinishedCommittingRollsBackWhatWasRenamed) {
  auto t = find(load_fixture("v1-unfinished-committing.sql"), "COMMITTING");
  spit(root_ / "hello.txt", fixture_hello(t.row));  // slot 0 renamed, slot 1 not yet
  spit(root_ / "welcome.txt", kOldWelcome);
  CmdResult rec = core({"recover"});
  ASSERT_EQ(rec.code, 0) << rec.err;
  EXPECT_EQ(state_of(t.plan_id), "ROLLED_BACK");
  EXPECT_FALSE(fs::exists(root_ / "hello.txt"));
  EXPECT_EQ(welcome(), kOldWelcome);
  EXPECT_NE(core({"recover", "--json"}).out.find("\"changed\":false"), std::string::npos);
}

TEST_F(capability, UnfinishedRollingBackFinishes) {
  auto t = find(load_fixture("v1-unfinished-rolling-back.sql"), "ROLLING_BACK");
  spit(root_ / "hello.txt", fixture_hello(t.row));
  spit(root_ / "welcome.txt", fixture_welcome(t.row));
  CmdResult rec = core({"recover"});
  ASSERT_EQ(rec.code, 0) << rec.err;
  EXPECT_EQ(state_of(t.plan_id), "ROLLED_BACK");
  EXPECT_FALSE(fs::exists(root_ / "hello.txt"));
  EXPECT_EQ(welcome(), kOldWelcome);
}

TEST_F(capability, CommittedIsCompleteWithoutALedgerAndSealedIsNeverNewlyApplied) {
  auto txns = load_fixture("v1-unfinished-committed.sql");
  auto committed = find(txns, "COMMITTED");
  auto sealed = find(txns, "SEALED");
  spit(root_ / "hello.txt", fixture_hello(committed.row));
  spit(root_ / "welcome.txt", fixture_welcome(committed.row));
  CmdResult rec = core({"recover"});
  ASSERT_EQ(rec.code, 0) << rec.err;
  EXPECT_EQ(state_of(committed.plan_id), "DONE");
  EXPECT_EQ(ledger(committed.plan_id), "") << "a pre-capability plan never gets a ledger";
  EXPECT_EQ(hello(), fixture_hello(committed.row)) << "committed targets stay";
  CmdResult apply = core({"apply", sealed.plan_id});
  EXPECT_EQ(apply.code, 1);
  EXPECT_NE(apply.err.find("DOT_E_POLICY"), std::string::npos) << apply.err;
  EXPECT_NE(apply.err.find("re-plan"), std::string::npos) << apply.err;
  EXPECT_EQ(state_of(sealed.plan_id), "SEALED");
  // Export still gives the stored bytes, whose id is unchanged by migration.
  CmdResult exp = core({"export", sealed.plan_id});
  ASSERT_EQ(exp.code, 0) << exp.err;
  EXPECT_EQ(exp.out.find("\"effects\""), std::string::npos);
  spit(base_ / "old.json", exp.out);
  EXPECT_EQ(dot_core({"plan-id", (base_ / "old.json").string()}).out, sealed.plan_id + "\n");
  EXPECT_EQ(store_problems(), "");
}

TEST_F(capability, PreCapabilityDoneCanBeRolledBack) {
  auto txns = load_fixture("v1-unfinished-committed.sql");
  auto committed = find(txns, "COMMITTED");
  spit(root_ / "hello.txt", fixture_hello(committed.row));
  spit(root_ / "welcome.txt", fixture_welcome(committed.row));
  ASSERT_EQ(core({"recover"}).code, 0);
  CmdResult rb = core({"rollback", committed.plan_id});
  ASSERT_EQ(rb.code, 0) << rb.err;
  EXPECT_FALSE(fs::exists(root_ / "hello.txt"));
  EXPECT_EQ(welcome(), kOldWelcome);
}

}  // namespace
}  // namespace dot::core::testing
