// `dot-core apply`: loading and re-verifying a stored plan, and apply of a version-1 plan (applier.h).
#include "dot/core/applier.h"
#include "dot/core/error_kinds.h"

#include <algorithm>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "apply_internal.h"
#include "dot/core/effects.h"
#include "dot/core/rollback.h"
#include "dot/core/target.h"
#include "dot/dpp/path_rules.h"
#include "plan_v2_reader.h"

namespace dot::core {

Error tampered(std::string_view plan_id, std::string detail) {
  return make_error(core::ErrorKind::Tampered,
                    fmt::format("stored plan {} is inconsistent: {}; nothing is applied from it", plan_id, detail));
}

Error interrupted_error(const Root& root, int sig, std::string_view plan_id, store::State state) {
  return make_error(
      core::ErrorKind::Interrupted,
      fmt::format("apply of {} interrupted by {} and stopped at a safe point ({}): run `{}`", plan_id,
                  sig == SIGINT ? "SIGINT" : "SIGTERM", store::state_name(state), root.command("recover")));
}

Error make_stale(Root& root, store::TxnId txn, Error e) {
  if (e.code == Code::Policy) e.code = Code::Conflict;
  if (auto s = root.store().transition(txn, store::State::Stale, code_name(e.code), e.message()); !s.ok())
    return std::move(s).error();
  e.detail += "; the plan is now STALE (nothing was written): re-plan";
  return e;
}

Status refuse_if_unfinished(Root& root) {
  DOT_ASSIGN_OR_RETURN(auto unfinished, root.store().in_flight());
  if (unfinished.empty()) return {};
  const auto& t = unfinished.front();
  return make_error(core::ErrorKind::Unfinished,
                    fmt::format("transaction {} is {}: run `{}` first", t.plan_id, store::state_name(t.state),
                                t.state == store::State::Committed
                                    ? root.command("retry-effects") + "` (or `" + root.command("recover")
                                    : root.command("recover")));
}

namespace {

// Where a stored version-2 plan's parts are read from: the texts and rows a
// whole load holds (`store check`), or the store as they stream (apply,
// rollback, recover, retry-effects: a plan of 100,000 operations is never
// held as text). Each hands its bytes or rows on in order.
struct PlanV2Parts {
  std::function<Status(ByteSink&)> plan_text;
  std::function<Status(ByteSink&)> proposal_document;  // unset: none kept (a pruned transaction)
  std::function<Status(const store::Store::OperationRowFn&)> operation_rows;
};

PlanV2Parts parts_of(const store::SealedPlan& sealed) {
  PlanV2Parts parts;
  parts.plan_text = [&sealed](ByteSink& out) { return out.write(sealed.canonical_plan); };
  // A pruned transaction keeps its plan and proposal id, not the document:
  // its binding was checked when it was sealed and applied, and it is never
  // loaded to write again.
  if (!sealed.pruned || !sealed.proposal_document.empty())
    parts.proposal_document = [&sealed](ByteSink& out) { return out.write(sealed.proposal_document); };
  parts.operation_rows = [&sealed](const store::Store::OperationRowFn& each) -> Status {
    for (const auto& row : sealed.operations) DOT_TRY(each({row.name, row.before_sha256, row.after_sha256}));
    return {};
  };
  return parts;
}

PlanV2Parts parts_in(store::Store& store, store::TxnId txn) {
  return PlanV2Parts{
      .plan_text = [&store, txn](ByteSink& out) { return store.read_plan_text(txn, out); },
      .proposal_document = [&store, txn](ByteSink& out) { return store.read_proposal_document(txn, out); },
      .operation_rows =
          [&store, txn](const store::Store::OperationRowFn& each) { return store.read_operation_rows(txn, each); }};
}

Result<PlanV2> verify_plan_v2(const store::SealedPlan& sealed, const PlanV2Parts& parts, std::string_view root_id) {
  const std::string& id = sealed.plan_id;
  std::vector<PathOperation> operations;
  operations.reserve(std::min<std::size_t>(sealed.operation_count, dpp::kMaxPlanOperations));
  PlanV2Reader reader([&operations](PathOperation&& op) {
    operations.push_back(std::move(op));
    return Status{};
  });
  KeepReading text(reader);
  DOT_TRY(parts.plan_text(text));
  if (text.refusal()) return tampered(id, text.refusal()->message());
  auto decoded = reader.finish();
  if (!decoded.ok()) return tampered(id, decoded.error().message());
  PlanV2 plan = std::move(decoded).value();
  plan.operations = std::move(operations);
  if (plan.proposal_id.empty()) return tampered(id, "it is a proposal document, not a sealed plan");
  // What `plan` refused of a plugin is refused of a stored row: the sealed
  // operations and every proposed one (its no-ops included).
  if (auto s = check_plan_invariants(plan); !s.ok())
    return tampered(id, fmt::format("it breaks what `plan` seals: {}", s.error().message()));
  if (parts.proposal_document) {
    PlanInvariants proposed;
    proposed.folders(plan.directories);  // the binding holds them equal
    ProposalBinding binding(plan, [&proposed](const PathOperation& op, std::size_t i) { proposed.add(op, i); });
    DOT_TRY(parts.proposal_document(binding));
    if (auto bound = binding.finish(); !bound.ok()) return tampered(id, bound.error().message());
    if (auto s = proposed.verdict(); !s.ok())
      return tampered(id, fmt::format("its proposal document breaks what `plan` accepts: {}", s.error().message()));
  }
  if (plan.proposal_id != sealed.proposal_id) return tampered(id, "its proposal_id differs from the stored one");
  if (plan.root_id != root_id)
    return make_error(core::ErrorKind::OtherRoot,
                      fmt::format("plan {} was sealed for root {}, not this root ({})", id, plan.root_id, root_id));
  if (sealed.effect_count != std::optional<std::uint32_t>(static_cast<std::uint32_t>(plan.effects.size())))
    return tampered(id, "its effect count differs from the stored one");
  std::size_t i = 0;
  bool same_rows = true;
  DOT_TRY(parts.operation_rows([&](const store::OperationRowView& row) {
    if (same_rows && i < plan.operations.size()) {
      const PathOperation& op = plan.operations[i];
      same_rows = row.name == op.path && row.before_sha256 == op.before.sha256 && row.after_sha256 == op.after.sha256;
    }
    ++i;
    return Status{};
  }));
  if (!same_rows || i != plan.operations.size())
    return tampered(id, "its stored operation rows differ from its operations");
  return plan;
}

}  // namespace

Result<PlanV2> verify_sealed_plan_v2(const store::SealedPlan& sealed, std::string_view root_id) {
  return verify_plan_v2(sealed, parts_of(sealed), root_id);
}

Result<Plan> verify_sealed_plan(const store::SealedPlan& sealed, std::string_view root_id) {
  const std::string& id = sealed.plan_id;
  // A version-2 plan (its files streamed) is verified as one, then refused:
  // it is no version-1 Plan.
  if (sealed.streamed) {
    auto verified = verify_sealed_plan_v2(sealed, root_id);
    if (!verified.ok()) return std::move(verified).error();
    return make_error(core::ErrorKind::PlanVersion,
                      fmt::format("plan {} is a version-2 plan ({}), not a version-1 one", id, kGeneralProfile));
  }
  auto decoded = decode_canonical_plan(sealed.canonical_plan);
  if (!decoded.ok()) return tampered(id, decoded.error().message());
  Plan plan = std::move(decoded).value();
  if (auto s = verify_proposal_id(plan); !s.ok()) return tampered(id, s.error().message());
  if (plan.proposal_id != sealed.proposal_id) return tampered(id, "its proposal_id differs from the stored one");
  if (plan.root_id != root_id)
    return make_error(core::ErrorKind::OtherRoot,
                      fmt::format("plan {} was sealed for root {}, not this root ({})", id, plan.root_id, root_id));
  std::optional<std::uint32_t> count;
  if (plan.effects) count = static_cast<std::uint32_t>(plan.effects->size());
  if (count != sealed.effect_count) return tampered(id, "its effect count differs from the stored one");
  if (auto s = check_plan_invariants(plan); !s.ok())
    return tampered(id, fmt::format("it breaks what `plan` seals: {}", s.error().message()));
  // What inspect shows per slot is derived from the plan: it must say the same.
  bool same_slots = sealed.operations.size() == plan.operations.size();
  for (std::size_t i = 0; same_slots && i < plan.operations.size(); ++i) {
    const Operation& op = plan.operations[i];
    const store::OperationSummary& row = sealed.operations[i];
    same_slots = row.name == op.name && row.before_sha256 == op.before.sha256 && row.after_sha256 == op.after.sha256;
  }
  if (!same_slots) return tampered(id, "its stored operation rows differ from its operations");
  return plan;
}

Status judge_sealed_plan(const store::SealedPlan& sealed, std::string_view root_id) {
  if (sealed.streamed) {
    auto verified = verify_sealed_plan_v2(sealed, root_id);
    if (!verified.ok()) return std::move(verified).error();
    return {};
  }
  auto verified = verify_sealed_plan(sealed, root_id);
  if (!verified.ok()) return std::move(verified).error();
  return {};
}

namespace {

Result<LoadedPlan> verify_loaded_plan(Root& root, store::SealedPlan sealed) {
  LoadedPlan lp;
  lp.sealed = std::move(sealed);
  const std::string& id = lp.sealed.plan_id;
  DOT_ASSIGN_OR_RETURN(lp.plan, verify_sealed_plan(lp.sealed, root.root_id()));
  const auto& ops = lp.plan.operations;
  if (lp.sealed.artifacts.size() != ops.size())
    return make_error(core::ErrorKind::Artifact, fmt::format("plan {} has {} slots but {} stored artifacts", id,
                                                             ops.size(), lp.sealed.artifacts.size()));
  lp.after.resize(ops.size());
  for (const auto& a : lp.sealed.artifacts) {
    if (a.slot >= ops.size() || !ops[a.slot].after.exists || a.sha256 != ops[a.slot].after.sha256)
      return make_error(core::ErrorKind::Artifact,
                        fmt::format("stored artifact of slot {} differs from the plan's after snapshot", a.slot));
    lp.after[a.slot] = a.bytes;
  }
  lp.before.resize(ops.size());
  if (!lp.sealed.backups.empty()) {
    if (lp.sealed.backups.size() != ops.size()) return tampered(id, "its backup count differs from its slot count");
    for (const auto& b : lp.sealed.backups) {
      if (b.slot >= ops.size() || b.exists != ops[b.slot].before.exists ||
          (b.exists && b.sha256 != ops[b.slot].before.sha256))
        return tampered(id, fmt::format("the backup of slot {} differs from the plan's before snapshot", b.slot));
      if (b.exists) lp.before[b.slot] = b.bytes;
    }
  }
  return lp;
}

// A version-2 plan loaded without its texts (Store::load_sealed_without_texts):
// its text, proposal document and rows verified as they stream.
Result<LoadedPlanV2> verify_loaded_plan_v2(Root& root, store::SealedPlan sealed) {
  LoadedPlanV2 lp;
  DOT_ASSIGN_OR_RETURN(lp.plan, verify_plan_v2(sealed, parts_in(root.store(), sealed.id), root.root_id()));
  const auto& ops = lp.plan.operations;
  // The store checked the backups' shape and the artifacts against the
  // operation rows, which verify_sealed_plan_v2 checked against the plan.
  for (std::size_t i = 0; i < sealed.file_backups.size(); ++i) {
    const store::FileBlob& b = sealed.file_backups[i];
    if (b.index != i || b.exists != ops[i].before.exists || (b.exists && b.sha256 != ops[i].before.sha256))
      return tampered(sealed.plan_id, fmt::format("the backup of operation {} differs from its before snapshot", i));
  }
  lp.sealed = std::move(sealed);
  return lp;
}

}  // namespace

Result<LoadedPlan> load_verified_plan(Root& root, store::TxnId txn) {
  DOT_ASSIGN_OR_RETURN(store::SealedPlan sealed, root.store().load_sealed(txn));
  return verify_loaded_plan(root, std::move(sealed));
}

Result<VerifiedPlan> load_any_verified_plan(Root& root, store::TxnId txn) {
  DOT_ASSIGN_OR_RETURN(store::SealedPlan sealed, root.store().load_sealed_without_texts(txn));
  if (sealed.streamed) {
    DOT_ASSIGN_OR_RETURN(LoadedPlanV2 v2, verify_loaded_plan_v2(root, std::move(sealed)));
    return VerifiedPlan(std::move(v2));
  }
  DOT_ASSIGN_OR_RETURN(LoadedPlan v1, verify_loaded_plan(root, std::move(sealed)));
  return VerifiedPlan(std::move(v1));
}

Result<ApplyOutcome> apply_plan(Root& root, std::string_view id, InterruptGuard* interrupt,
                                const ProgressFn& progress) {
  store::Store& st = root.store();
  DOT_ASSIGN_OR_RETURN(store::TxnId txn, st.find(id));
  DOT_ASSIGN_OR_RETURN(store::TxnSummary summary, st.summary(txn));
  DOT_TRY(refuse_if_unfinished(root));
  if (summary.state != store::State::Sealed)
    return make_error(core::ErrorKind::NotSealed,
                      fmt::format("plan {} is {}, not SEALED: a sealed plan applies exactly once", summary.plan_id,
                                  store::state_name(summary.state)));
  DOT_ASSIGN_OR_RETURN(VerifiedPlan verified, load_any_verified_plan(root, txn));
  if (const auto* v2 = std::get_if<LoadedPlanV2>(&verified)) return apply_plan_v2(root, *v2, interrupt, progress);
  LoadedPlan& lp = std::get<LoadedPlan>(verified);
  const std::string& plan_id = lp.sealed.plan_id;
  if (lp.plan.pre_capability())
    return make_error(core::ErrorKind::PreCapability,
                      fmt::format("plan {} was sealed before the post-commit-effects capability and is never newly "
                                  "applied: re-plan",
                                  plan_id));

  // Step 3: every target still equals its before snapshot, else STALE.
  const auto& ops = lp.plan.operations;
  std::vector<store::Blob> backups;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    auto observed = observe_target(root.root_fd(), ops[i].name);
    Status same;
    if (!observed.ok()) {
      same = observed.error();
    } else if (observed->snapshot != ops[i].before) {
      same = make_error(core::ErrorKind::Changed,
                        fmt::format("target {} changed since it was observed at plan time", ops[i].name));
    }
    if (!same.ok()) return make_stale(root, txn, same.error());
    store::Blob b;
    b.slot = static_cast<std::uint32_t>(i);
    b.exists = ops[i].before.exists;
    if (b.exists) {
      b.sha256 = ops[i].before.sha256.hex();
      b.bytes = observed->content;
      lp.before[i] = observed->content;
    }
    backups.push_back(std::move(b));
  }

  // Step 4: durable backups before any target changes.
  DOT_TRY(st.prepare(txn, backups));
  if (interrupt && interrupt->interrupted())
    return interrupted_error(root, interrupt->signal(), plan_id, store::State::Prepared);
  DOT_TRY(st.transition(txn, store::State::Committing));
  lp.sealed.state = store::State::Committing;

  // Step 5: one atomic replace per slot.
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (interrupt && interrupt->interrupted())
      return interrupted_error(root, interrupt->signal(), plan_id, store::State::Committing);
    bool renamed = false;
    Status s = commit_slot(root.root_fd(), plan_id, i, ops[i], lp.after[i], root.hooks(), renamed);
    if (s.ok()) continue;
    Error cause = s.error();
    // Only what this apply renamed is undone: a slot refused at its re-check
    // was never touched (and may now hold someone else's file).
    DOT_TRY(roll_back(root, txn, lp, cause, renamed ? i + 1 : i));
    cause.detail += "; the transaction was rolled back (ROLLED_BACK), no target is half-written";
    return cause;
  }
  DOT_TRY(st.transition(txn, store::State::Committed));

  // Step 6: effects, then DONE.
  DOT_TRY(run_effects(root, txn, plan_id, lp.plan));
  return ApplyOutcome{txn, plan_id, store::State::Done, ops.size()};
}

}  // namespace dot::core
