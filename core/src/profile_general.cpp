// The general profile org.dot.dpp/v1 in the one plan pipeline
// (docs/spec/dpp-general.md): negotiated limits, declared inputs and dot.log;
// writes, symlinks and removes of nested paths; every target and parent folder
// observed beneath the root; the plan sealed as a version-2 document without
// its no-ops, its files streamed from the stage into the store, so memory
// stays bounded by the limits' shape and not by the bytes proposed.
#include <algorithm>
#include <span>

#include <fmt/format.h>

#include "dot/base/utf8.h"
#include "dot/core/effects.h"
#include "dot/core/error_kinds.h"
#include "dot/dpp/error_kinds.h"
#include "dot/dpp/general.h"
#include "dot/dpp/path_rules.h"
#include "plan_profile.h"

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

// The plugin's declared inputs that lie inside the root, as paths relative
// to it (register checks each is absolute and free of symlinks, so the
// comparison is of the paths as spelled).
std::vector<std::string> inputs_inside(std::string_view root, const std::vector<std::string>& inputs) {
  std::string prefix(root);
  while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
  if (prefix != "/") prefix += '/';
  std::vector<std::string> out;
  for (std::string input : inputs) {
    while (input.size() > 1 && input.back() == '/') input.pop_back();
    if (input.size() > prefix.size() && input.starts_with(prefix)) out.push_back(input.substr(prefix.size()));
  }
  return out;
}

// One operation of dot.plan's answer as the plan's record, its strings
// moved: a declared write's after is what the plugin declared (its staged
// bytes, if core asks for them, must be exactly that), a link's its text.
// (The size of that after is the declared size, or the link text's.)
PathOperation proposed_operation(general::Operation& op, std::uint16_t mode, const Owner& owner) {
  const Action action = op.action == "write" ? Action::Write : op.action == "link" ? Action::Link : Action::Remove;
  Snapshot after = Snapshot::absent();
  if (op.digest) {
    after = Snapshot{.exists = true,
                     .mode = mode,
                     // The decoder held a declared digest to 64 lowercase hex digits.
                     .sha256 = *Sha256Digest::from_hex(op.digest->sha256),
                     .gid = owner.gid,
                     .uid = owner.uid};
  } else if (action == Action::Link) {
    after = link_snapshot(op.link_text.value_or(std::string()), owner.uid, owner.gid);
  }
  return PathOperation{action, std::move(after), Snapshot::absent(), std::move(op.path)};
}

class GeneralProfile final : public PlanProfile {
 public:
  Status shape_session(Root& root, const PlanOptions& options, const Manifest& manifest, dpp::HostSessionOptions& ho,
                       ProfileContainment& contained) override {
    ho.profile = dpp::Profile::General;
    ho.general_limits = limits_;
    ho.plugin_id = manifest.id;
    if (options.on_log)
      ho.on_log = [&options](const dpp::LogEntry& e) {
        options.on_log(store::LogRecord{e.level, e.message, std::string(dpp::method_name(e.method))});
      };
    // Each input is checked again as register checked it (a directory, no
    // symlink on its path, apart from the root) before the plugin may read
    // it; under process assurance these descriptors are what it may read.
    for (const auto& dir : manifest.inputs) {
      DOT_ASSIGN_OR_RETURN(UniqueFd opened, open_input(root, dir));
      contained.inputs.push_back(std::move(opened));
    }
    DOT_ASSIGN_OR_RETURN(PluginCache cache, open_plugin_cache(root, manifest.id));
    contained.cache = std::move(cache.fd);
    cache_path_ = std::move(cache.path);
    contained.limits = dpp::containment_limits(dpp::Profile::General);
    contained.stage_folders = true;
    return {};
  }

  Status negotiate(dpp::HostSession& s, std::string_view assurance, const std::string& nonce,
                   const Manifest& manifest) override {
    // The inputs the plugin was registered with, in registration order, and
    // the cache folder shape_session made.
    const general::InitializeParams sent = general::initialize_params(assurance, nonce, manifest.inputs, cache_path_);
    DOT_ASSIGN_OR_RETURN(general::InitializeResult echo, s.initialize(sent));
    // Whether log was negotiated: the session enforces it. Whether digests
    // were: the plan's writes then declare their after. Whether cache was:
    // nothing for core to do (the folder is there either way).
    DOT_ASSIGN_OR_RETURN(general::Negotiated negotiated, general::check_identity(sent, echo, manifest.id));
    digests_ = negotiated.digests;
    return {};
  }

  Result<Proposal> propose(dpp::HostSession& s, Root& root, const Manifest& manifest, const Owner& owner) override {
    // managed: the paths this plugin owns in the root, from dot-core's own
    // history (never from what a plugin claims).
    general::PlanParams asked;
    DOT_ASSIGN_OR_RETURN(asked.managed, owned_paths(root, manifest.id));
    inputs_below_ = inputs_inside(root.layout().root, manifest.inputs);
    // Each batch of the answer becomes the plan's records as it is decoded
    // (the decoded list whole beside the records was 16 MB at 100,000
    // operations). The rules keep their order: the paths' over the whole
    // list first, then the first operation refused on its own.
    Proposal p;
    // A plan of a managed tree names about the paths it manages (each kept,
    // changed or removed): room for them up front, so that the records are
    // not moved while the list grows (untouched room costs no memory).
    p.operations.reserve(asked.managed.size());
    Status refused;
    auto take = [&](std::vector<general::Operation>& batch) {
      for (auto& op : batch) {
        if (refused.ok())
          refused = dpp::check_proposed_operation(
              dpp::ProposedOperation{op.action, op.mode, op.path, op.link_text ? &*op.link_text : nullptr});
        // Permission bits, as the plan's records hold them: a mode over 07777
        // refuses the whole proposal (check_proposed_operation above), so only
        // a refused proposal's records hold a cut one.
        const auto mode = static_cast<std::uint16_t>(op.mode);
        PathOperation record = proposed_operation(op, mode, owner);
        const std::uint64_t after_size = op.digest ? op.digest->size : record.after.link_text.size();
        p.add(std::move(record), mode, after_size);
      }
    };
    DOT_ASSIGN_OR_RETURN(general::PlanResult proposed, s.plan(asked, digests_, take));
    // Sent; from here only each operation's answer is kept, and the list
    // goes before the paths are judged. The store lists them by path
    // (SQLite's BINARY order is std::string's); sorted again should that
    // ever change.
    if (!std::is_sorted(asked.managed.begin(), asked.managed.end()))
      std::sort(asked.managed.begin(), asked.managed.end());
    std::vector<bool> owned(p.operations.size());
    for (std::size_t i = 0; i < owned.size(); ++i)
      owned[i] = std::binary_search(asked.managed.begin(), asked.managed.end(), p.operations[i].path);
    p.managed = std::move(owned);
    asked.managed = {};
    DOT_TRY(check_effects(proposed));
    {
      std::vector<std::string_view> paths, writes;
      paths.reserve(p.operations.size());
      for (const auto& op : p.operations) {
        paths.push_back(op.path);
        if (op.action == Action::Write) writes.push_back(op.path);
      }
      DOT_TRY(dpp::check_plan_paths(paths));
      DOT_TRY(refused);
      std::vector<dpp::ProposedFolder> folders;
      folders.reserve(proposed.directories.size());
      for (const auto& f : proposed.directories) folders.push_back(dpp::ProposedFolder{f.mode, f.path});
      DOT_TRY(dpp::check_proposed_folders(folders, writes));
    }
    for (const auto& f : proposed.directories) p.folder_modes.emplace(f.path, f.mode);
    const auto& e = proposed.effects.front();
    p.effects.push_back(Effect{e.failure_policy, e.kind, e.target});
    return p;
  }

  Result<PathTarget> observe(int root_fd, std::string_view path, std::size_t keep_bytes, ParentFolders& parents,
                             StatCache& cache) override {
    for (const auto& input : inputs_below_)
      if (path == input || (path.size() > input.size() && path.starts_with(input) && path[input.size()] == '/'))
        return make_error(core::ErrorKind::InsideInput,
                          fmt::format("target \"{}\" is inside the plugin's own input \"{}\": a plugin never writes "
                                      "what it reads",
                                      shown(path.substr(0, 512)), shown(std::string_view(input).substr(0, 512))));
    return observe_path_target(root_fd, path, limits_.max_file_bytes, keep_bytes, parents, judge_, &cache);
  }

  std::vector<Folder> folders(const PlanDraft& draft, const ParentFolders& parents) override {
    std::set<std::string, std::less<>> existing;
    for (const auto& [folder, exists] : parents)
      if (exists) existing.insert(folder);
    return derive_directories(draft.plan.operations, existing, draft.proposal.folder_modes);
  }

  Status write_proposal_document(const PlanDraft& draft, ByteSink& out) override {
    return core::write_proposal_document(draft.plan, digests_, out);
  }

  bool known_to_change_nothing(const PlanDraft& draft) const override {
    return digests_ && changes_nothing(draft.plan.operations);
  }

  Status read_stage(dpp::HostSession& s, const Stage& stage, const PlanDraft& draft,
                    const StagedFileSink& take) override {
    const std::vector<PathOperation>& ops = draft.plan.operations;
    // Without digests every write is staged; with them, only the writes
    // whose declared after differs from the target core observed.
    std::vector<std::size_t> asked;  // operation indices, in order
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (ops[i].action == Action::Write && (!digests_ || needs_staging(ops[i]))) asked.push_back(i);
    // Each claim is judged as it is decoded and kept only when nothing
    // else holds what it says (without digests): at 100,000 writes the
    // claims were 23 MB.
    dpp::ClaimCheck claims(asked.size(), [&](std::size_t c) { return declared(draft, asked[c]); });
    std::size_t next_excluded = 0;
    auto take_claims = [&](std::vector<general::Artifact>& batch) {
      for (general::Artifact& claim : batch) {
        // Without digests the plugin stages every write it proposed, the
        // excluded ones too: those claims come in their place, and their
        // files stay unread (allowed in the stage, never sealed). (With
        // digests core names what to stage, and an excluded write is never named.)
        if (!digests_ && next_excluded < draft.excluded_writes.size() &&
            claim.path == draft.excluded_writes[next_excluded]) {
          ++next_excluded;
          excluded_claims_.push_back(std::move(claim));
          continue;
        }
        claims.take(claim);
        if (!digests_) claimed_.push_back(std::move(claim));
      }
    };
    {
      // The paths asked for are views of the plan's, written into the request.
      std::vector<std::string_view> paths;
      if (digests_) {
        paths.reserve(asked.size());
        for (std::size_t at : asked) paths.push_back(ops[at].path);
      }
      const auto named = digests_ ? std::optional<std::span<const std::string_view>>(paths) : std::nullopt;
      // Every claim was handed on: the result's list is empty.
      DOT_ASSIGN_OR_RETURN(general::MaterializeResult rest, s.materialize_general(named, take_claims));
      (void)rest;
    }
    if (next_excluded != draft.excluded_writes.size())
      return make_error(dpp::ErrorKind::Count,
                        fmt::format("dot.materialize claims {} of the {} writes --exclude left out: every proposed "
                                    "write has exactly one artifact, in operation order",
                                    next_excluded, draft.excluded_writes.size()));
    DOT_TRY(claims.finish());
    // What each asked write's file must be: its declaration (which its
    // claim is), or its claim. The excluded writes' claims after them, for
    // the check of the whole stage.
    staged_.reserve(asked.size() + excluded_claims_.size());
    for (std::size_t c = 0; c < asked.size(); ++c)
      staged_.push_back(digests_ ? declared(draft, asked[c]) : dpp::claimed(claimed_[c]));
    DOT_TRY(stage.check_unchanged());
    DOT_TRY(dpp::read_stage(stage.fd(), std::span(staged_).first(asked.size())));
    DOT_TRY(stage.check_unchanged());
    // No bytes kept: the planner reads back only the files that change, for their diff.
    for (std::size_t c = 0; c < asked.size(); ++c)
      DOT_TRY(take(asked[c], StagedFile{staged_[c].sha256, staged_[c].size, std::nullopt}));
    for (const general::Artifact& claim : excluded_claims_) staged_.push_back(dpp::claimed(claim));
    return {};
  }

  Status check_stage_holds_only(const Stage& stage) override {
    DOT_TRY(dpp::check_stage_holds_only(stage.fd(), staged_));
    // The last use of the claims: they go before the plan is sealed.
    staged_ = {};
    claimed_ = {};
    excluded_claims_ = {};
    return {};
  }

  Result<Sealing> seal(PlanDraft& draft, const Stage& stage, PlanOutcome& out) override {
    out.version = kPlanVersion2;
    Sealing sealing;
    // Every operation already holds what the plugin proposes: nothing is
    // sealed; the proposal, its stderr and its log stay inspectable.
    if (changes_nothing(draft.plan.operations)) {
      sealing.no_changes = true;
      out.plan_v2 = std::move(draft.plan);
      return sealing;
    }
    // The operations and their slots without the no-ops, in place: the
    // plan's records are never copied (at 100,000 paths a copy was 33 MB).
    std::vector<PathSlot>& slots = draft.slots;
    keep_indices(slots, [&ops = draft.plan.operations](std::size_t i) { return !is_general_noop(ops[i]); });
    // The proposal's id was computed once, from the document stored with it
    // (fill_after holds every declared after to what was staged, so the
    // document is still the plan's). Done with the draft's plan: moved.
    PlanV2& sealed = out.plan_v2 = sealed_from(std::move(draft.plan), draft.proposal_id);
    // What is sealed passes exactly the checks every later load of it makes.
    DOT_TRY(check_plan_invariants(sealed));
    store::SealInput& seal = sealing.input;
    seal.streamed = true;
    // Each row a view into the sealed plan, made as the store writes it
    // (a copy of every path and digest was 25 MB at 100,000 paths).
    seal.operation_count = sealed.operations.size();
    seal.operation_at = [&ops = sealed.operations](std::size_t i) {
      return store::SealRow{ops[i].path, ops[i].before.sha256.hex(), ops[i].after.sha256.hex()};
    };
    // The plan and its slots outlive the seal: they are the outcome's.
    const std::vector<PathSlot>& sealed_slots = out.path_slots = std::move(slots);
    // A link's artifact is its text, like a file's bytes: the store keeps
    // one file per operation with an after, whatever its kind. Each file's
    // record is made when the store reads it (listed, they were 13 MB at
    // 100,000 files): only the operations' indices are kept.
    for (std::size_t i = 0; i < sealed.operations.size(); ++i)
      if (sealed.operations[i].action != Action::Remove) file_operations_.push_back(static_cast<std::uint32_t>(i));
    seal.file_count = file_operations_.size();
    seal.file_at = [this, &ops = sealed.operations, &sealed_slots](std::size_t k) {
      const std::uint32_t i = file_operations_[k];
      return store::FileBlob{i, true, sealed_slots[i].after_size, ops[i].after.sha256.hex()};
    };
    // The store reads each file again through the stage's descriptor and
    // checks its size and digest as it streams (what the plugin could still
    // have touched before it exited is caught there).
    seal.open_file = [&stage, &ops = sealed.operations](const store::FileBlob& blob) -> Result<UniqueFd> {
      const PathOperation& op = ops[blob.index];
      if (op.action == Action::Link) return text_fd(op.after.link_text, op.path);
      return dpp::open_staged_file(stage.fd(), op.path);
    };
    // The text is written twice as it is encoded (hashed, then packed into
    // the store), never held whole: 23 MB at 100,000 paths.
    seal.write_canonical = [&sealed](ByteSink& sink) { return write_canonical(sealed, sink); };
    seal.effect_count = static_cast<std::uint32_t>(sealed.effects.size());
    return sealing;
  }

 private:
  // The one comparison that decides whether core asks for a write's bytes:
  // its declared after against the target as observed (its `before`). A
  // stat cache that vouches for `before` without reading it plugs in here
  // unchanged, through observe().
  static bool needs_staging(const PathOperation& declared_write) { return !is_general_noop(declared_write); }

  // The write operation `at` as its claim must stand for it: its path and,
  // with digests, the after dot.plan declared (observe made it the write's
  // after and its slot's after_size); views into the draft.
  dpp::StagedClaim declared(const PlanDraft& draft, std::size_t at) const {
    const PathOperation& op = draft.plan.operations[at];
    if (!digests_) return dpp::StagedClaim{op.path, {}, 0};
    return dpp::StagedClaim{op.path, op.after.sha256, draft.slots[at].after_size};
  }

  const general::Limits limits_ = general::kLimits;
  WriteAccessJudge judge_;                          // one account-database lookup per group for the whole plan
  std::vector<std::string> inputs_below_;           // the declared inputs inside the root, relative to it
  bool digests_ = false;                            // negotiated: writes declare their after
  std::string cache_path_;                          // the plugin's cache folder (shape_session)
  std::vector<general::Artifact> claimed_;          // without digests: their claims, in order
  std::vector<general::Artifact> excluded_claims_;  // without digests: the claims of writes --exclude left out
  std::vector<dpp::StagedClaim> staged_;            // every file the stage holds: the asked, then the excluded
  std::vector<std::uint32_t> file_operations_;      // the sealed operations with an after, ascending (seal)
};

}  // namespace

std::unique_ptr<PlanProfile> make_general_profile() { return std::make_unique<GeneralProfile>(); }

}  // namespace dot::core
