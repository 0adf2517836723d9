// `dot-core plan`: the one plan pipeline of every profile, as named passes in
// the order they happen (planner.h; docs/engine.md, "Plan"). What a profile
// adds (negotiation, the shape of its dot.plan answer, its target policy,
// its stage, its plan document) is plan_profile.h's interface.
#include "dot/core/planner.h"

#include <algorithm>
#include <cerrno>
#include <memory>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <dtl/dtl.hpp>

#include "dot/base/path_glob.h"
#include "dot/base/plugin_executable.h"
#include "dot/base/sandbox.h"
#include "dot/base/sha256.h"
#include "dot/base/utf8.h"
#include "dot/core/error_kinds.h"
#include "dot/core/rollback.h"
#include "dot/core/stat_cache.h"
#include "dot/dpp/general.h"
#include "dot/dpp/hello.h"
#include "plan_profile.h"

namespace dot::core {
namespace {

// What a ByteSink is given, hashed and counted, and kept nowhere.
class DigestSink final : public ByteSink {
 public:
  Status write(std::string_view bytes) override {
    hash_.update(bytes);
    bytes_ += bytes.size();
    return {};
  }
  DocumentDigest finish() { return DocumentDigest{to_hex(hash_.finish()), bytes_}; }

 private:
  Sha256 hash_;
  std::uint64_t bytes_ = 0;
};

// The bytes of `path` beneath `dir_fd` (the root, or the stage when
// `staged`) when they are at most kDiffFileBytes and hash to `sha256`.
std::optional<std::string> kept_bytes_of(int dir_fd, const std::string& path, const Sha256Digest& sha256, bool staged) {
  Result<beneath::FileObservation> o = beneath::FileObservation{};
  const beneath::ObserveOptions keep{.max_bytes = kDiffFileBytes, .keep_content = true};
  if (staged) {
    auto fd = dpp::open_staged_file(dir_fd, path);
    if (!fd.ok()) return std::nullopt;
    o = beneath::observe_fd(fd->get(), keep);
  } else {
    o = beneath::observe_beneath(dir_fd, path, keep);
  }
  if (!o.ok() || o->too_large || sha256 != o->sha256) return std::nullopt;
  return std::move(o->content);
}

Error interrupted_error(int sig) {
  return make_error(
      core::ErrorKind::InterruptedPlan,
      fmt::format("interrupted by {}: the plugin's process group was killed", sig == SIGINT ? "SIGINT" : "SIGTERM"));
}

Status check_interrupt(const PlanOptions& options) {
  if (options.interrupt && options.interrupt->interrupted()) return interrupted_error(options.interrupt->signal());
  return {};
}

// A call's failure, reported as the signal when one killed the plugin.
template <class R>
R during(const PlanOptions& options, R result) {
  if (!result.ok() && options.interrupt && options.interrupt->interrupted())
    return R(interrupted_error(options.interrupt->signal()));
  return result;
}

// The consent a plan runs under: the plan's flag when given, else what the
// registration recorded (planner.h, PlanOptions::consent).
Result<Assurance> consent_for(const Manifest& manifest, const PlanOptions& options) {
  if (options.consent) return *options.consent;
  if (manifest.assurance == "process") return Assurance::Process;
  if (manifest.audit_consent) return Assurance::Audit;
  return make_error(core::ErrorKind::AuditConsent,
                    fmt::format("plugin {} is registered with audit assurance: it runs uncontained, with your rights, "
                                "and no consent is recorded; pass --allow-audit-plugin to this plan, or give it once "
                                "with `register --replace --allow-audit-plugin`",
                                manifest.id));
}

// The refusals of a manifest's assurance that no run could change.
Status check_consent(const Manifest& manifest, const PlanOptions& options) {
  if (manifest.assurance == "process" && options.consent != Assurance::Process)
    return make_error(core::ErrorKind::Assurance,
                      "the plugin is registered with process assurance: audit consent never satisfies it; use "
                      "--require-process-sandbox");
  if (manifest.assurance == "audit" && options.consent == Assurance::Process)
    return make_error(core::ErrorKind::Assurance,
                      "the plugin is registered with audit assurance: it would be negotiated as audit; register it "
                      "with --assurance process to run it under --require-process-sandbox");
  return {};
}

// The refusals of a plan's targets as one error: a single one as it is;
// several under the first one's code and kind, each path with its reason,
// at most kMaxListedRefusals of them and then how many more.
Error refusal_list(std::vector<Error> refused) {
  if (refused.size() == 1) return std::move(refused.front());
  std::string detail = fmt::format("{} targets are refused", refused.size());
  for (std::size_t i = 0; i < refused.size() && i < kMaxListedRefusals; ++i)
    detail += fmt::format("; {}", refused[i].detail);
  if (refused.size() > kMaxListedRefusals) detail += fmt::format("; and {} more", refused.size() - kMaxListedRefusals);
  Error first = std::move(refused.front());
  first.detail = std::move(detail);
  first.offset.reset();
  return first;
}

// One proposal, from the pinned plugin to the sealed plan. The stage and the
// session outlive the passes: make_plan removes the stage only once the
// plugin (and anything it started) is dead, so nothing writes into it while
// it goes, and records the plugin's stderr and log whatever the outcome.
class ProposalRun {
 public:
  ProposalRun(Root& root, const PlanOptions& options, const Manifest& manifest, store::TxnId txn)
      : root_(root), options_(options), manifest_(manifest), txn_(txn) {}

  Result<PlanOutcome> run(const store::PluginRecord& row) {
    DOT_ASSIGN_OR_RETURN(profile_, profile_for(manifest_, row));
    DOT_TRY(pin(row));
    DOT_TRY(start());
    DOT_TRY(negotiate());
    DOT_TRY(propose());
    DOT_TRY(observe());
    DOT_TRY(record_proposal());
    DOT_TRY(stage());
    DOT_TRY(end_plugin());
    DOT_TRY(check_afters());
    DOT_ASSIGN_OR_RETURN(PlanOutcome out, seal());
    load_diffs(out);
    return out;
  }

  std::optional<Stage>& stage_folder() { return stage_; }
  std::optional<dpp::HostSession>& host() { return host_; }

 private:
  template <class R>
  R call(R result) {
    return during(options_, std::move(result));
  }

  // The plugin opened from its sealed copy and hashed against the manifest.
  Status pin(const store::PluginRecord& row) {
    DOT_ASSIGN_OR_RETURN(PinnedPlugin pinned, open_pinned_plugin(root_, row.plugin_id));
    pinned_.emplace(std::move(pinned));
    root_.hooks().reached("plan.plugin_hashed");
    if (options_.after_hash) options_.after_hash(options_.after_hash_ctx);
    return {};
  }

  // The stage, then the plugin spawned from the pinned descriptor (then
  // closed) with the argv, script descriptor, environment and read-only
  // runtime folders PinnedPlugin gives (an ELF plugin or an interpreted one
  // alike): under process assurance inside a Sandbox prepared for that
  // descriptor and this stage, shaped by the profile. The sandbox outlives
  // the spawn (the child reads it between fork and exec).
  Status start() {
    DOT_ASSIGN_OR_RETURN(Stage made, Stage::create(root_.dirs(), txn_));
    const Stage& stage = stage_.emplace(std::move(made));
    dpp::HostSessionOptions ho;
    ho.limits.deadline = options_.deadline;
    ProfileContainment profile;
    DOT_TRY(profile_->shape_session(root_, options_, manifest_, ho, profile));
    ho.exec_fd = pinned_->exec_fd.get();
    ho.stage_dir = stage.path();
    ho.spawn.argv = pinned_->argv;
    ho.extra_env = pinned_->extra_env(stage.path());
    if (pinned_->script_fd) ho.spawn.keep_fds = {{pinned_->script_fd.get(), kScriptChildFd}};
    if (options_.consent == Assurance::Process) {
      SandboxPolicy policy;
      policy.executable_fd = pinned_->exec_fd.get();
      policy.executable_path = pinned_->exec_path;
      policy.script_fd = pinned_->script_fd ? pinned_->script_fd.get() : -1;
      policy.stage_fd = stage.fd();
      policy.limits = profile.limits;
      policy.stage_folders = profile.stage_folders;
      policy.cache_fd = profile.cache ? profile.cache.get() : -1;
      for (const UniqueFd& dir : profile.inputs) policy.read_only_dir_fds.push_back(dir.get());
      for (const UniqueFd& dir : pinned_->runtime_dirs) policy.read_only_dir_fds.push_back(dir.get());
      DOT_ASSIGN_OR_RETURN(Sandbox prepared, Sandbox::prepare(policy));
      sandbox_.emplace(std::move(prepared));
      DOT_TRY(sandbox_->apply_to(ho.spawn));
      ho.containment = sandbox_->limits();
    }
    DOT_TRY(check_interrupt(options_));
    DOT_ASSIGN_OR_RETURN(dpp::HostSession host, dpp::HostSession::start(std::move(ho)));
    host_.emplace(std::move(host));
    if (options_.interrupt) options_.interrupt->set_plugin_group(host_->pid());
    pinned_->exec_fd.reset();
    pinned_->script_fd.reset();
    return {};
  }

  // dot.initialize with a fresh nonce; "process" is sent only because core
  // installed the containment itself.
  Status negotiate() {
    DOT_ASSIGN_OR_RETURN(draft_.nonce, random_hex32());
    const std::string_view assurance = sandbox_ ? dpp::hello::kAssuranceProcess : dpp::hello::kAssuranceAudit;
    if (assurance != manifest_.assurance)
      return make_error(core::ErrorKind::AssuranceMisuse, "negotiated assurance differs from the manifest's");
    return call(profile_->negotiate(*host_, assurance, draft_.nonce, manifest_));
  }

  Status propose() {
    DOT_ASSIGN_OR_RETURN(draft_.proposal, call(profile_->propose(*host_, root_, manifest_, Owner{euid_, egid_})));
    return exclude();
  }

  // `plan --exclude`: the operations a pattern covers are left out before
  // anything is observed, and the patterns recorded in the plan.
  Status exclude() {
    if (options_.exclude.empty()) return {};
    std::vector<PathGlob> globs;
    for (const auto& pattern : options_.exclude) {
      DOT_ASSIGN_OR_RETURN(PathGlob glob, PathGlob::parse(pattern));
      globs.push_back(std::move(glob));
    }
    Proposal& proposal = draft_.proposal;
    const std::size_t before = proposal.operations.size();
    proposal.keep_if([&](const PathOperation& op) {
      const bool out = std::any_of(globs.begin(), globs.end(), [&](const PathGlob& g) { return g.covers(op.path); });
      if (out && op.action == Action::Write) draft_.excluded_writes.push_back(op.path);
      return !out;
    });
    excluded_ = before - proposal.operations.size();
    std::set<std::string> patterns(options_.exclude.begin(), options_.exclude.end());
    draft_.plan.exclude.assign(patterns.begin(), patterns.end());
    return {};
  }

  // Every target (and, in the general profile, every parent folder) through
  // descriptors beneath the root: the operations' `before`.
  Status observe() {
    PlanV2& plan = draft_.plan;
    plan.effects = draft_.proposal.effects;
    plan.nonce = draft_.nonce;
    plan.plugin_digest = manifest_.sha256;
    plan.plugin_id = manifest_.id;
    plan.root_id = root_.root_id();
    ParentFolders parents;
    std::vector<Error> refused;  // every target outside the policy, not only the first
    Proposal& proposal = draft_.proposal;
    // The proposal's operations become the plan's, observed in place.
    plan.operations = std::move(proposal.operations);
    draft_.modes = std::move(proposal.modes);
    const std::size_t total = plan.operations.size();
    // No bytes are kept here: which paths change (and so get a diff) is
    // known once the stage is read (load_diffs); a target whose stat
    // matches the stat cache is not read at all.
    draft_.slots.resize(total);
    // A read transaction for the stat-cache lookups of each chunk of paths,
    // then what the chunk read written to the cache: the entries of a tree
    // read whole (the first plan after apply) are never all held at once
    // (20 MB at 100,000 paths).
    constexpr std::size_t kObservedPerSave = 4096;
    for (std::size_t first = 0; first < total; first += kObservedPerSave) {
      {  // the chunk's read transaction ends before the cache is written
        DOT_ASSIGN_OR_RETURN(store::Store::ReadScope lookups, root_.store().read_scope());
        for (std::size_t i = first; i < std::min(total, first + kObservedPerSave); ++i) {
          PathOperation& op = plan.operations[i];
          Result<PathTarget> observed = profile_->observe(root_.root_fd(), op.path, 0, parents, stat_cache_);
          if (!observed.ok()) {
            Error e = std::move(observed).error();
            if (e.code != Code::Policy && e.code != Code::PathEscape) return e;
            refused.push_back(std::move(e));
            continue;
          }
          PathTarget& t = *observed;
          PathSlot& slot = draft_.slots[i];
          slot.take_over = proposal.managed && op.action != Action::Remove && t.snapshot.exists && !proposal.manages(i);
          slot.after_size = proposal.after_sizes[i];
          slot.before_size = t.size;
          slot.keep_before(std::move(t.content));
          op.before = std::move(t.snapshot);
          progress(i + 1, total, t.size);
        }
      }
      DOT_TRY(stat_cache_.save());
    }
    if (!refused.empty()) return refusal_list(std::move(refused));
    plan.directories = profile_->folders(draft_, parents);
    // What is left of the proposal that the plan does not hold.
    proposal.after_sizes = {};
    proposal.managed.reset();
    return {};
  }

  void progress(std::size_t done, std::size_t total, std::uint64_t bytes) {
    progress_bytes_ += bytes;
    if (options_.on_progress) options_.on_progress(Progress{done, total, progress_bytes_});
  }

  // The bytes of both sides of each write that changes content, for the diff
  // `plan` shows: only those paths spend the budget (kDiffFileBytes each,
  // kDiffTotalBytes in all), in operation order. Each side is read again and
  // kept only when it still hashes to what the plan holds (a side that
  // changed meanwhile is shown without a diff; apply refuses it anyway).
  // Once the plan is sealed (the stage is still there): the seal's own
  // buffers are gone by then, and the diffs never sit beside them.
  void load_diffs(PlanOutcome& out) {
    std::size_t budget = kDiffTotalBytes;
    // The hello profile keeps every side in its own slots (out.slots).
    for (std::size_t i = 0; i < out.path_slots.size(); ++i) {
      const PathOperation& op = out.plan_v2.operations[i];
      PathSlot& slot = out.path_slots[i];
      if (op.action != Action::Write || op.before.sha256 == op.after.sha256) continue;
      const std::uint64_t need = slot.before_size + slot.after_size;
      if (slot.before_size > kDiffFileBytes || slot.after_size > kDiffFileBytes || need > budget) continue;
      std::optional<std::string> before = std::string();
      if (op.before.exists) before = kept_bytes_of(root_.root_fd(), op.path, op.before.sha256, false);
      std::optional<std::string> after = kept_bytes_of(stage_->fd(), op.path, op.after.sha256, true);
      if (!before || !after) continue;
      budget -= static_cast<std::size_t>(need);
      slot.keep_before(std::move(before));
      slot.keep_after(std::move(after));
    }
  }

  // What was proposed is kept whatever happens next (sealed or abandoned);
  // ownership is checked once it is stored, so that `inspect show` of the
  // refusal shows what the plugin wanted to touch.
  Status record_proposal() {
    // The id is the digest of the document's pieces as they are written;
    // the document is stored packed as it is written again, never held
    // whole (at 100,000 paths it is 30 MB). A plan already known to change
    // nothing keeps its id only (written and then deleted, the document
    // would cost such a plan megabytes of store writes), or its document
    // when that is small.
    DOT_ASSIGN_OR_RETURN(DocumentDigest digest, profile_->proposal_digest(draft_));
    draft_.proposal_document_bytes = digest.bytes;
    draft_.proposal_id = std::move(digest.sha256);
    draft_.plan.proposal_id = draft_.proposal_id;
    const bool kept = !profile_->known_to_change_nothing(draft_) || digest.bytes <= kKeptNoChangeProposalBytes;
    if (kept) {
      DOT_TRY(root_.store().set_proposal_id(txn_, draft_.proposal_id, digest.bytes, [this](ByteSink& out) {
        return profile_->write_proposal_document(draft_, out);
      }));
    } else {
      DOT_TRY(root_.store().set_proposal_id(txn_, draft_.proposal_id));
    }
    std::vector<std::string_view> paths;
    paths.reserve(draft_.plan.operations.size());
    for (const auto& op : draft_.plan.operations) paths.push_back(op.path);
    return check_ownership(root_, manifest_.id, paths);
  }

  // dot.materialize: core reads every staged file itself; the plugin's
  // claims are only claims. Each write read back gets its after at once.
  Status stage() {
    return call(profile_->read_stage(
        *host_, *stage_, draft_, [this](std::size_t at, StagedFile file) { return fill_after(at, std::move(file)); }));
  }

  // dot.validate, dot.shutdown, exit 0, the group reaped; then the stage can
  // no longer change and must hold exactly the claimed files (checked after
  // the session ended, so that what the session reports comes first).
  Status end_plugin() {
    DOT_TRY(call(host_->validate()));
    DOT_TRY(call(host_->shutdown()));
    DOT_TRY(call(host_->finish()));
    if (options_.interrupt) options_.interrupt->set_plugin_group(0);
    DOT_TRY(check_interrupt(options_));
    DOT_TRY(stage_->check_unchanged());
    return profile_->check_stage_holds_only(*stage_);
  }

  // A write's after: the requested mode, our uid and gid, the digest of
  // what core read (never a field the plugin claimed). A declared after is
  // in the stored proposal document, whose id the sealed plan carries: what
  // was staged must be exactly it (the claims were held to it before a byte
  // was read; this keeps the id true), and it stays as it is.
  Status fill_after(std::size_t at, StagedFile file) {
    std::vector<PathOperation>& ops = draft_.plan.operations;
    if (at >= ops.size() || ops[at].action != Action::Write)
      return make_error(core::ErrorKind::Staged, "a file was read back for an operation that is not a write");
    PathOperation& op = ops[at];
    Snapshot after{.exists = true, .mode = draft_.modes[at], .sha256 = file.sha256, .gid = egid_, .uid = euid_};
    if (!op.after.exists) {
      op.after = std::move(after);
    } else if (!(op.after == after)) {
      return make_error(core::ErrorKind::ProposalId,
                        fmt::format("the after staged for \"{}\" is not the one its stored proposal declared",
                                    shown(std::string_view(op.path).substr(0, 256))));
    }
    PathSlot& slot = draft_.slots[at];
    slot.after_size = file.size;
    slot.keep_after(std::move(file.content));
    return {};
  }

  // Every write has its after once the plugin is gone: one read back, or
  // the one it declared, which its target already holds (a write core did
  // not ask for). (A link's after, its text, was known when it was observed.)
  Status check_afters() {
    for (const PathOperation& op : draft_.plan.operations)
      if (op.action == Action::Write && !op.after.exists)
        return make_error(core::ErrorKind::Staged, "fewer staged files than writes were read back");
    return {};
  }

  // The profile's document sealed with its files; or, when nothing would
  // change, nothing sealed: the proposal, its stderr and its log stay
  // inspectable, ABANDONED with the reason NO_CHANGES (an outcome, not an error).
  Result<PlanOutcome> seal() {
    PlanOutcome out;
    out.txn = txn_;
    out.excluded = excluded_;
    out.plugin_stderr = host_->stderr_bytes();
    out.logs = log_records(host_->logs());
    DOT_ASSIGN_OR_RETURN(Sealing sealing, profile_->seal(draft_, *stage_, out));
    if (sealing.no_changes) {
      out.no_changes = true;
      store::Abandonment unchanged;
      unchanged.code = std::string(store::kNoChangesCode);
      unchanged.detail = "every target already holds what the plugin proposed; nothing was sealed";
      // A no-change plan keeps a small record: a large document (many
      // paths, nothing to do) is not kept; its proposal id still is.
      if (draft_.proposal_document_bytes > kKeptNoChangeProposalBytes) {
        unchanged.drop_proposal = true;
        unchanged.detail +=
            fmt::format("; the proposal document ({} bytes) was not kept", draft_.proposal_document_bytes);
      }
      unchanged.plugin_stderr = out.plugin_stderr;
      DOT_TRY(root_.store().abandon(txn_, unchanged, out.logs));
      return out;
    }
    store::SealInput& seal = sealing.input;
    if (seal.write_canonical) {
      DigestSink digest;
      DOT_TRY(seal.write_canonical(digest));
      const DocumentDigest text = digest.finish();
      seal.plan_id = text.sha256;
      seal.canonical_bytes = text.bytes;
    } else {
      seal.plan_id = sha256_hex(seal.canonical_plan);
    }
    seal.proposal_id = draft_.proposal_id;
    seal.plugin_stderr = out.plugin_stderr;
    seal.logs = out.logs;
    DOT_TRY(root_.store().seal(txn_, seal));
    out.plan_id = seal.plan_id;
    return out;
  }

  Root& root_;
  const PlanOptions& options_;
  const Manifest& manifest_;
  const store::TxnId txn_;
  std::unique_ptr<PlanProfile> profile_;
  std::optional<PinnedPlugin> pinned_;
  std::optional<Stage> stage_;
  std::optional<Sandbox> sandbox_;
  std::optional<dpp::HostSession> host_;
  PlanDraft draft_;
  StatCache stat_cache_{root_.store()};
  std::uint64_t progress_bytes_ = 0;
  std::size_t excluded_ = 0;
  // Who apply writes as: every after carries them.
  const uid_t euid_ = ::geteuid();
  const gid_t egid_ = ::getegid();
};

// What a plugin last said before it failed is most often why (a Python
// traceback's last line, a missing file): its last line, made safe for a
// terminal and cut to a line's width, and where the whole transcript is
// kept. Not part of what the store records as the failure's detail.
std::string stderr_pointer(const Root& root, store::TxnId txn, std::string_view err) {
  while (!err.empty() && (err.back() == '\n' || err.back() == '\r' || err.back() == ' ')) err.remove_suffix(1);
  if (err.empty()) return {};
  const std::size_t start = err.find_last_of('\n');
  std::string_view last = start == std::string_view::npos ? err : err.substr(start + 1);
  constexpr std::size_t kShownBytes = 160;
  std::string line = shown(last.substr(0, kShownBytes));  // invalid UTF-8 (a cut character) as \xNN
  if (last.size() > kShownBytes) line += "...";
  return fmt::format("; the plugin's stderr ends with \"{}\" (`{}` shows all of it)", line,
                     root.command(fmt::format("inspect show {}{}", store::kRowIdPrefix, txn)));
}

// A failed proposal: the plugin's group killed (abort drains what stderr
// still holds, so a line written just before the failing answer is kept),
// the stage removed, and the proposal ABANDONED with the error's code, the
// plugin's stderr, its log and, for an error response, the plugin's data.
Error abandon(Root& root, store::TxnId txn, ProposalRun& run, Error error) {
  std::optional<dpp::HostSession>& host = run.host();
  if (host) host->abort();
  if (auto& stage = run.stage_folder())
    if (auto s = stage->remove(); !s.ok())
      error.detail += fmt::format("; the stage could not be removed ({}): `{}` removes it", s.error().message(),
                                  root.command("recover"));
  store::Abandonment why;
  why.code = std::string(code_name(error.code));
  why.detail = error.message();
  why.plugin_stderr = host ? host->stderr_bytes() : std::string();
  std::vector<store::LogRecord> logs;
  if (host) {
    logs = log_records(host->logs());
    const auto& pe = host->plugin_error();
    if (pe && pe->error.data && error.code == Code::PluginError)
      why.detail += fmt::format("; data {}", *pe->error.data);
    if (pe && pe->method == dpp::Method::Initialize && pe->error.code == -32602)
      error.detail += fmt::format(
          "; a plugin built against an older dot-core refuses what this one offers at dot.initialize (a newer "
          "capability or member): rebuild it against this version's plugin runtime and pin it again with `{} "
          "--replace ...` (the dot-mirror and dot-hello dot-core ships, too: register them again from this version)",
          root.command("register"));
  }
  // Keep the session's error even if recording it fails: it is the cause.
  (void)root.store().abandon(txn, why, logs);
  error.detail += stderr_pointer(root, txn, why.plugin_stderr);
  return error;
}

}  // namespace

Result<DocumentDigest> PlanProfile::proposal_digest(const PlanDraft& draft) {
  DigestSink sink;
  DOT_TRY(write_proposal_document(draft, sink));
  return sink.finish();
}

Result<std::unique_ptr<PlanProfile>> profile_for(const Manifest& manifest, const store::PluginRecord& row) {
  if (manifest.profile == dpp::general::kProfile && manifest.protocol == dpp::general::kProtocol) {
    // The id the echo is held to is the manifest's, which must be its row's.
    if (manifest.id != row.plugin_id)
      return make_error(core::ErrorKind::Manifest, "the stored manifest does not name the plugin its plugin row names");
    return make_general_profile();
  }
  if (manifest.profile != dpp::hello::kProfile || manifest.protocol != dpp::hello::kProtocol)
    return make_error(core::ErrorKind::Manifest,
                      fmt::format("the manifest binds profile {} protocol {}, which this core does not speak",
                                  manifest.profile, manifest.protocol));
  // The id the plugin's echo is held to: this core runs one hello plugin
  // id, and a manifest naming another (or another than its row) is not trusted.
  if (manifest.id != dpp::hello::kPluginId || manifest.id != row.plugin_id)
    return make_error(
        core::ErrorKind::Manifest,
        fmt::format("the stored manifest does not name plugin {} as its plugin row does", dpp::hello::kPluginId));
  return make_hello_profile();
}

std::vector<store::LogRecord> log_records(const std::vector<dpp::LogEntry>& logs) {
  std::vector<store::LogRecord> out;
  out.reserve(logs.size());
  for (const auto& l : logs)
    out.push_back(store::LogRecord{l.level, l.message, std::string(dpp::method_name(l.method))});
  return out;
}

Result<PlanOutcome> make_plan(Root& root, const PlanOptions& options) {
  DOT_TRY(refuse_if_unfinished(root));
  // A pattern that cannot be used fails before anything is recorded.
  for (const auto& pattern : options.exclude)
    if (auto glob = PathGlob::parse(pattern); !glob.ok()) return std::move(glob).error();
  DOT_ASSIGN_OR_RETURN(store::PluginRecord row, registered_plugin(root, options.plugin_id));
  DOT_ASSIGN_OR_RETURN(Manifest manifest, decode_manifest(row.manifest));
  PlanOptions consented = options;
  DOT_ASSIGN_OR_RETURN(consented.consent, consent_for(manifest, options));
  // Before anything is recorded: a kernel without a layer never starts the plugin.
  if (consented.consent == Assurance::Process) DOT_TRY(probe_sandbox_support().require_complete());
  DOT_TRY(check_consent(manifest, consented));
  store::ProposalStart start;
  start.plugin_id = manifest.id;
  start.plugin_digest = manifest.sha256;
  DOT_ASSIGN_OR_RETURN(store::TxnId txn, root.store().begin_proposal(start));

  ProposalRun run(root, consented, manifest, txn);
  Result<PlanOutcome> outcome = run.run(row);
  if (options.interrupt) options.interrupt->set_plugin_group(0);
  if (!outcome.ok()) return abandon(root, txn, run, std::move(outcome).error());
  // The session finished (the plugin and its group reaped): the stage goes.
  if (auto& stage = run.stage_folder())
    if (auto s = stage->remove(); !s.ok()) outcome->stage_left = s.error().message();
  return outcome;
}

std::string unified_diff(const PlannedSlot& slot) {
  auto split = [](const std::string& text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t nl = text.find('\n', start);
      if (nl == std::string::npos) {
        lines.push_back(text.substr(start) + "\n\\ No newline at end of file");
        break;
      }
      lines.push_back(text.substr(start, nl - start));
      start = nl + 1;
    }
    return lines;
  };
  std::vector<std::string> a = split(slot.before), b = split(slot.after);
  std::string out = fmt::format("--- a/{}\n+++ b/{}\n", slot.name, slot.name);
  if (a == b) return out;
  dtl::Diff<std::string> diff(a, b);
  diff.compose();
  diff.composeUnifiedHunks();
  for (const auto& hunk : diff.getUniHunks()) {
    // An empty range starts at the line before it, as diff(1) writes it.
    out += fmt::format("@@ -{},{} +{},{} @@\n", hunk.b == 0 ? hunk.a - 1 : hunk.a, hunk.b,
                       hunk.d == 0 ? hunk.c - 1 : hunk.c, hunk.d);
    auto emit = [&](const auto& seq) {
      for (const auto& [line, info] : seq) {
        char mark = info.type == dtl::SES_ADD ? '+' : info.type == dtl::SES_DELETE ? '-' : ' ';
        out += mark;
        out += line;
        out += '\n';
      }
    };
    emit(hunk.common[0]);
    emit(hunk.change);
    emit(hunk.common[1]);
  }
  return out;
}

}  // namespace dot::core
