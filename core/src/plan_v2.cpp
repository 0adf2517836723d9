// The version-2 plan model, its RFC 8785 encoding, strict decoding and invariants (plan_v2.h).
#include "dot/core/plan_v2.h"
#include "dot/core/error_kinds.h"

#include <algorithm>
#include <functional>
#include <optional>

#include <unistd.h>

#include <fmt/format.h>

#include "dot/base/path_glob.h"
#include "dot/base/sha256.h"
#include "dot/base/utf8.h"
#include "dot/core/effects.h"
#include "dot/core/plan_document.h"
#include "dot/dpp/path_rules.h"
#include "plan_ids.h"
#include "plan_v2_decode.h"
#include "plan_v2_reader.h"

namespace dot::core {
namespace {

using detail::invalid;
using detail::kMaxSafeInteger;
using detail::uint_node;

Result<std::string> hex_field(json::ObjectReader& r, std::string_view name, bool allow_empty) {
  DOT_ASSIGN_OR_RETURN(json::Value v, r.required(name));
  DOT_ASSIGN_OR_RETURN(std::string_view text, r.required_string(name));
  if (!(allow_empty && text.empty()) && !is_sha256_hex(text))
    return invalid(v, core::ErrorKind::InvalidId, fmt::format("plan.{} must be 64 lowercase hex characters", name));
  return std::string(text);
}

// A path rule's error keeps its code and kind, and gains where it was read.
Error at(Error e, const json::Value& v) {
  e.offset = v.offset();
  return e;
}

// plan.exclude: present only when non-empty, strictly ascending (one
// spelling per list), each a pattern PathGlob accepts.
Result<std::vector<std::string>> decode_exclude(json::Value v) {
  if (!v.is_array() || v.size() == 0)
    return invalid(v, core::ErrorKind::Exclude, "plan.exclude must be a non-empty array of patterns when present");
  std::vector<std::string> out;
  for (json::Value e : v.elements()) {
    if (!e.is_string()) return invalid(e, core::ErrorKind::Exclude, "plan.exclude holds a value that is not a string");
    std::string pattern(e.as_string());
    if (auto glob = PathGlob::parse(pattern); !glob.ok()) return at(std::move(glob).error(), e);
    if (!out.empty() && !(out.back() < pattern))
      return invalid(e, core::ErrorKind::Exclude, "plan.exclude must be strictly ascending");
    out.push_back(std::move(pattern));
  }
  return out;
}

}  // namespace

std::string_view action_name(Action action) noexcept {
  switch (action) {
    case Action::Write:
      return "write";
    case Action::Link:
      return "link";
    case Action::Remove:
      break;
  }
  return "remove";
}

Status detail::encode_operation(std::string& out, const PathOperation& op, DocumentForm form) {
  auto o = jcs::Node::object();
  o.set("action", jcs::Node::string(std::string(action_name(op.action))));
  detail::set_snapshots(o, op, form);
  o.set("path", jcs::Node::string(op.path));
  return jcs::encode_to(out, o, jcs::Profile::Rfc8785);
}

// The pieces, in order: the members around the operations, encoded once
// with the place of the operations marked (a written value that writes
// nothing and notes where it stands), and the operations one at a time
// between them. The whole document, its digest and the check of stored
// bytes are made of the same pieces, so they cannot differ.
Status detail::canonical_pieces(const PlanV2& plan, DocumentForm form, const PieceSink& take) {
  auto n = jcs::Node::object();
  auto dirs = jcs::Node::array();
  for (const auto& d : plan.directories) {
    auto o = jcs::Node::object();
    o.set("mode", uint_node(d.mode));
    o.set("path", jcs::Node::string(d.path));
    dirs.push(std::move(o));
  }
  n.set("directories", std::move(dirs));
  auto effects = jcs::Node::array();
  for (const auto& e : plan.effects) effects.push(to_node(e));
  n.set("effects", std::move(effects));
  if (!plan.exclude.empty()) {
    auto exclude = jcs::Node::array();
    for (const auto& pattern : plan.exclude) exclude.push(jcs::Node::string(pattern));
    n.set("exclude", std::move(exclude));
  }
  std::size_t operations_at = std::string::npos;
  n.set("operations", jcs::Node::written(
                          [&operations_at](std::string& text) {
                            operations_at = text.size();
                            return Status{};
                          },
                          jcs::Profile::Rfc8785));
  n.set("plugin_id", jcs::Node::string(plan.plugin_id));
  n.set("profile", jcs::Node::string(plan.profile));
  std::string around;
  DOT_TRY(jcs::encode_to(around, detail::with_identity(std::move(n), plan, form), jcs::Profile::Rfc8785));
  if (operations_at == std::string::npos)
    return make_error(core::ErrorKind::PlanInvariant, "the plan document was encoded without its operations");
  DOT_TRY(take(std::string_view(around).substr(0, operations_at)));
  DOT_TRY(take("["));
  std::string one;
  for (std::size_t i = 0; i < plan.operations.size(); ++i) {
    one.clear();
    if (i > 0) one += ',';
    DOT_TRY(detail::encode_operation(one, plan.operations[i], form));
    DOT_TRY(take(one));
  }
  DOT_TRY(take("]"));
  return take(std::string_view(around).substr(operations_at));
}

Result<std::string> detail::canonical_document(const PlanV2& plan, DocumentForm form) {
  // Room for the largest operation a plan usually holds (a path and two
  // snapshots with their digests, about 300 bytes) up front, so that the
  // text is never copied as it grows; what is reserved and not written is
  // never touched, so costs no memory.
  constexpr std::size_t kRoomPerEntry = 512;
  std::string out;
  out.reserve((plan.operations.size() + plan.directories.size()) * kRoomPerEntry + 4096);
  DOT_TRY(detail::canonical_pieces(plan, form, [&out](std::string_view piece) {
    out += piece;
    return Status{};
  }));
  return out;
}

Result<std::string> canonical_bytes(const PlanV2& plan) { return detail::canonical_document(plan, detail::kPlanForm); }

Result<std::string> proposal_document(const PlanV2& proposed) {
  return detail::canonical_document(proposed, detail::kProposalForm);
}

Result<std::string> compute_proposal_id(const PlanV2& proposed) { return detail::proposal_id_of(proposed); }

Result<std::string> compute_plan_id(const PlanV2& plan) { return detail::plan_id_of(plan); }

bool is_general_noop(const PathOperation& op) noexcept {
  // docs/spec/dpp-general.md: bytes and mode for a write (owner is not part of
  // the rule: the target policy already requires it to be ours).
  // A link's after has kLinkMode and its text's digest: same kind, digest
  // and mode is the same text.
  if (op.action == Action::Remove) return !op.before.exists;
  return op.before.exists && op.after.exists && op.before.kind == op.after.kind &&
         op.before.sha256 == op.after.sha256 && op.before.mode == op.after.mode;
}

bool can_be_noop(Action action, const Snapshot& before) noexcept {
  switch (action) {
    case Action::Write:
      return before.exists && before.kind == EntryKind::File;
    case Action::Link:
      return before.is_link();
    case Action::Remove:
      break;
  }
  return !before.exists;
}

Status check_path_snapshot_policy(std::string_view path, const Snapshot& snapshot, WriteAccessJudge& judge) {
  if (!snapshot.exists) return {};
  auto refuse = [&](std::string why) {
    return make_error(core::ErrorKind::Target, fmt::format("target \"{}\" {}", shown(path.substr(0, 512)), why));
  };
  const std::uint64_t mode = snapshot.mode;
  if (snapshot.uid != judge.euid())
    return refuse(fmt::format("is owned by uid {}, not by us (uid {})", snapshot.uid, judge.euid()));
  if (snapshot.is_link()) return {};  // a link's mode bits are never used
  if (mode & 07000) return refuse(fmt::format("has setuid, setgid or sticky bits (mode {:04o})", mode));
  if (auto why = judge.refusal(static_cast<mode_t>(mode & 0777), static_cast<uid_t>(snapshot.uid),
                               static_cast<gid_t>(snapshot.gid)))
    return refuse(fmt::format("is writable by more than its owner ({})", *why));
  return {};
}

Status check_created_folder_mode(std::string_view path, std::uint64_t mode, WriteAccessJudge& judge) {
  auto refuse = [&](std::string why) {
    return make_error(core::ErrorKind::Mode, fmt::format("folder \"{}\" would be created with mode {:04o}: {}",
                                                         shown(path.substr(0, 512)), mode, why));
  };
  if (!dpp::is_folder_mode(mode))
    return refuse("a folder takes 0700 to 0775 (owner rwx, no write for others, no set-id or sticky bit)");
  if (auto why = judge.refusal(static_cast<mode_t>(mode), judge.euid(), judge.egid())) return refuse(*why);
  return {};
}

void PlanInvariants::folders(std::span<const Folder> directories) {
  for (std::size_t i = 0; i < directories.size(); ++i)
    if (auto s = check_created_folder_mode(directories[i].path, directories[i].mode, judge_); !s.ok())
      violations_.push_back(fmt::format("directories[{}]: {}", i, s.error().message()));
}

void PlanInvariants::add(const PathOperation& op, std::size_t i) {
  if (auto s = check_path_snapshot_policy(op.path, op.before, judge_); !s.ok())
    violations_.push_back(fmt::format("operations[{}].before: {}", i, s.error().message()));
  const Snapshot& after = op.after;
  if (op.action == Action::Remove || !after.exists) return;  // the decoder judged these
  if (after.uid != judge_.euid() || after.gid != judge_.egid())
    violations_.push_back(fmt::format(
        "operations[{}].after of {} is owned by uid {} gid {}, but apply writes as "
        "uid {} gid {}",
        i, shown(std::string_view(op.path).substr(0, 256)), after.uid, after.gid, judge_.euid(), judge_.egid()));
  else if (after.is_link())
    return;  // a link's mode bits are never used
  else if (auto why = judge_.refusal(static_cast<mode_t>(after.mode & 0777), judge_.euid(), judge_.egid()))
    violations_.push_back(fmt::format("operations[{}].after of {} asks for a mode writable by more than its owner ({})",
                                      i, shown(std::string_view(op.path).substr(0, 256)), *why));
}

Status PlanInvariants::verdict() const {
  if (violations_.empty()) return {};
  std::string detail;
  for (const auto& v : violations_) detail += (detail.empty() ? "" : "; ") + v;
  return make_error(core::ErrorKind::PlanInvariant, std::move(detail));
}

Status check_plan_invariants(const PlanV2& plan) {
  PlanInvariants rules;
  rules.folders(plan.directories);
  for (std::size_t i = 0; i < plan.operations.size(); ++i) rules.add(plan.operations[i], i);
  return rules.verdict();
}

bool changes_nothing(std::span<const PathOperation> proposed) noexcept {
  return std::all_of(proposed.begin(), proposed.end(), [](const PathOperation& op) { return is_general_noop(op); });
}

std::vector<PathOperation> without_noops(std::span<const PathOperation> proposed) {
  std::vector<PathOperation> out;
  for (const auto& op : proposed)
    if (!is_general_noop(op)) out.push_back(op);
  return out;
}

Result<std::string> declared_proposal_document(const PlanV2& proposed) {
  return detail::canonical_document(proposed, detail::kDeclaredProposalForm);
}

Status write_canonical(const PlanV2& plan, ByteSink& out) {
  return detail::canonical_pieces(plan, detail::kPlanForm, [&out](std::string_view piece) { return out.write(piece); });
}

Status write_proposal_document(const PlanV2& proposed, bool declared, ByteSink& out) {
  return detail::canonical_pieces(proposed, declared ? detail::kDeclaredProposalForm : detail::kProposalForm,
                                  [&out](std::string_view piece) { return out.write(piece); });
}

PlanV2 sealed_from(PlanV2 proposed, std::string proposal_id) {
  proposed.proposal_id = std::move(proposal_id);
  std::erase_if(proposed.operations, [](const PathOperation& op) { return is_general_noop(op); });
  return proposed;
}

Result<PlanV2> seal_from_proposal(const PlanV2& proposed, bool declared) {
  DOT_ASSIGN_OR_RETURN(std::string document,
                       declared ? declared_proposal_document(proposed) : proposal_document(proposed));
  return sealed_from(proposed, sha256_hex(document));
}

namespace {

Error unbound(std::string detail) {
  return make_error(core::ErrorKind::ProposalBinding,
                    fmt::format("the sealed plan does not follow from its proposal document: {}", detail));
}

std::string named(const PathOperation& op) { return shown(std::string_view(op.path).substr(0, 256)); }

}  // namespace

// The walk of both lists at once: a proposed operation the sealed plan
// skips is a left-out no-op, so it must be one that can be (its after is
// not in the document): a write of an existing file, a link of an existing
// symlink or a remove of an absent target.
struct ProposalBinding::State {
  State(const PlanV2& s, ProposedFn e)
      : sealed(s), each(std::move(e)), reader([this](PathOperation&& op) { return walk(op); }), kept(reader) {}

  Status walk(const PathOperation& proposed) {
    if (each) each(proposed, index);
    ++index;
    if (refusal) return {};  // the first refusal of the walk is the one reported
    if (next < sealed.operations.size()) {
      const PathOperation& op = sealed.operations[next];
      if (is_general_noop(op)) {
        refusal = unbound(fmt::format("operation \"{}\" is a no-op", named(op)));
        return {};
      }
      // As proposed: with its after absent, or with exactly its after declared.
      if (proposed == op || (proposed.action == op.action && proposed.path == op.path && proposed.before == op.before &&
                             proposed.after == Snapshot::absent())) {
        ++next;
        return {};
      }
    }
    // A declared write is left out only when it is a no-op by its own after.
    if (!(proposed.after.exists ? is_general_noop(proposed) : can_be_noop(proposed.action, proposed.before)))
      refusal = unbound(fmt::format("proposed operation \"{}\" is left out but cannot be a no-op", named(proposed)));
    return {};
  }

  const PlanV2& sealed;
  ProposedFn each;
  PlanV2Reader reader;
  Sha256 hash;
  KeepReading kept;              // the reader's first refusal, kept until the hash is judged
  std::optional<Error> refusal;  // the walk's first
  std::size_t next = 0;          // the next sealed operation not yet matched
  std::size_t index = 0;         // proposed operations so far
};

ProposalBinding::ProposalBinding(const PlanV2& sealed, ProposedFn each)
    : state_(std::make_unique<State>(sealed, std::move(each))) {}

ProposalBinding::~ProposalBinding() = default;

Status ProposalBinding::write(std::string_view piece) {
  State& st = *state_;
  st.hash.update(piece);
  DOT_TRY(st.kept.write(piece));
  return {};
}

Result<PlanV2> ProposalBinding::finish() {
  State& st = *state_;
  const PlanV2& sealed = st.sealed;
  const std::string digest = to_hex(st.hash.finish());
  if (digest != sealed.proposal_id)
    return make_error(core::ErrorKind::ProposalIdMismatch,
                      fmt::format("plan.proposal_id {} is not the SHA-256 of its proposal document ({})",
                                  sealed.proposal_id.empty() ? std::string("\"\"") : sealed.proposal_id, digest));
  if (st.kept.refusal()) return *st.kept.refusal();
  DOT_ASSIGN_OR_RETURN(PlanV2 proposed, st.reader.finish());
  if (!proposed.proposal_id.empty()) return unbound("the document has a proposal_id (it is a sealed plan)");
  // Everything but the operations and the id is the same plan.
  if (!same_but_operations_and_id(proposed, sealed))
    return unbound("a field other than operations and proposal_id differs (root, plugin, nonce, effects or folders)");
  if (sealed.operations.empty()) return unbound("it holds no operation (a proposal of only no-ops seals nothing)");
  if (st.refusal) return *st.refusal;
  if (st.next < sealed.operations.size()) {
    const PathOperation& op = sealed.operations[st.next];
    if (is_general_noop(op)) return unbound(fmt::format("operation \"{}\" is a no-op", named(op)));
    return unbound(fmt::format("operation \"{}\" is not in the proposal as sealed", named(op)));
  }
  return proposed;
}

Result<PlanV2> check_proposal_binding(const PlanV2& sealed, std::string_view document) {
  std::vector<PathOperation> operations;
  ProposalBinding binding(sealed, [&operations](const PathOperation& op, std::size_t) { operations.push_back(op); });
  DOT_TRY(binding.write(document));
  DOT_ASSIGN_OR_RETURN(PlanV2 proposed, binding.finish());
  proposed.operations = std::move(operations);
  return proposed;
}

std::vector<Folder> derive_directories(std::span<const PathOperation> operations,
                                       const std::set<std::string, std::less<>>& existing, const FolderModes& modes) {
  std::set<std::string, std::less<>> created;  // std::string orders by unsigned bytes: UTF-8 order
  for (const auto& op : operations) {
    if (op.action == Action::Remove) continue;
    bool missing = false;
    for (std::size_t slash = op.path.find('/'); slash != std::string::npos; slash = op.path.find('/', slash + 1)) {
      std::string_view parent = std::string_view(op.path).substr(0, slash);
      missing = missing || !existing.contains(parent);
      if (missing) created.emplace(parent);
    }
  }
  std::vector<Folder> out;
  for (const auto& path : created) {
    auto asked = modes.find(path);
    out.push_back(Folder{asked == modes.end() ? kCreatedFolderMode : asked->second, path});
  }
  return out;
}

std::string_view parent_folder(std::string_view path) noexcept {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
}

std::vector<std::string> touched_folders(const PlanV2& plan) {
  std::set<std::string, std::less<>> touched;
  for (const auto& op : plan.operations) touched.emplace(parent_folder(op.path));
  for (const auto& folder : plan.directories) touched.emplace(parent_folder(folder.path));
  return {touched.begin(), touched.end()};
}

namespace {

// Effects: exactly the one root-sync request, nothing else, ever.
Result<std::vector<Effect>> decode_effects(json::Value effects_v) {
  std::vector<Effect> effects;
  for (json::Value e : effects_v.elements()) {
    DOT_ASSIGN_OR_RETURN(Effect effect, detail::decode_effect(e));
    effects.push_back(std::move(effect));
  }
  if (effects.size() != 1 || !is_root_sync(effects.front()))
    return at(make_error(core::ErrorKind::Effects,
                         "plan.effects must be exactly [{\"failure_policy\":\"required\",\"kind\":\"sync\","
                         "\"target\":\"managed-root\"}]"),
              effects_v);
  return effects;
}

}  // namespace

Result<PathOperation> detail::decode_operation(json::Value o, const std::string& what) {
  json::ObjectReader orr(o, what);
  DOT_ASSIGN_OR_RETURN(json::Value action_v, orr.required("action"));
  DOT_ASSIGN_OR_RETURN(std::string_view action, orr.required_string("action"));
  DOT_ASSIGN_OR_RETURN(json::Value after_v, orr.required_object("after"));
  DOT_ASSIGN_OR_RETURN(json::Value before_v, orr.required_object("before"));
  DOT_ASSIGN_OR_RETURN(std::string_view path, orr.required_string("path"));
  DOT_TRY(orr.finish());
  PathOperation op;
  DOT_ASSIGN_OR_RETURN(op.after, decode_snapshot(after_v, what + ".after", true));
  DOT_ASSIGN_OR_RETURN(op.before, decode_snapshot(before_v, what + ".before", true));
  op.path = std::string(path);
  // A write's mode is the mode its after asks for; a proposal document
  // carries an after only where the plugin declared it (every write or
  // none), so without one only the action is judged here.
  const bool write = action == "write", link = action == "link";
  // In any document a write's after, when it has one, is a file's.
  if (write && op.after.is_link())
    return invalid(after_v, core::ErrorKind::LinkAfter,
                   fmt::format("{}.after of a write must be a file's snapshot", what));
  const std::uint64_t mode = write && !op.after.exists ? 0600 : link ? 0 : op.after.mode;
  if (auto s = dpp::check_action_mode(path, action, mode); !s.ok()) return at(std::move(s).error(), action_v);
  op.action = write ? Action::Write : link ? Action::Link : Action::Remove;
  if (!write && !link && op.after.exists)
    return invalid(after_v, core::ErrorKind::RemoveAfter, fmt::format("{}.after of a remove must be absent", what));
  return op;
}

void detail::AfterRules::add(const PathOperation& op, json::Value o, const std::string& what, std::uint64_t base) {
  auto keep = [&](std::optional<Error>& first, core::ErrorKind kind, std::string detail) {
    if (first) return;
    const std::optional<json::Value> after_v = o.find("after");
    first = make_parse_error(kind, (after_v ? after_v->offset() : o.offset()) + base, std::move(detail));
  };
  const bool write = op.action == Action::Write, link = op.action == Action::Link;
  // As a sealed plan's.
  if (write && !op.after.exists)
    keep(sealed_, core::ErrorKind::WriteAfter, fmt::format("{}.after of a write must exist", what));
  if (link && !op.after.is_link())
    keep(sealed_, core::ErrorKind::LinkAfter, fmt::format("{}.after of a link must be a symlink's snapshot", what));
  // As a proposal document's.
  if (write) {
    if (!declared_) declared_ = op.after.exists;
    if (*declared_ != op.after.exists)
      keep(proposal_, core::ErrorKind::ProposalAfter,
           fmt::format("{}.after must be absent in a proposal document unless every write declares its after (and "
                       "then present)",
                       what));
  }
  if (link && op.after.exists)
    keep(proposal_, core::ErrorKind::ProposalAfter,
         fmt::format("{}.after must be absent in a proposal document", what));
}

Status detail::AfterRules::verdict(bool proposal) const {
  const std::optional<Error>& breach = proposal ? proposal_ : sealed_;
  if (breach) return *breach;
  return {};
}

Status detail::OperationList::add(const PathOperation& op) {
  if (order_.count() >= dpp::kMaxPlanOperations)
    return make_error(core::ErrorKind::OperationLimit,
                      fmt::format("plan.operations has more than max_operations {} entries", dpp::kMaxPlanOperations));
  DOT_TRY(order_.add(op.path));
  if (op.action != Action::Remove)
    for (std::size_t slash = op.path.find('/'); slash != std::string::npos; slash = op.path.find('/', slash + 1))
      parents_.emplace(std::string_view(op.path).substr(0, slash));
  return {};
}

// Directories: folders apply creates, each the parent folder of a write or
// a link, ascending; below a created folder every parent of a write is
// created too (apply creates a folder's missing descendants).
Result<std::vector<Folder>> detail::decode_directories(json::Value dirs_v,
                                                       const std::set<std::string, std::less<>>& parents) {
  std::vector<Folder> folders;
  std::size_t i = 0;
  for (json::Value d : dirs_v.elements()) {
    const std::string what = fmt::format("directories[{}]", i++);
    json::ObjectReader dr(d, what);
    Folder f;
    DOT_ASSIGN_OR_RETURN(json::Value mode_v, dr.required("mode"));
    DOT_ASSIGN_OR_RETURN(f.mode, dr.required_uint("mode", kMaxSafeInteger));
    DOT_ASSIGN_OR_RETURN(json::Value path_v, dr.required("path"));
    DOT_ASSIGN_OR_RETURN(std::string_view path, dr.required_string("path"));
    DOT_TRY(dr.finish());
    if (!dpp::is_folder_mode(f.mode))
      return at(make_error(core::ErrorKind::Mode,
                           fmt::format("{}.mode {} ({:04o}) is not a folder mode (0700 to 0775, no write for others)",
                                       what, f.mode, f.mode)),
                mode_v);
    if (auto s = dpp::check_path(path); !s.ok()) return at(std::move(s).error(), path_v);
    if (!folders.empty() && !(folders.back().path < path))
      return invalid(path_v, core::ErrorKind::Unsorted, fmt::format("{} is not after the folder before it", what));
    if (!parents.contains(path))
      return invalid(path_v, core::ErrorKind::Directory,
                     fmt::format("{} \"{}\" is not the parent folder of a write", what, shown(path.substr(0, 256))));
    f.path = std::string(path);
    folders.push_back(std::move(f));
  }
  std::set<std::string_view> created;
  for (const auto& f : folders) created.insert(f.path);
  for (const auto& parent : parents) {
    auto slash = parent.rfind('/');
    if (slash != std::string::npos && created.contains(std::string_view(parent).substr(0, slash)) &&
        !created.contains(parent))
      return invalid(dirs_v, core::ErrorKind::Directory,
                     fmt::format("folder \"{}\" is created but its subfolder \"{}\" is not",
                                 shown(parent.substr(0, slash).substr(0, 256)), shown(parent.substr(0, 256))));
  }
  return folders;
}

Result<detail::PlanHead> detail::decode_plan_head(json::Value value) {
  json::ObjectReader r(value, "plan");
  PlanHead head;
  PlanV2& plan = head.plan;
  DOT_ASSIGN_OR_RETURN(head.directories, r.required_array("directories"));
  DOT_ASSIGN_OR_RETURN(json::Value effects_v, r.required_array("effects"));
  if (auto exclude_v = r.optional("exclude")) {
    DOT_ASSIGN_OR_RETURN(plan.exclude, decode_exclude(*exclude_v));
  }
  DOT_ASSIGN_OR_RETURN(plan.nonce, hex_field(r, "nonce", false));
  DOT_ASSIGN_OR_RETURN(head.operations, r.required_array("operations"));
  DOT_ASSIGN_OR_RETURN(plan.plugin_digest, hex_field(r, "plugin_digest", false));
  DOT_ASSIGN_OR_RETURN(json::Value plugin_v, r.required("plugin_id"));
  DOT_ASSIGN_OR_RETURN(std::string_view plugin_id, r.required_string("plugin_id"));
  DOT_ASSIGN_OR_RETURN(json::Value profile_v, r.required("profile"));
  DOT_ASSIGN_OR_RETURN(std::string_view profile, r.required_string("profile"));
  DOT_ASSIGN_OR_RETURN(plan.proposal_id, hex_field(r, "proposal_id", true));
  DOT_ASSIGN_OR_RETURN(plan.root_id, hex_field(r, "root_id", false));
  DOT_ASSIGN_OR_RETURN(json::Value version_v, r.required("version"));
  DOT_ASSIGN_OR_RETURN(plan.version, r.required_uint("version", kMaxSafeInteger));
  DOT_TRY(r.finish());
  if (plan.version != kPlanVersion2)
    return invalid(version_v, core::ErrorKind::UnsupportedVersion,
                   fmt::format("plan.version {} is not 2", plan.version));
  if (profile != kGeneralProfile)
    return invalid(profile_v, core::ErrorKind::PlanProfile,
                   fmt::format("plan.profile \"{}\" is not \"{}\"", shown(profile.substr(0, 64)), kGeneralProfile));
  if (plugin_id.empty() || plugin_id.size() > kMaxPluginIdBytes)
    return invalid(plugin_v, core::ErrorKind::PluginId,
                   fmt::format("plan.plugin_id must be 1 to {} bytes", kMaxPluginIdBytes));
  plan.profile = std::string(profile);
  plan.plugin_id = std::string(plugin_id);
  DOT_ASSIGN_OR_RETURN(plan.effects, decode_effects(effects_v));
  return head;
}

Result<PlanV2> decode_plan_v2(json::Value value) {
  DOT_ASSIGN_OR_RETURN(detail::PlanHead head, detail::decode_plan_head(value));
  PlanV2& plan = head.plan;
  // Operations: each one's format, the rules over the list as they come,
  // then the rules that depend on the document (sealed or proposed).
  const json::Value ops_v = head.operations;
  detail::OperationList list;
  detail::AfterRules afters;
  std::size_t i = 0;
  for (json::Value o : ops_v.elements()) {
    const std::string what = fmt::format("operations[{}]", i++);
    DOT_ASSIGN_OR_RETURN(PathOperation op, detail::decode_operation(o, what));
    afters.add(op, o, what, 0);
    if (auto s = list.add(op); !s.ok()) return at(std::move(s).error(), ops_v);
    plan.operations.push_back(std::move(op));
  }
  DOT_TRY(afters.verdict(plan.proposal_id.empty()));
  DOT_ASSIGN_OR_RETURN(plan.directories, detail::decode_directories(head.directories, list.parents()));
  return std::move(plan);
}

Result<PlanV2> decode_canonical_plan_v2(std::string_view bytes) {
  std::vector<PathOperation> operations;
  PlanV2Reader reader([&operations](PathOperation&& op) {
    operations.push_back(std::move(op));
    return Status{};
  });
  DOT_TRY(reader.write(bytes));
  DOT_ASSIGN_OR_RETURN(PlanV2 plan, reader.finish());
  plan.operations = std::move(operations);
  return plan;
}

}  // namespace dot::core
