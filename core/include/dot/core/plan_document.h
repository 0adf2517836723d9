#pragma once
// Plan documents of both plan versions, as `plan-id` reads them and `export`
// writes them. The plan object's `version` picks the model: 2 is the general
// profile's (plan_v2.h, full RFC 8785), anything else is judged as the hello
// profile's version 1 (plan.h, which refuses every version but 1).
//
//   version 1: {"plan":<plan>,"plan_id":"<hex>"}, or the bare plan object;
//              its proposal_id recomputes from the plan.
//   version 2: {"plan":<plan>,"plan_id":"<hex>","proposal":<proposal document>};
//              a version-2 plan leaves its proposal's no-ops out, so its
//              proposal_id is only ever checked against the proposal document
//              (plan_v2.h check_proposal_binding), never recomputed from the
//              plan alone: a bare version-2 plan is refused.

#include <cstdint>
#include <string>
#include <string_view>

#include "dot/base/result.h"
#include "dot/core/plan.h"
#include "dot/core/plan_v2.h"

namespace dot::core {

// The largest plan document core parses (given to `plan-id`, or stored). A
// bound, not a derivation from the spec's limits (which are silent on it): a
// version-2 plan of max_operations writes with paths of a few hundred bytes
// and its proposal document are a few MiB together.
inline constexpr std::size_t kMaxPlanDocumentBytes = std::size_t{256} << 20;

struct PlanDocument {
  std::uint64_t version = kPlanVersion;  // kPlanVersion or kPlanVersion2
  Plan plan;                             // version 1
  PlanV2 plan_v2;                        // version 2
  // The plan's proposal_id, checked: recomputed (version 1) or bound to the
  // document's proposal (version 2).
  std::string proposal_id;
  // The plan_id the document claims (empty for a bare plan object).
  std::string claimed_plan_id;
  // The plan_id recomputed from the plan.
  std::string plan_id;
};

// Accepts either version's document (above); recomputes plan_id and checks
// proposal_id. Code::Validation kinds: plan_id_mismatch, proposal_id_mismatch,
// proposal_binding, proposal_missing (a version-2 plan without its proposal,
// or a version-1 document carrying one: unknown_field), or the decoders'.
Result<PlanDocument> decode_plan_document(std::string_view text);

}  // namespace dot::core
