// The generator of reference roots (go_root_gen.h) against the facts of
// docs/spec/go-roots.md: its own canonical encoder gives the ids of the byte-level
// example of section 10, and it is deterministic.

#include <gtest/gtest.h>

#include "dot/base/sha256.h"
#include "go_root_gen.h"
#include "tree.h"

namespace dot::adopt_test {
namespace {

TEST(GoRootGenerator, ReproducesTheIdsOfSection10) {
  GoPlan p = section10_plan(true);
  EXPECT_EQ(go_proposal_id(p), "ef2d0f3ecdaad3b79c14c370ff9d04137448de79bfaf2ddb6dfcb6227c5859bb");
  p.proposal_id = go_proposal_id(p);
  EXPECT_EQ(go_plan_id(p), "2ce723872795594ce2bb335399dcc3e709f13e8c9cb4e4b5621aee80dafdf6c8");
  GoPlan pre = section10_plan(false);
  EXPECT_EQ(go_proposal_id(pre), "074e0557041355b49157126fd5cd4260b89b59b2f8b96280e16f9313d7957f7e");
  pre.proposal_id = go_proposal_id(pre);
  EXPECT_EQ(go_plan_id(pre), "a1f1b944bed4dabb0093b432cdf042d1bd14611ef38599f46627e944f037f7b6");
  EXPECT_EQ(sha256_hex(kHelloBytes), "1ada311b8924a6b3d56519d421845bc540769e4627d7f76e22b800ddf8cb9577");
}

// What a root holds, without the times: the same spec twice gives the same
// names, modes and bytes.
std::string contents(const fs::path& root) {
  std::string out;
  std::vector<fs::path> all;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it)
    all.push_back(it->path());
  std::sort(all.begin(), all.end());
  for (const auto& p : all) {
    struct stat st {};
    ::lstat(p.c_str(), &st);
    out += fmt::format("{} {:o} {}\n", fs::relative(p, root).string(), st.st_mode,
                       S_ISREG(st.st_mode) ? sha256_hex(slurp(p)) : "");
  }
  return out;
}

TEST(GoRootGenerator, IsDeterministicAndStopsAtEveryState) {
  for (GoGen g : {GoGen::PreCapability, GoGen::Effects})
    for (const auto& state : go_states(g)) {
      SCOPED_TRACE(state);
      Scratch scratch;
      GoRootSpec spec;
      spec.gen = g;
      spec.state = state;
      spec.user_file = true;
      spec.history = state == "idle-after-init" ? 0 : 2;
      GoRoot a = make_go_root(scratch.dir() / "a", spec);
      GoRoot b = make_go_root(scratch.dir() / "b", spec);
      EXPECT_EQ(contents(scratch.dir() / "a"), contents(scratch.dir() / "b"));
      EXPECT_EQ(a.active.plan_id, b.active.plan_id);
      EXPECT_EQ(a.history.size(), b.history.size());
    }
  Scratch scratch;
  GoRootSpec spec;
  spec.state = "no-such-state";
  EXPECT_THROW(make_go_root(scratch.dir() / "x", spec), std::runtime_error);
}

// The two generations differ exactly where section 9 says: the plan's
// effects member and the ledger.
TEST(GoRootGenerator, PreCapabilityRootsHaveNoEffectsAnywhere) {
  Scratch scratch;
  GoRootSpec spec;
  spec.gen = GoGen::PreCapability;
  spec.state = "committed";
  spec.history = 1;
  make_go_root(scratch.dir() / "pre", spec);
  const fs::path txn = scratch.dir() / "pre" / ".dot-txn";
  EXPECT_EQ(slurp(txn / "plan.json").find("effects"), std::string::npos);
  EXPECT_FALSE(fs::exists(txn / "effects.wal"));
  EXPECT_EQ(slurp(txn / "wal"), "{\"state\":\"PREPARED\"}\n{\"state\":\"COMMITTING\"}\n{\"state\":\"COMMITTED\"}\n");
  spec.gen = GoGen::Effects;
  make_go_root(scratch.dir() / "eff", spec);
  const fs::path etxn = scratch.dir() / "eff" / ".dot-txn";
  EXPECT_NE(slurp(etxn / "plan.json").find(R"("effects":[{"kind":"sync","target":"managed-root","failure_policy":"required"}])"),
            std::string::npos);
  EXPECT_EQ(slurp(etxn / "effects.wal").size(), 2 * 117u);
}

}  // namespace
}  // namespace dot::adopt_test
