#pragma once
// The one derivation of a plan's proposal document and ids, for both plan
// versions: the proposal document is the plan with proposal_id empty and
// every `after` absent, and each id is the SHA-256 of canonical bytes. Only
// the canonical encoder differs per version, so each passes its own.
#include <string>

#include "dot/base/jcs.h"
#include "dot/base/result.h"
#include "dot/base/sha256.h"
#include "dot/core/plan.h"

namespace dot::core::detail {

template <class PlanT, class Encode>
Result<std::string> proposal_document_of(const PlanT& plan, Encode canonical) {
  PlanT p = plan;
  p.proposal_id.clear();
  for (auto& op : p.operations) op.after = Snapshot::absent();
  return canonical(p);
}

// The same, with each write's after kept: what the plugin declared of it.
template <class PlanT, class Encode>
Result<std::string> declared_proposal_document_of(const PlanT& plan, Encode canonical) {
  PlanT p = plan;
  p.proposal_id.clear();
  return canonical(p);
}

// The members both plan versions carry under the same names: the operation's
// snapshots (by `op`) and the plan's identity (by `plan`); each version sets
// its own other members, and the encoder sorts them all.
template <class Op>
void set_snapshots(jcs::Node& op_node, const Op& op) {
  op_node.set("after", to_node(op.after));
  op_node.set("before", to_node(op.before));
}
template <class PlanT>
void set_identity(jcs::Node& n, const PlanT& plan) {
  n.set("nonce", jcs::Node::string(plan.nonce));
  n.set("plugin_digest", jcs::Node::string(plan.plugin_digest));
  n.set("proposal_id", jcs::Node::string(plan.proposal_id));
  n.set("root_id", jcs::Node::string(plan.root_id));
  n.set("version", jcs::Node::integer(static_cast<std::int64_t>(plan.version)));
}

inline Result<std::string> sha256_of(Result<std::string> bytes) {
  if (!bytes.ok()) return std::move(bytes).error();
  return sha256_hex(*bytes);
}

}  // namespace dot::core::detail
