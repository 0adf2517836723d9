#include <gtest/gtest.h>

#include "dot/base/sha256.h"
#include "dot/core/plan.h"
#include "dot/core/plan_document.h"

namespace dot::core {
namespace {

std::string hex(char c) { return std::string(64, c); }
// The digest spelled as 64 times `c`.
Sha256Digest digest(char c) { return *Sha256Digest::from_hex(hex(c)); }

Plan sample_plan() {
  Plan p;
  p.effects = std::vector<Effect>{root_sync_effect()};
  p.nonce = hex('a');
  p.plugin_digest = hex('b');
  p.root_id = hex('c');
  Operation hello;
  hello.name = "hello.txt";
  hello.before = Snapshot::absent();
  hello.after = Snapshot{.exists = true, .mode = 384, .sha256 = digest('d'), .gid = 0, .uid = 0};
  Operation welcome;
  welcome.name = "welcome.txt";
  welcome.before = Snapshot{.exists = true, .mode = 384, .sha256 = digest('e'), .gid = 1000, .uid = 1000};
  welcome.after = Snapshot{.exists = true, .mode = 384, .sha256 = digest('f'), .gid = 0, .uid = 0};
  p.operations = {hello, welcome};
  auto pid = compute_proposal_id(p);
  EXPECT_TRUE(pid.ok());
  p.proposal_id = *pid;
  return p;
}

TEST(PlanModel, CanonicalBytesHaveTheSpecKeyOrder) {
  Plan p = sample_plan();
  auto bytes = canonical_bytes(p);
  ASSERT_TRUE(bytes.ok()) << bytes.error().line();
  std::string expected =
      "{\"effects\":[{\"failure_policy\":\"required\",\"kind\":\"sync\",\"target\":\"managed-root\"}],"
      "\"nonce\":\"" +
      hex('a') +
      "\",\"operations\":["
      "{\"after\":{\"exists\":true,\"gid\":0,\"mode\":384,\"sha256\":\"" +
      hex('d') +
      "\",\"uid\":0},"
      "\"before\":{\"exists\":false,\"gid\":0,\"mode\":0,\"sha256\":\"\",\"uid\":0},\"name\":\"hello.txt\"},"
      "{\"after\":{\"exists\":true,\"gid\":0,\"mode\":384,\"sha256\":\"" +
      hex('f') +
      "\",\"uid\":0},"
      "\"before\":{\"exists\":true,\"gid\":1000,\"mode\":384,\"sha256\":\"" +
      hex('e') +
      "\",\"uid\":1000},"
      "\"name\":\"welcome.txt\"}],"
      "\"plugin_digest\":\"" +
      hex('b') + "\",\"proposal_id\":\"" + p.proposal_id + "\",\"root_id\":\"" + hex('c') + "\",\"version\":1}";
  EXPECT_EQ(*bytes, expected);
  EXPECT_EQ(*compute_plan_id(p), sha256_hex(expected));
}

TEST(PlanModel, ProposalIdIgnoresAfterAndItself) {
  Plan p = sample_plan();
  Plan q = p;
  q.operations[0].after.sha256 = digest('9');
  q.proposal_id = hex('0');
  EXPECT_EQ(*compute_proposal_id(p), *compute_proposal_id(q));
  EXPECT_NE(*compute_plan_id(p), *compute_plan_id(q));
  // ...but binds before, names, effects, nonce, digest and root.
  for (auto mutate : std::vector<void (*)(Plan&)>{
           [](Plan& x) { x.operations[1].before.uid = 1; }, [](Plan& x) { x.operations[0].name = "other.txt"; },
           [](Plan& x) { x.effects->clear(); }, [](Plan& x) { x.nonce = hex('1'); },
           [](Plan& x) { x.plugin_digest = hex('2'); }, [](Plan& x) { x.root_id = hex('3'); },
           [](Plan& x) { x.effects.reset(); }}) {
    Plan r = p;
    mutate(r);
    EXPECT_NE(*compute_proposal_id(p), *compute_proposal_id(r));
  }
}

TEST(PlanModel, DocumentRoundTripAndRehash) {
  Plan p = sample_plan();
  std::string id = *compute_plan_id(p);
  auto doc = encode_plan_document(p, id);
  ASSERT_TRUE(doc.ok());
  auto back = decode_plan_document(*doc);
  ASSERT_TRUE(back.ok()) << back.error().line();
  EXPECT_EQ(back->plan, p);
  EXPECT_EQ(back->plan_id, id);
  EXPECT_EQ(back->claimed_plan_id, id);
  // Whitespace and key order of the document do not change the id.
  std::string bare = *canonical_bytes(p);
  auto spaced = decode_plan_document(" " + bare + "\n");
  ASSERT_TRUE(spaced.ok());
  EXPECT_EQ(spaced->plan_id, id);
  EXPECT_TRUE(spaced->claimed_plan_id.empty());
}

TEST(PlanModel, WrongClaimedIdsAreRefused) {
  Plan p = sample_plan();
  auto doc = decode_plan_document(*encode_plan_document(p, hex('0')));
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.error().code, Code::Validation);
  EXPECT_EQ(doc.error().kind, "plan_id_mismatch");
  Plan q = p;
  q.proposal_id = hex('0');
  auto bad = decode_plan_document(*canonical_bytes(q));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, "proposal_id_mismatch");
}

TEST(PlanModel, PreCapabilityPlanHasNoEffectsKey) {
  Plan p = sample_plan();
  p.effects.reset();
  p.proposal_id = *compute_proposal_id(p);
  std::string bytes = *canonical_bytes(p);
  EXPECT_EQ(bytes.find("effects"), std::string::npos);
  auto back = decode_canonical_plan(bytes);
  ASSERT_TRUE(back.ok()) << back.error().line();
  EXPECT_TRUE(back->pre_capability());
  EXPECT_EQ(*compute_plan_id(*back), sha256_hex(bytes));
}

TEST(PlanModel, StrictDecoding) {
  std::string good = *canonical_bytes(sample_plan());
  struct Case {
    std::string from, to;
    Code code;
  };
  std::vector<Case> cases = {
      {"\"version\":1", "\"version\":2", Code::Validation},
      {"\"version\":1", "\"version\":1,\"zzz\":1", Code::Validation},
      {"\"nonce\":\"" + hex('a') + "\",", "", Code::Validation},
      {"\"nonce\":\"" + hex('a'), "\"nonce\":\"" + hex('A'), Code::Validation},
      {"\"mode\":384", "\"mode\":4096", Code::Validation},
      {"\"mode\":384", "\"mode\":-1", Code::Validation},
      {"\"mode\":384", "\"mode\":384.0", Code::Validation},
      {"\"name\":\"hello.txt\"", "\"name\":\"../hello.txt\"", Code::PathEscape},
      {"\"name\":\"hello.txt\"", "\"name\":\"/etc/passwd\"", Code::PathEscape},
      {"\"name\":\"hello.txt\"", "\"name\":\"Hello.txt\"", Code::PathEscape},
      {"\"name\":\"hello.txt\"", "\"name\":\"hello\\u0000.txt\"", Code::PathEscape},
      {"\"name\":\"hello.txt\"", "\"name\":\"hel\\nlo.txt\"", Code::PathEscape},
      {"\"name\":\"hello.txt\"", "\"name\":\"welcome.txt\"", Code::Validation},  // duplicate slot
      {"\"exists\":false,\"gid\":0", "\"exists\":false,\"gid\":5", Code::Validation},
      {"\"exists\":true", "\"Exists\":true", Code::Validation},
      // Ids are 32 bits (uid_t, gid_t): one more is no owner, not a number cut to fit.
      {"\"gid\":1000", "\"gid\":4294967296", Code::Validation},
      {"\"uid\":1000", "\"uid\":4294967296", Code::Validation},
  };
  for (const auto& c : cases) {
    std::string text = good;
    auto at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    text.replace(at, c.from.size(), c.to);
    auto r = decode_plan_document(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().code, c.code) << c.to << ": " << r.error().line();
  }
}

TEST(PlanModel, TheLargestIdsDecodeToThemselves) {
  Plan p = sample_plan();
  p.operations[1].before.gid = 0xffffffff;
  p.operations[1].before.uid = 0xffffffff;
  p.proposal_id = *compute_proposal_id(p);
  auto text = canonical_bytes(p);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("\"gid\":4294967295"), std::string::npos);
  auto back = decode_plan_document(*text);
  ASSERT_TRUE(back.ok()) << back.error().line();
  EXPECT_EQ(back->plan, p);
}

TEST(PlanModel, NonCanonicalStoredBytesAreRefused) {
  std::string good = *canonical_bytes(sample_plan());
  EXPECT_TRUE(decode_canonical_plan(good).ok());
  auto r = decode_canonical_plan(good + " ");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, "not_canonical");
}

TEST(PlanModel, SlotNamePattern) {
  EXPECT_TRUE(is_valid_slot_name("hello.txt"));
  EXPECT_TRUE(is_valid_slot_name("a.txt"));
  EXPECT_TRUE(is_valid_slot_name(std::string(31, 'a') + ".txt"));
  EXPECT_FALSE(is_valid_slot_name(std::string(32, 'a') + ".txt"));
  EXPECT_FALSE(is_valid_slot_name("1a.txt"));
  EXPECT_FALSE(is_valid_slot_name(".txt"));
  EXPECT_FALSE(is_valid_slot_name("a.TXT"));
  EXPECT_FALSE(is_valid_slot_name("a_b.txt"));
}

// The invariants `plan` seals with (the forged-row catalogue in
// test_forged_plans.cpp drives every violation through the loaders): what
// the planner builds passes, with or without an effects key.
TEST(PlanModel, InvariantsHoldForWhatPlanSealsAndForPreCapabilityPlans) {
  Plan p = sample_plan();
  p.operations[0].after = sealed_after(digest('d'));
  p.operations[1].after = sealed_after(digest('f'));
  p.operations[1].before = sealed_after(digest('e'));
  EXPECT_TRUE(check_plan_invariants(p).ok()) << check_plan_invariants(p).error().line();
  p.effects.reset();
  EXPECT_TRUE(check_plan_invariants(p).ok());
  // Every violation is named, not only the first.
  p.effects = std::vector<Effect>{};
  p.operations[0].after.mode = 04755;
  p.operations[1].before.mode = 0644;
  auto s = check_plan_invariants(p);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Code::Policy);
  EXPECT_EQ(s.error().kind, "plan_invariant");
  EXPECT_NE(s.error().detail.find("exactly one root-sync effect"), std::string::npos) << s.error().detail;
  EXPECT_NE(s.error().detail.find("slot 0 after is exists, mode 4755"), std::string::npos) << s.error().detail;
  EXPECT_NE(s.error().detail.find("slot 1 before: target welcome.txt is accessible to group or others"),
            std::string::npos)
      << s.error().detail;
}

}  // namespace
}  // namespace dot::core
