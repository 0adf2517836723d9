#include "dot/core/planner.h"
#include "dot/core/error_kinds.h"

#include <algorithm>
#include <cerrno>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dtl/dtl.hpp>
#include <fmt/format.h>

#include "dot/base/beneath.h"
#include "dot/base/sandbox.h"
#include "dot/base/sha256.h"
#include "dot/core/rollback.h"
#include "dot/core/target.h"
#include "dot/dpp/general.h"
#include "dot/dpp/hello.h"
#include "dot/dpp/host_session.h"
#include "dot/dpp/stage_reader.h"
#include "planner_internal.h"
#include "stage.h"

namespace dot::core {
namespace {

// Core reads every staged file itself (dpp/stage_reader.h): the plugin's claims
// are only claims.
Result<std::vector<std::string>> verify_stage(const Stage& stage, const dpp::MaterializeResult& claimed) {
  DOT_TRY(stage.check_unchanged());
  DOT_ASSIGN_OR_RETURN(std::vector<std::string> contents, dpp::read_hello_stage(stage.fd(), claimed));
  DOT_TRY(stage.check_unchanged());
  return contents;
}

// Once the plugin is gone the stage can no longer change: it must hold
// exactly the claimed artifacts (an extra file is a staged-file count that
// differs from the claim). Checked after the session ended so that what the
// session itself reports (a survivor, an exit status) comes first.
Status verify_stage_contents(const Stage& stage, const dpp::MaterializeResult& claimed) {
  DOT_TRY(stage.check_unchanged());
  return dpp::check_hello_stage_holds_only(stage.fd(), claimed);
}

}  // namespace

Error interrupted_error(int sig) {
  return make_error(
      core::ErrorKind::InterruptedPlan,
      fmt::format("interrupted by {}: the plugin's process group was killed", sig == SIGINT ? "SIGINT" : "SIGTERM"));
}

Status check_interrupt(const PlanOptions& options) {
  if (options.interrupt && options.interrupt->interrupted()) return interrupted_error(options.interrupt->signal());
  return {};
}

Status start_session(const PlanOptions& options, PinnedPlugin& pinned, const Stage& stage,
                     dpp::HostSessionOptions ho, std::optional<Sandbox>& sandbox, Session& session,
                     const ProfileContainment& profile) {
  ho.exec_fd = pinned.exec_fd.get();
  ho.stage_dir = stage.path();
  ho.spawn.argv = {"dot-plugin"};
  // Process assurance: containment for this descriptor and this stage. It
  // must outlive the spawn (the child reads it between fork and exec).
  if (options.consent == Assurance::Process) {
    SandboxPolicy policy;
    policy.executable_fd = pinned.exec_fd.get();
    policy.executable_path = pinned.copy_path;
    policy.stage_fd = stage.fd();
    policy.limits = profile.limits;
    policy.stage_folders = profile.stage_folders;
    for (const UniqueFd& dir : profile.inputs) policy.read_only_dir_fds.push_back(dir.get());
    DOT_ASSIGN_OR_RETURN(Sandbox prepared, Sandbox::prepare(policy));
    sandbox.emplace(std::move(prepared));
    DOT_TRY(sandbox->apply_to(ho.spawn));
    ho.containment = sandbox->limits();
  }
  DOT_TRY(check_interrupt(options));
  DOT_ASSIGN_OR_RETURN(dpp::HostSession host, dpp::HostSession::start(std::move(ho)));
  session.host.emplace(std::move(host));
  if (options.interrupt) options.interrupt->set_plugin_group(session.host->pid());
  pinned.exec_fd.reset();
  return {};
}

namespace {

Result<PlanOutcome> run_proposal(Root& root, const PlanOptions& options, const Manifest& manifest, PinnedPlugin& pinned,
                                 store::TxnId txn, Session& session, std::optional<Stage>& kept_stage) {
  auto check_interrupt = [&]() -> Status { return core::check_interrupt(options); };
  // Calls that fail because a signal killed the plugin report the signal.
  auto call = [&](auto&& result) { return during(options, std::forward<decltype(result)>(result)); };

  DOT_ASSIGN_OR_RETURN(Stage made, Stage::create(root.dirs(), txn));
  Stage& stage = kept_stage.emplace(std::move(made));
  dpp::HostSessionOptions ho;
  ho.limits.deadline = options.deadline;
  std::optional<Sandbox> sandbox;
  DOT_TRY(start_session(options, pinned, stage, std::move(ho), sandbox, session));
  dpp::HostSession& s = *session.host;

  DOT_ASSIGN_OR_RETURN(std::string nonce, random_hex32());
  // "process" is sent only because core installed the containment itself.
  const std::string_view assurance = sandbox ? dpp::hello::kAssuranceProcess : dpp::hello::kAssuranceAudit;
  if (assurance != manifest.assurance)
    return make_error(core::ErrorKind::AssuranceMisuse, "negotiated assurance differs from the manifest's");
  dpp::InitializeParams sent = dpp::hello::initialize_params(assurance, nonce);
  DOT_ASSIGN_OR_RETURN(dpp::InitializeResult echo, call(s.initialize(sent)));
  DOT_TRY(dpp::hello::check_identity(sent, echo, manifest.id));
  DOT_ASSIGN_OR_RETURN(dpp::PlanResult proposed, call(s.plan()));
  DOT_TRY(dpp::hello::check_hello_allowlists(proposed));

  PlanOutcome out;
  out.txn = txn;
  Plan& plan = out.plan;
  plan.effects.emplace();
  for (const auto& e : proposed.effects) plan.effects->push_back(Effect{e.failure_policy, e.kind, e.target});
  plan.nonce = nonce;
  plan.plugin_digest = manifest.sha256;
  plan.root_id = root.root_id();
  for (const auto& name : proposed.names) {
    DOT_ASSIGN_OR_RETURN(ObservedTarget t, observe_target(root.root_fd(), name));
    plan.operations.push_back(Operation{Snapshot::absent(), t.snapshot, name});
    out.slots.push_back(PlannedSlot{name, std::move(t.content), {}});
  }
  // What was proposed is kept whatever happens next (sealed or abandoned).
  DOT_ASSIGN_OR_RETURN(std::string proposal, proposal_document(plan));
  plan.proposal_id = sha256_hex(proposal);
  DOT_TRY(root.store().set_proposal_id(txn, plan.proposal_id, proposal));
  // A general plugin may own hello.txt or welcome.txt (docs/spec/dpp-general.md):
  // the hello plugin may then neither write nor replace it.
  DOT_TRY(check_ownership(root, manifest.id, proposed.names));

  DOT_ASSIGN_OR_RETURN(dpp::MaterializeResult staged, call(s.materialize()));
  DOT_TRY(dpp::hello::check_artifacts(proposed.names, staged));
  DOT_ASSIGN_OR_RETURN(std::vector<std::string> contents, verify_stage(stage, staged));
  DOT_TRY(call(s.validate()));
  DOT_TRY(call(s.shutdown()));
  DOT_TRY(call(s.finish()));
  if (options.interrupt) options.interrupt->set_plugin_group(0);
  DOT_TRY(check_interrupt());
  DOT_TRY(verify_stage_contents(stage, staged));
  // The stage may have been touched after we read it; we seal what we read.
  out.plugin_stderr = s.stderr_bytes();

  store::SealInput seal;
  for (std::size_t i = 0; i < plan.operations.size(); ++i) {
    Operation& op = plan.operations[i];
    op.after = sealed_after(sha256_hex(contents[i]));
    seal.operations.push_back(store::OperationSummary{op.name, op.before.sha256, op.after.sha256});
    store::Blob blob;
    blob.slot = static_cast<std::uint32_t>(i);
    blob.bytes = contents[i];
    blob.sha256 = op.after.sha256;
    seal.artifacts.push_back(std::move(blob));
    out.slots[i].after = std::move(contents[i]);
  }
  // Every target already is what the plugin proposes (content, mode, owner):
  // a plan would change nothing, so none is sealed (nothing to apply, nothing
  // to go stale). The proposal, with its stderr, stays inspectable: ABANDONED
  // with the reason NO_CHANGES, which the state graph already allows.
  if (std::all_of(plan.operations.begin(), plan.operations.end(), is_hello_noop)) {
    out.no_changes = true;
    store::Abandonment unchanged;
    unchanged.code = std::string(store::kNoChangesCode);
    unchanged.detail = "every target already holds what the plugin proposed; nothing was sealed";
    unchanged.plugin_stderr = out.plugin_stderr;
    DOT_TRY(root.store().abandon(txn, unchanged));
    return out;
  }
  // What is sealed passes exactly the check every later load of it makes.
  DOT_TRY(check_plan_invariants(plan));
  DOT_ASSIGN_OR_RETURN(seal.canonical_plan, canonical_bytes(plan));
  out.plan_id = sha256_hex(seal.canonical_plan);
  seal.plan_id = out.plan_id;
  seal.proposal_id = plan.proposal_id;
  seal.effect_count = static_cast<std::uint32_t>(plan.effects->size());
  seal.plugin_stderr = out.plugin_stderr;
  DOT_TRY(root.store().seal(txn, seal));
  return out;
}

}  // namespace

std::vector<store::LogRecord> log_records(const std::vector<dpp::LogEntry>& logs) {
  std::vector<store::LogRecord> out;
  out.reserve(logs.size());
  for (const auto& l : logs) out.push_back(store::LogRecord{l.level, l.message, std::string(dpp::method_name(l.method))});
  return out;
}

Result<PlanOutcome> make_plan(Root& root, const PlanOptions& options) {
  DOT_TRY(refuse_if_unfinished(root));
  // Before anything is recorded: a kernel without a layer never starts the plugin.
  if (options.consent == Assurance::Process) DOT_TRY(probe_sandbox_support().require_complete());
  DOT_ASSIGN_OR_RETURN(store::PluginRecord rec, registered_plugin(root, options.plugin_id));
  DOT_ASSIGN_OR_RETURN(Manifest manifest, decode_manifest(rec.manifest));
  if (manifest.assurance == "process" && options.consent != Assurance::Process)
    return make_error(core::ErrorKind::Assurance,
                      "the plugin is registered with process assurance: audit consent never satisfies it; use "
                      "--require-process-sandbox");
  if (manifest.assurance == "audit" && options.consent == Assurance::Process)
    return make_error(core::ErrorKind::Assurance,
                      "the plugin is registered with audit assurance: it would be negotiated as audit; register it "
                      "with --assurance process to run it under --require-process-sandbox");

  store::ProposalStart start;
  start.plugin_id = manifest.id;
  start.plugin_digest = manifest.sha256;
  DOT_ASSIGN_OR_RETURN(store::TxnId txn, root.store().begin_proposal(start));

  // The stage outlives the session: it is removed only once the plugin (and
  // anything it started) is dead, so nothing writes into it while it goes.
  std::optional<Stage> stage;
  Session session;
  Result<PlanOutcome> outcome = [&]() -> Result<PlanOutcome> {
    if (manifest.profile == dpp::general::kProfile && manifest.protocol == dpp::general::kProtocol) {
      // The id the echo is held to is the manifest's, which must be its row's.
      if (manifest.id != rec.plugin_id)
        return make_error(core::ErrorKind::Manifest,
                          "the stored manifest does not name the plugin its plugin row names");
      DOT_ASSIGN_OR_RETURN(PinnedPlugin pinned, open_pinned_plugin(root, rec.plugin_id));
      root.hooks().reached("plan.plugin_hashed");
      if (options.after_hash) options.after_hash(options.after_hash_ctx);
      return run_general_proposal(root, options, manifest, pinned, txn, session, stage);
    }
    if (manifest.profile != dpp::hello::kProfile || manifest.protocol != dpp::hello::kProtocol)
      return make_error(core::ErrorKind::Manifest,
                        fmt::format("the manifest binds profile {} protocol {}, which this core does not speak",
                                    manifest.profile, manifest.protocol));
    // The id the plugin's echo is held to: this core runs one plugin id, and
    // a manifest naming another (or another than its own row) is not trusted.
    if (manifest.id != dpp::hello::kPluginId || manifest.id != rec.plugin_id)
      return make_error(
          core::ErrorKind::Manifest,
          fmt::format("the stored manifest does not name plugin {} as its plugin row does", dpp::hello::kPluginId));
    DOT_ASSIGN_OR_RETURN(PinnedPlugin pinned, open_pinned_plugin(root, rec.plugin_id));
    root.hooks().reached("plan.plugin_hashed");
    if (options.after_hash) options.after_hash(options.after_hash_ctx);
    return run_proposal(root, options, manifest, pinned, txn, session, stage);
  }();
  if (options.interrupt) options.interrupt->set_plugin_group(0);
  if (outcome.ok()) {
    // The session finished (the plugin and its group reaped): the stage goes.
    if (stage)
      if (auto s = stage->remove(); !s.ok()) outcome->stage_left = s.error().message();
    return outcome;
  }

  Error error = std::move(outcome).error();
  // Abort first: it kills the group and drains what stderr still holds, so
  // a line the plugin wrote just before the answer that failed is kept.
  if (session.host) session.host->abort();
  if (stage)
    if (auto s = stage->remove(); !s.ok())
      error.detail += fmt::format("; the stage could not be removed ({}): `{}` removes it", s.error().message(),
                                  store::command_for(root.layout(), "recover"));
  std::string stderr_bytes = session.stderr_bytes();
  store::Abandonment why;
  why.code = std::string(code_name(error.code));
  why.detail = error.message();
  why.plugin_stderr = std::move(stderr_bytes);
  std::vector<store::LogRecord> logs;
  if (session.host) {
    logs = log_records(session.host->logs());
    // An error response keeps the plugin's code and message (in the detail)
    // and its data, canonical JSON.
    if (const auto& pe = session.host->plugin_error(); pe && pe->error.data && error.code == Code::PluginError)
      why.detail += fmt::format("; data {}", *pe->error.data);
  }
  // Keep the session's error even if recording it fails: it is the cause.
  (void)root.store().abandon(txn, why, logs);
  return error;
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
