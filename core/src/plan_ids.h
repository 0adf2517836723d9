#pragma once
// The one derivation of a plan's proposal document and ids, for both plan
// versions: the proposal document is the plan with proposal_id empty and
// every `after` absent, and each id is the SHA-256 of canonical bytes. Each
// version has its own canonical encoder; the forms and the members both
// versions share are written here once.
#include <string>

#include "dot/base/jcs.h"
#include "dot/base/result.h"
#include "dot/base/sha256.h"
#include "dot/core/plan.h"
#include "dot/core/plan_v2.h"

namespace dot::core::detail {

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

// The canonical bytes of `plan` in `form`, one per plan version.
Result<std::string> canonical_document(const Plan& plan, DocumentForm form);
Result<std::string> canonical_document(const PlanV2& plan, DocumentForm form);

// The members both plan versions carry under the same names: the operation's
// snapshots (by `op`) and the plan's identity (by `plan`); each version sets
// its own other members, and the encoder sorts them all.
template <class Op>
void set_snapshots(jcs::Node& op_node, const Op& op, DocumentForm form) {
  bool absent = form.afters == DocumentForm::Afters::Absent;
  if constexpr (requires { op.action; })
    absent = absent || (form.afters == DocumentForm::Afters::Declared && op.action == Action::Link);
  op_node.set("after", to_node(absent ? Snapshot::absent() : op.after));
  op_node.set("before", to_node(op.before));
}
template <class PlanT>
void set_identity(jcs::Node& n, const PlanT& plan, DocumentForm form) {
  n.set("nonce", jcs::Node::string(plan.nonce));
  n.set("plugin_digest", jcs::Node::string(plan.plugin_digest));
  n.set("proposal_id", jcs::Node::string(form.proposal_id ? plan.proposal_id : std::string()));
  n.set("root_id", jcs::Node::string(plan.root_id));
  n.set("version", jcs::Node::integer(static_cast<std::int64_t>(plan.version)));
}

inline Result<std::string> sha256_of(Result<std::string> bytes) {
  if (!bytes.ok()) return std::move(bytes).error();
  return sha256_hex(*bytes);
}

}  // namespace dot::core::detail
