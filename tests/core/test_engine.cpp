// End to end through the real dot-core binary and the real dot-hello.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include <sqlite3.h>

#include <atomic>
#include <thread>

#include "dot/base/beneath.h"
#include "dot/base/json.h"
#include "dot/base/sha256.h"
#include "dot/core/target.h"
#include "dot/dpp/plugin.h"
#include "engine_harness.h"
#include "raw_sql.h"

namespace dot::core::testing {
namespace {

const std::string kHello(dpp::HelloPlugin::content("hello.txt"));
const std::string kWelcome(dpp::HelloPlugin::content("welcome.txt"));

TEST_F(EngineTest, PlanApplyInspectEndToEnd) {
  CmdResult plan = core({"plan", "--allow-audit-plugin"});
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.out.find("+++ b/hello.txt"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("+++ b/welcome.txt"), std::string::npos);
  EXPECT_FALSE(fs::exists(root_ / "hello.txt")) << "plan must not touch a target";
  EXPECT_TRUE(stage_leftovers().empty());

  CmdResult js = core({"plan", "--allow-audit-plugin", "--json"});
  ASSERT_EQ(js.code, 0) << js.err;
  std::string id = json_field(js.out, "plan_id");
  ASSERT_EQ(id.size(), 64u) << js.out;
  EXPECT_EQ(json_field(js.out, "proposal_id").size(), 64u);
  EXPECT_NE(js.out.find("\"operations\":["), std::string::npos);
  EXPECT_EQ(state_of(id), "SEALED");

  CmdResult apply = core({"apply", id.substr(0, 10)});
  ASSERT_EQ(apply.code, 0) << apply.err;
  EXPECT_EQ(hello(), kHello);
  EXPECT_EQ(welcome(), kWelcome);
  struct stat st {};
  ASSERT_EQ(::stat((root_ / "hello.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(state_of(id), "DONE");
  EXPECT_TRUE(temp_files().empty());

  EXPECT_EQ(ledger(id), "SUCCEEDED");
  EXPECT_EQ(store_problems(), "");
}

// The product executables have no test hook (core/include/dot/core/test_hooks.h):
// a real plan and apply with every DOT_TEST_* variable armed, or malformed,
// run exactly as without them, and no DOT_TEST_ name is even in the files.
// dot-core-hooked is the control: the same settings stop it.
TEST_F(EngineTest, ProductExecutablesIgnoreEveryTestHook) {
  fs::path pause = base_ / "pause";
  const std::vector<std::string> malformed = {"DOT_TEST_FAULT=not-a-fault"};
  CmdResult refused = run_core(kHookedCore, {"plan", "--allow-audit-plugin", "--root", root_.string()}, malformed);
  EXPECT_NE(refused.err.find("DOT_E_VALIDATION"), std::string::npos) << refused.err;

  CmdResult plan = core({"plan", "--allow-audit-plugin", "--json"}, malformed);
  ASSERT_EQ(plan.code, 0) << plan.err;
  std::string id = json_field(plan.out, "plan_id");
  // Any one of the three obeyed would show: a failed root-sync (exit 1,
  // POST_COMMIT), a SIGKILL after the first rename, or the pause file.
  CmdResult apply = core({"apply", id}, {"DOT_TEST_FAULT=effect0.sync:EIO", "DOT_TEST_CRASH_AT=commit.slot0.renamed",
                                         "DOT_TEST_PAUSE_AT=commit.slot0.temp_synced:" + pause.string()});
  EXPECT_EQ(apply.signal, 0);
  ASSERT_EQ(apply.code, 0) << apply.err;
  EXPECT_FALSE(fs::exists(pause));
  EXPECT_EQ(state_of(id), "DONE");
  EXPECT_EQ(ledger(id), "SUCCEEDED");
  EXPECT_EQ(hello(), kHello);
  EXPECT_EQ(welcome(), kWelcome);

  for (const std::string exe : {"dot-core"})
    EXPECT_EQ(slurp(bin(exe)).find("DOT_TEST_"), std::string::npos) << exe << " holds a test hook";
  EXPECT_NE(slurp(bin(kHookedCore)).find("DOT_TEST_FAULT"), std::string::npos) << "the control lost its hooks";
}

// The assurance recorded at `register` is the default at `plan`: an audit
// plugin runs uncontained only with consent, given for one plan with the
// flag or once at register (recorded and shown by status); the two plan
// flags stay exclusive overrides.
TEST_F(EngineTest, PlanConsentComesFromTheRegistrationOrAFlag) {
  EXPECT_EQ(core({"plan", "--allow-audit-plugin", "--require-process-sandbox"}).code, 2);
  CmdResult none = core({"plan"});
  EXPECT_EQ(none.code, 1);
  EXPECT_EQ(none.err.rfind("DOT_E_POLICY: ", 0), 0u) << none.err;
  EXPECT_NE(none.err.find("register --replace --allow-audit-plugin"), std::string::npos) << none.err;
  EXPECT_EQ(last_state(), "<none>");
  CmdResult status = core({"status"});
  EXPECT_EQ(status.out.find("consent"), std::string::npos) << status.out;
  // Consent is for audit plugins only.
  CmdResult wrong = core({"register", "--plugin", bin("dot-hello"), "--assurance", "process", "--replace",
                          "--allow-audit-plugin", "--json"});
  EXPECT_EQ(wrong.code, 1);
  EXPECT_NE(wrong.out.find("\"kind\":\"consent\""), std::string::npos) << wrong.out;
  CmdResult reg =
      core({"register", "--plugin", bin("dot-hello"), "--assurance", "audit", "--replace", "--allow-audit-plugin"});
  ASSERT_EQ(reg.code, 0) << reg.err;
  EXPECT_NE(reg.out.find("consent recorded"), std::string::npos) << reg.out;
  status = core({"status"});
  EXPECT_NE(status.out.find("audit assurance, consent to run uncontained recorded"), std::string::npos) << status.out;
  status = core({"status", "--json"});
  EXPECT_NE(status.out.find("\"assurance\":\"audit\",\"audit_consent\":true"), std::string::npos) << status.out;
  CmdResult plan = core({"plan", "--json"});
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_EQ(state_of(json_field(plan.out, "plan_id")), "SEALED");
  // The flags still override: a process sandbox is not what this plugin was
  // registered for.
  EXPECT_EQ(core({"plan", "--require-process-sandbox"}).code, 1);
}

// `apply` without an id takes the one sealed plan waiting and says which;
// with none or several it applies nothing and says why (the several listed).
// Ids are accepted from 4 hex characters.
TEST_F(EngineTest, ApplyWithoutAnIdTakesTheOneSealedPlan) {
  CmdResult none = core({"apply", "--json"});
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.out.find("\"kind\":\"no_sealed_plan\""), std::string::npos) << none.out;
  const std::string first = plan_ok();
  const std::string second = plan_ok();
  CmdResult several = core({"apply"});
  EXPECT_EQ(several.code, 1);
  EXPECT_EQ(several.err.rfind("DOT_E_NOT_FOUND: 2 sealed plans are waiting: ", 0), 0u) << several.err;
  EXPECT_NE(several.err.find(first.substr(0, 12)), std::string::npos) << several.err;
  EXPECT_NE(several.err.find(second.substr(0, 12)), std::string::npos) << several.err;
  EXPECT_EQ(state_of(first), "SEALED");
  EXPECT_EQ(state_of(second), "SEALED");
  ASSERT_EQ(core({"discard", first.substr(0, 4) == second.substr(0, 4) ? first : first.substr(0, 4)}).code, 0);
  EXPECT_EQ(state_of(first), "DISCARDED");
  CmdResult apply = core({"apply"});
  ASSERT_EQ(apply.code, 0) << apply.err;
  EXPECT_EQ(
      apply.out.rfind("applying " + second.substr(0, 12) + ", the one sealed plan waiting (from org.dot.hello)\n", 0),
      0u)
      << apply.out;
  EXPECT_EQ(state_of(second), "DONE");
  // Three characters are never enough.
  CmdResult short_id = core({"rollback", second.substr(0, 3), "--json"});
  EXPECT_EQ(short_id.code, 1);
  EXPECT_NE(short_id.out.find("at least 4 characters"), std::string::npos) << short_id.out;
}

// Terraform's detailed exit code for plan, git's --exit-code for status.
TEST_F(EngineTest, DetailedExitCodesForScripts) {
  CmdResult changes = core({"plan", "--allow-audit-plugin", "--detailed-exitcode"});
  EXPECT_EQ(changes.code, 2) << changes.err;
  ASSERT_EQ(core({"apply"}).code, 0);
  CmdResult same = core({"plan", "--allow-audit-plugin", "--detailed-exitcode"});
  EXPECT_EQ(same.code, 0) << same.err;
  EXPECT_NE(same.out.find("no changes"), std::string::npos) << same.out;
  // A usage error is 1 under --detailed-exitcode: 2 means changes only.
  EXPECT_EQ(core({"plan", "--detailed-exitcode", "--no-such-flag"}).code, 1);
  EXPECT_EQ(core({"plan", "--no-such-flag"}).code, 2);
  EXPECT_EQ(core({"status", "--exit-code"}).code, 0);
  spit(root_ / "hello.txt", "edited by hand\n");
  CmdResult drift = core({"status", "--exit-code"});
  EXPECT_EQ(drift.code, 1);
  EXPECT_NE(drift.out.find("hello.txt"), std::string::npos) << drift.out;
  EXPECT_EQ(core({"status"}).code, 0);
  CmdResult revert = core({"plan", "--allow-audit-plugin", "--detailed-exitcode"});
  EXPECT_EQ(revert.code, 2) << revert.err;
  // The plan says it undoes the hand edit, naming the plan that wrote it.
  ASSERT_EQ(changes.out.rfind("sealed plan ", 0), 0u) << changes.out;
  const std::string applied = changes.out.substr(std::string("sealed plan ").size(), 12);
  EXPECT_NE(revert.out.find("revert hello.txt (edited since apply " + applied + ")\n"), std::string::npos)
      << revert.out;
  EXPECT_EQ(revert.out.find("revert welcome.txt"), std::string::npos) << revert.out;
}

// The consent flag must match the manifest both ways; kernels without a
// containment layer and contained plans are tested in tests/sandbox.
TEST_F(EngineTest, ProcessSandboxRefusesAnAuditManifest) {
  CmdResult r = core({"plan", "--require-process-sandbox"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("DOT_E_POLICY"), std::string::npos) << r.err;
}

TEST_F(EngineTest, ExportAndPlanIdAgree) {
  std::string id = plan_ok();
  CmdResult exp = core({"export", id});
  ASSERT_EQ(exp.code, 0) << exp.err;
  EXPECT_EQ(json_field(exp.out, "plan_id"), id);
  spit(base_ / "plan.json", exp.out);
  CmdResult pid = dot_core({"plan-id", (base_ / "plan.json").string()});
  ASSERT_EQ(pid.code, 0) << pid.err;
  EXPECT_EQ(pid.out, id + "\n");
  // One changed byte: the claimed id no longer matches.
  std::string edited = exp.out;
  edited.replace(edited.find("\"mode\":384"), 10, "\"mode\":256");
  spit(base_ / "edited.json", edited);
  CmdResult bad = dot_core({"plan-id", (base_ / "edited.json").string()});
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("DOT_E_VALIDATION"), std::string::npos) << bad.err;
}

// The proposal document (what the plugin proposed: the plan with every after
// absent, hashing to the proposal id) is kept for every proposal, sealed or
// abandoned, and `inspect show` prints it.
TEST_F(EngineTest, ProposalDocumentIsKeptForEveryProposal) {
  std::string sealed_id = plan_ok();
  ASSERT_EQ(core({"apply", sealed_id}).code, 0);
  CmdResult again = core({"plan", "--allow-audit-plugin", "--json"});
  ASSERT_EQ(again.code, 0) << again.err;
  ASSERT_EQ(json_field(again.out, "state"), "NO_CHANGES") << again.out;
  const std::string abandoned_id = json_field(again.out, "proposal_id");
  auto st = store::Store::open(store::RootLayout::for_root(root_.string()).database, read_only());
  ASSERT_TRUE(st.ok()) << st.error().line();
  for (const std::string& id : {sealed_id, abandoned_id}) {
    SCOPED_TRACE(id);
    auto txn = st->find(id);
    ASSERT_TRUE(txn.ok()) << txn.error().line();
    auto d = st->detail(*txn);
    ASSERT_TRUE(d.ok()) << d.error().line();
    const std::string& doc = d->proposal_document;
    ASSERT_FALSE(doc.empty());
    EXPECT_EQ(sha256_hex(doc), d->summary.proposal_id);
    auto proposed = decode_canonical_plan(doc);
    ASSERT_TRUE(proposed.ok()) << proposed.error().line();
    EXPECT_EQ(proposed->proposal_id, "");
    ASSERT_EQ(proposed->operations.size(), 2u);
    for (const auto& op : proposed->operations) EXPECT_EQ(op.after, Snapshot::absent());
    EXPECT_EQ(proposed->operations[0].name, "hello.txt");
    CmdResult js = core({"inspect", "show", id, "--json"});
    ASSERT_EQ(js.code, 0) << js.err;
    EXPECT_NE(js.out.find("\"proposal\":" + doc + ",\"proposal_verified\":true"), std::string::npos) << js.out;
    CmdResult text = core({"inspect", "show", id});
    ASSERT_EQ(text.code, 0) << text.err;
    EXPECT_NE(text.out.find("proposal document (" + std::to_string(doc.size()) + " bytes"), std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("\"name\":\"welcome.txt\""), std::string::npos) << text.out;
  }
}

// plan-id reads a version-2 document (vectors/plan/v2.json, written by an
// independent implementation): its plan_id, and its proposal_id checked
// against the proposal document it carries; a bare version-2 plan is refused.
TEST_F(EngineTest, PlanIdReadsVersion2Documents) {
  std::ifstream in(DOT_SOURCE_DIR "/vectors/plan/v2.json", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  auto vectors = json::parse(ss.str());
  ASSERT_TRUE(vectors.ok());
  json::Value v = *vectors->root().find("seals")->elements().begin();
  const std::string sealed(v.find("sealed")->as_string()), plan_id(v.find("plan_id")->as_string()),
      proposal(v.find("proposal_document")->as_string()), proposal_id(v.find("proposal_id")->as_string());
  spit(base_ / "v2.json", fmt::format("{{\"plan\":{},\"plan_id\":\"{}\",\"proposal\":{}}}", sealed, plan_id, proposal));
  CmdResult pid = dot_core({"plan-id", (base_ / "v2.json").string()});
  ASSERT_EQ(pid.code, 0) << pid.err;
  EXPECT_EQ(pid.out, plan_id + "\n");
  CmdResult js = dot_core({"plan-id", (base_ / "v2.json").string(), "--json"});
  ASSERT_EQ(js.code, 0) << js.err;
  EXPECT_EQ(json_field(js.out, "proposal_id"), proposal_id);
  spit(base_ / "bare.json", sealed);
  CmdResult bare = dot_core({"plan-id", (base_ / "bare.json").string()});
  EXPECT_EQ(bare.code, 1);
  EXPECT_NE(bare.err.find("DOT_E_VALIDATION"), std::string::npos) << bare.err;
  EXPECT_NE(bare.err.find("proposal"), std::string::npos) << bare.err;
}

TEST_F(EngineTest, SealedPlanAppliesExactlyOnce) {
  std::string id = plan_ok();
  ASSERT_EQ(core({"apply", id}).code, 0);
  CmdResult again = core({"apply", id});
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.err.find("DOT_E_POLICY"), std::string::npos) << again.err;
}

TEST_F(EngineTest, UnknownPlanIsNotFound) {
  CmdResult r = core({"apply", "0123456789abcdef"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("DOT_E_NOT_FOUND"), std::string::npos) << r.err;
}

TEST_F(EngineTest, TargetEditedBetweenPlanAndApplyIsConflictAndStale) {
  spit(root_ / "hello.txt", "mine\n");
  std::string id = plan_ok();
  spit(root_ / "hello.txt", "edited\n");
  CmdResult r = core({"apply", id});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("DOT_E_CONFLICT"), std::string::npos) << r.err;
  EXPECT_EQ(state_of(id), "STALE");
  EXPECT_EQ(hello(), "edited\n");
  EXPECT_FALSE(fs::exists(root_ / "welcome.txt"));
}

TEST_F(EngineTest, ApplyingOneOfTwoSealedPlansMakesTheOtherStale) {
  std::string a = plan_ok();
  std::string b = plan_ok();
  ASSERT_EQ(core({"apply", b}).code, 0);
  CmdResult r = core({"apply", a});
  EXPECT_NE(r.err.find("DOT_E_CONFLICT"), std::string::npos) << r.err;
  EXPECT_EQ(state_of(a), "STALE");
}

TEST_F(EngineTest, DiscardOnlySealed) {
  std::string id = plan_ok();
  ASSERT_EQ(core({"discard", id}).code, 0);
  EXPECT_EQ(state_of(id), "DISCARDED");
  CmdResult r = core({"apply", id});
  EXPECT_NE(r.err.find("DOT_E_POLICY"), std::string::npos);
  EXPECT_NE(core({"discard", id}).err.find("DOT_E_POLICY"), std::string::npos);
}

TEST_F(EngineTest, RollbackRestoresBeforeAndOnlyTheNewest) {
  spit(root_ / "hello.txt", "original\n", 0600);
  std::string first = plan_ok();
  ASSERT_EQ(core({"apply", first}).code, 0);
  spit(root_ / "welcome.txt", "changed after\n");  // first's welcome.txt no longer equals after
  CmdResult conflict = core({"rollback", first});
  EXPECT_NE(conflict.err.find("DOT_E_CONFLICT"), std::string::npos) << conflict.err;
  EXPECT_EQ(hello(), kHello);
  spit(root_ / "welcome.txt", kWelcome);  // equal to first's after again
  // A plan that changes nothing is not sealed: give the second plan a change.
  spit(root_ / "hello.txt", "edited\n");
  std::string second = plan_ok();
  ASSERT_EQ(core({"apply", second}).code, 0);
  CmdResult older = core({"rollback", first});
  EXPECT_NE(older.err.find("DOT_E_POLICY"), std::string::npos) << older.err;
  ASSERT_EQ(core({"rollback", second}).code, 0);
  EXPECT_EQ(state_of(second), "ROLLED_BACK");
  EXPECT_EQ(hello(), "edited\n");  // second's before
  EXPECT_EQ(welcome(), kWelcome);
  spit(root_ / "hello.txt", kHello);  // equal to first's after again
  CmdResult again = core({"rollback", first});
  ASSERT_EQ(again.code, 0) << "first is now the newest applied: " << again.err;
  EXPECT_EQ(hello(), "original\n");
  EXPECT_FALSE(fs::exists(root_ / "welcome.txt"));
  EXPECT_EQ(store_problems(), "");
}

// Like `terraform plan`: a plan whose every target already equals its after
// (content and mode) seals nothing, says "no changes" and exits 0. The
// proposal stays inspectable as ABANDONED with the reason NO_CHANGES.
TEST_F(EngineTest, PlanThatChangesNothingSealsNothing) {
  std::string first = plan_ok();
  ASSERT_EQ(core({"apply", first}).code, 0);

  CmdResult text = core({"plan", "--allow-audit-plugin"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_EQ(text.out.rfind("no changes", 0), 0u) << text.out;
  EXPECT_EQ(text.out.find("sealed plan"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("apply it with"), std::string::npos) << text.out;
  EXPECT_EQ(text.err, "");

  CmdResult js = core({"plan", "--allow-audit-plugin", "--json"});
  ASSERT_EQ(js.code, 0) << js.err;
  EXPECT_EQ(json_field(js.out, "state"), "NO_CHANGES") << js.out;
  EXPECT_NE(js.out.find("\"plan_id\":null"), std::string::npos) << js.out;
  std::string proposal = json_field(js.out, "proposal_id");
  ASSERT_EQ(proposal.size(), 64u) << js.out;

  // Nothing sealed: only the first plan has a plan id; both no-op proposals
  // are ABANDONED with NO_CHANGES, and the store's invariants hold.
  {
    auto st = store::Store::open(store::RootLayout::for_root(root_.string()).database, read_only());
    ASSERT_TRUE(st.ok()) << st.error().line();
    auto rows = st->list(store::ListFilter{std::nullopt, 0});
    ASSERT_TRUE(rows.ok());
    ASSERT_EQ(rows->size(), 3u);
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ((*rows)[i].state, store::State::Abandoned);
      EXPECT_EQ((*rows)[i].code, "NO_CHANGES");
      EXPECT_EQ((*rows)[i].plan_id, "");
      EXPECT_EQ(store::display_status((*rows)[i]), "NO_CHANGES");
    }
    EXPECT_EQ((*rows)[0].proposal_id, proposal);
    EXPECT_EQ((*rows)[2].plan_id, first);
  }
  EXPECT_EQ(store_problems(), "");
  CmdResult show = core({"inspect", "show", proposal.substr(0, 12)});
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_NE(show.out.find("outcome   NO_CHANGES"), std::string::npos) << show.out;
  EXPECT_EQ(show.out.find("error"), std::string::npos) << show.out;

  // A mode that differs from the after is a change: that plan is sealed.
  ASSERT_EQ(::chmod((root_ / "hello.txt").c_str(), 0400), 0);
  CmdResult mode = core({"plan", "--allow-audit-plugin", "--json"});
  ASSERT_EQ(mode.code, 0) << mode.err;
  EXPECT_EQ(json_field(mode.out, "state"), "SEALED") << mode.out;
  // And so is a changed byte.
  spit(root_ / "hello.txt", kHello + "x");
  CmdResult content = core({"plan", "--allow-audit-plugin", "--json"});
  EXPECT_EQ(json_field(content.out, "state"), "SEALED") << content.out;
}

TEST_F(EngineTest, SecondMutatingCommandOnTheRootIsConflictAtOnce) {
  auto dirs = store::open_root(root_.string());
  ASSERT_TRUE(dirs.ok());
  auto lock = store::RootLock::acquire(*dirs);
  ASSERT_TRUE(lock.ok());
  for (auto args : std::vector<std::vector<std::string>>{
           {"plan", "--allow-audit-plugin"}, {"apply", "0123456789abcdef"}, {"recover"}, {"retry-effects"}}) {
    CmdResult r = core(args);
    EXPECT_EQ(r.code, 1) << args[0];
    EXPECT_NE(r.err.find("DOT_E_CONFLICT"), std::string::npos) << args[0] << ": " << r.err;
  }
  // Read-only commands never take the lock.
  EXPECT_EQ(core({"status"}).code, 0);

}

TEST_F(EngineTest, TamperedStoredPlanIsRefused) {
  std::string id = plan_ok();
  sql(root_ / ".dot" / "store.db",
      "UPDATE plan SET canonical = replace(canonical, '\"mode\":384', '\"mode\":256') WHERE txn_id = "
      "(SELECT id FROM txn WHERE plan_id = '" + id + "');");
  CmdResult r = core({"apply", id});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("DOT_E_RECOVERY_REQUIRED"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "hello.txt"));
}

TEST_F(EngineTest, TamperedArtifactIsRefused) {
  std::string id = plan_ok();
  sql(root_ / ".dot" / "store.db",
      "UPDATE artifact SET bytes = CAST('evil' AS BLOB) WHERE slot = 0 AND txn_id = "
      "(SELECT id FROM txn WHERE plan_id = '" + id + "');");
  CmdResult r = core({"apply", id});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("DOT_E_RECOVERY_REQUIRED"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "hello.txt"));
}

TEST_F(EngineTest, PlanFromAnotherRootIsRefused) {
  std::string id = plan_ok();
  // The database now claims another root id: every plan in it was sealed
  // for a different root than the one being applied to.
  sql(root_ / ".dot" / "store.db", "UPDATE root SET root_id = '" + std::string(64, '7') + "';");
  CmdResult r = core({"apply", id});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("DOT_E_POLICY"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("root"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "hello.txt"));
}

TEST_F(EngineTest, PluginChangedAfterRegisterIsIdentityError) {
  fs::path pinned = root_ / ".dot" / "plugin";
  ::chmod(pinned.c_str(), 0700);
  {
    std::ofstream f(pinned, std::ios::binary | std::ios::app);
    f << "x";
  }
  CmdResult r = core({"plan", "--allow-audit-plugin"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("DOT_E_PLUGIN_IDENTITY"), std::string::npos) << r.err;
  EXPECT_EQ(last_state(), "ABANDONED");
}

// Runs `plan --json` paused at plan.plugin_hashed (the plugin is checked and
// not started yet), runs `meanwhile`, lets the plan go on and returns how it ended.
CmdResult plan_changed_after_the_hash(const fs::path& root, const fs::path& pause,
                                      const std::function<void()>& meanwhile) {
  return run_core(kHookedCore, {"plan", "--root", root.string(), "--allow-audit-plugin", "--json"},
                  {"DOT_TEST_PAUSE_AT=plan.plugin_hashed:" + pause.string()}, [&](pid_t) {
                    for (int i = 0; i < 2000 && !fs::exists(pause); ++i) ::usleep(10000);
                    if (!fs::exists(pause)) ADD_FAILURE() << "dot-core never reached plan.plugin_hashed";
                    meanwhile();
                    fs::remove(pause);
                  });
}

TEST_F(EngineTest, PluginSwappedBetweenHashAndExecRunsTheHashedOne) {
  fs::path pinned = root_ / ".dot" / "plugin";
  // Swap the pinned file for another executable while dot-core holds the
  // copy it hashed.
  CmdResult r = plan_changed_after_the_hash(root_, base_ / "pause", [&] {
    fs::copy_file("/bin/true", root_ / ".dot" / "swapped");
    fs::rename(root_ / ".dot" / "swapped", pinned);
  });
  EXPECT_EQ(r.code, 0) << "the hashed dot-hello ran, not /bin/true";
  EXPECT_EQ(json_field(r.out, "plan_id").size(), 64u);
  CmdResult next = core({"plan", "--allow-audit-plugin"});
  EXPECT_NE(next.err.find("DOT_E_PLUGIN_IDENTITY"), std::string::npos) << next.err;
}

// ---- the executed plugin is the hashed plugin ------------------------------

// Rewrites `path` in place (same inode: no O_TRUNC, no rename), as anyone
// with write access to the pinned copy could. False if a step failed.
bool rewrite_in_place(const fs::path& path, const std::string& bytes) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return false;
  for (std::size_t off = 0; off < bytes.size();) {
    ssize_t n = ::pwrite(fd.get(), bytes.data() + off, bytes.size() - off, static_cast<off_t>(off));
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return ::ftruncate(fd.get(), static_cast<off_t>(bytes.size())) == 0;
}

// What core-marked-hello leaves when it runs (tests/core/marked_plugin.cpp).
constexpr std::string_view kMarkedContent = "core-marked-hello ran";

TEST_F(EngineTest, PinnedCopyRewrittenInPlaceAfterTheHashRunsTheHashedBytes) {
  fs::path pinned = root_ / ".dot" / "plugin";
  fs::path mark = root_ / ".dot" / "ran";
  struct stat before {}, after {};
  ASSERT_EQ(::stat(pinned.c_str(), &before), 0);
  // dot-core has checked the registered dot-hello and not started it yet:
  // the same inode now gets other bytes, which leave a mark if they run.
  CmdResult r = plan_changed_after_the_hash(root_, base_ / "pause", [&] {
    EXPECT_TRUE(rewrite_in_place(pinned, slurp(bin("core-marked-hello"))));
    EXPECT_EQ(::stat(pinned.c_str(), &after), 0);
  });
  ASSERT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json_field(r.out, "plan_id").size(), 64u) << r.out;
  EXPECT_EQ(r.out.find(kMarkedContent), std::string::npos) << "the rewritten bytes ran under the registered digest";
  EXPECT_NE(r.out.find(sha256_hex(kHello)), std::string::npos) << "hello.txt is not dot-hello's: " << r.out;
  EXPECT_FALSE(fs::exists(mark)) << "the rewritten bytes ran";
  // The next plan hashes the rewritten copy and refuses it before it runs.
  CmdResult next = core({"plan", "--allow-audit-plugin"});
  EXPECT_NE(next.err.find("DOT_E_PLUGIN_IDENTITY"), std::string::npos) << next.err;
  EXPECT_FALSE(fs::exists(mark)) << "the rewritten bytes ran";
}

// The same attack without a pause: a writer swaps the pinned copy between
// dot-hello's bytes and core-marked-hello's, in place, as fast as it can,
// while plans run. Whatever the interleaving, a plan either runs the bytes
// it sealed (dot-hello's) or is refused with a digest mismatch before any
// process starts; core-marked-hello never runs.
TEST_F(EngineTest, PinnedCopyRewrittenInPlaceInALoopNeverRunsUnderTheRegisteredDigest) {
  fs::path pinned = root_ / ".dot" / "plugin";
  fs::path mark = root_ / ".dot" / "ran";
  const std::string registered = slurp(pinned);
  const std::string marked = slurp(bin("core-marked-hello"));
  ASSERT_FALSE(registered.empty());
  ASSERT_FALSE(marked.empty());
  std::atomic<bool> stop{false};
  std::atomic<int> rewrites{0};
  std::thread writer([&] {
    while (!stop.load()) {
      if (rewrite_in_place(pinned, marked)) ++rewrites;
      if (rewrite_in_place(pinned, registered)) ++rewrites;
    }
  });
  int sealed = 0;
  for (int i = 0; i < 20; ++i) {
    CmdResult r = core({"plan", "--allow-audit-plugin", "--json"});
    if (r.code == 0) {
      ++sealed;
      EXPECT_EQ(r.out.find(kMarkedContent), std::string::npos) << "run " << i << ": other bytes ran under the registered digest";
      EXPECT_NE(r.out.find(sha256_hex(kHello)), std::string::npos) << "run " << i << ": " << r.out;
    } else {
      EXPECT_NE(r.err.find("DOT_E_PLUGIN_IDENTITY"), std::string::npos) << "run " << i << ": " << r.err;
    }
  }
  stop = true;
  writer.join();
  EXPECT_GT(rewrites.load(), 0);
  EXPECT_FALSE(fs::exists(mark)) << "core-marked-hello ran";
  ::testing::Test::RecordProperty("sealed_plans", sealed);
}

// ---- the stored manifest is checked before the plugin starts ---------------

// One forged field of the plugin row: the manifest's profile, protocol or id,
// or the row's own copy of the id or digest.
struct ManifestForgery {
  std::string name;
  std::string statement;  // applied to the store database
  std::string detail;     // a substring of the refusal
};

void PrintTo(const ManifestForgery& f, std::ostream* os) { *os << f.name; }

std::string forge_manifest(const std::string& from, const std::string& to) {
  return "UPDATE plugin SET manifest = CAST(replace(CAST(manifest AS TEXT), '" + from + "', '" + to + "') AS BLOB);";
}

// The plugin row as one string (id, digest, manifest).
std::string store_row(const fs::path& db) {
  sqlite3* h = nullptr;
  std::string out;
  if (sqlite3_open(db.c_str(), &h) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, "SELECT plugin_id || ' ' || sha256 || ' ' || CAST(manifest AS TEXT) FROM plugin", -1, &st,
                           nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return out;
}

class ForgedManifest : public EngineTest, public ::testing::WithParamInterface<ManifestForgery> {};

TEST_P(ForgedManifest, IsPluginIdentityBeforeAnyProcessStarts) {
  fs::path mark = root_ / ".dot" / "ran";
  fs::path db = root_ / ".dot" / "store.db";
  ASSERT_EQ(core({"register", "--plugin", bin("core-marked-hello"), "--assurance", "audit", "--replace"}).code, 0);
  // The mark works: the row as registered runs the plugin, which leaves it.
  CmdResult honest = core({"plan", "--allow-audit-plugin"});
  ASSERT_EQ(honest.code, 0) << honest.err;
  ASSERT_TRUE(fs::exists(mark));
  fs::remove(mark);
  const std::string before = store_row(db);
  sql(db, GetParam().statement);
  ASSERT_NE(store_row(db), before) << "the forgery changed nothing";
  CmdResult r = core({"plan", "--allow-audit-plugin"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("DOT_E_PLUGIN_IDENTITY: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(GetParam().detail), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(mark)) << "the plugin was started under a forged manifest";
  EXPECT_EQ(last_state(), "ABANDONED");
  EXPECT_TRUE(stage_leftovers().empty());
}

INSTANTIATE_TEST_SUITE_P(
    Row, ForgedManifest,
    ::testing::Values(
        ManifestForgery{"profile", forge_manifest("\"profile\":\"org.dot.hello/v1\"", "\"profile\":\"org.dot.hello/v2\""),
                        "profile org.dot.hello/v2"},
        ManifestForgery{"protocol", forge_manifest("\"protocol\":1", "\"protocol\":2"), "protocol 2"},
        ManifestForgery{"id", forge_manifest("\"id\":\"org.dot.hello\"", "\"id\":\"org.dot.other\""),
                        "does not name plugin org.dot.hello"},
        ManifestForgery{"id_in_manifest_and_row",
                        forge_manifest("\"id\":\"org.dot.hello\"", "\"id\":\"org.dot.other\"") +
                            "UPDATE plugin SET plugin_id = 'org.dot.other';",
                        "does not name plugin org.dot.hello"},
        ManifestForgery{"id_in_row", "UPDATE plugin SET plugin_id = 'org.dot.other';", "does not name plugin org.dot.hello"},
        ManifestForgery{"digest_in_row", "UPDATE plugin SET sha256 = '0000000000000000000000000000000000000000000000000000000000000000';",
                        "disagree on the digest"}),
    [](const ::testing::TestParamInfo<ManifestForgery>& i) { return i.param.name; });

TEST_F(EngineTest, AFailedPlanEndsWithThePluginsLastStderrLineMadeSafe) {
  // A plugin that says why it fails (as a Python traceback's last line does)
  // and then exits: plan's error quotes that last line, with the bytes that
  // would move a terminal's cursor or reach its clipboard shown as \xNN and
  // a long line cut, and names the command that shows the whole transcript.
  spit(base_ / "dies.sh",
       "#!/bin/sh\nprintf 'Traceback (most recent call last):\\n' >&2\n"
       "printf 'ModuleNotFoundError: \\033]52;c;cm0gLXJm\\007\\033[2J\\r no dot_plugin\\n\\n' >&2\nexit 3\n",
       0755);
  ASSERT_EQ(core({"register", "--plugin", (base_ / "dies.sh").string(), "--assurance", "audit", "--replace"}).code, 0);
  CmdResult r = core({"plan", "--allow-audit-plugin"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "DOT_E_PROTOCOL: the plugin closed stdout without answering dot.initialize; the plugin's stderr ends with "
            "\"ModuleNotFoundError: \\x1b]52;c;cm0gLXJm\\x07\\x1b[2J\\x0d no dot_plugin\" (`dot-core inspect show txn-1 "
            "--root " + root_.string() + "` shows all of it)\n");
  EXPECT_EQ(last_state(), "ABANDONED");
  // What the store keeps as the failure is the error alone; the transcript is
  // kept apart, whole.
  CmdResult shown = core({"inspect", "show", "txn-1"});
  EXPECT_NE(shown.out.find("error     DOT_E_PROTOCOL: the plugin closed stdout without answering dot.initialize\n"),
            std::string::npos)
      << shown.out;
  // A last line longer than a terminal's is cut to 160 bytes and marked.
  spit(base_ / "long.sh", "#!/bin/sh\nprintf '%0300d\\n' 7 >&2\nexit 3\n", 0755);
  ASSERT_EQ(core({"register", "--plugin", (base_ / "long.sh").string(), "--assurance", "audit", "--replace"}).code, 0);
  CmdResult cut = core({"plan", "--allow-audit-plugin"});
  EXPECT_NE(cut.err.find("stderr ends with \"" + std::string(160, '0') + "...\" (`dot-core inspect show txn-2"),
            std::string::npos)
      << cut.err;
  // Nothing on stderr: nothing added.
  spit(base_ / "quiet.sh", "#!/bin/sh\nexit 3\n", 0755);
  ASSERT_EQ(core({"register", "--plugin", (base_ / "quiet.sh").string(), "--assurance", "audit", "--replace"}).code, 0);
  CmdResult quiet = core({"plan", "--allow-audit-plugin"});
  EXPECT_EQ(quiet.err, "DOT_E_PROTOCOL: the plugin closed stdout without answering dot.initialize\n");
}

TEST_F(EngineTest, RegisterRefusesBadScriptsRelativePathsAndSecondPlugin) {
  // A #! line with arguments would be run differently than it reads; one
  // whose interpreter is itself a script would reopen it by path.
  spit(base_ / "plugin.sh", "#!/bin/sh -e\nexit 0\n", 0755);
  CmdResult script = core({"register", "--plugin", (base_ / "plugin.sh").string(), "--assurance", "audit", "--replace"});
  EXPECT_EQ(script.err.rfind("DOT_E_POLICY: plugin " + (base_ / "plugin.sh").string() + " is a #! script whose #! line "
                             "is not", 0), 0u) << script.err;
  spit(base_ / "nested.sh", "#!" + (base_ / "plugin.sh").string() + "\nexit 0\n", 0755);
  CmdResult nested =
      core({"register", "--plugin", (base_ / "nested.sh").string(), "--assurance", "audit", "--replace"});
  EXPECT_EQ(nested.err.rfind("DOT_E_POLICY: the interpreter " + (base_ / "plugin.sh").string() + " is a #! script", 0),
            0u) << nested.err;
  spit(base_ / "data.sh", "#!" + (base_ / "text").string() + "\nexit 0\n", 0755);
  spit(base_ / "text", "exit 0\n", 0755);
  CmdResult data = core({"register", "--plugin", (base_ / "data.sh").string(), "--assurance", "audit", "--replace"});
  EXPECT_EQ(data.err.rfind("DOT_E_POLICY: the interpreter " + (base_ / "text").string() +
                               " is not an ELF executable; a plugin's #! line must lead to an ELF interpreter",
                           0),
            0u)
      << data.err;
  CmdResult text = core({"register", "--plugin", (base_ / "text").string(), "--assurance", "audit", "--replace"});
  EXPECT_EQ(text.err, "DOT_E_POLICY: plugin " + (base_ / "text").string() +
                          " is neither an ELF executable nor a #! script\n");
  CmdResult rel = core({"register", "--plugin", "dot-hello", "--assurance", "audit", "--replace"});
  EXPECT_NE(rel.err.find("DOT_E_POLICY"), std::string::npos) << rel.err;
  CmdResult twice = core({"register", "--plugin", bin("dot-hello"), "--assurance", "audit"});
  EXPECT_NE(twice.err.find("DOT_E_CONFLICT"), std::string::npos) << twice.err;
  CmdResult replace = core({"register", "--plugin", bin("dot-hello"), "--assurance", "audit", "--replace"});
  EXPECT_EQ(replace.code, 0) << replace.err;
  CmdResult bad = core({"register", "--plugin", bin("dot-hello"), "--assurance", "maybe"});
  EXPECT_EQ(bad.code, 2);
}

TEST_F(EngineTest, AuditConsentNeverSatisfiesAProcessPlugin) {
  ASSERT_EQ(core({"register", "--plugin", bin("dot-hello"), "--assurance", "process", "--replace"}).code, 0);
  CmdResult r = core({"plan", "--allow-audit-plugin"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("DOT_E_POLICY"), std::string::npos) << r.err;
}

TEST_F(EngineTest, StatusShowsRootPluginAndWaitingPlans) {
  std::string id = plan_ok();
  CmdResult r = core({"status", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(id), std::string::npos);
  EXPECT_NE(r.out.find("\"recovery_required\":false"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("org.dot.hello"), std::string::npos);
}

// status shows drift: each target that no longer holds what the newest
// applied plan wrote, with what differs, and it writes nothing doing so.
TEST_F(EngineTest, StatusShowsDriftAndWritesNothing) {
  std::string sealed = plan_ok();
  CmdResult before_apply = core({"status", "--json"});
  ASSERT_EQ(before_apply.code, 0) << before_apply.err;
  EXPECT_NE(before_apply.out.find("\"drift\":[]"), std::string::npos) << "a sealed plan wrote nothing yet";
  ASSERT_EQ(core({"apply", sealed}).code, 0);
  CmdResult clean = core({"status"});
  ASSERT_EQ(clean.code, 0) << clean.err;
  EXPECT_NE(clean.out.find("drift         none\n"), std::string::npos) << clean.out;

  auto drift_of = [&]() {
    CmdResult r = core({"status", "--json"});
    EXPECT_EQ(r.code, 0) << r.err;
    auto doc = json::parse(r.out);
    if (!doc.ok()) return std::string("<not json>");
    std::string out;
    for (auto d : doc->root().find("drift")->elements()) {
      EXPECT_EQ(d.find("plan_id")->as_string(), sealed);
      out += std::string(d.find("name")->as_string()) + ":" + std::string(d.find("reason")->as_string()) + " ";
    }
    return out;
  };
  ASSERT_EQ(::chmod((root_ / "welcome.txt").c_str(), 0400), 0);
  EXPECT_EQ(drift_of(), "welcome.txt:mode ");
  spit(root_ / "hello.txt", kHello + "edited");
  EXPECT_EQ(drift_of(), "hello.txt:content welcome.txt:mode ");
  ASSERT_EQ(::unlink((root_ / "welcome.txt").c_str()), 0);
  EXPECT_EQ(drift_of(), "hello.txt:content welcome.txt:missing ");
  // Same bytes, but a symlink now (never followed), or a FIFO (never opened
  // for reading: status does not hang on it).
  spit(base_ / "elsewhere.txt", kHello);
  ASSERT_EQ(::unlink((root_ / "hello.txt").c_str()), 0);
  fs::create_symlink(base_ / "elsewhere.txt", root_ / "hello.txt");
  ASSERT_EQ(::mkfifo((root_ / "welcome.txt").c_str(), 0600), 0);
  EXPECT_EQ(drift_of(), "hello.txt:not_regular welcome.txt:not_regular ");

  // Read-only: the database, its folder and the targets are as they were
  // (but for SQLite's -shm, the shared-memory index every reader maps).
  auto fingerprint = [&]() {
    std::string out;
    for (const auto& e : fs::recursive_directory_iterator(root_)) {
      if (e.path().string().ends_with("-shm")) continue;
      struct stat st {};
      ::lstat(e.path().c_str(), &st);
      out += fmt::format("{} {} {} {}.{}\n", e.path().string(), st.st_size, st.st_mode, st.st_mtim.tv_sec,
                         st.st_mtim.tv_nsec);
      if (e.is_regular_file() && !e.is_symlink()) out += slurp(e.path());
    }
    return out;
  };
  std::string was = fingerprint();
  CmdResult human = core({"status"});
  ASSERT_EQ(human.code, 0) << human.err;
  EXPECT_NE(human.out.find("drift         2 target(s) differ"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("  hello.txt  a symlink, not a regular file (plan " + sealed.substr(0, 12) + ")"),
            std::string::npos)
      << human.out;
  EXPECT_EQ(fingerprint(), was);

  // Put back exactly what the plan wrote: no drift.
  ASSERT_EQ(::unlink((root_ / "hello.txt").c_str()), 0);
  ASSERT_EQ(::unlink((root_ / "welcome.txt").c_str()), 0);
  spit(root_ / "hello.txt", kHello);
  spit(root_ / "welcome.txt", kWelcome);
  EXPECT_EQ(drift_of(), "");
}

// ---- targets outside the policy ------------------------------------------

struct BadTarget {
  const char* name;
  void (*make)(const fs::path& target, const fs::path& outside);
  const char* code;
};

class BadTargetTest : public EngineTest, public ::testing::WithParamInterface<BadTarget> {};

TEST_P(BadTargetTest, RefusedWithItsCodeAndNothingTouched) {
  fs::path outside = base_ / "outside.txt";
  spit(outside, "outside\n", 0600);
  GetParam().make(root_ / "hello.txt", outside);
  CmdResult r = core({"plan", "--allow-audit-plugin"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(GetParam().code), std::string::npos) << r.err;
  EXPECT_EQ(last_state(), "ABANDONED");
  EXPECT_EQ(slurp(outside), "outside\n");
  EXPECT_FALSE(fs::exists(root_ / "welcome.txt"));
  EXPECT_TRUE(stage_leftovers().empty());
}

INSTANTIATE_TEST_SUITE_P(
    Targets, BadTargetTest,
    ::testing::Values(
        BadTarget{"symlink", [](const fs::path& tgt, const fs::path& out) { fs::create_symlink(out, tgt); }, "DOT_E_PATH_ESCAPE"},
        BadTarget{"hardlink", [](const fs::path& tgt, const fs::path& out) { fs::create_hard_link(out, tgt); }, "DOT_E_POLICY"},
        BadTarget{"fifo", [](const fs::path& tgt, const fs::path&) { ::mkfifo(tgt.c_str(), 0600); }, "DOT_E_POLICY"},
        BadTarget{"directory", [](const fs::path& tgt, const fs::path&) { fs::create_directory(tgt); }, "DOT_E_POLICY"},
        BadTarget{"setuid", [](const fs::path& tgt, const fs::path&) { spit(tgt, "x", 04600); }, "DOT_E_POLICY"},
        BadTarget{"group_writable", [](const fs::path& tgt, const fs::path&) { spit(tgt, "x", 0620); }, "DOT_E_POLICY"},
        BadTarget{"other_readable", [](const fs::path& tgt, const fs::path&) { spit(tgt, "x", 0604); }, "DOT_E_POLICY"},
        BadTarget{"other_owner",
                  [](const fs::path& tgt, const fs::path&) {
                    spit(tgt, "x", 0600);
                    if (::chown(tgt.c_str(), ::geteuid() + 4242, static_cast<gid_t>(-1)) != 0) spit(tgt, "x", 0640);
                  },
                  "DOT_E_POLICY"},
        BadTarget{"too_large", [](const fs::path& tgt, const fs::path&) { spit(tgt, std::string(65537, 'x')); },
                  "DOT_E_POLICY"}),
    [](const ::testing::TestParamInfo<BadTarget>& pinfo) { return std::string(pinfo.param.name); });

TEST_F(EngineTest, ExactlySixtyFourKibTargetIsAccepted) {
  spit(root_ / "hello.txt", std::string(65536, 'x'));
  std::string id = plan_ok();
  ASSERT_EQ(core({"apply", id}).code, 0);
  EXPECT_EQ(hello(), kHello);
}

}  // namespace
}  // namespace dot::core::testing

namespace dot::core::testing {
namespace {

// recover removes as temp files only the ones its journal names (derived
// from the plan id and the slot, core::temp_name); everything else with the
// prefix, even a regular file named exactly like a temp file, is left alone
// and never named (a root may be a home folder: recover lists nothing a plan
// does not name), and none of it stops the rollback (a directory named
// .dot-tmp-x used to fail every recover with EISDIR).
TEST_F(EngineTest, RecoverRemovesOnlyTheTempFilesItsJournalNamesAndRollsBackWhateverElseIsThere) {
  std::string id = plan_ok();
  CmdResult crashed =
      run_core(kHookedCore, {"apply", id, "--root", root_.string()}, {"DOT_TEST_CRASH_AT=commit.slot0.temp_synced"});
  ASSERT_EQ(crashed.signal, SIGKILL) << crashed.err;
  const std::string journal = temp_name(id, TempPhase::Apply, 0);
  ASSERT_TRUE(fs::is_regular_file(root_ / journal)) << "the crash left no temp file named " << journal;
  const std::string lookalike = ".dot-tmp-" + std::string(32, 'a');
  const std::string link = ".dot-tmp-" + std::string(32, 'b');
  const std::string dir = ".dot-tmp-" + std::string(32, 'c');
  spit(root_ / lookalike, "a file the journal does not name\n");
  fs::create_directory(root_ / ".dot-tmp-x");
  spit(root_ / ".dot-tmp-x" / "inside", "kept");
  fs::create_directory(root_ / dir);
  spit(root_ / ".dot-tmp-notes.txt", "the user's own file\n");
  spit(base_ / "elsewhere", "outside\n");
  fs::create_symlink(base_ / "elsewhere", root_ / link);
  CmdResult rec = core({"recover", "--json"});
  ASSERT_EQ(rec.code, 0) << rec.err;
  EXPECT_EQ(state_of(id), "ROLLED_BACK");
  EXPECT_FALSE(fs::exists(root_ / "hello.txt"));
  EXPECT_FALSE(fs::exists(root_ / journal));
  EXPECT_EQ(slurp(root_ / lookalike), "a file the journal does not name\n");
  EXPECT_EQ(slurp(root_ / ".dot-tmp-x" / "inside"), "kept");
  EXPECT_TRUE(fs::is_directory(root_ / dir));
  EXPECT_EQ(slurp(root_ / ".dot-tmp-notes.txt"), "the user's own file\n");
  EXPECT_TRUE(fs::is_symlink(root_ / link));
  EXPECT_EQ(slurp(base_ / "elsewhere"), "outside\n");
  EXPECT_NE(rec.out.find("\"temp_files_removed\":1"), std::string::npos) << rec.out;
  EXPECT_NE(rec.out.find("\"left_alone\":[]"), std::string::npos) << rec.out;
  for (const std::string& name : {lookalike, std::string(".dot-tmp-x"), dir, std::string(".dot-tmp-notes.txt"), link})
    EXPECT_EQ(rec.out.find(name), std::string::npos) << name << " was listed: " << rec.out;
  // Never removed, never an error, never listed.
  CmdResult again = core({"recover"});
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.out, "nothing to recover\n");
  EXPECT_TRUE(fs::exists(root_ / ".dot-tmp-x" / "inside"));
  EXPECT_TRUE(fs::exists(root_ / lookalike));
}

// A stale stage nested deeper than the old removal limit (64) is removed
// completely and named; the rollback happens too.
TEST_F(EngineTest, RecoverRemovesADeepStaleStageAndNamesItAndRollsBack) {
  std::string id = plan_ok();
  CmdResult crashed =
      run_core(kHookedCore, {"apply", id, "--root", root_.string()}, {"DOT_TEST_CRASH_AT=commit.slot0.renamed"});
  ASSERT_EQ(crashed.signal, SIGKILL) << crashed.err;
  fs::path deep = root_ / ".dot" / "stage" / "stale";
  for (int i = 0; i < 70; ++i) deep /= "n";
  fs::create_directories(deep);
  spit(deep / "bottom", "bytes at the bottom\n");
  CmdResult rec = core({"recover"});
  ASSERT_EQ(rec.code, 0) << rec.err;
  EXPECT_EQ(state_of(id), "ROLLED_BACK");
  EXPECT_FALSE(fs::exists(root_ / "hello.txt"));
  EXPECT_NE(rec.out.find("removed leftover stage .dot/stage/stale (72 entries)\n"), std::string::npos) << rec.out;
  EXPECT_EQ(rec.out.find("left alone"), std::string::npos) << rec.out;
  EXPECT_TRUE(stage_leftovers().empty());
  CmdResult again = core({"recover"});
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.out, "nothing to recover\n");
}

struct ArtifactCase {
  const char* name;
  const char* code;
};

class ArtifactLie : public EngineTest, public ::testing::WithParamInterface<ArtifactCase> {};

TEST_P(ArtifactLie, CaughtByCoreReadingTheStage) {
  CmdResult reg = core({"register", "--plugin", bin(std::string("core-artifact-") + GetParam().name), "--assurance",
                        "audit", "--replace"});
  ASSERT_EQ(reg.code, 0) << reg.err;
  CmdResult r = core({"plan", "--allow-audit-plugin"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(std::string(GetParam().code) + ":"), std::string::npos) << r.err;
  EXPECT_EQ(last_state(), "ABANDONED");
  EXPECT_FALSE(fs::exists(root_ / "hello.txt"));
  EXPECT_TRUE(stage_leftovers().empty());
}

// Every ID `inspect list` prints is one `inspect show` accepts, including a
// proposal abandoned before it had a proposal id (txn-N) and one abandoned
// after (its proposal id prefix): show gives its failure and the plugin's
// stderr.
TEST_F(EngineTest, AbandonedProposalsAreAddressableFromInspectList) {
  ASSERT_EQ(::mkfifo((root_ / "hello.txt").c_str(), 0600), 0);  // refused before the proposal id
  ASSERT_EQ(core({"plan", "--allow-audit-plugin"}).code, 1);
  ASSERT_EQ(::unlink((root_ / "hello.txt").c_str()), 0);
  ASSERT_EQ(core({"register", "--plugin", bin("core-artifact-wrong_digest"), "--assurance", "audit", "--replace"}).code, 0);
  ASSERT_EQ(core({"plan", "--allow-audit-plugin"}).code, 1);  // refused after it

  CmdResult list = core({"inspect", "list"});
  ASSERT_EQ(list.code, 0) << list.err;
  std::istringstream in(list.out);
  std::string header, newest, oldest;
  std::getline(in, header);
  std::getline(in, newest);
  std::getline(in, oldest);
  EXPECT_EQ(header.rfind("ID ", 0), 0u) << list.out;
  std::string newest_id = newest.substr(0, newest.find(' '));
  std::string oldest_id = oldest.substr(0, oldest.find(' '));
  EXPECT_EQ(oldest_id, "txn-1") << list.out;
  ASSERT_EQ(newest_id.size(), 12u) << list.out;

  CmdResult late = core({"inspect", "show", newest_id});
  ASSERT_EQ(late.code, 0) << late.err;
  EXPECT_NE(late.out.find("ABANDONED"), std::string::npos) << late.out;
  EXPECT_NE(late.out.find("error     DOT_E_ARTIFACT_MISMATCH: staged hello.txt has sha256"), std::string::npos)
      << late.out;
  EXPECT_NE(late.out.find("plugin stderr\n  lying hello: wrong_digest\n"), std::string::npos) << late.out;
  CmdResult late_json = core({"inspect", "show", newest_id, "--json"});
  ASSERT_EQ(late_json.code, 0) << late_json.err;
  EXPECT_EQ(json_field(late_json.out, "proposal_id").substr(0, 12), newest_id);
  EXPECT_EQ(json_field(late_json.out, "plugin_stderr"), "lying hello: wrong_digest\n");

  CmdResult early = core({"inspect", "show", oldest_id, "--json"});
  ASSERT_EQ(early.code, 0) << early.err;
  EXPECT_EQ(json_field(early.out, "state"), "ABANDONED");
  EXPECT_EQ(json_field(early.out, "code"), "DOT_E_POLICY");
  EXPECT_NE(json_field(early.out, "detail").find("FIFO"), std::string::npos) << early.out;
  EXPECT_EQ(core({"inspect", "events", oldest_id}).code, 0);
  // The row number names only a row that exists.
  CmdResult none = core({"inspect", "show", "txn-3"});
  EXPECT_EQ(none.code, 1);
  EXPECT_EQ(none.err.rfind("DOT_E_NOT_FOUND: ", 0), 0u) << none.err;
}

INSTANTIATE_TEST_SUITE_P(Stage, ArtifactLie,
                         ::testing::Values(ArtifactCase{"staged_symlink", "DOT_E_PATH_ESCAPE"},
                                           ArtifactCase{"replaced_stage", "DOT_E_PATH_ESCAPE"},
                                           ArtifactCase{"wrong_mode", "DOT_E_ARTIFACT_MISMATCH"},
                                           ArtifactCase{"wrong_digest", "DOT_E_ARTIFACT_MISMATCH"},
                                           ArtifactCase{"wrong_size", "DOT_E_ARTIFACT_MISMATCH"},
                                           ArtifactCase{"changed_bytes", "DOT_E_ARTIFACT_MISMATCH"},
                                           ArtifactCase{"extra_file", "DOT_E_ARTIFACT_MISMATCH"},
                                           ArtifactCase{"hard_link", "DOT_E_ARTIFACT_MISMATCH"}),
                         [](const ::testing::TestParamInfo<ArtifactCase>& pinfo) { return std::string(pinfo.param.name); });

}  // namespace
}  // namespace dot::core::testing
