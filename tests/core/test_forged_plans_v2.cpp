// Stored version-2 plans are checked, not trusted (issue 30): a plan row and
// its proposal document edited in the database, with proposal_id and plan_id
// recomputed over the edited canonical bytes (core's own encoder) and every
// other row made consistent with them, pass every digest check. Only the
// re-check of what `plan` enforced when it sealed (plan_v2.h decode_plan_v2
// and check_plan_invariants, run by every load) can refuse them. One forgery
// per rule, each driven through apply (SEALED), rollback (DONE), recover
// (COMMITTING, after a crash), retry-effects (COMMITTED, after a failed
// root-sync) and `store check`; nothing beneath the root changes.
#include <signal.h>
#include <unistd.h>

#include "apply_v2_fixture.h"
#include "dot/base/sha256.h"
#include "dot/core/plan_v2.h"
#include "dot/store/store.h"
#include "packed_document.h"
#include "raw_sql.h"

namespace dot::core::testing {
namespace {

// A user and group that are not ours (tests usually run as root: 0 is ours).
constexpr std::uint64_t kNobody = 65534;

struct ForgeryV2 {
  const char* name;
  // Edits the sealed plan (`proposal` false) and its proposal document
  // (`proposal` true) alike: the apply case proposes no no-op, so both list
  // the same operations in the same order (apply_v2_fixture.h).
  void (*edit)(PlanV2& plan, bool proposal);
  // A piece of the violation the refusal and `store check` must name.
  const char* names;
};

const ForgeryV2 kForgeries[] = {
    {"before_setuid", [](PlanV2& p, bool) { p.operations[1].before.mode = 04600; },
     "operations[1].before: target"},
    {"before_setuid_mode_named", [](PlanV2& p, bool) { p.operations[1].before.mode = 04755; },
     "has setuid, setgid or sticky bits (mode 4755)"},
    {"before_other_writable", [](PlanV2& p, bool) { p.operations[4].before.mode = 0666; },
     "is writable by more than its owner (mode 0666: every user can write it)"},
    // Group write only for the owner's private group: gid 100 (users on
    // Debian) has no member of its own, or no entry at all.
    {"before_group_writable_shared_group",
     [](PlanV2& p, bool) {
       p.operations[4].before.mode = 0664;
       p.operations[4].before.gid = 100;
     },
     "is writable by more than its owner (mode 0664: group "},
    {"before_of_remove_foreign_uid", [](PlanV2& p, bool) { p.operations[6].before.uid = kNobody; },
     "is owned by uid 65534"},
    {"after_foreign_uid",
     [](PlanV2& p, bool proposal) {
       if (!proposal) p.operations[0].after.uid = kNobody;
     },
     "operations[0].after of bin/tool is owned by uid 65534"},
    {"after_foreign_gid",
     [](PlanV2& p, bool proposal) {
       if (!proposal) p.operations[3].after.gid = kNobody;
     },
     "operations[3].after of empty.txt is owned by uid"},
    {"after_setuid",
     [](PlanV2& p, bool proposal) {
       if (!proposal) p.operations[0].after.mode = 04755;
     },
     "asks for mode 2541 (4755)"},
    {"two_effects", [](PlanV2& p, bool) { p.effects.push_back(root_sync_effect()); }, "plan.effects must be exactly"},
    {"folder_mode", [](PlanV2& p, bool) { p.directories[0].mode = 0777; },
     "directories[0].mode 511 (0777) is not a folder mode"},
    {"path_escape", [](PlanV2& p, bool) { p.operations[8].path = "z/../old.txt"; }, "z/../old.txt"},
};

std::string forgery_name(const ::testing::TestParamInfo<ForgeryV2>& info) { return info.param.name; }
void PrintTo(const ForgeryV2& f, std::ostream* os) { *os << f.name; }

class ForgedPlanV2 : public ApplyV2Test, public ::testing::WithParamInterface<ForgeryV2> {
 protected:
  ForgedPlanV2() { exe_ = kHookedCore; }

  // Rewrites the stored plan `plan_id` and its proposal document with the
  // forgery, as a careful attacker would: proposal_id and plan_id recomputed
  // with core's canonical encoder, the operation rows, the path owners and
  // the ledger (a row per effect of a DONE plan, every idempotency key)
  // made consistent. Returns the new plan id.
  std::string forge(const std::string& plan_id) {
    Sql db(root_ / ".dot" / "store.db");
    auto txn = db.run("SELECT id FROM txn WHERE plan_id = ?1", {plan_id});
    auto stored = db.run("SELECT canonical FROM plan WHERE txn_id = (SELECT id FROM txn WHERE plan_id = ?1)", {plan_id});
    auto proposal = db.run("SELECT proposal FROM txn WHERE plan_id = ?1", {plan_id});
    EXPECT_EQ(txn.size(), 1u);
    EXPECT_EQ(stored.size(), 1u);
    EXPECT_EQ(proposal.size(), 1u);
    if (txn.size() != 1 || stored.size() != 1 || proposal.size() != 1) return {};
    // The document is packed (zstd) as the store keeps it; so is the forgery.
    auto unpacked = store::detail::unpack_document(proposal[0], store::kMaxProposalBytes);
    EXPECT_TRUE(unpacked.ok() && *unpacked != proposal[0]);
    if (!unpacked.ok()) return {};
    auto plan = decode_canonical_plan_v2(stored[0]);
    auto proposed = decode_canonical_plan_v2(*unpacked);
    EXPECT_TRUE(plan.ok() && proposed.ok());
    if (!plan.ok() || !proposed.ok()) return {};
    EXPECT_EQ(plan->operations.size(), proposed->operations.size()) << "the apply case proposes a no-op";
    GetParam().edit(*plan, false);
    GetParam().edit(*proposed, true);
    auto document = canonical_bytes(*proposed);
    EXPECT_TRUE(document.ok());
    plan->proposal_id = sha256_hex(*document);
    auto packed = store::detail::pack_document(*document);
    EXPECT_TRUE(packed.ok());
    auto bytes = canonical_bytes(*plan);
    EXPECT_TRUE(bytes.ok());
    const std::string forged_id = sha256_hex(*bytes);
    EXPECT_NE(forged_id, plan_id);
    const std::string id = txn[0];
    db.run("BEGIN IMMEDIATE");
    db.run("UPDATE plan SET canonical = CAST(?1 AS BLOB), effect_count = CAST(?2 AS INTEGER) WHERE txn_id = ?3",
           {*bytes, std::to_string(plan->effects.size()), id});
    db.run("UPDATE txn SET plan_id = ?1, proposal_id = ?2, proposal = CAST(?4 AS BLOB) WHERE id = ?3",
           {forged_id, plan->proposal_id, id, *packed});
    for (std::size_t i = 0; i < plan->operations.size(); ++i)
      db.run("UPDATE operation SET name = ?1 WHERE txn_id = ?2 AND slot = ?3",
             {plan->operations[i].path, id, std::to_string(i)});
    db.run("DELETE FROM path_owner");
    db.run("INSERT INTO path_owner (path, plugin_id, txn_id) SELECT path, plugin_id, txn_id FROM derived_owner");
    // ...and a SUCCEEDED ledger row for every effect of a DONE plan.
    if (db.run("SELECT state FROM txn WHERE id = ?1", {id}) == std::vector<std::string>{"DONE"})
      for (std::size_t i = 0; i < plan->effects.size(); ++i)
        db.run("INSERT OR IGNORE INTO effect (txn_id, idx, state, idempotency_key, attempts, updated_at_ms) "
               "VALUES (?1, ?2, 'SUCCEEDED', ?3, 1, 1)",
               {id, std::to_string(i), store::effect_idempotency_key(forged_id, static_cast<std::uint32_t>(i))});
    for (const auto& idx : db.run("SELECT idx FROM effect WHERE txn_id = ?1", {id}))
      db.run("UPDATE effect SET idempotency_key = ?1 WHERE txn_id = ?2 AND idx = ?3",
             {store::effect_idempotency_key(forged_id, static_cast<std::uint32_t>(std::stoul(idx))), id, idx});
    db.run("COMMIT");
    return forged_id;
  }

  // The command is refused as a tampered stored plan that names the
  // violation, and not one entry beneath the root changed.
  void expect_refused(const std::vector<std::string>& args, const std::string& forged, const std::string& state) {
    const auto before = tree(root_);
    CmdResult r = core(args);
    const std::string what = args.front();
    EXPECT_EQ(r.code, 1) << what << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("DOT_E_RECOVERY_REQUIRED"), std::string::npos) << what << ": " << r.err;
    EXPECT_NE(r.out.find("\"kind\":\"tampered\""), std::string::npos) << what << ": " << r.out;
    EXPECT_NE(r.out.find(GetParam().names), std::string::npos) << what << ": " << r.out;
    EXPECT_EQ(tree(root_), before) << what << " changed the root";
    EXPECT_EQ(state_of(forged), state) << what;
  }

  // `store check` finds exactly one problem, the violation.
  void expect_store_check_reports(const std::string& forged_id) {
    expect_only_store_problem(forged_id, GetParam().names);
  }
};

TEST_P(ForgedPlanV2, ApplyRefusesItAndWritesNothing) {
  const std::string id = plan_apply_case();
  ASSERT_EQ(store_problems(), "");
  const std::string forged = forge(id);
  expect_refused({"apply", forged, "--json"}, forged, "SEALED");
  EXPECT_TRUE(all_before()) << differences(before_);
  expect_store_check_reports(forged);
}

TEST_P(ForgedPlanV2, RollbackRefusesItAndRestoresNothing) {
  const std::string id = plan_apply_case();
  ASSERT_EQ(core({"apply", id}).code, 0);
  ASSERT_EQ(store_problems(), "");
  const std::string forged = forge(id);
  expect_refused({"rollback", forged, "--json"}, forged, "DONE");
  EXPECT_TRUE(all_after()) << differences(after_);
  expect_store_check_reports(forged);
}

TEST_P(ForgedPlanV2, RecoverRefusesItAndTouchesNothing) {
  const std::string id = plan_apply_case();
  // Every operation done, the transaction still COMMITTING.
  CmdResult crashed = core({"apply", id}, {"DOT_TEST_CRASH_AT=apply.op8.removed"});
  ASSERT_EQ(crashed.signal, SIGKILL) << crashed.err;
  ASSERT_EQ(store_problems(), "");
  const std::string forged = forge(id);
  expect_refused({"recover", "--json"}, forged, "COMMITTING");
  expect_store_check_reports(forged);
}

TEST_P(ForgedPlanV2, RetryEffectsRefusesIt) {
  const std::string id = plan_apply_case();
  CmdResult failed = core({"apply", id}, {"DOT_TEST_FAULT=effect0.sync:EIO"});
  ASSERT_NE(failed.err.find("DOT_E_POST_COMMIT"), std::string::npos) << failed.err;
  ASSERT_EQ(state_of(id), "COMMITTED");
  const std::string forged = forge(id);
  expect_refused({"retry-effects", "--json"}, forged, "COMMITTED");
  EXPECT_EQ(ledger(forged), "FAILED");
  expect_store_check_reports(forged);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, ForgedPlanV2, ::testing::ValuesIn(kForgeries), forgery_name);

// The forging itself is sound: an edit that changes nothing `plan` enforces
// (a different nonce) passes every path, so the refusals above come from the
// invariant checks and not from the way the rows were rewritten.
const ForgeryV2 kHarmless = {"new_nonce", [](PlanV2& p, bool) { p.nonce = std::string(64, 'e'); }, ""};

class HarmlessForgeryV2 : public ForgedPlanV2 {};

TEST_P(HarmlessForgeryV2, PassesApplyRollbackAndStoreCheck) {
  const std::string forged = forge(plan_apply_case());
  EXPECT_EQ(store_problems(), "");
  CmdResult applied = core({"apply", forged});
  ASSERT_EQ(applied.code, 0) << applied.err;
  EXPECT_TRUE(all_after()) << differences(after_);
  CmdResult rolled = core({"rollback", forged});
  ASSERT_EQ(rolled.code, 0) << rolled.err;
  EXPECT_TRUE(all_before()) << differences(before_);
  EXPECT_EQ(core({"store", "check"}).code, 0);
}

INSTANTIATE_TEST_SUITE_P(Control, HarmlessForgeryV2, ::testing::Values(kHarmless), forgery_name);

// `status` reads every applied plan as it streams and judges its targets as
// they come: a plan text edited behind the store's back (its id no longer
// its hash) is found at its end, and status shows nothing it judged of it.
TEST_F(ApplyV2Test, StatusRefusesAnAppliedPlanWhoseTextNoLongerHashesToItsId) {
  const std::string id = plan_apply_case();
  ASSERT_EQ(core({"apply", id}).code, 0);
  ASSERT_EQ(core({"status"}).code, 0);
  {
    Sql db(root_ / ".dot" / "store.db");
    db.run("UPDATE plan SET canonical = CAST(replace(CAST(canonical AS TEXT), 'old.txt', 'olf.txt') AS BLOB)");
  }
  CmdResult r = core({"status", "--json"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("DOT_E_RECOVERY_REQUIRED"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("not to the plan id"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"drift\""), std::string::npos) << r.out;
}

// apply reads a stored plan, its proposal document and its rows as they
// stream: a text edited behind the store's back is refused against its plan
// id once read whole, a proposal document against its proposal id, a row
// against its operation; nothing beneath the root changes, the plan stays
// SEALED.
class EditedWithoutIds : public ApplyV2Test {
 protected:
  // Plans the apply case, runs `sql` on its store (?1: the proposal document
  // with one path edited, packed as the store keeps it), then applies.
  void expect_apply_refuses(const std::string& sql, const std::string& says) {
    const std::string id = plan_apply_case();
    {
      Sql db(root_ / ".dot" / "store.db");
      auto proposal = db.run("SELECT proposal FROM txn WHERE plan_id = ?1", {id});
      ASSERT_EQ(proposal.size(), 1u);
      auto unpacked = store::detail::unpack_document(proposal[0], store::kMaxProposalBytes);
      ASSERT_TRUE(unpacked.ok());
      std::string edited = *unpacked;
      edited.replace(edited.find("old.txt"), 7, "olf.txt");
      if (sql.find("?1") != std::string::npos)
        db.run(sql, {*store::detail::pack_document(edited)});
      else
        db.run(sql);
    }
    const auto before = tree(root_);
    CmdResult r = core({"apply", id, "--json"});
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("DOT_E_RECOVERY_REQUIRED"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find(says), std::string::npos) << r.out;
    EXPECT_EQ(tree(root_), before);
    EXPECT_EQ(state_of(id), "SEALED");
  }
};

TEST_F(EditedWithoutIds, APlanTextIsRefusedAgainstItsPlanId) {
  expect_apply_refuses(
      "UPDATE plan SET canonical = CAST(replace(CAST(canonical AS TEXT), 'old.txt', 'olf.txt') AS BLOB)",
      "not to the plan id");
}

TEST_F(EditedWithoutIds, AProposalDocumentIsRefusedAgainstItsProposalId) {
  expect_apply_refuses("UPDATE txn SET proposal = CAST(?1 AS BLOB)", "is not the SHA-256 of its proposal document");
}

TEST_F(EditedWithoutIds, AnOperationRowIsRefusedAgainstItsOperation) {
  expect_apply_refuses("UPDATE operation SET name = 'zzz' WHERE slot = 0", "stored operation rows differ");
}

// The ledger of a version-2 plan is checked on load like a version-1 one's:
// a row whose idempotency key is not derived from the plan id is refused by
// every command that loads the plan, and `store check` names it.
TEST_F(ApplyV2Test, AWrongIdempotencyKeyOfAVersion2PlanIsRefused) {
  const std::string id = plan_apply_case();
  ASSERT_EQ(core({"apply", id}).code, 0);
  sql(root_ / ".dot" / "store.db",
      "UPDATE effect SET idempotency_key = '" + std::string(64, 'a') + "' WHERE txn_id = (SELECT id FROM txn "
      "WHERE plan_id = '" + id + "')");
  CmdResult r = core({"rollback", id, "--json"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.err.find("DOT_E_RECOVERY_REQUIRED"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("effect 0 has a wrong idempotency key"), std::string::npos) << r.out;
  EXPECT_TRUE(all_after()) << differences(after_);
  EXPECT_EQ(state_of(id), "DONE");
  EXPECT_NE(store_problems().find("effect 0 has a wrong idempotency key"), std::string::npos);
}

}  // namespace
}  // namespace dot::core::testing
