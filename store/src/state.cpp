// The transaction states and their one legal transition graph (state.h).
#include "dot/store/state.h"

#include <array>

#include "dot/store/records.h"

namespace dot::store {
namespace {

constexpr std::array<State, 11> kAll = {
    State::Proposing,  State::Abandoned, State::Sealed,      State::Discarded,  State::Stale, State::Prepared,
    State::Committing, State::Committed, State::RollingBack, State::RolledBack, State::Done,
};

constexpr std::array<std::string_view, 11> kNames = {
    "PROPOSING",  "ABANDONED", "SEALED",       "DISCARDED",   "STALE", "PREPARED",
    "COMMITTING", "COMMITTED", "ROLLING_BACK", "ROLLED_BACK", "DONE",
};

constexpr std::array<std::string_view, 3> kEffectNames = {"ATTEMPTED", "SUCCEEDED", "FAILED"};

}  // namespace

std::string_view state_name(State s) noexcept { return kNames[static_cast<std::size_t>(s)]; }

std::optional<State> state_from_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return kAll[i];
  return std::nullopt;
}

std::span<const State> all_states() noexcept { return kAll; }

bool is_legal_transition(State from, State to) noexcept {
  switch (from) {
    case State::Proposing:
      return to == State::Sealed || to == State::Abandoned;
    case State::Sealed:
      return to == State::Prepared || to == State::Discarded || to == State::Stale;
    case State::Prepared:
      return to == State::Committing || to == State::RollingBack;
    case State::Committing:
      return to == State::Committed || to == State::RollingBack;
    case State::Committed:
      return to == State::Done || to == State::RollingBack;
    case State::Done:
      return to == State::RollingBack;
    case State::RollingBack:
      return to == State::RolledBack;
    case State::Abandoned:
    case State::Discarded:
    case State::Stale:
    case State::RolledBack:
      return false;
  }
  return false;
}

bool is_finished(State s) noexcept {
  return s == State::Done || s == State::RolledBack || s == State::Discarded || s == State::Stale ||
         s == State::Abandoned;
}

bool is_in_flight(State s) noexcept {
  return s == State::Prepared || s == State::Committing || s == State::Committed || s == State::RollingBack;
}

std::string_view effect_state_name(EffectState s) noexcept { return kEffectNames[static_cast<std::size_t>(s)]; }

std::optional<EffectState> effect_state_from_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kEffectNames.size(); ++i)
    if (kEffectNames[i] == name) return static_cast<EffectState>(i);
  return std::nullopt;
}

std::string_view display_status(const TxnSummary& t) noexcept {
  if (t.state == State::Abandoned && t.code == kNoChangesCode) return kNoChangesCode;
  if (t.state != State::Committed || !t.effect_count) return state_name(t.state);
  return t.effect_failed ? "POST_COMMIT_FAILED" : "POST_COMMIT_PENDING";
}

}  // namespace dot::store
