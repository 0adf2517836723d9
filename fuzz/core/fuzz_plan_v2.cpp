// Stored version-2 plan decoding (dot/core/plan_v2.h, plan_document.h) over
// arbitrary bytes: what `store check`, export and every load run on a plan
// read back from the database, and what `plan-id` runs on a document.
// Deterministic oracles:
//   - every refusal carries one of the codes the model documents
//     (Validation, Policy, PathEscape, Protocol);
//   - a plan that decodes from canonical bytes re-encodes to exactly those
//     bytes, and its ids are the SHA-256 of what they claim to hash;
//   - whatever decodes keeps every rule: paths pass check_plan_paths, the one
//     root-sync effect, directories ascending with a folder mode;
//   - the bytes read in pieces (PlanV2Reader, as a stored plan streams)
//     give the same plan or the same refusal as the bytes given whole;
//   - a plan and the proposal document made from it bind (when the plan
//     holds no no-op), and a document decodes to the same plan_id it claims.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "dot/base/sha256.h"
#include "dot/core/plan_document.h"
#include "dot/core/plan_v2.h"
#include "dot/dpp/path_rules.h"
#include "plan_v2_reader.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

template <typename T>
bool refused(const dot::Result<T>& r) {
  if (r.ok()) return false;
  const dot::Code c = r.error().code;
  check(c == dot::Code::Validation || c == dot::Code::Policy || c == dot::Code::PathEscape || c == dot::Code::Protocol);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto plan = dot::core::decode_canonical_plan_v2(bytes);
  if (!refused(plan)) {
    auto again = dot::core::canonical_bytes(*plan);
    check(again.ok() && *again == bytes);
    std::vector<std::string_view> paths;
    for (const auto& op : plan->operations) paths.push_back(op.path);
    check(dot::dpp::check_plan_paths(paths).ok());
    check(plan->effects.size() == 1);
    // A symlink snapshot is only ever a consistent one, and an operation's
    // after is of its action's kind.
    for (const auto& op : plan->operations) {
      for (const dot::core::Snapshot* s : {&op.before, &op.after})
        if (s->kind == dot::core::EntryKind::Symlink)
          check(s->exists && s->mode == dot::core::kLinkMode && s->sha256 == dot::sha256_hex(s->link_text) &&
                dot::dpp::check_link_text(op.path, s->link_text).ok());
      if (!plan->proposal_id.empty() && op.action != dot::core::Action::Remove)
        check(op.after.is_link() == (op.action == dot::core::Action::Link));
    }
    for (std::size_t i = 0; i < plan->directories.size(); ++i) {
      check(dot::dpp::is_folder_mode(plan->directories[i].mode));
      if (i > 0) check(plan->directories[i - 1].path < plan->directories[i].path);
    }
    auto plan_id = dot::core::compute_plan_id(*plan);
    check(plan_id.ok() && *plan_id == dot::sha256_hex(bytes));
    auto document = dot::core::proposal_document(*plan);
    check(document.ok());
    if (!plan->proposal_id.empty() && !plan->operations.empty()) {
      bool any_noop = false;
      for (const auto& op : plan->operations) any_noop = any_noop || dot::core::is_general_noop(op);
      auto sealed = dot::core::seal_from_proposal(*plan);
      check(sealed.ok());
      if (!any_noop) check(dot::core::check_proposal_binding(*sealed, *document).ok());
    }
  }
  // A stored plan is read as it streams: the same bytes in pieces (of a
  // size the input picks) give the same plan, or the same refusal.
  {
    std::vector<dot::core::PathOperation> operations;
    dot::core::PlanV2Reader reader([&operations](dot::core::PathOperation&& op) {
      operations.push_back(std::move(op));
      return dot::Status{};
    });
    const std::size_t piece = 1 + (size % 61);
    dot::Status written;
    for (std::size_t at = 0; at < size && written.ok(); at += piece) written = reader.write(bytes.substr(at, piece));
    auto streamed = reader.finish();
    check(streamed.ok() == plan.ok());
    if (plan.ok()) {
      streamed->operations = std::move(operations);
      check(*streamed == *plan);
    } else {
      check(streamed.error().line() == plan.error().line());
    }
  }
  auto doc = dot::core::decode_plan_document(bytes);
  if (!refused(doc)) {
    check(doc->plan_id.size() == 64);
    check(doc->claimed_plan_id.empty() || doc->claimed_plan_id == doc->plan_id);
  }
  return 0;
}
