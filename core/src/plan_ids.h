#pragma once
// What both plan versions derive and code alike, written once: the forms a
// plan is encoded in (the plan, its proposal document with proposal_id empty
// and every `after` absent, its declared proposal document), the two ids
// (the SHA-256 of canonical bytes), the check that stored bytes are
// canonical, and the members and effects both carry under the same names.
// Only the canonical encoder differs per version: each version's
// canonical_pieces, found by overload.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "dot/base/jcs.h"
#include "dot/base/json.h"
#include "dot/base/result.h"
#include "dot/base/sha256.h"
#include "dot/core/error_kinds.h"
#include "dot/core/plan.h"
#include "dot/core/plan_v2.h"

namespace dot::core::detail {

// Integers in a plan are bounded by what JCS carries exactly (2^53 - 1).
inline constexpr std::uint64_t kMaxSafeInteger = (std::uint64_t{1} << 53) - 1;

inline jcs::Node uint_node(std::uint64_t v) { return jcs::Node::integer(static_cast<std::int64_t>(v)); }

// A plan document that breaks a rule: `kind`, at the offending value.
inline Error invalid(const json::Value& at, Kind kind, std::string detail) {
  return make_parse_error(kind, at.offset(), std::move(detail));
}

// Which form of a plan is encoded: the plan as sealed, or one of its
// proposal documents (docs/spec/dpp-general.md "Plan model and ids"): the
// plan with proposal_id "" and every `after` absent, or, when the plugin
// declared its writes' digests, every write's after kept and a link's absent
// (a link's after is core's, filled in once the plugin is gone). The encoder
// applies the form as it writes: a plan of 100,000 operations is never copied
// to blank what a form leaves out.
struct DocumentForm {
  enum class Afters : std::uint8_t { Kept, Declared, Absent };
  bool proposal_id = true;
  Afters afters = Afters::Kept;
};
inline constexpr DocumentForm kPlanForm{};
inline constexpr DocumentForm kProposalForm{false, DocumentForm::Afters::Absent};
inline constexpr DocumentForm kDeclaredProposalForm{false, DocumentForm::Afters::Declared};

// The canonical bytes of `plan` in `form`, one encoder per plan version,
// handed to `take` in pieces in order (a version-2 plan's operations one
// at a time; a version-1 plan, at most 16 slots, whole).
using PieceSink = std::function<Status(std::string_view)>;
Status canonical_pieces(const Plan& plan, DocumentForm form, const PieceSink& take);
Status canonical_pieces(const PlanV2& plan, DocumentForm form, const PieceSink& take);
// The pieces joined: the document whole.
Result<std::string> canonical_document(const Plan& plan, DocumentForm form);
Result<std::string> canonical_document(const PlanV2& plan, DocumentForm form);

// The SHA-256 of the pieces as they are encoded: the text of a large plan
// is never held whole to hash it.
template <class PlanT>
Result<std::string> digest_of(const PlanT& plan, DocumentForm form) {
  Sha256 h;
  DOT_TRY(canonical_pieces(plan, form, [&h](std::string_view piece) {
    h.update(piece);
    return Status{};
  }));
  return to_hex(h.finish());
}

template <class PlanT>
Result<std::string> proposal_id_of(const PlanT& plan) {
  return digest_of(plan, kProposalForm);
}

template <class PlanT>
Result<std::string> plan_id_of(const PlanT& plan) {
  return digest_of(plan, kPlanForm);
}

// Whether `plan` in `form` encodes to exactly `bytes`, compared piece by
// piece as they are encoded (never a second whole text beside `bytes`).
template <class PlanT>
Result<bool> encodes_to(const PlanT& plan, DocumentForm form, std::string_view bytes) {
  bool same = true;
  DOT_TRY(canonical_pieces(plan, form, [&](std::string_view piece) {
    same = same && bytes.starts_with(piece);
    if (same) bytes.remove_prefix(piece.size());
    return Status{};
  }));
  return same && bytes.empty();
}

// A stored plan: `decode` (the version's strict decoder) over the bytes,
// which must also be exactly the plan's canonical bytes.
template <class PlanT, class Decode>
Result<PlanT> decode_canonical_of(std::string_view bytes, std::size_t max_bytes, Decode decode) {
  PlanT plan;
  {  // the parsed document (index and nodes, several times the bytes) goes before the plan is encoded again
    DOT_ASSIGN_OR_RETURN(json::Document doc,
                         json::parse(bytes, json::ReadLimits{.max_bytes = max_bytes, .max_depth = 16}));
    DOT_ASSIGN_OR_RETURN(plan, decode(doc.root()));
  }
  DOT_ASSIGN_OR_RETURN(bool canonical, encodes_to(plan, kPlanForm, bytes));
  if (!canonical) return make_error(core::ErrorKind::NotCanonical, "the stored plan bytes are not in canonical form");
  return plan;
}

// One effect object, {failure_policy, kind, target} exactly (plan.cpp);
// which effects a plan may hold is each version's own rule.
Result<Effect> decode_effect(json::Value value);

// The members both plan versions carry under the same names: the operation's
// snapshots (by `op`) and the plan's identity (by `plan`, onto the plan's
// node, which comes back with them); each version sets its own other
// members, and the encoder sorts them all.
template <class Op>
void set_snapshots(jcs::Node& op_node, const Op& op, DocumentForm form) {
  bool absent = form.afters == DocumentForm::Afters::Absent;
  if constexpr (requires { op.action; })
    absent = absent || (form.afters == DocumentForm::Afters::Declared && op.action == Action::Link);
  op_node.set("after", to_node(absent ? Snapshot::absent() : op.after));
  op_node.set("before", to_node(op.before));
}
template <class PlanT>
jcs::Node with_identity(jcs::Node n, const PlanT& plan, DocumentForm form) {
  n.set("nonce", jcs::Node::string(plan.nonce));
  n.set("plugin_digest", jcs::Node::string(plan.plugin_digest));
  n.set("proposal_id", jcs::Node::string(form.proposal_id ? plan.proposal_id : std::string()));
  n.set("root_id", jcs::Node::string(plan.root_id));
  n.set("version", jcs::Node::integer(static_cast<std::int64_t>(plan.version)));
  return n;
}

}  // namespace dot::core::detail
