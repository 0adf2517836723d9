// The store API the engine drives: proposals, sealing, verified loads,
// transitions with events, the effect ledger, lookups and the commit hook.
#include <sqlite3.h>
#include <sys/stat.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "dot/store/error_kinds.h"
#include "helpers.h"

namespace dot::store {
namespace {

using testing::TempDir;

class StoreLifecycle : public ::testing::Test {
 protected:
  void SetUp() override {
    OpenOptions o;
    o.commit_hook = [this](std::string_view p) { points.emplace_back(p); };
    auto s = Store::create(dir / "store.db", testing::hex64('a'), o);
    ASSERT_TRUE(s.ok()) << s.error().line();
    store.emplace(std::move(s).value());
  }

  TxnId sealed(int n, bool effects = true) {
    auto id = store->begin_proposal({"org.dot.hello", testing::hex64('d'), 0});
    EXPECT_TRUE(id.ok());
    auto in = testing::make_seal(n, effects);
    EXPECT_TRUE(store->set_proposal_id(*id, in.proposal_id).ok());
    auto st = store->seal(*id, in);
    EXPECT_TRUE(st.ok()) << st.error().line();
    return *id;
  }

  // Runs raw SQL on the database behind the store's back (tampering).
  void raw(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(store->path().c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }

  TempDir dir;
  std::optional<Store> store;
  std::vector<std::string> points;
};

// A proposal document handed over in pieces (as a plan writes a large one)
// is kept exactly; pieces of another length than promised, or hashing to
// another id, are refused and leave the proposal without id or document.
TEST_F(StoreLifecycle, ProposalDocumentInPiecesIsKeptOnlyWhenItsLengthAndHashAreTheIds) {
  auto id = store->begin_proposal({"org.dot.hello", testing::hex64('d'), 0});
  ASSERT_OK(id);
  std::vector<std::string> pieces = {"{\"operations\":[", "{\"path\":\"a\"}", ",{\"path\":\"b\"}", "]}"};
  std::string doc;
  for (const auto& p : pieces) doc += p;
  auto in_pieces = [&pieces](ByteSink& out) -> Status {
    for (const auto& p : pieces) DOT_TRY(out.write(p));
    return {};
  };
  auto longer = store->set_proposal_id(*id, sha256_hex(doc), doc.size() - 1, in_pieces);
  ASSERT_ERR(longer, Code::Validation);
  EXPECT_EQ(longer.error().kind, "proposal_document");
  auto shorter = store->set_proposal_id(*id, sha256_hex(doc), doc.size() + 1, in_pieces);
  ASSERT_ERR(shorter, Code::Validation);
  auto other = store->set_proposal_id(*id, testing::hex64('e'), doc.size(), in_pieces);
  ASSERT_ERR(other, Code::Validation);
  EXPECT_NE(other.error().detail.find("hashes to " + sha256_hex(doc)), std::string::npos) << other.error().line();
  auto failing = store->set_proposal_id(*id, sha256_hex(doc), doc.size(), [](ByteSink&) -> Status {
    return make_error(Code::Internal, "the writer failed");
  });
  ASSERT_ERR(failing, Code::Internal);
  auto before = store->detail(*id);
  ASSERT_OK(before);
  EXPECT_EQ(before->summary.proposal_id, "");
  EXPECT_EQ(before->proposal_document, "");
  ASSERT_OK(store->set_proposal_id(*id, sha256_hex(doc), doc.size(), in_pieces));
  auto after = store->detail(*id);
  ASSERT_OK(after);
  EXPECT_EQ(after->summary.proposal_id, sha256_hex(doc));
  EXPECT_EQ(after->proposal_document, doc);
}

// The proposal document is kept with its id, only when it hashes to it.
TEST_F(StoreLifecycle, ProposalDocumentIsKeptOnlyWhenItHashesToTheId) {
  auto id = store->begin_proposal({"org.dot.hello", testing::hex64('d'), 0});
  ASSERT_OK(id);
  const std::string doc = "{\"proposed\":true}";
  auto wrong = store->set_proposal_id(*id, testing::hex64('e'), doc);
  ASSERT_ERR(wrong, Code::Validation);
  EXPECT_EQ(wrong.error().kind, "proposal_document");
  auto before = store->detail(*id);
  ASSERT_OK(before);
  EXPECT_EQ(before->summary.proposal_id, "");
  EXPECT_EQ(before->proposal_document, "");
  ASSERT_OK(store->set_proposal_id(*id, sha256_hex(doc), doc));
  ASSERT_OK(store->abandon(*id, Abandonment{"DOT_E_PROTOCOL", "later", ""}));
  auto after = store->detail(*id);
  ASSERT_OK(after);
  EXPECT_EQ(after->summary.proposal_id, sha256_hex(doc));
  EXPECT_EQ(after->proposal_document, doc);
  auto clean = store->check();
  ASSERT_OK(clean);
  EXPECT_TRUE(clean->problems.empty());
  // A document edited behind the store's back no longer hashes to the id.
  raw("UPDATE txn SET proposal = CAST('{\"proposed\":false}' AS BLOB)");
  auto c = store->check();
  ASSERT_OK(c);
  ASSERT_EQ(c->problems.size(), 1u);
  EXPECT_NE(c->problems[0].find("proposal document"), std::string::npos) << c->problems[0];
}

TEST_F(StoreLifecycle, CreateRecordsRootIdAndSchema) {
  auto rid = store->root_id();
  ASSERT_OK(rid);
  EXPECT_EQ(*rid, testing::hex64('a'));
  EXPECT_EQ(store->opened_version(), kSchemaVersion);
  EXPECT_EQ(points, std::vector<std::string>{"store.init"});
  auto again = Store::create(dir / "store.db", testing::hex64('b'));
  ASSERT_ERR(again, Code::Store);
}

// A plan text of kPackedPlanBytes or more is stored packed (one zstd frame,
// much shorter) and read back as exactly the text by every reader; a frame
// cut short behind the store's back is refused as tampering.
// What Store::read_plan_text hands over: the bytes, and the largest piece.
struct PieceCounter final : ByteSink {
  Status write(std::string_view piece) override {
    bytes += piece;
    largest = std::max(largest, piece.size());
    return {};
  }
  std::string bytes;
  std::size_t largest = 0;
};

TEST_F(StoreLifecycle, ALargePlanTextIsStoredPackedAndReadBackExactly) {
  auto id = store->begin_proposal({"org.dot.hello", testing::hex64('d'), 0});
  ASSERT_OK(id);
  auto in = testing::make_seal(7, true, 1200);
  ASSERT_GE(in.canonical_plan.size(), kPackedPlanBytes);
  ASSERT_OK(store->set_proposal_id(*id, in.proposal_id));
  ASSERT_OK(store->seal(*id, in));
  std::string stored;
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(store->path().c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* q = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT canonical FROM plan", -1, &q, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
    stored.assign(static_cast<const char*>(sqlite3_column_blob(q, 0)),
                  static_cast<std::size_t>(sqlite3_column_bytes(q, 0)));
    sqlite3_finalize(q);
    sqlite3_close(db);
  }
  EXPECT_EQ(stored.substr(0, 4), std::string("\x28\xB5\x2F\xFD", 4));
  EXPECT_LT(stored.size(), in.canonical_plan.size());  // its digests leave little to pack
  auto loaded = store->load_sealed(*id);
  ASSERT_OK(loaded);
  EXPECT_EQ(loaded->canonical_plan, in.canonical_plan);
  auto shown = store->detail(*id);
  ASSERT_OK(shown);
  EXPECT_EQ(shown->canonical_plan, in.canonical_plan);
  // Read as it unpacks: the same text, in pieces of at most 128 KiB.
  PieceCounter text;
  ASSERT_OK(store->read_plan_text(*id, text));
  EXPECT_EQ(text.bytes, in.canonical_plan);
  EXPECT_LE(text.largest, std::size_t{128} << 10);
  auto clean = store->check();
  ASSERT_OK(clean);
  EXPECT_TRUE(clean->problems.empty());
  raw("UPDATE plan SET canonical = substr(canonical, 1, length(canonical) - 3)");
  auto cut = store->load_sealed(*id);
  ASSERT_ERR(cut, Code::RecoveryRequired);
  EXPECT_NE(cut.error().detail.find("the plan text"), std::string::npos) << cut.error().line();
  PieceCounter partial;
  auto read = store->read_plan_text(*id, partial);
  ASSERT_ERR(read, Code::RecoveryRequired);
  EXPECT_NE(read.error().detail.find("the plan text"), std::string::npos) << read.error().line();
  auto checked = store->check();
  ASSERT_OK(checked);
  EXPECT_FALSE(checked->problems.empty());
}

// A plan text handed over in pieces (SealInput::write_canonical) is stored
// as the whole text would be, packed or not by its size, and its rows given
// one at a time (operation_at) as listed ones; pieces of another length or
// digest than promised are refused and nothing is sealed.
TEST_F(StoreLifecycle, APlanTextWrittenInPiecesAndRowsGivenOneAtATimeAreStoredAsWhole) {
  for (std::size_t slots : {std::size_t{2}, std::size_t{1200}}) {
    auto id = store->begin_proposal({"org.dot.hello", testing::hex64('d'), 0});
    ASSERT_OK(id);
    SealInput in = testing::make_seal(static_cast<int>(10 + slots), true, slots);
    ASSERT_OK(store->set_proposal_id(*id, in.proposal_id));
    const std::string text = std::exchange(in.canonical_plan, {});
    const std::vector<OperationSummary> rows = std::exchange(in.operations, {});
    in.operation_count = rows.size();
    in.operation_at = [&rows](std::size_t i) {
      return SealRow{rows[i].name, rows[i].before_sha256, rows[i].after_sha256};
    };
    in.write_canonical = [&text](ByteSink& out) -> Status {
      for (std::size_t at = 0; at < text.size(); at += 1000)
        DOT_TRY(out.write(std::string_view(text).substr(at, 1000)));
      return {};
    };
    in.canonical_bytes = text.size() + 1;
    auto longer = store->seal(*id, in);
    ASSERT_FALSE(longer.ok());
    EXPECT_NE(longer.error().detail.find("not the " + std::to_string(text.size() + 1) + " promised"), std::string::npos)
        << longer.error().line();
    in.canonical_bytes = text.size();
    const std::string plan_id = std::exchange(in.plan_id, sha256_hex("another plan"));
    auto other = store->seal(*id, in);
    ASSERT_FALSE(other.ok());
    EXPECT_NE(other.error().detail.find("not to plan id"), std::string::npos) << other.error().line();
    auto still = store->summary(*id);
    ASSERT_OK(still);
    EXPECT_EQ(still->state, State::Proposing);
    in.plan_id = plan_id;
    ASSERT_OK(store->seal(*id, in));
    auto loaded = store->load_sealed(*id);
    ASSERT_OK(loaded);
    EXPECT_EQ(loaded->canonical_plan, text);
    ASSERT_EQ(loaded->operations.size(), rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(loaded->operations[i].name, rows[i].name);
      EXPECT_EQ(loaded->operations[i].after_sha256, rows[i].after_sha256);
    }
  }
  auto clean = store->check();
  ASSERT_OK(clean);
  EXPECT_TRUE(clean->problems.empty());
}

TEST_F(StoreLifecycle, FullCommitPathWithEffects) {
  TxnId id = sealed(1);
  auto loaded = store->load_sealed(id);
  ASSERT_OK(loaded);
  auto in = testing::make_seal(1);
  EXPECT_EQ(loaded->canonical_plan, in.canonical_plan);
  EXPECT_EQ(loaded->plan_id, in.plan_id);
  EXPECT_EQ(loaded->effect_count, std::optional<std::uint32_t>(1));
  ASSERT_EQ(loaded->artifacts.size(), 2u);
  EXPECT_EQ(loaded->artifacts[1].bytes, in.artifacts[1].bytes);
  EXPECT_TRUE(loaded->backups.empty());

  ASSERT_OK(store->prepare(id, testing::make_backups(2)));
  ASSERT_OK(store->transition(id, State::Committing));
  ASSERT_OK(store->transition(id, State::Committed));
  // DONE needs the ledger complete.
  ASSERT_ERR(store->transition(id, State::Done), Code::RecoveryRequired);
  auto e = store->effect_attempt(id, 0);
  ASSERT_OK(e);
  EXPECT_EQ(e->idempotency_key, sha256_hex(in.plan_id + ":commit:0"));
  EXPECT_EQ(e->attempts, 1u);
  ASSERT_OK(store->effect_finish(id, 0, EffectState::Failed, "DOT_E_POST_COMMIT", "fsync failed"));
  auto retry = store->effect_attempt(id, 0);
  ASSERT_OK(retry);
  EXPECT_EQ(retry->attempts, 2u);
  ASSERT_OK(store->effect_finish(id, 0, EffectState::Succeeded));
  ASSERT_ERR(store->effect_attempt(id, 0), Code::RecoveryRequired);  // SUCCEEDED is final
  ASSERT_ERR(store->effect_attempt(id, 1), Code::RecoveryRequired);  // beyond the count
  ASSERT_OK(store->transition(id, State::Done));

  auto d = store->detail(id);
  ASSERT_OK(d);
  EXPECT_EQ(d->summary.state, State::Done);
  std::vector<State> history;
  for (const auto& ev : d->events) history.push_back(ev.state);
  EXPECT_EQ(history, (std::vector<State>{State::Proposing, State::Sealed, State::Prepared, State::Committing,
                                         State::Committed, State::Done}));
  ASSERT_EQ(d->effects.size(), 1u);
  EXPECT_EQ(d->effects[0].state, EffectState::Succeeded);
  EXPECT_TRUE(d->has_backups);

  std::vector<std::string> expected = {"store.init",
                                       "store.proposal.begin",
                                       "store.proposal.id",
                                       "store.seal",
                                       "store.prepare",
                                       "store.transition.COMMITTING",
                                       "store.transition.COMMITTED",
                                       "store.effect.0.ATTEMPTED",
                                       "store.effect.0.FAILED",
                                       "store.effect.0.ATTEMPTED",
                                       "store.effect.0.SUCCEEDED",
                                       "store.transition.DONE"};
  EXPECT_EQ(points, expected);

  auto check = store->check();
  ASSERT_OK(check);
  EXPECT_TRUE(check->problems.empty()) << check->problems.front();
}

TEST_F(StoreLifecycle, IllegalTransitionsAreRefusedAndChangeNothing) {
  TxnId id = sealed(2);
  ASSERT_ERR(store->transition(id, State::Committed), Code::RecoveryRequired);
  ASSERT_ERR(store->transition(id, State::Done), Code::RecoveryRequired);
  ASSERT_ERR(store->transition(id, State::RolledBack), Code::RecoveryRequired);
  ASSERT_ERR(store->effect_attempt(id, 0), Code::RecoveryRequired);
  ASSERT_OK(store->transition(id, State::Discarded, "", "user discarded"));
  ASSERT_ERR(store->prepare(id, testing::make_backups(2)), Code::RecoveryRequired);
  ASSERT_ERR(store->transition(id, State::Stale), Code::RecoveryRequired);
  auto s = store->summary(id);
  ASSERT_OK(s);
  EXPECT_EQ(s->state, State::Discarded);
  auto evs = store->events(id);
  ASSERT_OK(evs);
  EXPECT_EQ(evs->size(), 3u);
  ASSERT_ERR(store->transition(9999, State::Done), Code::NotFound);
}

TEST_F(StoreLifecycle, AbandonKeepsCodeAndBoundedStderr) {
  auto id = store->begin_proposal({"org.dot.hello", testing::hex64('d'), 0});
  ASSERT_OK(id);
  std::string err(kMaxStderrBytes + 100, 'x');
  err[0] = '\xff';  // not UTF-8: kept as bytes
  ASSERT_OK(store->abandon(*id, {"DOT_E_PROTOCOL", "trailing output", err}));
  auto d = store->detail(*id);
  ASSERT_OK(d);
  EXPECT_EQ(d->summary.state, State::Abandoned);
  EXPECT_EQ(d->summary.code, "DOT_E_PROTOCOL");
  EXPECT_EQ(d->detail, "trailing output");
  EXPECT_EQ(d->plugin_stderr.size(), kMaxStderrBytes);
  EXPECT_TRUE(d->plugin_stderr_truncated);
  EXPECT_EQ(d->events.back().code, "DOT_E_PROTOCOL");
  ASSERT_ERR(store->seal(*id, testing::make_seal(3)), Code::RecoveryRequired);
  ASSERT_ERR(store->load_sealed(*id), Code::NotFound);
}

TEST_F(StoreLifecycle, SealRefusesInconsistentInput) {
  auto id = store->begin_proposal({"org.dot.hello", testing::hex64('d'), 0});
  ASSERT_OK(id);
  auto in = testing::make_seal(4);
  auto bad = in;
  bad.plan_id = testing::hex64('0');
  ASSERT_ERR(store->seal(*id, bad), Code::Validation);
  bad = in;
  bad.artifacts[1].bytes += "x";
  ASSERT_ERR(store->seal(*id, bad), Code::ArtifactMismatch);
  bad = in;
  bad.artifacts.pop_back();
  ASSERT_ERR(store->seal(*id, bad), Code::ArtifactMismatch);
  bad = in;
  bad.artifacts[0].bytes.assign(kMaxBlobBytes + 1, 'a');
  bad.artifacts[0].sha256 = sha256_hex(bad.artifacts[0].bytes);
  bad.operations[0].after_sha256 = bad.artifacts[0].sha256;
  ASSERT_ERR(store->seal(*id, bad), Code::ArtifactMismatch);
  // Nothing of the refused seals is left behind.
  auto s = store->summary(*id);
  ASSERT_OK(s);
  EXPECT_EQ(s->state, State::Proposing);
  ASSERT_OK(store->seal(*id, in));
  // The same plan twice is a conflict.
  auto id2 = store->begin_proposal({"org.dot.hello", testing::hex64('d'), 0});
  ASSERT_OK(id2);
  ASSERT_ERR(store->seal(*id2, in), Code::Conflict);
}

TEST_F(StoreLifecycle, PreCapabilityPlanHasNoLedger) {
  TxnId id = sealed(5, /*effects=*/false);
  ASSERT_OK(store->prepare(id, testing::make_backups(2)));
  ASSERT_OK(store->transition(id, State::Committing));
  ASSERT_OK(store->transition(id, State::Committed));
  ASSERT_ERR(store->effect_attempt(id, 0), Code::RecoveryRequired);
  ASSERT_OK(store->transition(id, State::Done));
  auto p = store->load_sealed(id);
  ASSERT_OK(p);
  EXPECT_FALSE(p->effect_count.has_value());
}

TEST_F(StoreLifecycle, TamperedPlanBytesAreRecoveryRequired) {
  TxnId id = sealed(6);
  raw("UPDATE plan SET canonical = CAST(replace(CAST(canonical AS TEXT), 'slot0', 'slotX') AS BLOB)");
  auto p = store->load_sealed(id);
  ASSERT_ERR(p, Code::RecoveryRequired);
  EXPECT_NE(p.error().detail.find("transaction 1"), std::string::npos) << p.error().detail;
  // Read as it streams, the edit is found at the end, against the plan id.
  PieceCounter text;
  auto read = store->read_plan_text(id, text);
  ASSERT_ERR(read, Code::RecoveryRequired);
  EXPECT_NE(read.error().detail.find("not to the plan id"), std::string::npos) << read.error().line();
  EXPECT_NE(text.bytes.find("slotX"), std::string::npos);
  // A sink's own refusal comes back as it is.
  struct Refusing final : ByteSink {
    Status write(std::string_view) override { return make_error(Code::Io, "the sink is full"); }
  } refusing;
  auto refused = store->read_plan_text(id, refusing);
  ASSERT_ERR(refused, Code::Io);
  auto none = store->read_plan_text(id + 100, text);
  ASSERT_ERR(none, Code::NotFound);
  auto c = store->check();
  ASSERT_OK(c);
  EXPECT_FALSE(c->problems.empty());
}

TEST_F(StoreLifecycle, TamperedArtifactAndBackupAreRecoveryRequired) {
  TxnId id = sealed(7);
  ASSERT_OK(store->prepare(id, testing::make_backups(2)));
  raw("UPDATE backup SET bytes = CAST('evil' AS BLOB) WHERE slot = 1");
  auto p = store->load_sealed(id);
  ASSERT_ERR(p, Code::RecoveryRequired);
  EXPECT_NE(p.error().detail.find("backup row for slot 1"), std::string::npos) << p.error().detail;
  raw("UPDATE backup SET bytes = CAST('old 1' || char(10) AS BLOB) WHERE slot = 1");
  ASSERT_OK(store->load_sealed(id));
  raw("UPDATE artifact SET bytes = CAST('evil' AS BLOB) WHERE slot = 0");
  auto q = store->load_sealed(id);
  ASSERT_ERR(q, Code::RecoveryRequired);
  EXPECT_NE(q.error().detail.find("artifact row for slot 0"), std::string::npos) << q.error().detail;
}

TEST_F(StoreLifecycle, LedgerRowOnPreCapabilityPlanIsTampering) {
  TxnId id = sealed(8, /*effects=*/false);
  auto plan_id = store->summary(id)->plan_id;
  raw(fmt::format("INSERT INTO effect VALUES ({}, 0, 'SUCCEEDED', '{}', 1, 0, NULL, NULL)", id,
                  effect_idempotency_key(plan_id, 0)));
  ASSERT_ERR(store->load_sealed(id), Code::RecoveryRequired);
  auto c = store->check();
  ASSERT_OK(c);
  EXPECT_FALSE(c->problems.empty());
}

TEST_F(StoreLifecycle, FindByPrefix) {
  TxnId a = sealed(10);
  TxnId b = sealed(11);
  auto pa = store->summary(a)->plan_id;
  auto pb = store->summary(b)->plan_id;
  auto fa = store->find(pa);
  ASSERT_OK(fa);
  EXPECT_EQ(*fa, a);
  auto fb = store->find(pb.substr(0, 8));
  ASSERT_OK(fb);
  EXPECT_EQ(*fb, b);
  std::string upper = pb.substr(0, 12);
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  ASSERT_OK(store->find(upper));
  ASSERT_ERR(store->find(pa.substr(0, 3)), Code::NotFound);
  // Four characters are enough when no other id starts with them.
  if (pa.substr(0, 4) != pb.substr(0, 4)) {
    auto short_a = store->find(pa.substr(0, 4));
    ASSERT_OK(short_a);
    EXPECT_EQ(*short_a, a);
  }
  ASSERT_ERR(store->find("zzzzzzzzzz"), Code::NotFound);
  ASSERT_ERR(store->find(testing::hex64('f')), Code::NotFound);
  // By proposal id when no plan id matches.
  auto prop = store->summary(a)->proposal_id;
  auto fp = store->find(prop.substr(0, 10));
  ASSERT_OK(fp);
  EXPECT_EQ(*fp, a);
}

TEST_F(StoreLifecycle, AmbiguousPrefixIsNotFound) {
  // Real plan ids practically never share 10 hex digits, so plant a row whose
  // plan id does.
  TxnId a = sealed(20);
  raw(
      fmt::format("INSERT INTO txn (state, plugin_id, plugin_digest, created_at_ms, updated_at_ms, plan_id) "
                  "VALUES ('ABANDONED', 'x', '{}', 0, 0, '{}')",
                  testing::hex64('d'), store->summary(a)->plan_id.substr(0, 10) + std::string(54, '0')));
  auto r = store->find(store->summary(a)->plan_id.substr(0, 10));
  ASSERT_ERR(r, Code::NotFound);
  EXPECT_EQ(r.error().kind, "ambiguous");
}

TEST_F(StoreLifecycle, ListNewestFirstAndByState) {
  TxnId a = sealed(30);
  TxnId b = sealed(31);
  auto c = store->begin_proposal({"org.dot.hello", testing::hex64('d'), 0});
  ASSERT_OK(c);
  ASSERT_OK(store->transition(a, State::Stale, "DOT_E_CONFLICT", "target changed"));
  auto all = store->list({});
  ASSERT_OK(all);
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].id, *c);
  EXPECT_EQ((*all)[1].id, b);
  EXPECT_EQ((*all)[2].id, a);
  EXPECT_EQ((*all)[2].code, "DOT_E_CONFLICT");
  auto sealed_only = store->list({State::Sealed, 10});
  ASSERT_OK(sealed_only);
  ASSERT_EQ(sealed_only->size(), 1u);
  EXPECT_EQ((*sealed_only)[0].id, b);
  auto one = store->list({std::nullopt, 1});
  ASSERT_OK(one);
  EXPECT_EQ(one->size(), 1u);
  auto count = store->count();
  ASSERT_OK(count);
  EXPECT_EQ(*count, 3u);
}

TEST_F(StoreLifecycle, InFlightListsUnfinishedTransactions) {
  TxnId a = sealed(40);
  TxnId b = sealed(41);
  ASSERT_OK(store->prepare(b, testing::make_backups(2)));
  auto f = store->in_flight();
  ASSERT_OK(f);
  ASSERT_EQ(f->size(), 1u);
  EXPECT_EQ((*f)[0].id, b);
  ASSERT_OK(store->transition(b, State::RollingBack));
  ASSERT_OK(store->transition(b, State::RolledBack, "DOT_E_CONFLICT", "rolled back"));
  f = store->in_flight();
  ASSERT_OK(f);
  EXPECT_TRUE(f->empty());
  (void)a;
}

TEST_F(StoreLifecycle, PluginRegistration) {
  auto none = store->plugin("org.dot.hello");
  ASSERT_OK(none);
  EXPECT_FALSE(none->has_value());
  PluginRecord r{"org.dot.hello", testing::hex64('1'), "{\"id\":\"org.dot.hello\"}", 0};
  ASSERT_OK(store->register_plugin(r, false));
  ASSERT_ERR(store->register_plugin(r, false), Code::Conflict);
  r.sha256 = testing::hex64('2');
  ASSERT_OK(store->register_plugin(r, true));
  auto got = store->plugin("org.dot.hello");
  ASSERT_OK(got);
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->sha256, testing::hex64('2'));
  EXPECT_EQ((*got)->manifest, r.manifest);
  EXPECT_GT((*got)->registered_at_ms, 0);
}

TEST_F(StoreLifecycle, SeveralPluginsEachUnderItsId) {
  // Schema version 4: one row per plugin id. Registering another id leaves
  // the first alone; replacing one touches only that one.
  PluginRecord hello{"org.dot.hello", testing::hex64('1'), "{\"id\":\"org.dot.hello\"}", 0};
  PluginRecord mirror{"org.dot.mirror", testing::hex64('3'), "{\"id\":\"org.dot.mirror\"}", 0};
  PluginRecord alpha{"com.alpha.tool", testing::hex64('4'), "{\"id\":\"com.alpha.tool\"}", 0};
  ASSERT_OK(store->register_plugin(hello, false));
  ASSERT_OK(store->register_plugin(mirror, false));
  ASSERT_OK(store->register_plugin(alpha, false));
  ASSERT_ERR(store->register_plugin(mirror, false), Code::Conflict);
  mirror.sha256 = testing::hex64('5');
  ASSERT_OK(store->register_plugin(mirror, true));
  auto all = store->plugins();
  ASSERT_OK(all);
  ASSERT_EQ(all->size(), 3u);
  // Byte order of the ids.
  EXPECT_EQ((*all)[0].plugin_id, "com.alpha.tool");
  EXPECT_EQ((*all)[1].plugin_id, "org.dot.hello");
  EXPECT_EQ((*all)[2].plugin_id, "org.dot.mirror");
  EXPECT_EQ((*all)[1].sha256, testing::hex64('1'));
  EXPECT_EQ((*all)[1].manifest, hello.manifest);
  EXPECT_EQ((*all)[2].sha256, testing::hex64('5'));
  auto none = store->plugin("org.dot.other");
  ASSERT_OK(none);
  EXPECT_FALSE(none->has_value());
}

TEST_F(StoreLifecycle, ReadOnlyStoreRefusesWrites) {
  OpenOptions ro;
  ro.read_only = true;
  auto s = Store::open(store->path(), ro);
  ASSERT_OK(s);
  ASSERT_ERR(s->begin_proposal({"x", testing::hex64('d'), 0}), Code::Internal);
  ASSERT_OK(s->list({}));
}

namespace {

std::string file_bytes(const std::string& path) {
  std::string out;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr) << path;
  if (!f) return out;
  char buf[65536];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  std::fclose(f);
  return out;
}

std::int64_t file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return -1;
  return st.st_size;
}

}  // namespace

// A read-only open reads committed frames from the WAL but never checkpoints
// them: closing it leaves the database file byte for byte as it was. The WAL
// files stay; a writer's close checkpoints and truncates the WAL to zero.
TEST_F(StoreLifecycle, ReadOnlyCloseNeverWritesTheDatabase) {
  TxnId id = sealed(1);
  const std::string db = store->path();
  store.reset();
  ASSERT_EQ(file_size(db + "-wal"), 0) << "a writer's close leaves an empty WAL";
  ASSERT_GE(file_size(db + "-shm"), 0) << "the -shm file stays";

  // A committed change still in the WAL, as a crashed writer leaves it.
  {
    sqlite3* raw_db = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &raw_db), SQLITE_OK);
    ASSERT_EQ(sqlite3_db_config(raw_db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr), SQLITE_OK);
    std::string sql = fmt::format("UPDATE txn SET updated_at_ms = 42 WHERE id = {}", id);
    ASSERT_EQ(sqlite3_exec(raw_db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw_db);
  }
  std::int64_t wal = file_size(db + "-wal");
  ASSERT_GT(wal, 0);
  const std::string before = file_bytes(db);

  // A reader sees the edited row and the whole detail; its close must write nothing.
  auto read_back = [&] {
    OpenOptions ro;
    ro.read_only = true;
    auto r = Store::open(db, ro);
    ASSERT_OK(r);
    auto t = r->summary(id);
    ASSERT_OK(t);
    EXPECT_EQ(t->updated_at_ms, 42);
    ASSERT_OK(r->detail(id));
  };
  read_back();
  EXPECT_TRUE(file_bytes(db) == before) << "closing a reader changed the database file";
  EXPECT_EQ(file_size(db + "-wal"), wal);

  {
    auto w = Store::open(db);
    ASSERT_OK(w);
  }
  EXPECT_EQ(file_size(db + "-wal"), 0);
  EXPECT_FALSE(file_bytes(db) == before) << "the writer's close checkpoints the WAL";
  read_back();
}

TEST_F(StoreLifecycle, PruneDropsBlobsOfOldFinishedOnly) {
  std::vector<TxnId> done;
  for (int i = 0; i < 3; ++i) {
    TxnId id = sealed(50 + i, false);
    ASSERT_OK(store->prepare(id, testing::make_backups(2)));
    ASSERT_OK(store->transition(id, State::Committing));
    ASSERT_OK(store->transition(id, State::Committed));
    ASSERT_OK(store->transition(id, State::Done));
    done.push_back(id);
  }
  TxnId waiting = sealed(60);
  TxnId flying = sealed(61);
  ASSERT_OK(store->prepare(flying, testing::make_backups(2)));
  auto r = store->prune(1);
  ASSERT_OK(r);
  EXPECT_EQ(r->pruned, 2u);
  ASSERT_ERR(store->load_sealed(done[0]), Code::NotFound);
  ASSERT_ERR(store->load_sealed(done[1]), Code::NotFound);
  ASSERT_OK(store->load_sealed(done[2]));
  ASSERT_OK(store->load_sealed(waiting));
  ASSERT_OK(store->load_sealed(flying));
  auto s = store->summary(done[0]);
  ASSERT_OK(s);
  EXPECT_TRUE(s->pruned);
  EXPECT_EQ(s->state, State::Done);
  auto c = store->check();
  ASSERT_OK(c);
  EXPECT_TRUE(c->problems.empty()) << c->problems.front();
  auto again = store->prune(1);
  ASSERT_OK(again);
  EXPECT_EQ(again->pruned, 0u);
}

// ---- path ownership ---------------------------------------------------------

class StoreOwnership : public StoreLifecycle {
 protected:
  // One transaction of `plugin` operating on `paths` (each a write, or a
  // remove when its name starts with '-': its operation row's after digest
  // is "", as a version-2 remove's is), taken up to `to` through the API.
  TxnId run(const std::string& plugin, const std::vector<std::string>& paths, State to) {
    auto id = store->begin_proposal({plugin, testing::hex64('d'), 0});
    EXPECT_TRUE(id.ok());
    SealInput in;
    in.proposal_id = sha256_hex(fmt::format("proposal {}", ++n_));
    std::vector<std::string> removes;
    std::string doc;
    for (std::size_t i = 0; i < paths.size(); ++i) {
      std::string path = paths[i];
      if (path.front() == '-') removes.push_back(path = path.substr(1));
      Blob a;
      a.slot = static_cast<std::uint32_t>(i);
      a.bytes = fmt::format("{} of plan {}\n", path, n_);
      a.sha256 = sha256_hex(a.bytes);
      in.operations.push_back({path, "", a.sha256});
      in.artifacts.push_back(a);
      doc += path + a.sha256;
    }
    in.canonical_plan = fmt::format("{{\"n\":{},\"ops\":\"{}\"}}", n_, sha256_hex(doc));
    in.plan_id = sha256_hex(in.canonical_plan);
    EXPECT_TRUE(store->set_proposal_id(*id, in.proposal_id).ok());
    auto sealed = store->seal(*id, in);
    EXPECT_TRUE(sealed.ok()) << sealed.error().line();
    // The version-1 seal stores a write per operation; a version-2 remove's
    // row has no after digest.
    for (const auto& r : removes)
      raw(fmt::format("UPDATE operation SET after_sha256 = '' WHERE txn_id = {} AND name = '{}'", *id, r));
    if (to == State::Sealed) return *id;
    EXPECT_TRUE(store->prepare(*id, testing::make_backups(paths.size())).ok());
    for (State s : {State::Committing, State::Committed, State::Done}) {
      if (to == State::Prepared) break;
      auto t = store->transition(*id, s);
      EXPECT_TRUE(t.ok()) << t.error().line();
      if (s == to) break;
    }
    return *id;
  }
  std::vector<std::string> owned(const std::string& plugin) {
    auto r = store->owned_paths(plugin);
    EXPECT_TRUE(r.ok()) << r.error().line();
    return r.ok() ? *r : std::vector<std::string>{"<error>"};
  }
  std::string problems() {
    auto c = store->check();
    if (!c.ok()) return c.error().line();
    std::string out;
    for (const auto& p : c->problems) out += p + "\n";
    return out;
  }
  using Paths = std::vector<std::string>;
  int n_ = 0;
};

TEST_F(StoreOwnership, CommittedWritesOwnRemovesReleaseRollbacksRestore) {
  EXPECT_EQ(owned("org.example.a"), Paths{});
  // Paths in UTF-8 byte order: "Z" < "a" < "a/z" < "b" < "é".
  TxnId t1 = run("org.example.a", {"b", "a/z", "\xc3\xa9", "Z", "a"}, State::Done);
  EXPECT_EQ(owned("org.example.a"), (Paths{"Z", "a", "a/z", "b", "\xc3\xa9"}));
  // Only COMMITTED and DONE count: a sealed, a prepared and a committing
  // transaction own nothing yet.
  run("org.example.b", {"s"}, State::Sealed);
  run("org.example.b", {"p"}, State::Prepared);
  TxnId committing = run("org.example.b", {"c"}, State::Committing);
  EXPECT_EQ(owned("org.example.b"), Paths{});
  ASSERT_OK(store->transition(committing, State::Committed));
  EXPECT_EQ(owned("org.example.b"), Paths{"c"});
  ASSERT_OK(store->transition(committing, State::Done));
  // A removal releases the path; the other paths stay owned.
  TxnId t3 = run("org.example.a", {"-b"}, State::Done);
  EXPECT_EQ(owned("org.example.a"), (Paths{"Z", "a", "a/z", "\xc3\xa9"}));
  // The store keeps what was applied; the planner refuses another plugin's
  // path before sealing (check_ownership). Here b writes a's "a".
  TxnId t4 = run("org.example.b", {"a"}, State::Done);
  EXPECT_EQ(owned("org.example.a"), (Paths{"Z", "a/z", "\xc3\xa9"}));
  EXPECT_EQ(owned("org.example.b"), (Paths{"a", "c"}));
  const std::vector<std::string_view> asked{"zz", "a", "Z", "b", "c"};
  auto owners = store->owners_of(asked);
  ASSERT_OK(owners);
  EXPECT_EQ(*owners, (std::vector<PathOwner>{
                         {"a", "org.example.b", t4}, {"Z", "org.example.a", t1}, {"c", "org.example.b", committing}}));
  // What a plan of b asks: only the paths another plugin owns.
  auto others = store->owners_of(asked, "org.example.b");
  ASSERT_OK(others);
  EXPECT_EQ(*others, (std::vector<PathOwner>{{"Z", "org.example.a", t1}}));
  // Rolling t4 back gives "a" back to a, in the ROLLING_BACK transition.
  ASSERT_OK(store->transition(t4, State::RollingBack));
  EXPECT_EQ(owned("org.example.a"), (Paths{"Z", "a", "a/z", "\xc3\xa9"}));
  EXPECT_EQ(owned("org.example.b"), Paths{"c"});
  ASSERT_OK(store->transition(t4, State::RolledBack));
  EXPECT_EQ(owned("org.example.b"), Paths{"c"});
  // Rolling the removal back makes "b" a's again.
  ASSERT_OK(store->transition(t3, State::RollingBack));
  ASSERT_OK(store->transition(t3, State::RolledBack));
  EXPECT_EQ(owned("org.example.a"), (Paths{"Z", "a", "a/z", "b", "\xc3\xa9"}));
  // A transaction rolled back before it committed never counted.
  TxnId never = run("org.example.c", {"n"}, State::Prepared);
  ASSERT_OK(store->transition(never, State::RollingBack));
  ASSERT_OK(store->transition(never, State::RolledBack));
  EXPECT_EQ(owned("org.example.c"), Paths{});
  EXPECT_EQ(problems(), "");
  // Pruning keeps the operation rows: ownership is unchanged and checks clean.
  ASSERT_OK(store->prune(0));
  EXPECT_EQ(owned("org.example.a"), (Paths{"Z", "a", "a/z", "b", "\xc3\xa9"}));
  EXPECT_EQ(problems(), "");
}

// forget / unregister --forget: a released path is unowned until a later
// applied transaction operates on it, whatever is rolled back meanwhile;
// the view and the table agree throughout.
TEST_F(StoreOwnership, AReleasedPathStaysUnownedUntilALaterCommitOwnsIt) {
  TxnId t1 = run("org.example.a", {"x", "y"}, State::Done);
  auto none = store->release_paths({"y", "nobody"});
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(none.error().is(ErrorKind::NotOwned)) << none.error().line();
  EXPECT_EQ(owned("org.example.a"), (Paths{"x", "y"}));  // all or nothing
  auto released = store->release_paths({"y"});
  ASSERT_OK(released);
  EXPECT_EQ(*released, (std::vector<PathOwner>{{"y", "org.example.a", t1}}));
  EXPECT_EQ(owned("org.example.a"), Paths{"x"});
  EXPECT_EQ(problems(), "");
  auto map = store->released_paths();
  ASSERT_OK(map);
  EXPECT_EQ(map->at("y"), t1);
  // A later write owns it again; rolling that back leaves it released.
  TxnId t2 = run("org.example.b", {"y"}, State::Done);
  EXPECT_EQ(owned("org.example.b"), Paths{"y"});
  EXPECT_EQ(problems(), "");
  ASSERT_OK(store->transition(t2, State::RollingBack));
  ASSERT_OK(store->transition(t2, State::RolledBack));
  EXPECT_EQ(owned("org.example.a"), Paths{"x"});
  EXPECT_EQ(owned("org.example.b"), Paths{});
  EXPECT_EQ(problems(), "");
}

TEST_F(StoreOwnership, UnregisterReleasesOnlyWhenAskedAndNeverWithASealedPlan) {
  PluginRecord rec{"org.example.a", std::string(64, 'a'), "{}"};
  ASSERT_OK(store->register_plugin(rec, false));
  run("org.example.a", {"x"}, State::Done);
  auto owns = store->unregister_plugin("org.example.a", false);
  ASSERT_FALSE(owns.ok());
  EXPECT_TRUE(owns.error().is(ErrorKind::PluginOwnsPaths)) << owns.error().line();
  TxnId sealed = run("org.example.a", {"z"}, State::Sealed);
  auto busy = store->unregister_plugin("org.example.a", true);
  ASSERT_FALSE(busy.ok());
  EXPECT_TRUE(busy.error().is(ErrorKind::PluginBusy)) << busy.error().line();
  ASSERT_OK(store->transition(sealed, State::Discarded));
  auto done = store->unregister_plugin("org.example.a", true);
  ASSERT_OK(done);
  EXPECT_EQ(done->size(), 1u);
  EXPECT_EQ(owned("org.example.a"), Paths{});
  auto row = store->plugin("org.example.a");
  ASSERT_OK(row);
  EXPECT_FALSE(row->has_value());
  auto again = store->unregister_plugin("org.example.a", true);
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(again.error().is(ErrorKind::NoSuchPlugin)) << again.error().line();
  EXPECT_EQ(problems(), "");
}

TEST_F(StoreOwnership, OnePathsOwnerIsAnIndexRangeNotAHistoryScan) {
  // What transition() re-derives per path, and the migration and the check
  // read whole: the view with `path = ?` must reach operation_by_name, never
  // scan the operation or txn tables (100,000 transactions would then cost
  // every commit their whole history).
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(store->path().c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(
      sqlite3_prepare_v2(db, "EXPLAIN QUERY PLAN SELECT path, plugin_id, txn_id FROM derived_owner WHERE path = 'x'",
                         -1, &st, nullptr),
      SQLITE_OK);
  std::string plan;
  while (sqlite3_step(st) == SQLITE_ROW)
    plan += std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 3))) + "\n";
  sqlite3_finalize(st);
  sqlite3_close(db);
  EXPECT_NE(plan.find("operation_by_name (name=?)"), std::string::npos) << plan;
  // Probes only: the applied operation row by (name, txn_id), never every
  // operation of its transaction (schema 6 walked the primary key's txn_id
  // range: a 10,000-operation commit cost 10^8 rows), and the path's own row
  // without visiting its history (schema 6 materialized a DISTINCT over every
  // operation ever made on the path).
  EXPECT_NE(plan.find("SEARCH o USING INDEX operation_by_name (name=? AND txn_id=?)"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("PRIMARY KEY (txn_id=?)"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("MATERIALIZE"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("SCAN "), std::string::npos) << plan;
  EXPECT_EQ(plan.find("SCAN operation"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("SCAN t"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("txn_by_state"), std::string::npos) << plan;
}

TEST_F(StoreOwnership, CheckReportsAKeptOwnerTheOperationsDoNotSay) {
  run("org.example.a", {"x", "y"}, State::Done);
  EXPECT_EQ(problems(), "");
  raw("UPDATE path_owner SET plugin_id = 'org.example.evil' WHERE path = 'x'");
  raw("DELETE FROM path_owner WHERE path = 'y'");
  const std::string p = problems();
  EXPECT_NE(p.find("\"x\" is kept as owned by org.example.evil"), std::string::npos) << p;
  EXPECT_NE(p.find("\"x\" is owned by org.example.a"), std::string::npos) << p;
  EXPECT_NE(p.find("\"y\" is owned by org.example.a"), std::string::npos) << p;
}

// A no-change proposal's large document is dropped when it is abandoned so;
// its id stays.
TEST_F(StoreLifecycle, AnAbandonmentCanDropTheProposalDocument) {
  auto id = store->begin_proposal({"org.dot.hello", testing::hex64('d'), 0});
  ASSERT_OK(id);
  const std::string doc = "{\"paths\":\"" + std::string(100000, 'p') + "\"}";
  ASSERT_OK(store->set_proposal_id(*id, sha256_hex(doc), doc));
  Abandonment why{std::string(kNoChangesCode), "nothing to do", ""};
  why.drop_proposal = true;
  ASSERT_OK(store->abandon(*id, why));
  auto d = store->detail(*id);
  ASSERT_OK(d);
  EXPECT_TRUE(d->proposal_document.empty());
  EXPECT_EQ(d->summary.proposal_id, sha256_hex(doc));
  auto check = store->check();
  ASSERT_OK(check);
  EXPECT_TRUE(check->problems.empty()) << check->problems.front();
}

// prune gives the space it freed back to the file system, and switches a
// store made before incremental auto-vacuum to it (one VACUUM).
TEST_F(StoreLifecycle, PruneGivesTheFreedSpaceBackAndSwitchesAnOlderStoreToIncrementalVacuum) {
  auto mode = [&] {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(store->path().c_str(), &db), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, "PRAGMA auto_vacuum", -1, &s, nullptr), SQLITE_OK);
    EXPECT_EQ(sqlite3_step(s), SQLITE_ROW);
    const int m = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return m;
  };
  EXPECT_EQ(mode(), 2);  // incremental, from create
  raw("PRAGMA auto_vacuum = NONE; VACUUM;");
  ASSERT_EQ(mode(), 0);
  for (int i = 0; i < 40; ++i) {
    auto id = store->begin_proposal({"org.dot.hello", testing::hex64('d'), 0});
    ASSERT_OK(id);
    ASSERT_OK(store->abandon(*id, {"DOT_E_PROTOCOL", "noisy", std::string(60000, static_cast<char>('a' + i % 26))}));
  }
  auto bytes = [&] {
    struct stat db {};
    struct stat wal {};
    EXPECT_EQ(::stat(store->path().c_str(), &db), 0);
    const std::string wal_path = store->path() + "-wal";
    return db.st_size + (::stat(wal_path.c_str(), &wal) == 0 ? wal.st_size : 0);
  };
  raw("PRAGMA wal_checkpoint(TRUNCATE)");
  const auto before = bytes();
  ASSERT_GT(before, 40 * 60000);
  auto pruned = store->prune(0);
  ASSERT_OK(pruned);
  EXPECT_EQ(pruned->pruned, 40u);
  EXPECT_LT(bytes(), before / 4);
  EXPECT_EQ(mode(), 2);
  EXPECT_EQ(points.back(), "store.prune.vacuum");
  auto check = store->check();
  ASSERT_OK(check);
  EXPECT_TRUE(check->problems.empty()) << check->problems.front();
}

}  // namespace
}  // namespace dot::store
