// Plan documents of both versions, as `plan-id` reads them and `export` writes them (plan_document.h).
#include "dot/core/plan_document.h"
#include "dot/core/error_kinds.h"

#include <fmt/format.h>

#include "dot/base/sha256.h"

namespace dot::core {
namespace {

// The one place a decoder picks the model: the plan says which it is.
bool is_version_2(const json::Value& plan) noexcept {
  if (!plan.is_object()) return false;
  auto v = plan.find("version");
  return v && v->is_number() && v->number_text() == "2";
}

}  // namespace

Result<PlanDocument> decode_plan_document(std::string_view text) {
  DOT_ASSIGN_OR_RETURN(json::Document doc,
                       json::parse(text, json::ReadLimits{.max_bytes = kMaxPlanDocumentBytes, .max_depth = 16}));
  json::Value root = doc.root();
  PlanDocument out;
  json::Value plan_v = root;
  std::optional<json::Value> proposal_v;
  if (root.is_object() && root.find("plan")) {
    json::ObjectReader r(root, "plan document");
    DOT_ASSIGN_OR_RETURN(plan_v, r.required_object("plan"));
    DOT_ASSIGN_OR_RETURN(json::Value id_v, r.required("plan_id"));
    DOT_ASSIGN_OR_RETURN(std::string_view id, r.required_string("plan_id"));
    // Only a version-2 document has a proposal; in a version-1 document the
    // key stays unasked and finish() refuses it as unknown.
    if (is_version_2(plan_v)) proposal_v = r.optional("proposal");
    DOT_TRY(r.finish());
    if (!is_sha256_hex(id))
      return make_parse_error(core::ErrorKind::InvalidId, id_v.offset(), "plan_id must be 64 lowercase hex characters");
    out.claimed_plan_id = std::string(id);
  }
  // Hashing must not depend on how the document was spelled: both re-encode.
  if (is_version_2(plan_v)) {
    out.version = kPlanVersion2;
    DOT_ASSIGN_OR_RETURN(out.plan_v2, decode_plan_v2(plan_v));
    if (!proposal_v)
      return make_error(core::ErrorKind::ProposalMissing,
                        "a version-2 plan's proposal_id is checked against its proposal document: give the "
                        "document `dot-core export` writes ({\"plan\",\"plan_id\",\"proposal\"})");
    DOT_ASSIGN_OR_RETURN(PlanV2 proposal, decode_plan_v2(*proposal_v));
    DOT_ASSIGN_OR_RETURN(std::string proposal_bytes, canonical_bytes(proposal));
    DOT_TRY(check_proposal_binding(out.plan_v2, proposal_bytes));
    DOT_ASSIGN_OR_RETURN(out.plan_id, compute_plan_id(out.plan_v2));
    out.proposal_id = out.plan_v2.proposal_id;
  } else {
    DOT_ASSIGN_OR_RETURN(out.plan, decode_plan(plan_v));
    DOT_ASSIGN_OR_RETURN(out.plan_id, compute_plan_id(out.plan));
    DOT_TRY(verify_proposal_id(out.plan));
    out.proposal_id = out.plan.proposal_id;
  }
  if (!out.claimed_plan_id.empty() && out.claimed_plan_id != out.plan_id)
    return make_error(
        core::ErrorKind::PlanIdMismatch,
        fmt::format("the document claims plan_id {} but the plan hashes to {}", out.claimed_plan_id, out.plan_id));
  return out;
}

}  // namespace dot::core
