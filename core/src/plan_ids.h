#pragma once
// The one derivation of a plan's proposal document and ids, for both plan
// versions: the proposal document is the plan with proposal_id empty and
// every `after` absent, and each id is the SHA-256 of canonical bytes. Only
// the canonical encoder differs per version, so each passes its own.
#include <string>

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

inline Result<std::string> sha256_of(Result<std::string> bytes) {
  if (!bytes.ok()) return std::move(bytes).error();
  return sha256_hex(*bytes);
}

}  // namespace dot::core::detail
