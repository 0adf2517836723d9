#pragma once
// What one DPP profile contributes to the one plan pipeline (planner.cpp):
// how its session is shaped, what it negotiates, what its dot.plan answer may
// contain, its target policy, how its stage is read back and which plan
// document it seals. The order of the passes, the proposal record, path
// ownership, the plugin's end, abandonment and the stage's removal are the
// pipeline's, written once. Internal to core.
//
// Both profiles feed the same operation model: the plugin's answer becomes
// PathOperations, each observed in place (its `before`), whose `after`
// comes from the staged file core read itself (or, declared, is checked
// against it). The hello
// profile is the restricted case (writes only, flat names, mode 0600, the
// whole plan sealed or none of it) and keeps its version-1 document; the
// general profile seals version 2.

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dot/base/sandbox.h"
#include "dot/base/sha256.h"
#include "dot/core/plan_v2.h"
#include "dot/core/planner.h"
#include "dot/core/registry.h"
#include "dot/core/target.h"
#include "dot/dpp/host_session.h"
#include "dot/dpp/stage_reader.h"
#include "dot/store/records.h"
#include "stage.h"

namespace dot::core {

// Keeps, in place and in order, the elements of `items` whose index `keep`
// accepts; never moves an element onto itself (that would empty a string).
template <class T, class Keep>
void keep_indices(std::vector<T>& items, Keep keep) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!keep(i)) continue;
    if (kept != i) items[kept] = std::move(items[i]);
    ++kept;
  }
  items.erase(items.begin() + static_cast<std::ptrdiff_t>(kept), items.end());
}

// Who apply writes as: every after carries this owner.
struct Owner {
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
};

// What dot.plan answered, past the profile's rules, in the plan's own model:
// one record per path from here to the seal (at 100,000 paths a separate
// record of the proposal held 13 MB more at the peak).
struct Proposal {
  std::vector<Effect> effects;
  // Each operation's path and action, and the after the proposal alone
  // tells: a declared write's ({exists, gid, mode, sha256, uid}, digests
  // negotiated: known before anything is staged), a link's (its text, past
  // dpp check_link_text); absent otherwise. Its before is observed later, in place.
  std::vector<PathOperation> operations;
  // At each operation's index: the mode a write asks for (0 for a remove or
  // a link; permission bits only, as Snapshot::mode), and the size of the
  // after the proposal tells (0 when it tells none).
  std::vector<std::uint16_t> modes;
  std::vector<std::uint64_t> after_sizes;
  // The modes the plugin asked for the folders apply creates (general profile).
  FolderModes folder_modes;
  // When the profile tells a take-over (a write of an existing file nobody
  // manages) from an update, general only: at each operation's index,
  // whether its path is one this plugin already owns. The `managed` list
  // it was sent is judged once and dropped before the targets are observed
  // (at 100,000 paths of 64 bytes it was 11 MB). Ask manages().
  std::optional<std::vector<bool>> managed;
  bool manages(std::size_t operation) const { return managed && (*managed)[operation]; }
  void add(PathOperation op, std::uint16_t mode, std::uint64_t after_size) {
    operations.push_back(std::move(op));
    modes.push_back(mode);
    after_sizes.push_back(after_size);
  }
  // Keeps the operations `keep` accepts (given each one), in order.
  template <class Keep>
  void keep_if(Keep keep) {
    std::vector<bool> kept(operations.size());
    for (std::size_t i = 0; i < operations.size(); ++i) kept[i] = keep(operations[i]);
    keep_indices(operations, [&](std::size_t i) { return kept[i]; });
    keep_indices(modes, [&](std::size_t i) { return kept[i]; });
    keep_indices(after_sizes, [&](std::size_t i) { return kept[i]; });
    if (managed) keep_indices(*managed, [&](std::size_t i) { return kept[i]; });
  }
};

// How the plugin is contained beyond what every profile gets.
struct ProfileContainment {
  SandboxLimits limits;          // the hello profile's are the defaults
  std::vector<UniqueFd> inputs;  // readable directories (open_input's descriptors)
  bool stage_folders = false;    // nested paths in the stage
  UniqueFd cache;                // the plugin's cache folder (open_plugin_cache), writable
};

// What core read back of one staged write: the SHA-256 (64 hex) and size
// of its bytes, and the bytes themselves when kept (the hello profile keeps
// every side for its diff). A write whose after the plugin declared and
// which already holds it is never staged.
struct StagedFile {
  Sha256Digest sha256;
  std::uint64_t size = 0;
  std::optional<std::string> content;
};
// Takes each write read back, by its index into PlanDraft::plan.operations,
// ascending, as soon as it is read: nothing is kept per file between the
// stage and the plan (at 100,000 writes a record each was 19 MB). It
// changes only that operation's after and slot.
using StagedFileSink = std::function<Status(std::size_t operation, StagedFile file)>;

// The plan being built, pass by pass: the operations (before observed,
// after from the stage), what `plan` shows of each, the files read back.
struct PlanDraft {
  std::string nonce;
  Proposal proposal;
  PlanV2 plan;  // identity, effects, operations, folders to create
  // What `plan` shows of each operation beyond the operation itself, and
  // the mode each asks for (a write's after's, once its bytes are read):
  // both at the operation's index (the path and snapshots are held once,
  // in plan.operations: at 100,000 paths a second copy was about 40 MB).
  std::vector<PathSlot> slots;
  std::vector<std::uint16_t> modes;
  std::size_t proposal_document_bytes = 0;  // the document itself is in the store (or dropped)
  std::string proposal_id;
  // The writes `plan --exclude` left out, in the plugin's order: it still
  // stages them, and core never reads them.
  std::vector<std::string> excluded_writes;
};

// What a profile seals: the store's input and the outcome's view of it; or
// no_changes when the plan would change nothing.
struct Sealing {
  bool no_changes = false;
  store::SealInput input;
};

class PlanProfile {
 public:
  virtual ~PlanProfile() = default;
  // The session's limits and log handling, and the containment beyond the defaults.
  virtual Status shape_session(Root& root, const PlanOptions& options, const Manifest& manifest,
                               dpp::HostSessionOptions& session, ProfileContainment& containment) = 0;
  // dot.initialize with `assurance` and the draft's nonce; the echo held to the manifest.
  virtual Status negotiate(dpp::HostSession& session, std::string_view assurance, const std::string& nonce,
                           const Manifest& manifest) = 0;
  // dot.plan, its answer past the profile's allowlists and path rules.
  // `owner`: what a declared or linked after carries.
  virtual Result<Proposal> propose(dpp::HostSession& session, Root& root, const Manifest& manifest,
                                   const Owner& owner) = 0;
  // One proposed path under the profile's target policy; the bytes kept
  // when at most `keep_bytes` (the hello profile keeps them all). `cache`:
  // the plan's stat cache (the general profile reads a target only when
  // its stat does not match).
  virtual Result<PathTarget> observe(int root_fd, std::string_view path, std::size_t keep_bytes, ParentFolders& parents,
                                     StatCache& cache) = 0;
  // The folders apply creates, given the observed parents (none in the hello profile).
  virtual std::vector<Folder> folders(const PlanDraft& draft, const ParentFolders& parents) = 0;
  // The proposal document of the draft (every after absent, or as
  // declared), handed to `out` in pieces as it is written.
  virtual Status write_proposal_document(const PlanDraft& draft, ByteSink& out) = 0;
  // Its SHA-256 and length, from the same pieces, never holding it whole.
  Result<DocumentDigest> proposal_digest(const PlanDraft& draft);
  // Whether the observed draft is already known to change nothing, before
  // anything is staged (every declared after equals its target): then a
  // large proposal document is not stored, as it would not be kept once
  // the plan ends NO_CHANGES. False when only the stage can tell.
  virtual bool known_to_change_nothing(const PlanDraft& draft) const = 0;
  // dot.materialize, then every staged file read back and held to the
  // claims, each handed to `take` once all are read: one per write core
  // asked for, ascending by operation (every write whose after was not
  // declared; with declared digests, each write that changes its target).
  virtual Status read_stage(dpp::HostSession& session, const Stage& stage, const PlanDraft& draft,
                            const StagedFileSink& take) = 0;
  // Once the plugin is gone: the stage holds only what was claimed.
  virtual Status check_stage_holds_only(const Stage& stage) = 0;
  // The document to seal from the finished draft (every after filled in),
  // with the outcome's view of it; no_changes when nothing would change.
  virtual Result<Sealing> seal(PlanDraft& draft, const Stage& stage, PlanOutcome& out) = 0;
};

// The profile a manifest binds, after the manifest is checked against its
// plugin row (DOT_E_PLUGIN_IDENTITY kind manifest otherwise).
Result<std::unique_ptr<PlanProfile>> profile_for(const Manifest& manifest, const store::PluginRecord& row);

std::unique_ptr<PlanProfile> make_hello_profile();
std::unique_ptr<PlanProfile> make_general_profile();

// The session's dot.log messages as the store keeps them.
std::vector<store::LogRecord> log_records(const std::vector<dpp::LogEntry>& logs);

}  // namespace dot::core
