// Stored plans are checked, not trusted (issue 14): a plan row edited in the
// database, with proposal_id and plan_id recomputed over the edited canonical
// bytes (the project's own encoder) and every other row made consistent with
// it, passes every digest check. Only the re-check of what `plan` enforced
// when it sealed (core/plan.h check_plan_invariants, run by every load) can
// refuse it. One forgery per invariant, each driven through apply (SEALED),
// rollback (DONE), recover (COMMITTING, after a crash) and `store check`.
#include <signal.h>
#include <unistd.h>

#include "dot/base/sha256.h"
#include "dot/core/plan.h"
#include "dot/dpp/plugin.h"
#include "engine_harness.h"
#include "raw_sql.h"

namespace dot::core::testing {
namespace {

const std::string kHello(dpp::HelloPlugin::content("hello.txt"));
const std::string kWelcome(dpp::HelloPlugin::content("welcome.txt"));
const std::string kOriginal = "the user's own hello\n";

// Another user and group than ours (tests usually run as root: 0 is ours).
std::uint64_t other_uid() { return ::geteuid() + 1; }
std::uint64_t other_gid() { return ::getegid() + 1; }

struct Forgery {
  const char* name;
  void (*edit)(Plan& plan);
  // A piece of the violation the refusal and `store check` must name.
  const char* names;
};

// Slot 0 is hello.txt, which exists before the plan (kOriginal); slot 1 is
// welcome.txt, which does not.
const Forgery kForgeries[] = {
    {"after_setuid", [](Plan& p) { p.operations[0].after.mode = 04755; },
     "slot 0 after is exists, mode 4755"},
    {"after_foreign_uid", [](Plan& p) { p.operations[0].after.uid = other_uid(); }, "slot 0 after is exists"},
    {"after_foreign_gid", [](Plan& p) { p.operations[0].after.gid = other_gid(); }, "slot 0 after is exists"},
    {"after_absent", [](Plan& p) { p.operations[1].after = Snapshot::absent(); }, "slot 1 after is absent"},
    {"before_setuid", [](Plan& p) { p.operations[0].before.mode = 04700; }, "slot 0 before: target hello.txt has setuid"},
    {"before_group_readable", [](Plan& p) { p.operations[0].before.mode = 0640; },
     "slot 0 before: target hello.txt is accessible to group or others"},
    {"before_not_owner_readable", [](Plan& p) { p.operations[0].before.mode = 0200; },
     "slot 0 before: target hello.txt is not readable by its owner"},
    {"before_foreign_uid", [](Plan& p) { p.operations[0].before.uid = other_uid(); },
     "slot 0 before: target hello.txt is owned by uid"},
    {"name_outside_profile", [](Plan& p) { p.operations[1].name = "notes.txt"; },
     "the hello profile allows exactly [\\\"hello.txt\\\",\\\"welcome.txt\\\"]"},
    {"no_effect", [](Plan& p) { p.effects->clear(); }, "exactly one root-sync effect, the plan asks for 0"},
    {"two_effects", [](Plan& p) { p.effects->push_back(root_sync_effect()); },
     "exactly one root-sync effect, the plan asks for 2"},
    {"effect_not_root_sync", [](Plan& p) { (*p.effects)[0].target = "elsewhere"; },
     "is not the allowed root-sync request"},
};

std::string forgery_name(const ::testing::TestParamInfo<Forgery>& info) { return info.param.name; }
void PrintTo(const Forgery& f, std::ostream* os) { *os << f.name; }

class ForgedPlan : public EngineTest, public ::testing::WithParamInterface<Forgery> {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    spit(root_ / "hello.txt", kOriginal);
  }

  // Rewrites the stored plan `plan_id` with the forgery and makes every row
  // that depends on the plan consistent with it again, as a careful attacker
  // would: proposal_id and plan_id recomputed with core's canonical encoder,
  // the effect count, the operation names, the ledger's idempotency keys (and
  // a SUCCEEDED entry per effect of a DONE plan). Returns the new plan id.
  std::string forge(const std::string& plan_id) {
    Sql db(root_ / ".dot" / "store.db");
    auto txn = db.run("SELECT id FROM txn WHERE plan_id = ?1", {plan_id});
    auto stored = db.run("SELECT canonical FROM plan WHERE txn_id = (SELECT id FROM txn WHERE plan_id = ?1)", {plan_id});
    EXPECT_EQ(stored.size(), 1u);
    if (stored.size() != 1 || txn.size() != 1) return {};
    auto decoded = decode_canonical_plan(stored[0]);
    EXPECT_TRUE(decoded.ok()) << decoded.error().line();
    Plan plan = *decoded;
    GetParam().edit(plan);
    auto proposal_id = compute_proposal_id(plan);
    EXPECT_TRUE(proposal_id.ok());
    plan.proposal_id = *proposal_id;
    auto bytes = canonical_bytes(plan);
    EXPECT_TRUE(bytes.ok());
    const std::string forged_id = sha256_hex(*bytes);
    EXPECT_NE(forged_id, plan_id);
    const std::string id = txn[0];
    Sql::Value count;
    if (plan.effects) count = std::to_string(plan.effects->size());
    db.run("BEGIN IMMEDIATE");
    db.run("UPDATE plan SET canonical = CAST(?1 AS BLOB), effect_count = CAST(?2 AS INTEGER) WHERE txn_id = ?3",
           {*bytes, count, id});
    // A forger who recomputes the ids rewrites the proposal document too.
    auto document = proposal_document(plan);
    EXPECT_TRUE(document.ok());
    db.run("UPDATE txn SET plan_id = ?1, proposal_id = ?2, proposal = CAST(?4 AS BLOB) WHERE id = ?3",
           {forged_id, plan.proposal_id, id, *document});
    for (std::size_t slot = 0; slot < plan.operations.size(); ++slot)
      db.run("UPDATE operation SET name = ?1 WHERE txn_id = ?2 AND slot = ?3",
             {plan.operations[slot].name, id, std::to_string(slot)});
    // ...and the path owners its renamed operations imply (schema 5).
    db.run("DELETE FROM path_owner");
    db.run("INSERT INTO path_owner (path, plugin_id, txn_id) SELECT path, plugin_id, txn_id FROM derived_owner");
    std::size_t effects = plan.effects ? plan.effects->size() : 0;
    db.run("DELETE FROM effect WHERE txn_id = ?1 AND idx >= ?2", {id, std::to_string(effects)});
    if (db.run("SELECT state FROM txn WHERE id = ?1", {id}) == std::vector<std::string>{"DONE"})
      for (std::size_t i = 0; i < effects; ++i)
        db.run("INSERT OR IGNORE INTO effect (txn_id, idx, state, idempotency_key, attempts, updated_at_ms) "
               "VALUES (?1, ?2, 'SUCCEEDED', ?3, 1, 1)",
               {id, std::to_string(i), store::effect_idempotency_key(forged_id, static_cast<std::uint32_t>(i))});
    for (const auto& idx : db.run("SELECT idx FROM effect WHERE txn_id = ?1", {id}))
      db.run("UPDATE effect SET idempotency_key = ?1 WHERE txn_id = ?2 AND idx = ?3",
             {store::effect_idempotency_key(forged_id, static_cast<std::uint32_t>(std::stoul(idx))), id, idx});
    db.run("COMMIT");
    return forged_id;
  }

  // The command is refused as a tampered stored plan that names the violation.
  void expect_refused(const CmdResult& r, const std::string& what) {
    EXPECT_EQ(r.code, 1) << what << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("DOT_E_RECOVERY_REQUIRED"), std::string::npos) << what << ": " << r.err;
    EXPECT_NE(r.out.find("\"kind\":\"tampered\""), std::string::npos) << what << ": " << r.out;
    EXPECT_NE(r.out.find(GetParam().names), std::string::npos) << what << ": " << r.out;
  }

  // `store check` finds exactly one problem, the violation.
  void expect_store_check_reports(const std::string& forged_id) {
    std::string names = GetParam().names;
    // In the JSON text quotes are escaped; in the decoded problem they are not.
    for (std::size_t at; (at = names.find("\\\"")) != std::string::npos;) names.erase(at, 1);
    expect_only_store_problem(forged_id, names);
  }
};

TEST_P(ForgedPlan, ApplyRefusesItAndWritesNothing) {
  std::string id = plan_ok();
  ASSERT_EQ(store_problems(), "");
  std::string forged = forge(id);
  expect_refused(core({"apply", forged, "--json"}), "apply");
  EXPECT_EQ(state_of(forged), "SEALED");
  EXPECT_EQ(hello(), kOriginal);
  EXPECT_FALSE(fs::exists(root_ / "welcome.txt"));
  expect_store_check_reports(forged);
  expect_refused(core({"export", forged}), "export");
}

TEST_P(ForgedPlan, RollbackRefusesItAndRestoresNothing) {
  std::string id = plan_ok();
  CmdResult applied = core({"apply", id});
  ASSERT_EQ(applied.code, 0) << applied.err;
  ASSERT_EQ(store_problems(), "");
  std::string forged = forge(id);
  expect_refused(core({"rollback", forged, "--json"}), "rollback");
  EXPECT_EQ(state_of(forged), "DONE");
  EXPECT_EQ(hello(), kHello);
  EXPECT_EQ(welcome(), kWelcome);
  expect_store_check_reports(forged);
}

TEST_P(ForgedPlan, RecoverRefusesItAndTouchesNothing) {
  std::string id = plan_ok();
  // Both slots renamed, the transaction still COMMITTING (the test-only
  // engine stops there; everything else runs the product).
  CmdResult crashed = run_core(kHookedCore, {"apply", id, "--root", root_.string()},
                               {"DOT_TEST_CRASH_AT=commit.slot1.dir_synced"});
  ASSERT_EQ(crashed.signal, SIGKILL) << crashed.err;
  ASSERT_EQ(store_problems(), "");
  std::string forged = forge(id);
  expect_refused(core({"recover", "--json"}), "recover");
  EXPECT_EQ(state_of(forged), "COMMITTING");
  EXPECT_EQ(hello(), kHello);
  EXPECT_EQ(welcome(), kWelcome);
  expect_store_check_reports(forged);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, ForgedPlan, ::testing::ValuesIn(kForgeries), forgery_name);

// The forging itself is sound: an edit that changes nothing `plan` enforces
// (a different nonce) goes through every path, so the refusals above come
// from the invariant check and not from the way the rows were rewritten.
const Forgery kHarmless = {"new_nonce", [](Plan& p) { p.nonce = std::string(64, 'e'); }, ""};

class HarmlessForgery : public ForgedPlan {};

TEST_P(HarmlessForgery, PassesApplyRollbackAndStoreCheck) {
  std::string forged = forge(plan_ok());
  EXPECT_EQ(store_problems(), "");
  EXPECT_EQ(core({"store", "check"}).code, 0);
  CmdResult applied = core({"apply", forged});
  ASSERT_EQ(applied.code, 0) << applied.err;
  EXPECT_EQ(hello(), kHello);
  CmdResult rolled = core({"rollback", forged});
  ASSERT_EQ(rolled.code, 0) << rolled.err;
  EXPECT_EQ(hello(), kOriginal);
  EXPECT_EQ(core({"store", "check"}).code, 0);
}

INSTANTIATE_TEST_SUITE_P(Control, HarmlessForgery, ::testing::Values(kHarmless), forgery_name);

}  // namespace
}  // namespace dot::core::testing
