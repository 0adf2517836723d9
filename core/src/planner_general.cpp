// `plan` for the general profile org.dot.dpp/v1 (docs/spec/dpp-general.md):
//
//   PROPOSING (make_plan) -> spawn from the pinned descriptor with the
//   general session (negotiated limits, inputs, dot.log) -> dot.initialize,
//   echo check -> dot.plan {managed} -> effects, path rules -> every target
//   and parent observed beneath the root -> the proposal document stored ->
//   dot.materialize -> every staged file read and held to the claims ->
//   dot.validate -> dot.shutdown -> exit 0 -> nothing else in the stage ->
//   the plan without its no-ops, with the folders apply creates, sealed with
//   its files streamed from the stage into the store; or, when every
//   operation is a no-op, nothing sealed (NO_CHANGES).
//
// Nothing here writes beneath the root. Memory stays bounded by the limits'
// shape, not by the bytes proposed: files are hashed and stored streaming,
// and only small ones (kDiffFileBytes, kDiffTotalBytes in all) are kept for
// the diff `plan` prints.
#include <unistd.h>

#include <fmt/format.h>

#include "dot/base/sha256.h"
#include "dot/core/effects.h"
#include "dot/core/error_kinds.h"
#include "dot/core/registry.h"
#include "dot/core/target.h"
#include "dot/dpp/general.h"
#include "dot/dpp/path_rules.h"
#include "dot/dpp/stage_reader.h"
#include "planner_internal.h"

namespace dot::core {
namespace {

namespace general = dpp::general;

Status check_effects(const general::PlanResult& proposed) {
  if (proposed.effects.size() == 1) {
    const auto& e = proposed.effects.front();
    if (is_root_sync(Effect{e.failure_policy, e.kind, e.target})) return {};
  }
  return make_error(core::ErrorKind::Effects,
                    "dot.plan effects must be exactly [{\"failure_policy\":\"required\",\"kind\":\"sync\","
                    "\"target\":\"managed-root\"}]");
}

}  // namespace

Result<PlanOutcome> run_general_proposal(Root& root, const PlanOptions& options, const Manifest& manifest,
                                         PinnedPlugin& pinned, store::TxnId txn, Session& session,
                                         std::optional<Stage>& kept_stage) {
  auto call = [&](auto&& result) { return during(options, std::forward<decltype(result)>(result)); };
  const general::Limits limits = general::kLimits;

  DOT_ASSIGN_OR_RETURN(Stage made, Stage::create(root.dirs(), txn));
  Stage& stage = kept_stage.emplace(std::move(made));
  dpp::HostSessionOptions ho;
  ho.profile = dpp::Profile::General;
  ho.general_limits = limits;
  ho.plugin_id = manifest.id;
  if (options.on_log)
    ho.on_log = [&options](const dpp::LogEntry& e) {
      options.on_log(store::LogRecord{e.level, e.message, std::string(dpp::method_name(e.method))});
    };
  // Each input is checked again as register checked it (a directory, no
  // symlink on its path, apart from the root) before the plugin may read
  // it; under process assurance these descriptors are what it may read.
  ProfileContainment contained;
  for (const auto& dir : manifest.inputs) {
    DOT_ASSIGN_OR_RETURN(UniqueFd opened, open_input(root, dir));
    contained.inputs.push_back(std::move(opened));
  }
  contained.limits = dpp::containment_limits(dpp::Profile::General);
  contained.stage_folders = true;
  std::optional<Sandbox> sandbox;
  DOT_TRY(start_session(options, pinned, stage, std::move(ho), sandbox, session, contained));
  dpp::HostSession& s = *session.host;

  DOT_ASSIGN_OR_RETURN(std::string nonce, random_hex32());
  // "process" is sent only because core installed the containment itself.
  const std::string_view assurance = sandbox ? "process" : "audit";
  if (assurance != manifest.assurance)
    return make_error(core::ErrorKind::AssuranceMisuse, "negotiated assurance differs from the manifest's");
  // The inputs the plugin was registered with, in registration order.
  const general::InitializeParams sent = general::initialize_params(assurance, nonce, manifest.inputs);
  DOT_ASSIGN_OR_RETURN(general::InitializeResult echo, call(s.initialize(sent)));
  DOT_ASSIGN_OR_RETURN(bool log_negotiated, general::check_identity(sent, echo, manifest.id));
  (void)log_negotiated;  // the session enforces it
  // managed: the paths this plugin owns in the root, from dot-core's own
  // history (never from what a plugin claims).
  general::PlanParams asked;
  DOT_ASSIGN_OR_RETURN(asked.managed, owned_paths(root, manifest.id));
  DOT_ASSIGN_OR_RETURN(general::PlanResult proposed, call(s.plan(asked)));
  DOT_TRY(check_effects(proposed));
  {
    std::vector<dpp::ProposedOperation> ops;
    ops.reserve(proposed.operations.size());
    for (const auto& op : proposed.operations) ops.push_back(dpp::ProposedOperation{op.action, op.mode, op.path});
    DOT_TRY(dpp::check_proposed_operations(ops));
  }

  // Every target and parent, through descriptors beneath the root.
  PlanV2 plan;
  plan.effects.push_back(Effect{proposed.effects.front().failure_policy, proposed.effects.front().kind,
                                proposed.effects.front().target});
  plan.nonce = nonce;
  plan.plugin_digest = manifest.sha256;
  plan.plugin_id = manifest.id;
  plan.root_id = root.root_id();
  ParentFolders parents;
  std::vector<PathSlot> slots;
  std::size_t kept = 0;
  for (const auto& op : proposed.operations) {
    const std::size_t keep = kept < kDiffTotalBytes ? std::min(kDiffFileBytes, kDiffTotalBytes - kept) : 0;
    DOT_ASSIGN_OR_RETURN(PathTarget t, observe_path_target(root.root_fd(), op.path, limits.max_file_bytes, keep, parents));
    PathOperation po;
    po.action = op.action == "write" ? Action::Write : Action::Remove;
    po.before = t.snapshot;
    po.after = Snapshot::absent();
    po.path = op.path;
    plan.operations.push_back(std::move(po));
    PathSlot slot;
    slot.path = op.path;
    slot.action = plan.operations.back().action;
    slot.before = t.snapshot;
    slot.before_size = t.size;
    if (t.content) kept += t.content->size();
    slot.before_content = std::move(t.content);
    slots.push_back(std::move(slot));
  }
  std::set<std::string, std::less<>> existing;
  for (const auto& [folder, exists] : parents)
    if (exists) existing.insert(folder);
  plan.directories = derive_directories(plan.operations, existing);
  // What was proposed is kept whatever happens next (sealed or abandoned).
  DOT_ASSIGN_OR_RETURN(std::string proposal, proposal_document(plan));
  const std::string proposal_id = sha256_hex(proposal);
  DOT_TRY(root.store().set_proposal_id(txn, proposal_id, proposal));
  // Checked once the proposal is stored, so that `inspect show` of the
  // refusal shows what the plugin wanted to touch.
  {
    std::vector<std::string> paths;
    paths.reserve(plan.operations.size());
    for (const auto& op : plan.operations) paths.push_back(op.path);
    DOT_TRY(check_ownership(root, manifest.id, paths));
  }

  DOT_ASSIGN_OR_RETURN(general::MaterializeResult staged, call(s.materialize_general()));
  std::vector<std::string> writes;
  for (const auto& op : plan.operations)
    if (op.action == Action::Write) writes.push_back(op.path);
  dpp::StageLimits stage_limits;
  stage_limits.max_file_bytes = limits.max_file_bytes;
  stage_limits.max_total_bytes = limits.max_total_bytes;
  stage_limits.keep_file_bytes = kDiffFileBytes;
  stage_limits.keep_total_bytes = kDiffTotalBytes > kept ? kDiffTotalBytes - kept : 0;
  DOT_TRY(stage.check_unchanged());
  DOT_ASSIGN_OR_RETURN(std::vector<dpp::StagedFile> files,
                       dpp::read_stage(stage.fd(), writes, staged.artifacts, stage_limits));
  DOT_TRY(stage.check_unchanged());
  DOT_TRY(call(s.validate()));
  DOT_TRY(call(s.shutdown()));
  DOT_TRY(call(s.finish()));
  if (options.interrupt) options.interrupt->set_plugin_group(0);
  DOT_TRY(check_interrupt(options));
  // Once the plugin is gone the stage can no longer change: it must hold
  // exactly the claimed files (what the session itself reports comes first).
  DOT_TRY(stage.check_unchanged());
  DOT_TRY(dpp::check_stage_holds_only(stage.fd(), staged.artifacts));

  PlanOutcome out;
  out.txn = txn;
  out.version = kPlanVersion2;
  out.plugin_stderr = s.stderr_bytes();
  out.logs = log_records(s.logs());
  // Each write's after: the requested mode, our uid and gid, the staged digest.
  for (std::size_t i = 0, w = 0; i < plan.operations.size(); ++i) {
    PathOperation& op = plan.operations[i];
    if (op.action != Action::Write) continue;
    op.after.exists = true;
    op.after.gid = ::getegid();
    op.after.mode = proposed.operations[i].mode;
    op.after.sha256 = files[w].sha256;
    op.after.uid = ::geteuid();
    slots[i].after = op.after;
    slots[i].after_size = files[w].size;
    slots[i].after_content = std::move(files[w].content);
    ++w;
  }
  DOT_ASSIGN_OR_RETURN(PlanV2 sealed, seal_from_proposal(plan));
  if (sealed.proposal_id != proposal_id)
    return make_error(core::ErrorKind::ProposalId, "the sealed plan's proposal_id is not the stored proposal's");
  // Every operation already holds what the plugin proposes: nothing is
  // sealed; the proposal, its stderr and its log stay inspectable.
  if (sealed.operations.empty()) {
    out.no_changes = true;
    out.plan_v2 = std::move(plan);
    out.plan_v2.proposal_id = proposal_id;
    store::Abandonment unchanged;
    unchanged.code = std::string(store::kNoChangesCode);
    unchanged.detail = "every target already holds what the plugin proposed; nothing was sealed";
    unchanged.plugin_stderr = out.plugin_stderr;
    DOT_TRY(root.store().abandon(txn, unchanged, out.logs));
    return out;
  }

  DOT_ASSIGN_OR_RETURN(std::string canonical, canonical_bytes(sealed));
  // What is sealed passes exactly the checks every later load of it makes.
  DOT_ASSIGN_OR_RETURN(PlanV2 reloaded, decode_canonical_plan_v2(canonical));
  (void)reloaded;
  DOT_TRY(check_proposal_binding(sealed, proposal));
  DOT_TRY(check_plan_invariants(sealed));

  store::SealInput seal;
  seal.canonical_plan = std::move(canonical);
  seal.plan_id = sha256_hex(seal.canonical_plan);
  seal.proposal_id = proposal_id;
  seal.effect_count = static_cast<std::uint32_t>(sealed.effects.size());
  seal.plugin_stderr = out.plugin_stderr;
  seal.logs = out.logs;
  seal.streamed = true;
  for (std::size_t i = 0, w = 0; i < plan.operations.size(); ++i) {
    const PathOperation& op = plan.operations[i];
    const bool write = op.action == Action::Write;
    if (is_general_noop(op)) {
      w += write ? 1 : 0;
      continue;
    }
    const auto index = static_cast<std::uint32_t>(seal.operations.size());
    seal.operations.push_back(store::OperationSummary{op.path, op.before.sha256, op.after.sha256});
    out.path_slots.push_back(std::move(slots[i]));
    if (!write) continue;
    seal.files.push_back(store::FileBlob{index, true, files[w].size, files[w].sha256});
    ++w;
  }
  // The store reads each file again through the stage's descriptor and
  // checks its size and digest as it streams (what the plugin could still
  // have touched before it exited is caught there).
  seal.open_file = [&](const store::FileBlob& blob) -> Result<UniqueFd> {
    return dpp::open_staged_file(stage.fd(), seal.operations[blob.index].name);
  };
  DOT_TRY(root.store().seal(txn, seal));
  out.plan_id = seal.plan_id;
  out.plan_v2 = std::move(sealed);
  return out;
}

}  // namespace dot::core
