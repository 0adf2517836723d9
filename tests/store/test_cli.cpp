// The inspect / store commands against a store filled through the API: JSON
// shapes (parsed with the strict reader), human tables, exit codes.
#include <sqlite3.h>

#include "dot/base/jcs.h"
#include "dot/base/json.h"
#include "dot/store/root.h"
#include "helpers.h"
#include "run_cli.h"

namespace dot::store {
namespace {

using testing::TempDir;

class StoreCli : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = init_root(t / "r");
    ASSERT_TRUE(r.ok()) << r.error().line();
    layout = r->layout;
    auto s = Store::open(layout.database);
    ASSERT_TRUE(s.ok());
    // 1: abandoned with hostile stderr.
    auto a = s->begin_proposal({"org.dot.hello", testing::hex64('d'), 0});
    ASSERT_TRUE(a.ok());
    abandoned = *a;
    ASSERT_TRUE(s->abandon(*a, {"DOT_E_PROTOCOL", "trailing output", std::string("bad \xff byte\n\x1b[31mred\n")}).ok());
    // 2: committed with a failed effect.
    auto c = s->begin_proposal({"org.dot.hello", testing::hex64('d'), 0});
    ASSERT_TRUE(c.ok());
    committed = *c;
    in_committed = testing::make_hello_seal(1, r->root_id);
    ASSERT_TRUE(s->seal(*c, in_committed).ok());
    ASSERT_TRUE(s->prepare(*c, testing::make_backups(2)).ok());
    ASSERT_TRUE(s->transition(*c, State::Committing).ok());
    ASSERT_TRUE(s->transition(*c, State::Committed).ok());
    ASSERT_TRUE(s->effect_attempt(*c, 0).ok());
    ASSERT_TRUE(s->effect_finish(*c, 0, EffectState::Failed, "DOT_E_POST_COMMIT", "fsync: EIO").ok());
    // 3: sealed.
    auto d = s->begin_proposal({"org.dot.hello", testing::hex64('d'), 0});
    ASSERT_TRUE(d.ok());
    in_sealed = testing::make_hello_seal(2, r->root_id);
    ASSERT_TRUE(s->seal(*d, in_sealed).ok());
  }

  testing::RunResult run(std::vector<std::string> args) {
    args.insert(args.begin(), testing::dot_core());
    return testing::run_program(args, t.path());
  }

  TempDir t;
  RootLayout layout;
  TxnId abandoned = 0, committed = 0;
  SealInput in_committed, in_sealed;
};

TEST_F(StoreCli, ListJsonIsNewestFirstWithTheDocumentedFields) {
  auto r = run({"inspect", "list", "--root", layout.root, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = json::parse(r.out);
  ASSERT_OK(doc);
  auto root = doc->root();
  ASSERT_TRUE(root.is_array());
  ASSERT_EQ(root.size(), 3u);
  std::vector<std::string> states;
  for (auto v : root.elements()) {
    for (auto k : {"id", "plan_id", "proposal_id", "state", "created_at", "updated_at", "plugin_id", "code",
                   "operation_count", "effect_count", "pruned", "status"})
      EXPECT_TRUE(v.find(k).has_value()) << k;
    states.emplace_back(v.find("state")->as_string());
    auto created = v.find("created_at")->as_string();
    EXPECT_EQ(created.size(), 24u) << created;  // 2026-11-30T16:18:56.123Z
    EXPECT_EQ(created.back(), 'Z');
  }
  EXPECT_EQ(states, (std::vector<std::string>{"SEALED", "COMMITTED", "ABANDONED"}));
  auto first = *root.elements().begin();
  EXPECT_EQ(first.find("plan_id")->as_string(), in_sealed.plan_id);
  auto last = *std::next(root.elements().begin(), 2);
  EXPECT_TRUE(last.find("plan_id")->is_null());
  EXPECT_EQ(last.find("code")->as_string(), "DOT_E_PROTOCOL");
}

TEST_F(StoreCli, ListFiltersByStateAndLimits) {
  auto r = run({"inspect", "list", "--root", layout.root, "--json", "--state", "COMMITTED"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = json::parse(r.out);
  ASSERT_OK(doc);
  ASSERT_EQ(doc->root().size(), 1u);
  EXPECT_EQ((*doc->root().elements().begin()).find("status")->as_string(), "POST_COMMIT_FAILED");
  auto none = run({"inspect", "list", "--root", layout.root, "--json", "--state", "DONE"});
  EXPECT_EQ(none.out, "[]\n");
  auto one = run({"inspect", "list", "--root", layout.root, "--json", "--limit", "1"});
  auto d1 = json::parse(one.out);
  ASSERT_OK(d1);
  EXPECT_EQ(d1->root().size(), 1u);
  EXPECT_EQ(run({"inspect", "list", "--root", layout.root, "--state", "sealed"}).exit_code, 2);
  EXPECT_EQ(run({"inspect", "list", "--root", layout.root, "--limit", "x"}).exit_code, 2);
}

TEST_F(StoreCli, ListHumanIsAnAlignedTable) {
  auto r = run({"inspect", "list", "--root", layout.root});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(r.out);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("ID", 0), 0u) << header;
  auto state_col = header.find("STATE");
  auto created_col = header.find("CREATED");
  int rows = 0;
  while (std::getline(in, line)) {
    ++rows;
    EXPECT_NE(line[state_col], ' ') << line;
    EXPECT_EQ(line[state_col - 1], ' ') << line;
    EXPECT_EQ(line.substr(created_col, 2), "20") << line;
  }
  EXPECT_EQ(rows, 3);
}

TEST_F(StoreCli, ShowJsonCarriesPlanEffectsEventsAndStderr) {
  auto r = run({"inspect", "show", "--root", layout.root, in_committed.plan_id.substr(0, 8), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = json::parse(r.out);
  ASSERT_OK(doc);
  auto v = doc->root();
  EXPECT_EQ(v.find("plan_id")->as_string(), in_committed.plan_id);
  EXPECT_EQ(v.find("state")->as_string(), "COMMITTED");
  EXPECT_EQ(v.find("status")->as_string(), "POST_COMMIT_FAILED");
  EXPECT_TRUE(v.find("plan_verified")->as_bool());
  // The plan object exactly as hashed: its bytes appear verbatim.
  EXPECT_NE(r.out.find("\"plan\":" + in_committed.canonical_plan + ","), std::string::npos);
  ASSERT_TRUE(v.find("plan")->is_object());
  auto effects = v.find("effects");
  ASSERT_TRUE(effects && effects->is_array());
  ASSERT_EQ(effects->size(), 1u);
  auto e0 = *effects->elements().begin();
  EXPECT_EQ(e0.find("state")->as_string(), "FAILED");
  EXPECT_EQ(e0.find("code")->as_string(), "DOT_E_POST_COMMIT");
  EXPECT_EQ(e0.find("idempotency_key")->as_string(), effect_idempotency_key(in_committed.plan_id, 0));
  auto events = v.find("events");
  ASSERT_TRUE(events && events->is_array());
  EXPECT_EQ(events->size(), 5u);
  auto ops = v.find("operations");
  ASSERT_TRUE(ops && ops->is_array());
  EXPECT_EQ(ops->size(), 2u);
  EXPECT_FALSE(v.find("plugin_stderr").has_value());

  auto sealed = run({"inspect", "show", "--root", layout.root, in_sealed.plan_id, "--json"});
  ASSERT_EQ(sealed.exit_code, 0) << sealed.err;
  auto sd = json::parse(sealed.out);
  ASSERT_OK(sd);
  EXPECT_EQ(sd->root().find("status")->as_string(), "SEALED");
  EXPECT_EQ(sd->root().find("effects")->size(), 0u);
  EXPECT_FALSE(sd->root().find("backups")->as_bool());
}

TEST_F(StoreCli, ShowAbandonedProposalKeepsStderrSafely) {
  // Give the abandoned proposal an id to find it by.
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(layout.database.c_str(), &db), SQLITE_OK);
    std::string sql = fmt::format("UPDATE txn SET proposal_id = '{}' WHERE id = {}", testing::hex64('c'), abandoned);
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  auto r = run({"inspect", "show", "--root", layout.root, "cccccccc", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = json::parse(r.out);
  ASSERT_OK(doc);
  auto v = doc->root();
  EXPECT_EQ(v.find("state")->as_string(), "ABANDONED");
  EXPECT_TRUE(v.find("plan")->is_null());
  EXPECT_EQ(v.find("code")->as_string(), "DOT_E_PROTOCOL");
  EXPECT_EQ(v.find("plugin_stderr")->as_string(), "bad \xef\xbf\xbd byte\n\x1b[31mred\n");
  auto human = run({"inspect", "show", "--root", layout.root, "cccccccc"});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_EQ(human.out.find('\x1b'), std::string::npos) << "a terminal escape reached stdout";
  EXPECT_NE(human.out.find("\\x1b[31mred"), std::string::npos) << human.out;
}

// The ID column holds what `inspect show` takes: a plan id prefix, else a
// proposal id prefix, else txn-N.
TEST_F(StoreCli, EveryListedIdIsAcceptedByShow) {
  {
    auto s = Store::open(layout.database);
    ASSERT_TRUE(s.ok());
    auto p = s->begin_proposal({"org.dot.hello", testing::hex64('d'), 0});
    ASSERT_TRUE(p.ok());
    ASSERT_TRUE(s->set_proposal_id(*p, testing::hex64('e')).ok());
    ASSERT_TRUE(s->abandon(*p, {"DOT_E_ARTIFACT_MISMATCH", "staged hello.txt lies", "said something\n"}).ok());
  }
  auto r = run({"inspect", "list", "--root", layout.root});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(r.out);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("ID ", 0), 0u) << line;
  std::vector<std::string> ids, states;
  while (std::getline(in, line)) {
    std::istringstream cells(line);
    std::string id, state;
    cells >> id >> state;
    ids.push_back(id);
    states.push_back(state);
  }
  ASSERT_EQ(ids.size(), 4u) << r.out;
  EXPECT_EQ(ids[0], std::string(12, 'e'));
  EXPECT_EQ(ids[1], in_sealed.plan_id.substr(0, 16));
  EXPECT_EQ(ids[3], fmt::format("txn-{}", abandoned));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    auto show = run({"inspect", "show", "--root", layout.root, ids[i], "--json"});
    ASSERT_EQ(show.exit_code, 0) << ids[i] << ": " << show.err;
    auto doc = json::parse(show.out);
    ASSERT_OK(doc);
    EXPECT_EQ(doc->root().find("state")->as_string(), states[i]) << ids[i];
  }
  auto newest = run({"inspect", "show", "--root", layout.root, ids[0]});
  ASSERT_EQ(newest.exit_code, 0) << newest.err;
  EXPECT_NE(newest.out.find("error     DOT_E_ARTIFACT_MISMATCH: staged hello.txt lies"), std::string::npos) << newest.out;
  EXPECT_NE(newest.out.find("plugin stderr\n  said something\n"), std::string::npos) << newest.out;
}

// A prefix that names two rows (two proposals, or one row's plan id and
// another row's proposal id) is refused with both candidates, never resolved
// to one of them silently.
TEST_F(StoreCli, PrefixOfTwoRowsIsAmbiguousAndListsBoth) {
  std::string shared = in_sealed.plan_id.substr(0, 10);
  // The proposal id goes on with a digit the plan id does not have at that
  // place (the root id, hence the plan id, is random): one more character
  // must always tell the two apart.
  const char other = in_sealed.plan_id[10] == 'a' ? 'b' : 'a';
  {
    auto s = Store::open(layout.database);
    ASSERT_TRUE(s.ok());
    auto p = s->begin_proposal({"org.dot.hello", testing::hex64('d'), 0});
    ASSERT_TRUE(p.ok());
    ASSERT_TRUE(s->set_proposal_id(*p, shared + std::string(54, other)).ok());
    ASSERT_TRUE(s->abandon(*p, {"DOT_E_PROTOCOL", "x", ""}).ok());
  }
  auto r = run({"inspect", "show", "--root", layout.root, shared, "--json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("DOT_E_NOT_FOUND: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("plan " + in_sealed.plan_id.substr(0, 16) + " (SEALED)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("proposal " + shared + std::string(6, other) + " (ABANDONED)"), std::string::npos) << r.err;
  auto doc = json::parse(r.out);
  ASSERT_OK(doc);
  EXPECT_EQ(doc->root().find("error")->find("kind")->as_string(), "ambiguous");
  // One more character tells them apart; a sealed row found by its own
  // proposal id is one row.
  auto plan = run({"inspect", "show", "--root", layout.root, in_sealed.plan_id.substr(0, 11), "--json"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  auto by_proposal = run({"inspect", "show", "--root", layout.root, in_sealed.proposal_id.substr(0, 8), "--json"});
  ASSERT_EQ(by_proposal.exit_code, 0) << by_proposal.err;
  EXPECT_NE(by_proposal.out.find(in_sealed.plan_id), std::string::npos);
  // A row number that is not one: not found, typed.
  for (const char* id : {"txn-0", "txn-01", "txn-", "txn-99", "txn-1x", "txn--1", "txn-99999999999999999999"}) {
    auto bad = run({"inspect", "show", "--root", layout.root, id});
    EXPECT_EQ(bad.exit_code, 1) << id;
    EXPECT_EQ(bad.err.rfind("DOT_E_NOT_FOUND: ", 0), 0u) << id << ": " << bad.err;
  }
}

TEST_F(StoreCli, UnknownAndShortIdsAreNotFound) {
  for (const char* id : {"0000000000", "abc", "not-hex-at-all"}) {
    auto r = run({"inspect", "show", "--root", layout.root, id, "--json"});
    EXPECT_EQ(r.exit_code, 1) << id;
    EXPECT_EQ(r.err.rfind("DOT_E_NOT_FOUND: ", 0), 0u) << r.err;
    auto doc = json::parse(r.out);
    ASSERT_OK(doc);
    EXPECT_EQ(doc->root().find("error")->find("code")->as_string(), "DOT_E_NOT_FOUND");
  }
  auto ev = run({"inspect", "events", "--root", layout.root, "ffffffff"});
  EXPECT_EQ(ev.exit_code, 1);
}

TEST_F(StoreCli, EventsJsonAndTable) {
  auto r = run({"inspect", "events", "--root", layout.root, in_committed.plan_id, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = json::parse(r.out);
  ASSERT_OK(doc);
  std::vector<std::string> states;
  for (auto e : doc->root().elements()) states.emplace_back(e.find("state")->as_string());
  EXPECT_EQ(states, (std::vector<std::string>{"PROPOSING", "SEALED", "PREPARED", "COMMITTING", "COMMITTED"}));
  auto human = run({"inspect", "events", "--root", layout.root, in_committed.plan_id});
  ASSERT_EQ(human.exit_code, 0);
  EXPECT_EQ(human.out.rfind("SEQ", 0), 0u) << human.out;
}

TEST_F(StoreCli, TamperedPlanFailsCheckAndShowsEvidence) {
  auto ok = run({"store", "check", "--root", layout.root, "--json"});
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(layout.database.c_str(), &db), SQLITE_OK);
    std::string sql = fmt::format(
        "UPDATE plan SET canonical = CAST(replace(CAST(canonical AS TEXT), 'hello.txt', 'evil0.txt') AS BLOB) WHERE txn_id = {}",
        committed);
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  auto bad = run({"store", "check", "--root", layout.root, "--json"});
  EXPECT_EQ(bad.exit_code, 1);
  auto doc = json::parse(bad.out);
  ASSERT_OK(doc);
  EXPECT_FALSE(doc->root().find("ok")->as_bool());
  EXPECT_GE(doc->root().find("problems")->size(), 1u);
  EXPECT_EQ(doc->root().find("error")->find("code")->as_string(), "DOT_E_STORE");
  EXPECT_EQ(bad.err.rfind("DOT_E_STORE: ", 0), 0u) << bad.err;
  auto show = run({"inspect", "show", "--root", layout.root, in_committed.plan_id, "--json"});
  ASSERT_EQ(show.exit_code, 0);
  auto sd = json::parse(show.out);
  ASSERT_OK(sd);
  EXPECT_FALSE(sd->root().find("plan_verified")->as_bool());
  EXPECT_TRUE(sd->root().find("plan")->is_null());
  EXPECT_NE(sd->root().find("plan_text")->as_string().find("evil0"), std::string::npos);
}

TEST_F(StoreCli, PruneKeepsUnfinished) {
  auto r = run({"store", "prune", "--root", layout.root, "--keep", "0", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "{\"pruned\":1,\"keep\":0}\n");  // only the ABANDONED one is finished
  auto check = run({"store", "check", "--root", layout.root});
  EXPECT_EQ(check.exit_code, 0) << check.out;
  EXPECT_EQ(run({"store", "prune", "--root", layout.root}).exit_code, 2);
}

TEST_F(StoreCli, HelpHasExamples) {
  for (std::vector<std::string> args : {std::vector<std::string>{"init", "--help"},
                                        {"store", "check", "--help"}, {"store", "prune", "--help"},
                                        {"inspect", "list", "--help"}, {"inspect", "show", "--help"},
                                        {"inspect", "events", "--help"}}) {
    auto r = run(args);
    EXPECT_EQ(r.exit_code, 0) << args[0];
    EXPECT_NE(r.out.find("dot-core "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Example"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace dot::store
