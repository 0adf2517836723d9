#pragma once
// The lifecycle states of docs/spec/transactions.md and the one legal transition
// graph between them. A proposal and the transaction it becomes are one row:
// PROPOSING -> SEALED -> PREPARED -> ... so one state list serves `--state`,
// JSON output and the database's CHECK constraint.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace dot::store {

enum class State : std::uint8_t {
  Proposing,
  Abandoned,
  Sealed,
  Discarded,
  Stale,
  Prepared,
  Committing,
  Committed,
  RollingBack,
  RolledBack,
  Done,
};

// "PROPOSING", "ROLLING_BACK", ... (the names stored in the database).
std::string_view state_name(State s) noexcept;
std::optional<State> state_from_name(std::string_view name) noexcept;
// Every state in declaration order.
std::span<const State> all_states() noexcept;

// The graph of docs/spec/transactions.md:
//   PROPOSING -> SEALED | ABANDONED
//   SEALED    -> PREPARED | DISCARDED | STALE
//   PREPARED | COMMITTING | COMMITTED | DONE -> ROLLING_BACK
//   PREPARED -> COMMITTING -> COMMITTED -> DONE
//   ROLLING_BACK -> ROLLED_BACK
// (DONE -> ROLLING_BACK is `rollback ID` of the newest finished transaction.)
bool is_legal_transition(State from, State to) noexcept;

// DONE, ROLLED_BACK, DISCARDED, STALE, ABANDONED: nothing more will happen
// (except `rollback` of a DONE one); `store prune` may drop their blobs.
bool is_finished(State s) noexcept;

// PREPARED, COMMITTING, COMMITTED, ROLLING_BACK: a transaction between its
// prepare and its end. While one exists, `plan` and `apply` refuse with
// DOT_E_RECOVERY_REQUIRED. (A COMMITTED one whose ledger is complete is
// finished in substance, but still waits for its DONE transition.)
bool is_in_flight(State s) noexcept;

// Effect ledger entry per (plan, index).
enum class EffectState : std::uint8_t { Attempted, Succeeded, Failed };
std::string_view effect_state_name(EffectState s) noexcept;  // "ATTEMPTED", ...
std::optional<EffectState> effect_state_from_name(std::string_view name) noexcept;

}  // namespace dot::store
