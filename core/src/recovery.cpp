// Recover, rollback, retry-effects and discard: finishing what a crash left (recovery.h).
#include "dot/core/recovery.h"
#include "dot/core/error_kinds.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "apply_internal.h"
#include "dot/base/beneath.h"
#include "dot/core/applier.h"
#include "dot/core/effects.h"
#include "dot/core/rollback.h"
#include "dot/core/target.h"

namespace dot::core {
namespace {

// The rollback walk of either plan version.
Status roll_back_any(Root& root, store::TxnId txn, const VerifiedPlan& plan, const Error& why, TempCleanup* cleanup) {
  if (const auto* v2 = std::get_if<LoadedPlanV2>(&plan)) return roll_back(root, txn, *v2, why, nullptr, cleanup);
  return roll_back(root, txn, std::get<LoadedPlan>(plan), why, static_cast<std::size_t>(-1), cleanup);
}

// The effects of either plan version.
Status run_effects_any(Root& root, store::TxnId txn, const std::string& plan_id, const VerifiedPlan& plan) {
  if (const auto* v2 = std::get_if<LoadedPlanV2>(&plan))
    return run_effects(root, txn, plan_id, v2->plan.effects, sync_targets(v2->plan));
  return run_effects(root, txn, plan_id, std::get<LoadedPlan>(plan).plan);
}

// Stage directories left by a `plan` that was killed (or that its own
// cleanup could not remove), removed completely through the stage folder's
// descriptor, whatever their depth (beneath::remove_tree): a symlink in its
// place is DOT_E_PATH_ESCAPE and nothing it points to is read or removed.
// Each one removed is named in `removed` with how many entries went; one
// that cannot be removed (replaced meanwhile, unreadable) is reported in
// `left_alone` and never stops the rollback.
Status remove_stale_stages(const store::OpenedRoot& dirs, std::vector<RemovedStage>& removed,
                           std::vector<LeftAlone>& left_alone) {
  auto stage = dirs.open_entry(store::kStageName, O_RDONLY | O_DIRECTORY);
  if (!stage.ok()) {
    if (beneath::error_errno(stage.error()) == ENOENT) return {};  // no plan ran yet
    return std::move(stage).error();
  }
  const std::string shown_folder = fmt::format("{}/{}", store::kStateDirName, store::kStageName);
  auto stale = beneath::list_entries(stage->get());
  if (!stale.ok()) {
    left_alone.push_back({shown_folder, fmt::format("cannot be listed: {}", stale.error().detail)});
    return {};
  }
  for (const auto& name : *stale) {
    auto gone = beneath::remove_tree(stage->get(), name);
    if (gone.ok())
      removed.push_back(RemovedStage{shown_folder + "/" + name, *gone});
    else
      left_alone.push_back(
          {shown_folder + "/" + name, fmt::format("a stale stage that cannot be removed: {}", gone.error().message())});
  }
  return {};
}

}  // namespace

Status roll_back(Root& root, store::TxnId txn, const LoadedPlan& plan, const Error& why, std::size_t touched,
                 TempCleanup* cleanup) {
  store::Store& st = root.store();
  DOT_ASSIGN_OR_RETURN(store::TxnSummary summary, st.summary(txn));
  if (summary.state != store::State::RollingBack)
    DOT_TRY(st.transition(txn, store::State::RollingBack, event_code(why), why.message()));
  const auto& ops = plan.plan.operations;
  // The temp files an interrupted commit or rollback of this plan may have
  // left: exactly the names its journal derives (temp_name), nothing else.
  {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < ops.size(); ++i)
      for (TempPhase phase : {TempPhase::Apply, TempPhase::Rollback})
        names.push_back(temp_name(plan.sealed.plan_id, phase, i));
    TempCleanup found;
    remove_own_temps(root.root_fd(), "", names, found);
    if (cleanup) {
      cleanup->removed += found.removed;
      for (auto& left : found.left_alone) cleanup->left_alone.push_back(std::move(left));
    }
  }
  for (std::size_t i = std::min(ops.size(), touched); i-- > 0;) {
    auto restored = restore_slot(root.root_fd(), plan.sealed.plan_id, i, ops[i], plan.before[i], root.hooks());
    if (!restored.ok()) {
      Error e = std::move(restored).error();
      if (e.code != Code::RecoveryRequired) {
        e.detail =
            fmt::format("rolling back {} failed at slot {} ({}): {}", plan.sealed.plan_id, i, ops[i].name, e.detail);
        e.code = Code::RecoveryRequired;
      }
      (void)st.note(txn, code_name(e.code), e.message());
      return e;
    }
  }
  return st.transition(txn, store::State::RolledBack, event_code(why), why.message());
}

Result<RecoveryReport> recover(Root& root) {
  RecoveryReport report;
  store::Store& st = root.store();
  DOT_TRY(remove_stale_stages(root.dirs(), report.stages, report.left_alone));
  report.stages_removed = report.stages.size();

  store::ListFilter proposing;
  proposing.state = store::State::Proposing;
  proposing.limit = 0;
  DOT_ASSIGN_OR_RETURN(auto orphans, st.list(proposing));
  for (const auto& t : orphans) {
    store::Abandonment why;
    why.code = std::string(code_name(Code::RecoveryRequired));
    why.detail = "the plan command was interrupted before it sealed; abandoned by recover";
    DOT_TRY(st.abandon(t.id, why));
    report.transactions.push_back(
        RecoveredTxn{t.proposal_id, store::State::Proposing, store::State::Abandoned, "abandoned"});
  }

  DOT_ASSIGN_OR_RETURN(auto unfinished, st.in_flight());
  for (const auto& t : unfinished) {
    RecoveredTxn r{t.plan_id, t.state, t.state, ""};
    if (t.state == store::State::Committed) {
      if (!t.effect_count) {
        // Pre-capability: complete without a ledger.
        DOT_TRY(st.transition(t.id, store::State::Done, {}, "pre-capability transaction: complete without a ledger"));
        r.action = "completed (pre-capability, no ledger)";
      } else {
        DOT_ASSIGN_OR_RETURN(VerifiedPlan lp, load_any_verified_plan(root, t.id));
        DOT_TRY(run_effects_any(root, t.id, t.plan_id, lp));
        r.action = "effects resumed";
      }
      r.to = store::State::Done;
    } else {
      DOT_ASSIGN_OR_RETURN(VerifiedPlan lp, load_any_verified_plan(root, t.id));
      Error why = make_error(Code::Internal, fmt::format("recovered from {}: rolled back", store::state_name(t.state)));
      TempCleanup cleanup;
      Status rolled = roll_back_any(root, t.id, lp, why, &cleanup);
      report.temp_files_removed += cleanup.removed;
      for (auto& left : cleanup.left_alone) report.left_alone.push_back(std::move(left));
      DOT_TRY(rolled);
      r.to = store::State::RolledBack;
      r.action = "rolled back";
    }
    report.transactions.push_back(std::move(r));
  }
  // Each rollback removed the temp files its journal names. Whatever else is
  // in the root, named like a temp file or not, is someone else's: a root
  // may be a home folder, and recover never lists, reads or removes an
  // entry no plan names.
  return report;
}

Result<RecoveredTxn> rollback_plan(Root& root, std::string_view id) {
  store::Store& st = root.store();
  DOT_ASSIGN_OR_RETURN(store::TxnId txn, st.find(id));
  DOT_ASSIGN_OR_RETURN(store::TxnSummary summary, st.summary(txn));
  if (summary.state != store::State::Committed && summary.state != store::State::Done)
    return make_error(core::ErrorKind::NotCommitted,
                      fmt::format("plan {} is {}: only a COMMITTED or DONE transaction can be rolled back",
                                  summary.plan_id, store::state_name(summary.state)));
  // A generation the Go reference had archived (kArchivedEventCode): its place in
  // the order is a guess, so "newest" below could be wrong.
  DOT_ASSIGN_OR_RETURN(auto events, st.events(txn));
  for (const auto& e : events)
    if (e.code == kArchivedEventCode)
      return make_error(core::ErrorKind::Archived,
                        fmt::format("plan {} was archived by the Go reference before adoption; archived generations "
                                    "are kept as evidence and never rolled back (their order is not on disk)",
                                    summary.plan_id));
  DOT_ASSIGN_OR_RETURN(auto unfinished, st.in_flight());
  for (const auto& t : unfinished)
    if (t.id != txn)
      return make_error(core::ErrorKind::Unfinished, fmt::format("transaction {} is {}: run `{}` first", t.plan_id,
                                                                 store::state_name(t.state), root.command("recover")));
  for (store::State s : {store::State::Committed, store::State::Done}) {
    store::ListFilter f;
    f.state = s;
    f.limit = 0;
    DOT_ASSIGN_OR_RETURN(auto applied, st.list(f));
    for (const auto& t : applied)
      if (t.id > txn)
        return make_error(
            core::ErrorKind::NotNewest,
            fmt::format("only the newest applied transaction can be rolled back; {} is newer", t.plan_id));
  }
  DOT_ASSIGN_OR_RETURN(VerifiedPlan verified, load_any_verified_plan(root, txn));
  if (const auto* v2 = std::get_if<LoadedPlanV2>(&verified)) {
    DOT_TRY(check_still_after(root, *v2));
  } else {
    const LoadedPlan& lp = std::get<LoadedPlan>(verified);
    const auto& ops = lp.plan.operations;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (auto s = recheck_target(root.root_fd(), ops[i].name, ops[i].after); !s.ok()) {
        Error e = s.error();
        e.code = Code::Conflict;
        e.detail = fmt::format("{}: the target no longer equals what plan {} wrote; nothing was rolled back", e.detail,
                               lp.sealed.plan_id);
        return e;
      }
    }
  }
  Error why = make_error(Code::Internal, "rollback requested by the user");
  DOT_TRY(roll_back_any(root, txn, verified, why, nullptr));
  return RecoveredTxn{summary.plan_id, summary.state, store::State::RolledBack, "rolled back"};
}

Result<RecoveryReport> retry_effects(Root& root) {
  RecoveryReport report;
  DOT_ASSIGN_OR_RETURN(auto unfinished, root.store().in_flight());
  for (const auto& t : unfinished) {
    if (t.state != store::State::Committed) continue;
    if (!t.effect_count) {
      DOT_TRY(root.store().transition(t.id, store::State::Done, {},
                                      "pre-capability transaction: complete without a ledger"));
      report.transactions.push_back(
          RecoveredTxn{t.plan_id, t.state, store::State::Done, "completed (pre-capability, no ledger)"});
      continue;
    }
    DOT_ASSIGN_OR_RETURN(VerifiedPlan lp, load_any_verified_plan(root, t.id));
    DOT_TRY(run_effects_any(root, t.id, t.plan_id, lp));
    report.transactions.push_back(RecoveredTxn{t.plan_id, t.state, store::State::Done, "effects resumed"});
  }
  return report;
}

Result<std::string> discard_plan(Root& root, std::string_view id) {
  DOT_ASSIGN_OR_RETURN(store::TxnId txn, root.store().find(id));
  DOT_ASSIGN_OR_RETURN(store::TxnSummary summary, root.store().summary(txn));
  if (summary.state != store::State::Sealed)
    return make_error(core::ErrorKind::NotSealed, fmt::format("plan {} is {}: only a SEALED plan can be discarded",
                                                              summary.plan_id, store::state_name(summary.state)));
  DOT_TRY(root.store().transition(txn, store::State::Discarded, {}, "discarded by the user"));
  return summary.plan_id;
}

}  // namespace dot::core
