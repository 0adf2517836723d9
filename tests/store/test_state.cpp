#include <gtest/gtest.h>

#include "dot/store/state.h"

namespace dot::store {
namespace {

TEST(StoreState, NamesRoundTrip) {
  for (State s : all_states()) {
    auto back = state_from_name(state_name(s));
    ASSERT_TRUE(back.has_value()) << state_name(s);
    EXPECT_EQ(*back, s);
  }
  EXPECT_EQ(all_states().size(), 11u);
  EXPECT_FALSE(state_from_name("sealed").has_value());
  EXPECT_FALSE(state_from_name("").has_value());
  EXPECT_EQ(state_name(State::RollingBack), "ROLLING_BACK");
}

TEST(StoreState, TransitionGraphIsExactlyTheSpec) {
  using S = State;
  const std::pair<S, S> legal[] = {
      {S::Proposing, S::Sealed},     {S::Proposing, S::Abandoned},  {S::Sealed, S::Prepared},
      {S::Sealed, S::Discarded},     {S::Sealed, S::Stale},         {S::Prepared, S::Committing},
      {S::Prepared, S::RollingBack}, {S::Committing, S::Committed}, {S::Committing, S::RollingBack},
      {S::Committed, S::Done},       {S::Committed, S::RollingBack}, {S::Done, S::RollingBack},
      {S::RollingBack, S::RolledBack},
  };
  int count = 0;
  for (S from : all_states()) {
    for (S to : all_states()) {
      bool expected = false;
      for (auto [f, t] : legal) expected = expected || (f == from && t == to);
      EXPECT_EQ(is_legal_transition(from, to), expected) << state_name(from) << " -> " << state_name(to);
      count += is_legal_transition(from, to) ? 1 : 0;
    }
  }
  EXPECT_EQ(count, 13);
}

TEST(StoreState, FinishedAndInFlightPartitionTheTransactionStates) {
  for (State s : all_states()) EXPECT_FALSE(is_finished(s) && is_in_flight(s)) << state_name(s);
  EXPECT_TRUE(is_finished(State::Done));
  EXPECT_TRUE(is_finished(State::Abandoned));
  EXPECT_FALSE(is_finished(State::Sealed));
  EXPECT_TRUE(is_in_flight(State::Committed));
  EXPECT_FALSE(is_in_flight(State::Sealed));
  EXPECT_FALSE(is_in_flight(State::Proposing));
}

TEST(StoreState, EffectStateNames) {
  EXPECT_EQ(effect_state_name(EffectState::Failed), "FAILED");
  EXPECT_EQ(effect_state_from_name("SUCCEEDED"), EffectState::Succeeded);
  EXPECT_FALSE(effect_state_from_name("DONE").has_value());
}

}  // namespace
}  // namespace dot::store
