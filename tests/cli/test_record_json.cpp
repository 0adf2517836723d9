// The JSON writers of the command line, one per record type (cli/store_json.h,
// cli/engine_json.h): each record's exact bytes, so a shape documented in
// docs/store.md or docs/engine.md cannot change by accident.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "dot/base/sha256.h"
#include "dot/base/utf8.h"
#include "engine_json.h"
#include "store_json.h"

namespace dot::cli {
namespace {

template <typename Write>
std::string json_of(Write&& write) {
  JsonWriter w;
  write(w);
  return w.text();
}

store::TxnSummary sealed_summary() {
  store::TxnSummary t;
  t.id = 3;
  t.state = store::State::Sealed;
  t.plan_id = "ab12";
  t.plugin_id = "org.dot.hello";
  t.created_at_ms = 1000;
  t.operation_count = 2;
  t.effect_count = 1;
  return t;
}

TEST(StoreRecordJson, TimeIsRfc3339OrNull) {
  EXPECT_EQ(json_of([](JsonWriter& w) { write_time_or_null(w, 0); }), "null");
  EXPECT_EQ(json_of([](JsonWriter& w) { write_time_or_null(w, 1700000000123); }), "\"2023-11-14T22:13:20.123Z\"");
}

TEST(StoreRecordJson, SummaryRow) {
  EXPECT_EQ(json_of([](JsonWriter& w) { write_summary(w, sealed_summary()); }),
            "{\"id\":3,\"plan_id\":\"ab12\",\"proposal_id\":null,\"state\":\"SEALED\","
            "\"created_at\":\"1970-01-01T00:00:01.000Z\",\"updated_at\":null,\"plugin_id\":\"org.dot.hello\","
            "\"code\":null,\"operation_count\":2,\"effect_count\":1,\"pruned\":false,\"status\":\"SEALED\"}");
  store::TxnSummary t;  // a proposal without a plan: no effect count, its code
  t.id = 1;
  t.state = store::State::Abandoned;
  t.proposal_id = "cd";
  t.code = "NO_CHANGES";
  t.pruned = true;
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_summary(w, t); }),
            "{\"id\":1,\"plan_id\":null,\"proposal_id\":\"cd\",\"state\":\"ABANDONED\",\"created_at\":null,"
            "\"updated_at\":null,\"plugin_id\":\"\",\"code\":\"NO_CHANGES\",\"operation_count\":0,"
            "\"effect_count\":null,\"pruned\":true,\"status\":\"NO_CHANGES\"}");
}

TEST(StoreRecordJson, BriefTransactionWithAndWithoutState) {
  store::TxnSummary t = sealed_summary();
  t.state = store::State::Committed;
  t.effect_failed = true;
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_txn_brief(w, t, false); }),
            "{\"plan_id\":\"ab12\",\"plugin_id\":\"org.dot.hello\",\"proposal_id\":null,"
            "\"status\":\"POST_COMMIT_FAILED\"}");
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_txn_brief(w, t, true); }),
            "{\"plan_id\":\"ab12\",\"plugin_id\":\"org.dot.hello\",\"proposal_id\":null,\"state\":\"COMMITTED\","
            "\"status\":\"POST_COMMIT_FAILED\"}");
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_sealed_txn(w, t); }),
            "{\"plan_id\":\"ab12\",\"plugin_id\":\"org.dot.hello\"}");
}

TEST(StoreRecordJson, EventEffectOperationLog) {
  store::Event e{7, store::State::Done, 1000, "", "line\nbreak"};
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_event(w, e); }),
            "{\"seq\":7,\"state\":\"DONE\",\"at\":\"1970-01-01T00:00:01.000Z\",\"code\":null,"
            "\"detail\":\"line\\nbreak\"}");
  store::EffectEntry f{0, store::EffectState::Failed, "k", 2, 0, "DOT_E_IO", ""};
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_effect_entry(w, f); }),
            "{\"index\":0,\"state\":\"FAILED\",\"idempotency_key\":\"k\",\"attempts\":2,\"updated_at\":null,"
            "\"code\":\"DOT_E_IO\",\"detail\":null}");
  store::OperationSummary op{"hello.txt", "", "ff"};
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_operation_summary(w, 4, op); }),
            "{\"slot\":4,\"name\":\"hello.txt\",\"before_sha256\":\"\",\"after_sha256\":\"ff\"}");
  store::LogRecord l{"info", "m\x01", "dot.plan"};
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_log(w, l); }),
            "{\"level\":\"info\",\"message\":\"m\\u0001\",\"method\":\"dot.plan\"}");
  EXPECT_EQ(json_of([&](JsonWriter& w) {
              w.begin_object();
              write_logs_member(w, {l, l});
              w.end_object();
            }),
            "{\"logs\":[{\"level\":\"info\",\"message\":\"m\\u0001\",\"method\":\"dot.plan\"},"
            "{\"level\":\"info\",\"message\":\"m\\u0001\",\"method\":\"dot.plan\"}]}");
}

// The plan bytes are given raw only when they hash to the plan id; the
// proposal document that does not is given as text.
TEST(StoreRecordJson, DetailVerifiesItsDocuments) {
  store::TxnDetail d;
  d.summary = sealed_summary();
  d.canonical_plan = "{\"v\":1}";
  d.summary.plan_id = sha256_hex(d.canonical_plan);
  d.summary.proposal_id = "00";
  d.proposal_document = "{\"p\":2}";
  d.plugin_stderr = "err";
  d.plugin_stderr_truncated = true;
  d.has_backups = true;
  d.operations = {{"a.txt", "", "ee"}};
  const std::string json = json_of([&](JsonWriter& w) { write_txn_detail(w, d); });
  const std::string id = d.summary.plan_id;
  EXPECT_EQ(json, "{\"id\":3,\"plan_id\":\"" + id +
                      "\",\"proposal_id\":\"00\",\"state\":\"SEALED\",\"created_at\":\"1970-01-01T00:00:01.000Z\","
                      "\"updated_at\":null,\"plugin_id\":\"org.dot.hello\",\"code\":null,\"operation_count\":2,"
                      "\"effect_count\":1,\"pruned\":false,\"status\":\"SEALED\",\"plugin_digest\":null,"
                      "\"started_at\":null,\"finished_at\":null,\"detail\":null,\"plan\":{\"v\":1},"
                      "\"plan_verified\":true,\"proposal\":null,\"proposal_verified\":false,"
                      "\"proposal_text\":\"{\\\"p\\\":2}\",\"operations\":[{\"slot\":0,\"name\":\"a.txt\","
                      "\"before_sha256\":\"\",\"after_sha256\":\"ee\"}],\"effects\":[],\"events\":[],"
                      "\"backups\":true,\"logs\":[],\"plugin_stderr\":\"err\",\"plugin_stderr_truncated\":true}");
}

core::Snapshot file_snapshot(char digit) {
  core::Snapshot s;
  s.exists = true;
  s.mode = 0644;
  s.sha256 = *Sha256Digest::from_hex(std::string(64, digit));
  return s;
}

const std::string kAbsent = "{\"exists\":false,\"gid\":0,\"mode\":0,\"sha256\":\"\",\"uid\":0}";
std::string present(char digit) {
  return "{\"exists\":true,\"gid\":0,\"mode\":420,\"sha256\":\"" + std::string(64, digit) + "\",\"uid\":0}";
}

TEST(EngineRecordJson, Snapshot) {
  EXPECT_EQ(json_of([](JsonWriter& w) { write_snapshot(w, core::Snapshot::absent()); }), kAbsent);
  EXPECT_EQ(json_of([](JsonWriter& w) { write_snapshot(w, file_snapshot('a')); }), present('a'));
}

TEST(EngineRecordJson, RecoveryReportAndRecoveredTransaction) {
  core::RecoveredTxn t{"", store::State::Proposing, store::State::Abandoned, "abandoned"};
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_recovered_txn(w, t); }),
            "{\"action\":\"abandoned\",\"from\":\"PROPOSING\",\"plan_id\":null,\"to\":\"ABANDONED\"}");
  core::RecoveryReport r;
  r.transactions = {t};
  r.temp_files_removed = 2;
  r.left_alone = {{".x.tmp", "not ours"}};
  r.stages = {{".dot/stage-1", 3}};
  r.stages_removed = 1;
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_recovery_report(w, r); }),
            "{\"changed\":true,\"left_alone\":[{\"name\":\".x.tmp\",\"why\":\"not ours\"}],"
            "\"stages\":[{\"entries\":3,\"name\":\".dot/stage-1\"}],\"stages_removed\":1,\"temp_files_removed\":2,"
            "\"transactions\":[{\"action\":\"abandoned\",\"from\":\"PROPOSING\",\"plan_id\":null,"
            "\"to\":\"ABANDONED\"}]}");
  EXPECT_EQ(json_of([](JsonWriter& w) { write_recovery_report(w, core::RecoveryReport{}); }),
            "{\"changed\":false,\"left_alone\":[],\"stages\":[],\"stages_removed\":0,\"temp_files_removed\":0,"
            "\"transactions\":[]}");
}

core::Manifest mirror_manifest() {
  core::Manifest m;
  m.assurance = "process";
  m.id = "org.dot.mirror";
  m.profile = "org.dot.dpp/v1";
  m.sha256 = "5e";
  m.inputs = {"/home/me/dotfiles"};
  return m;
}

TEST(EngineRecordJson, RegistrationAndListedPlugin) {
  core::Registration r{mirror_manifest(), true};
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_registration(w, r); }),
            "{\"assurance\":\"process\",\"id\":\"org.dot.mirror\",\"inputs\":[\"/home/me/dotfiles\"],"
            "\"profile\":\"org.dot.dpp/v1\",\"protocol\":1,\"replaced\":true,\"sha256\":\"5e\"}");
  core::ListedPlugin p;
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_listed_plugin(w, p); }), "null");
  p.manifest = mirror_manifest();
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_listed_plugin(w, p); }),
            "{\"assurance\":\"process\",\"id\":\"org.dot.mirror\",\"inputs\":[\"/home/me/dotfiles\"],"
            "\"profile\":\"org.dot.dpp/v1\",\"sha256\":\"5e\"}");
}

TEST(EngineRecordJson, DriftApplyDiscardPlanId) {
  core::Drift d{"a.txt", core::DriftReason::Mode, "ab", "mode 0600"};
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_drift(w, d); }),
            "{\"name\":\"a.txt\",\"plan_id\":\"ab\",\"reason\":\"mode\"}");
  core::ApplyOutcome a;
  a.plan_id = "ab";
  a.slots = 2;
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_apply_outcome(w, a); }),
            "{\"operations\":2,\"plan_id\":\"ab\",\"state\":\"DONE\"}");
  EXPECT_EQ(json_of([](JsonWriter& w) { write_discarded(w, "ab"); }), "{\"plan_id\":\"ab\",\"state\":\"DISCARDED\"}");
  core::PlanDocument doc;
  doc.plan_id = "p1";
  doc.proposal_id = "q1";
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_plan_document_ids(w, doc); }),
            "{\"matches\":null,\"plan_id\":\"p1\",\"proposal_id\":\"q1\"}");
  doc.claimed_plan_id = "p1";
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_plan_document_ids(w, doc); }),
            "{\"matches\":true,\"plan_id\":\"p1\",\"proposal_id\":\"q1\"}");
}

// A version-1 plan: its effects, each operation with its diff, or null and
// binary for a diff that is not UTF-8.
TEST(EngineRecordJson, HelloPlan) {
  core::PlanOutcome p;
  p.plan_id = "ab";
  p.plan.proposal_id = "cd";
  p.plan.effects = std::vector<core::Effect>{core::root_sync_effect()};
  p.plan.operations = {{file_snapshot('b'), core::Snapshot::absent(), "a.txt"},
                       {file_snapshot('c'), core::Snapshot::absent(), "b.txt"}};
  p.slots = {{"a.txt", "", "hi\n"}, {"b.txt", "", "\xff\n"}};
  const std::string diff = core::unified_diff(p.slots[0]);
  std::string diff_json;
  append_json_string(diff_json, diff);
  const core::Effect e = core::root_sync_effect();
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_hello_plan(w, p); }),
            "{\"effects\":[{\"failure_policy\":\"" + e.failure_policy + "\",\"kind\":\"" + e.kind + "\",\"target\":\"" +
                e.target + "\"}],\"operations\":[{\"after\":" + present('b') + ",\"before\":" + kAbsent +
                ",\"binary\":false,\"diff\":" + diff_json +
                ",\"name\":\"a.txt\",\"slot\":0},{\"after\":" + present('c') + ",\"before\":" + kAbsent +
                ",\"binary\":true,\"diff\":null,\"name\":\"b.txt\",\"slot\":1}],\"plan_id\":\"ab\","
                "\"proposal_id\":\"cd\",\"state\":\"SEALED\"}");
  p.no_changes = true;
  p.plan_id.clear();
  EXPECT_NE(json_of([&](JsonWriter& w) {
              write_hello_plan(w, p);
            }).find("\"plan_id\":null,\"proposal_id\":\"cd\",\"state\":\"NO_CHANGES\"}"),
            std::string::npos);
}

// A version-2 plan: folders, logs, each operation (a diff for text, binary
// for the rest, neither for a removal), its ids and version.
TEST(EngineRecordJson, GeneralPlan) {
  core::PlanOutcome p;
  p.version = core::kPlanVersion2;
  p.plan_id = "ab";
  p.plan_v2.proposal_id = "cd";
  p.plan_v2.directories = {core::Folder{0700, "conf"}};
  p.logs = {{"warning", "w", "dot.plan"}};
  core::PathOperation text_op{core::Action::Write, file_snapshot('d'), core::Snapshot::absent(), "conf/a"};
  core::PathSlot text;
  text.keep_after("x\n");
  core::PathOperation binary_op = text_op;
  binary_op.path = "conf/b";
  core::PathSlot binary = text;
  binary.keep_after(std::string("\0", 1));
  binary.take_over = true;
  p.plan_v2.exclude = {"*.swp"};
  p.excluded = 2;
  core::PathOperation removed_op{core::Action::Remove, core::Snapshot::absent(), file_snapshot('e'), "old"};
  core::PathSlot removed;
  p.plan_v2.operations = {text_op, binary_op, removed_op};
  p.path_slots = {text, binary, removed};
  EXPECT_TRUE(diffable(text_op, text));
  EXPECT_FALSE(diffable(binary_op, binary));
  EXPECT_FALSE(diffable(removed_op, removed));
  std::string diff_json;
  append_json_string(diff_json, core::unified_diff(core::PlannedSlot{"conf/a", "", "x\n"}));
  EXPECT_EQ(
      json_of([&](JsonWriter& w) { write_general_plan(w, p); }),
      "{\"directories\":[{\"mode\":448,\"path\":\"conf\"}],\"exclude\":[\"*.swp\"],\"excluded\":2,\"logs\":[{\"level\":"
      "\"warning\",\"message\":\"w\","
      "\"method\":\"dot.plan\"}],\"operations\":[{\"action\":\"write\",\"after\":" +
          present('d') + ",\"before\":" + kAbsent + ",\"binary\":false,\"diff\":" + diff_json +
          ",\"path\":\"conf/a\",\"take_over\":false},{\"action\":\"write\",\"after\":" + present('d') +
          ",\"before\":" + kAbsent +
          ",\"binary\":true,\"diff\":null,\"path\":\"conf/b\",\"take_over\":true},{\"action\":\"remove\",\"after\":" +
          kAbsent + ",\"before\":" + present('e') +
          ",\"binary\":false,\"diff\":null,\"path\":\"old\",\"take_over\":false}],"
          "\"plan_id\":\"ab\",\"proposal_id\":\"cd\",\"state\":\"SEALED\",\"version\":2}");
}

// A writer that spills hands its document over in pieces as it grows, and
// the pieces and the rest are exactly the document a writer that holds it
// whole writes; none of them is much beyond kSpillBytes.
TEST(JsonWriterSpill, HandsALongDocumentOverInPiecesThatMakeTheSameBytes) {
  auto write = [](JsonWriter& w) {
    w.begin_object().key("operations").begin_array();
    for (int i = 0; i < 20000; ++i)
      w.begin_object().key("path").string("dir/file-" + std::to_string(i)).key("n").number(i).end_object();
    w.end_array().key("state").string("SEALED").end_object();
  };
  JsonWriter whole;
  write(whole);
  std::string spilled;
  std::size_t pieces = 0, largest = 0;
  JsonWriter spilling([&](std::string_view piece) {
    spilled += piece;
    ++pieces;
    largest = std::max(largest, piece.size());
    return true;
  });
  write(spilling);
  EXPECT_LT(spilling.text().size(), JsonWriter::kSpillBytes + 64);
  EXPECT_EQ(spilled + std::move(spilling).line(), std::move(whole).line());
  EXPECT_GT(pieces, 5u);
  EXPECT_LT(largest, JsonWriter::kSpillBytes + 64);
}

// A failed spill (stdout closed) is remembered; nothing more is handed over.
TEST(JsonWriterSpill, AFailedSpillStopsTheHandingOver) {
  std::size_t calls = 0;
  JsonWriter w([&](std::string_view) {
    ++calls;
    return false;
  });
  w.begin_array();
  for (int i = 0; i < 50000; ++i) w.string("0123456789");
  w.end_array();
  EXPECT_EQ(calls, 1u);
  EXPECT_FALSE(w.spilled_ok());
  EXPECT_TRUE(JsonWriter().spilled_ok());
}

TEST(EngineRecordJson, Status) {
  core::StatusView v;
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_status(w, "/r", "id", v); }),
            "{\"drift\":[],\"last\":null,\"plugin\":null,\"plugins\":[],\"recovery_required\":false,\"root\":\"/r\","
            "\"root_id\":\"id\",\"sealed\":[],\"transactions\":0,\"unfinished\":[]}");
  core::ListedPlugin p;
  p.manifest = mirror_manifest();
  v.plugins = {p};
  v.unfinished = {sealed_summary()};
  v.unfinished[0].state = store::State::Prepared;
  v.sealed = {sealed_summary()};
  v.newest = sealed_summary();
  v.transactions = 5;
  v.drift = {{"a.txt", core::DriftReason::Missing, "ab", "nothing"}};
  const std::string manifest =
      "{\"assurance\":\"process\",\"id\":\"org.dot.mirror\",\"inputs\":[\"/home/me/dotfiles\"],"
      "\"profile\":\"org.dot.dpp/v1\",\"sha256\":\"5e\"}";
  EXPECT_EQ(json_of([&](JsonWriter& w) { write_status(w, "/r", "id", v); }),
            "{\"drift\":[{\"name\":\"a.txt\",\"plan_id\":\"ab\",\"reason\":\"missing\"}],\"last\":{\"plan_id\":"
            "\"ab12\",\"plugin_id\":\"org.dot.hello\",\"proposal_id\":null,\"status\":\"SEALED\"},\"plugin\":" +
                manifest + ",\"plugins\":[" + manifest +
                "],\"recovery_required\":true,\"root\":\"/r\","
                "\"root_id\":\"id\",\"sealed\":[{\"plan_id\":\"ab12\",\"plugin_id\":\"org.dot.hello\"}],"
                "\"transactions\":5,\"unfinished\":[{\"plan_id\":\"ab12\",\"plugin_id\":\"org.dot.hello\","
                "\"proposal_id\":null,\"state\":\"PREPARED\",\"status\":\"PREPARED\"}]}");
  v.plugins.push_back(p);  // several plugins: "plugin" is null
  EXPECT_NE(json_of([&](JsonWriter& w) { write_status(w, "/r", "id", v); }).find("\"plugin\":null,"),
            std::string::npos);
}

}  // namespace
}  // namespace dot::cli
