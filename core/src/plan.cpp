// The version-1 plan model and its canonical (JCS hello) encoding and strict decoding (plan.h).
#include "dot/core/plan.h"
#include "dot/core/error_kinds.h"

#include <unistd.h>

#include <limits>
#include <set>
#include <type_traits>

#include <fmt/format.h>

#include "dot/base/beneath.h"
#include "dot/base/sha256.h"
#include "dot/dpp/hello.h"
#include "dot/dpp/path_rules.h"
#include "plan_ids.h"

namespace dot::core {
namespace {

using detail::invalid;
using detail::kMaxSafeInteger;
using detail::uint_node;

// The largest id a snapshot can hold (its type's: Linux's uid_t and gid_t are 32 bits).
constexpr std::uint64_t kMaxId = std::numeric_limits<decltype(Snapshot::uid)>::max();
static_assert(std::is_same_v<decltype(Snapshot::uid), decltype(Snapshot::gid)>);

Status require_hex_id(const json::Value& v, std::string_view value, std::string_view field, bool allow_empty) {
  if (allow_empty && value.empty()) return {};
  if (!is_sha256_hex(value))
    return invalid(v, core::ErrorKind::InvalidId, fmt::format("{} must be 64 lowercase hex characters", field));
  return {};
}

}  // namespace

jcs::Node to_node(const Effect& e) {
  auto n = jcs::Node::object();
  n.set("failure_policy", jcs::Node::string(e.failure_policy));
  n.set("kind", jcs::Node::string(e.kind));
  n.set("target", jcs::Node::string(e.target));
  return n;
}

Result<Effect> detail::decode_effect(json::Value value) {
  json::ObjectReader r(value, "effect");
  DOT_ASSIGN_OR_RETURN(std::string_view failure_policy, r.required_string("failure_policy"));
  DOT_ASSIGN_OR_RETURN(std::string_view kind, r.required_string("kind"));
  DOT_ASSIGN_OR_RETURN(std::string_view target, r.required_string("target"));
  DOT_TRY(r.finish());
  return Effect{std::string(failure_policy), std::string(kind), std::string(target)};
}

namespace {

// The symlink members of a version-2 snapshot: "kind":"symlink" and its
// "link_text", both or neither.
Status decode_link_members(json::ObjectReader& r, const json::Value& v, std::string_view what, Snapshot& s) {
  const bool has_kind = r.optional("kind").has_value();
  const bool has_text = r.optional("link_text").has_value();
  if (!has_kind && !has_text) return {};
  auto bad = [&](std::string why) {
    return invalid(v, core::ErrorKind::InconsistentSnapshot, fmt::format("{} {}", what, why));
  };
  if (!has_kind || !has_text) return bad("has only one of \"kind\" and \"link_text\"");
  DOT_ASSIGN_OR_RETURN(std::string_view kind, r.required_string("kind"));
  DOT_ASSIGN_OR_RETURN(std::string_view text, r.required_string("link_text"));
  if (kind != "symlink") return bad("has a kind other than \"symlink\"");
  s.kind = EntryKind::Symlink;
  s.link_text = std::string(text);
  if (auto st = dpp::check_link_text(what, text); !st.ok()) return bad(st.error().detail);
  return {};
}

}  // namespace

Result<Snapshot> decode_snapshot(json::Value v, std::string_view what, bool links) {
  json::ObjectReader r(v, what);
  Snapshot s;
  DOT_ASSIGN_OR_RETURN(s.exists, r.required_bool("exists"));
  // Ids are 32 bits on Linux (uid_t, gid_t): a larger one is no owner.
  DOT_ASSIGN_OR_RETURN(s.gid, r.required_uint("gid", kMaxId));
  DOT_ASSIGN_OR_RETURN(s.mode, r.required_uint("mode", 07777));
  DOT_ASSIGN_OR_RETURN(json::Value sha_v, r.required("sha256"));
  DOT_ASSIGN_OR_RETURN(std::string_view sha, r.required_string("sha256"));
  DOT_ASSIGN_OR_RETURN(s.uid, r.required_uint("uid", kMaxId));
  if (links) DOT_TRY(decode_link_members(r, v, what, s));
  DOT_TRY(r.finish());
  if (s.kind == EntryKind::Symlink && (!s.exists || s.mode != kLinkMode || sha != sha256_hex(s.link_text)))
    return invalid(v, core::ErrorKind::InconsistentSnapshot,
                   fmt::format("{} is a symlink's but does not exist, has a mode other than {} or a sha256 other than "
                               "its link_text's",
                               what, kLinkMode));
  if (s.exists) {
    DOT_TRY(require_hex_id(sha_v, sha, fmt::format("{}.sha256", what), false));
    s.sha256 = *Sha256Digest::from_hex(sha);
  } else if (!(s == Snapshot::absent()) || !sha.empty()) {
    return invalid(v, core::ErrorKind::InconsistentSnapshot,
                   fmt::format("{} says exists:false but is not the absent snapshot (all zero, sha256 \"\")", what));
  }
  return s;
}

// The profile's rules live once, in dpp/hello: these are views of them.
Effect root_sync_effect() {
  dpp::EffectRequest e = dpp::hello::root_sync_effect();
  return Effect{e.failure_policy, e.kind, e.target};
}

bool is_valid_slot_name(std::string_view name) noexcept { return dpp::hello::is_slot_name(name); }

Status check_slot_name(std::string_view name) {
  if (is_valid_slot_name(name)) return {};
  // docs/spec/cli.md: a slot name outside the pattern is a path escape, whatever
  // the reason (a "/", "..", NUL or just an upper-case letter).
  return make_error(
      core::ErrorKind::SlotName,
      fmt::format("slot name \"{}\" does not match ^[a-z][a-z0-9-]{{0,30}}\\.txt$", beneath::path_in_detail(name)));
}

jcs::Node to_node(const Snapshot& s) {
  auto n = jcs::Node::object();
  n.set("exists", jcs::Node::boolean(s.exists));
  n.set("gid", uint_node(s.gid));
  n.set("mode", uint_node(s.mode));
  n.set("sha256", jcs::Node::string(s.sha256.hex()));
  n.set("uid", uint_node(s.uid));
  // Only a symlink carries these members: every other snapshot encodes
  // exactly as before links existed, so no sealed plan's id changes.
  if (s.kind == EntryKind::Symlink) {
    n.set("kind", jcs::Node::string("symlink"));
    n.set("link_text", jcs::Node::string(s.link_text));
  }
  return n;
}

Snapshot link_snapshot(std::string link_text, std::uint32_t uid, std::uint32_t gid) {
  Snapshot s;
  s.exists = true;
  s.gid = gid;
  s.mode = kLinkMode;
  s.sha256 = Sha256Digest::of(link_text);
  s.uid = uid;
  s.kind = EntryKind::Symlink;
  s.link_text = std::move(link_text);
  return s;
}

namespace {

jcs::Node plan_node(const Plan& plan, detail::DocumentForm form) {
  auto n = jcs::Node::object();
  if (plan.effects) {
    auto effects = jcs::Node::array();
    for (const auto& e : *plan.effects) effects.push(to_node(e));
    n.set("effects", std::move(effects));
  }
  auto ops = jcs::Node::array();
  for (const auto& op : plan.operations) {
    auto o = jcs::Node::object();
    detail::set_snapshots(o, op, form);
    o.set("name", jcs::Node::string(op.name));
    ops.push(std::move(o));
  }
  n.set("operations", std::move(ops));
  return detail::with_identity(std::move(n), plan, form);
}

}  // namespace

jcs::Node to_node(const Plan& plan) { return plan_node(plan, detail::kPlanForm); }

Result<std::string> detail::canonical_document(const Plan& plan, DocumentForm form) {
  return jcs::encode(plan_node(plan, form), jcs::Profile::Hello);
}

Status detail::canonical_pieces(const Plan& plan, DocumentForm form, const PieceSink& take) {
  DOT_ASSIGN_OR_RETURN(std::string whole, canonical_document(plan, form));
  return take(whole);
}

Result<std::string> canonical_bytes(const Plan& plan) { return detail::canonical_document(plan, detail::kPlanForm); }

Result<std::string> proposal_document(const Plan& plan) {
  return detail::canonical_document(plan, detail::kProposalForm);
}

Result<std::string> compute_proposal_id(const Plan& plan) { return detail::proposal_id_of(plan); }

Result<std::string> compute_plan_id(const Plan& plan) { return detail::plan_id_of(plan); }

Result<Plan> decode_plan(json::Value value) {
  json::ObjectReader r(value, "plan");
  Plan plan;
  if (auto effects = r.optional("effects")) {
    if (!effects->is_array()) return invalid(*effects, base::ErrorKind::Malformed, "plan.effects must be an array");
    if (effects->size() > kMaxEffects)
      return invalid(*effects, core::ErrorKind::TooManyEffects,
                     fmt::format("plan.effects has more than {} entries", kMaxEffects));
    std::vector<Effect> list;
    for (json::Value e : effects->elements()) {
      DOT_ASSIGN_OR_RETURN(Effect eff, detail::decode_effect(e));
      list.push_back(std::move(eff));
    }
    plan.effects = std::move(list);
  }
  DOT_ASSIGN_OR_RETURN(json::Value nonce_v, r.required("nonce"));
  DOT_ASSIGN_OR_RETURN(std::string_view nonce, r.required_string("nonce"));
  DOT_ASSIGN_OR_RETURN(json::Value ops_v, r.required_array("operations"));
  DOT_ASSIGN_OR_RETURN(json::Value digest_v, r.required("plugin_digest"));
  DOT_ASSIGN_OR_RETURN(std::string_view digest, r.required_string("plugin_digest"));
  DOT_ASSIGN_OR_RETURN(json::Value pid_v, r.required("proposal_id"));
  DOT_ASSIGN_OR_RETURN(std::string_view pid, r.required_string("proposal_id"));
  DOT_ASSIGN_OR_RETURN(json::Value root_v, r.required("root_id"));
  DOT_ASSIGN_OR_RETURN(std::string_view root, r.required_string("root_id"));
  DOT_ASSIGN_OR_RETURN(json::Value version_v, r.required("version"));
  DOT_ASSIGN_OR_RETURN(plan.version, r.required_uint("version", kMaxSafeInteger));
  DOT_TRY(r.finish());
  if (plan.version != kPlanVersion)
    return invalid(version_v, core::ErrorKind::UnsupportedVersion,
                   fmt::format("plan.version {} is not 1", plan.version));
  DOT_TRY(require_hex_id(nonce_v, nonce, "plan.nonce", false));
  DOT_TRY(require_hex_id(digest_v, digest, "plan.plugin_digest", false));
  DOT_TRY(require_hex_id(pid_v, pid, "plan.proposal_id", true));
  DOT_TRY(require_hex_id(root_v, root, "plan.root_id", false));
  plan.nonce = std::string(nonce);
  plan.plugin_digest = std::string(digest);
  plan.proposal_id = std::string(pid);
  plan.root_id = std::string(root);
  if (ops_v.size() < 1 || ops_v.size() > kMaxOperations)
    return invalid(ops_v, core::ErrorKind::OperationCount,
                   fmt::format("plan.operations must hold 1 to {} slots", kMaxOperations));
  std::set<std::string, std::less<>> seen;
  std::size_t slot = 0;
  for (json::Value o : ops_v.elements()) {
    json::ObjectReader orr(o, fmt::format("operations[{}]", slot));
    DOT_ASSIGN_OR_RETURN(json::Value after_v, orr.required_object("after"));
    DOT_ASSIGN_OR_RETURN(json::Value before_v, orr.required_object("before"));
    DOT_ASSIGN_OR_RETURN(json::Value name_v, orr.required("name"));
    DOT_ASSIGN_OR_RETURN(std::string_view name, orr.required_string("name"));
    DOT_TRY(orr.finish());
    Operation op;
    DOT_ASSIGN_OR_RETURN(op.after, decode_snapshot(after_v, fmt::format("operations[{}].after", slot)));
    DOT_ASSIGN_OR_RETURN(op.before, decode_snapshot(before_v, fmt::format("operations[{}].before", slot)));
    if (auto s = check_slot_name(name); !s.ok()) {
      Error e = std::move(s).error();
      e.offset = name_v.offset();
      return e;
    }
    if (!seen.insert(std::string(name)).second)
      return invalid(name_v, core::ErrorKind::DuplicateSlot, fmt::format("slot name \"{}\" appears twice", name));
    op.name = std::string(name);
    plan.operations.push_back(std::move(op));
    ++slot;
  }
  return plan;
}

Result<Plan> decode_canonical_plan(std::string_view bytes) {
  return detail::decode_canonical_of<Plan>(bytes, std::size_t{1} << 20, decode_plan);
}

Status verify_proposal_id(const Plan& plan) {
  DOT_ASSIGN_OR_RETURN(std::string expected, compute_proposal_id(plan));
  if (plan.proposal_id != expected)
    return make_error(core::ErrorKind::ProposalIdMismatch,
                      fmt::format("plan.proposal_id {} does not match the plan (recomputed {})",
                                  plan.proposal_id.empty() ? std::string("\"\"") : plan.proposal_id, expected));
  return {};
}

Snapshot sealed_after(const Sha256Digest& sha256) {
  Snapshot s;
  s.exists = true;
  s.gid = ::getegid();
  s.mode = kArtifactMode;
  s.sha256 = sha256;
  s.uid = ::geteuid();
  return s;
}

bool is_hello_noop(const Operation& op) noexcept { return op.after == op.before; }

Status check_snapshot_policy(std::string_view name, const Snapshot& snapshot) {
  if (!snapshot.exists) return {};
  auto refuse = [&](std::string why) {
    return make_error(core::ErrorKind::Target, fmt::format("target {} {}", name, why));
  };
  const std::uint64_t mode = snapshot.mode;
  if (mode & 07000) return refuse(fmt::format("has setuid, setgid or sticky bits (mode {:04o})", mode));
  if (mode & 077) return refuse(fmt::format("is accessible to group or others (mode {:04o})", mode));
  if (!(mode & 0400)) return refuse(fmt::format("is not readable by its owner (mode {:04o})", mode));
  if (snapshot.uid != ::geteuid())
    return refuse(fmt::format("is owned by uid {}, not by us (uid {})", snapshot.uid, ::geteuid()));
  return {};
}

Status check_plan_invariants(const Plan& plan) {
  std::vector<std::string> violations;
  auto note = [&](const Status& s) {
    if (!s.ok()) violations.push_back(s.error().message());
  };
  std::vector<std::string> names;
  for (const auto& op : plan.operations) names.push_back(op.name);
  note(dpp::hello::check_hello_names(names));
  if (plan.effects) {
    std::vector<dpp::EffectRequest> requests;
    for (const auto& e : *plan.effects) requests.push_back(dpp::EffectRequest{e.kind, e.target, e.failure_policy});
    note(dpp::hello::check_hello_effects(requests));
  }
  auto show = [](const Snapshot& s) {
    return s.exists ? fmt::format("exists, mode {:04o}, uid {}, gid {}", s.mode, s.uid, s.gid) : std::string("absent");
  };
  for (std::size_t i = 0; i < plan.operations.size(); ++i) {
    const Operation& op = plan.operations[i];
    if (auto s = check_snapshot_policy(op.name, op.before); !s.ok())
      violations.push_back(fmt::format("slot {} before: {}", i, s.error().message()));
    const Snapshot want = sealed_after(op.after.sha256);
    if (op.after != want)
      violations.push_back(fmt::format("slot {} after is {}, but plan seals {}", i, show(op.after), show(want)));
  }
  if (violations.empty()) return {};
  std::string detail;
  for (const auto& v : violations) detail += (detail.empty() ? "" : "; ") + v;
  return make_error(core::ErrorKind::PlanInvariant, std::move(detail));
}

Result<std::string> encode_plan_document(const Plan& plan, std::string_view plan_id) {
  auto doc = jcs::Node::object();
  doc.set("plan", to_node(plan));
  doc.set("plan_id", jcs::Node::string(std::string(plan_id)));
  return jcs::encode(doc, jcs::Profile::Hello);
}

}  // namespace dot::core
