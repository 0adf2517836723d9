// Every durable step of the store survives SIGKILL right after its commit:
// a child runs the whole lifecycle and kills itself at one commit-hook point;
// the parent reopens the store (SQLite recovers the WAL) and finds exactly
// the state that point made durable, a clean store check, and a store that
// keeps working.
#include <signal.h>
#include <sys/wait.h>

#include "dot/store/root.h"
#include "helpers.h"

namespace dot::store {
namespace {

using testing::TempDir;

// The lifecycle, in order; each step's commit fires the point beside it.
struct Step {
  const char* point;
  State state_after;  // of transaction 1
};
constexpr Step kSteps[] = {
    {"store.plugin", State::Proposing},  // (no transaction yet)
    {"store.proposal.begin", State::Proposing},
    {"store.proposal.id", State::Proposing},
    {"store.seal", State::Sealed},
    {"store.prepare", State::Prepared},
    {"store.transition.COMMITTING", State::Committing},
    {"store.transition.COMMITTED", State::Committed},
    {"store.effect.0.ATTEMPTED", State::Committed},
    {"store.effect.0.SUCCEEDED", State::Committed},
    {"store.transition.DONE", State::Done},
    {"store.prune", State::Done},
    {"store.prune.vacuum", State::Done},
    {"store.stat_cache", State::Done},
};

// Runs in the child; never returns normally when the hook fires.
int lifecycle(const std::string& db_path, const std::string& kill_at) {
  OpenOptions o;
  o.commit_hook = [&](std::string_view p) {
    if (p == kill_at) ::raise(SIGKILL);
  };
  auto s = Store::open(db_path, o);
  if (!s.ok()) return 10;
  if (!s->register_plugin({"org.dot.hello", testing::hex64('1'), "{}", 0}, false).ok()) return 11;
  auto id = s->begin_proposal({"org.dot.hello", testing::hex64('d'), 0});
  if (!id.ok()) return 12;
  auto in = testing::make_seal(1);
  if (!s->set_proposal_id(*id, in.proposal_id).ok()) return 13;
  if (!s->seal(*id, in).ok()) return 14;
  if (!s->prepare(*id, testing::make_backups(2)).ok()) return 15;
  if (!s->transition(*id, State::Committing).ok()) return 16;
  if (!s->transition(*id, State::Committed).ok()) return 17;
  if (!s->effect_attempt(*id, 0).ok()) return 18;
  if (!s->effect_finish(*id, 0, EffectState::Succeeded).ok()) return 19;
  if (!s->transition(*id, State::Done).ok()) return 20;
  if (!s->prune(0).ok()) return 21;
  StatEntry seen;
  seen.path = "slot0.txt";
  seen.sha256 = testing::hex64('e');
  if (!s->remember_stats({seen}).ok()) return 22;
  return 0;
}

TEST(StoreCrash, EveryDurableStepSurvivesSigkillRightAfterItsCommit) {
  for (std::size_t k = 0; k < std::size(kSteps); ++k) {
    const Step& step = kSteps[k];
    SCOPED_TRACE(step.point);
    TempDir t;
    auto root = init_root(t / "r");
    ASSERT_OK(root);
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(lifecycle(root->layout.database, step.point));
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "the child did not reach " << step.point << " (exit " << WEXITSTATUS(status) << ")";

    auto s = Store::open(root->layout.database);
    ASSERT_OK(s);
    auto check = s->check();
    ASSERT_OK(check);
    EXPECT_TRUE(check->problems.empty()) << check->problems.front();
    auto plugin = s->plugin("org.dot.hello");
    ASSERT_OK(plugin);
    EXPECT_TRUE(plugin->has_value());
    auto count = s->count();
    ASSERT_OK(count);
    if (k == 0) {
      EXPECT_EQ(*count, 0u);
      continue;
    }
    ASSERT_EQ(*count, 1u);
    auto sum = s->summary(1);
    ASSERT_OK(sum);
    EXPECT_EQ(sum->state, step.state_after);
    if (std::string_view(step.point) == "store.proposal.id") {
      EXPECT_FALSE(sum->proposal_id.empty());
    }
    auto effects = s->effects(1);
    ASSERT_OK(effects);
    if (std::string_view(step.point) == "store.effect.0.ATTEMPTED") {
      ASSERT_EQ(effects->size(), 1u);
      EXPECT_EQ((*effects)[0].state, EffectState::Attempted);
      // At-least-once: the next run attempts it again.
      auto again = s->effect_attempt(1, 0);
      ASSERT_OK(again);
      EXPECT_EQ(again->attempts, 2u);
    }
    const std::string_view point = step.point;
    if (point.starts_with("store.prune") || point == "store.stat_cache") {
      EXPECT_TRUE(sum->pruned);
      auto seen = s->stat_entry("slot0.txt");
      ASSERT_OK(seen);
      EXPECT_EQ(seen->has_value(), point == "store.stat_cache");
    } else if (sum->state != State::Proposing) {
      // Everything sealed so far loads and verifies.
      ASSERT_OK(s->load_sealed(1));
    }
    // The store keeps working after recovery.
    ASSERT_OK(s->begin_proposal({"org.dot.hello", testing::hex64('d'), 0}));
  }
}

}  // namespace
}  // namespace dot::store
