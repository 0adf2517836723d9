#include "dot/core/effects.h"

#include <fmt/format.h>

#include "dot/base/beneath.h"

namespace dot::core {

bool is_root_sync(const Effect& effect) noexcept { return effect == root_sync_effect(); }

Status run_effects(Root& root, store::TxnId txn, const std::string& plan_id, const std::vector<Effect>& effects) {
  DOT_ASSIGN_OR_RETURN(std::vector<store::EffectEntry> ledger, root.store().effects(txn));
  auto succeeded = [&](std::uint32_t i) {
    for (const auto& e : ledger)
      if (e.index == i && e.state == store::EffectState::Succeeded) return true;
    return false;
  };
  const TestHooks& hooks = root.hooks();
  for (std::uint32_t i = 0; i < effects.size(); ++i) {
    if (succeeded(i)) continue;
    DOT_TRY(root.store().effect_attempt(txn, i));
    Status ran;
    if (!is_root_sync(effects[i])) {
      // Never reached for a verified plan; refuse rather than guess.
      ran = make_error(Code::Policy, "effect", fmt::format("effect {} is not the allowlisted root-sync", i));
    } else if (int err = hooks.fault(fmt::format("effect{}.sync", i))) {
      ran = beneath::errno_error(err, "fsync", "the managed root");
    } else {
      ran = beneath::fsync_fd(root.root_fd(), "the managed root");
    }
    if (!ran.ok()) {
      const Error& cause = ran.error();
      std::string detail = fmt::format("effect {} (root-sync) of plan {} failed: {}; run `dot-core retry-effects`", i,
                                       plan_id, cause.message());
      DOT_TRY(root.store().effect_finish(txn, i, store::EffectState::Failed, code_name(Code::PostCommit), detail));
      return make_error(Code::PostCommit, cause.kind, detail);
    }
    hooks.reached(fmt::format("effect{}.synced", i));
    DOT_TRY(root.store().effect_finish(txn, i, store::EffectState::Succeeded));
  }
  return root.store().transition(txn, store::State::Done);
}

}  // namespace dot::core
