// The hello profile org.dot.hello/v1 in the one plan pipeline
// (docs/spec/dpp-hello.md): the restricted case. Writes only, of flat slot
// names, each staged at mode 0600 and at most 64 KiB; the target policy
// allows no group or other bit; the whole plan is sealed, as a version-1
// document, or none of it (every target already its after: NO_CHANGES).
#include <algorithm>

#include "dot/base/sha256.h"
#include "dot/dpp/hello.h"
#include "plan_profile.h"

namespace dot::core {
namespace {

namespace hello = dpp::hello;

// The version-1 plan of a draft: its operations by slot name.
Plan plan_v1(const PlanDraft& draft) {
  Plan plan;
  plan.effects = draft.plan.effects;
  plan.nonce = draft.plan.nonce;
  plan.plugin_digest = draft.plan.plugin_digest;
  plan.proposal_id = draft.plan.proposal_id;
  plan.root_id = draft.plan.root_id;
  for (const PathOperation& op : draft.plan.operations)
    plan.operations.push_back(Operation{op.after, op.before, op.path});
  return plan;
}

class HelloProfile final : public PlanProfile {
 public:
  Status shape_session(Root&, const PlanOptions&, const Manifest&, dpp::HostSessionOptions&,
                       ProfileContainment&) override {
    return {};  // the session's and the sandbox's defaults are this profile's
  }

  Status negotiate(dpp::HostSession& s, std::string_view assurance, const std::string& nonce,
                   const Manifest& manifest) override {
    dpp::InitializeParams sent = hello::initialize_params(assurance, nonce);
    DOT_ASSIGN_OR_RETURN(dpp::InitializeResult echo, s.initialize(sent));
    return hello::check_identity(sent, echo, manifest.id);
  }

  Result<Proposal> propose(dpp::HostSession& s, Root&, const Manifest&, const Owner&) override {
    DOT_ASSIGN_OR_RETURN(dpp::PlanResult proposed, s.plan());
    DOT_TRY(hello::check_hello_allowlists(proposed));
    names_ = proposed.names;
    Proposal p;
    for (const auto& e : proposed.effects) p.effects.push_back(Effect{e.failure_policy, e.kind, e.target});
    for (const auto& name : proposed.names)
      p.add(PathOperation{Action::Write, Snapshot::absent(), Snapshot::absent(), name}, kArtifactMode, 0);
    return p;
  }

  Result<PathTarget> observe(int root_fd, std::string_view path, std::size_t, ParentFolders&, StatCache&) override {
    DOT_ASSIGN_OR_RETURN(ObservedTarget t, observe_target(root_fd, path));
    const std::uint64_t size = t.content.size();
    return PathTarget{std::move(t.snapshot), size, std::move(t.content)};
  }

  std::vector<Folder> folders(const PlanDraft&, const ParentFolders&) override { return {}; }

  Status write_proposal_document(const PlanDraft& draft, ByteSink& out) override {
    DOT_ASSIGN_OR_RETURN(std::string document, core::proposal_document(plan_v1(draft)));
    return out.write(document);
  }

  // A hello plugin declares no digests: only its stage tells.
  bool known_to_change_nothing(const PlanDraft&) const override { return false; }

  Status read_stage(dpp::HostSession& s, const Stage& stage, const PlanDraft&, const StagedFileSink& take) override {
    DOT_ASSIGN_OR_RETURN(claimed_, s.materialize());
    DOT_TRY(hello::check_artifacts(names_, claimed_));
    DOT_TRY(stage.check_unchanged());
    DOT_ASSIGN_OR_RETURN(std::vector<std::string> contents, dpp::read_hello_stage(stage.fd(), claimed_));
    DOT_TRY(stage.check_unchanged());
    // Every operation is a write.
    for (std::size_t i = 0; i < contents.size(); ++i)
      DOT_TRY(take(i, StagedFile{Sha256Digest::of(contents[i]), contents[i].size(), std::move(contents[i])}));
    return {};
  }

  Status check_stage_holds_only(const Stage& stage) override {
    return dpp::check_hello_stage_holds_only(stage.fd(), claimed_);
  }

  Result<Sealing> seal(PlanDraft& draft, const Stage&, PlanOutcome& out) override {
    Plan& plan = out.plan = plan_v1(draft);
    Sealing sealing;
    store::SealInput& seal = sealing.input;
    for (std::size_t i = 0; i < plan.operations.size(); ++i) {
      const Operation& op = plan.operations[i];
      PathSlot& slot = draft.slots[i];
      std::string bytes = slot.after_content().value_or(std::string());
      seal.operations.push_back(store::OperationSummary{op.name, op.before.sha256.hex(), op.after.sha256.hex()});
      out.slots.push_back(PlannedSlot{op.name, slot.before_content().value_or(std::string()), bytes});
      store::Blob blob;
      blob.slot = static_cast<std::uint32_t>(i);
      blob.bytes = std::move(bytes);
      blob.sha256 = op.after.sha256.hex();
      seal.artifacts.push_back(std::move(blob));
    }
    // Every target already is what the plugin proposes (content, mode,
    // owner): nothing is sealed, nothing to apply, nothing to go stale.
    if (std::all_of(plan.operations.begin(), plan.operations.end(), is_hello_noop)) {
      sealing.no_changes = true;
      return sealing;
    }
    // What is sealed passes exactly the check every later load of it makes.
    DOT_TRY(check_plan_invariants(plan));
    DOT_ASSIGN_OR_RETURN(seal.canonical_plan, canonical_bytes(plan));
    seal.effect_count = static_cast<std::uint32_t>(plan.effects->size());
    return sealing;
  }

 private:
  std::vector<std::string> names_;  // the proposed slot names, in order
  dpp::MaterializeResult claimed_;  // what dot.materialize claimed
};

}  // namespace

std::unique_ptr<PlanProfile> make_hello_profile() { return std::make_unique<HelloProfile>(); }

}  // namespace dot::core
