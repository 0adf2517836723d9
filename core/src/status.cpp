// `dot-core status` as a view (status.h): six read-only queries, no output.
#include "dot/core/status.h"

#include <algorithm>

#include <fmt/format.h>

#include "dot/core/error_kinds.h"

namespace dot::core {

Result<StatusView> read_status(Root& root) {
  store::Store& st = root.store();
  StatusView v;
  DOT_ASSIGN_OR_RETURN(v.plugins, list_plugins(root));
  store::ListFilter proposing;
  proposing.state = store::State::Proposing;
  proposing.limit = 0;
  DOT_ASSIGN_OR_RETURN(v.unfinished, st.list(proposing));
  DOT_ASSIGN_OR_RETURN(auto in_flight, st.in_flight());
  v.unfinished.insert(v.unfinished.end(), in_flight.begin(), in_flight.end());
  std::sort(v.unfinished.begin(), v.unfinished.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  store::ListFilter sealed;
  sealed.state = store::State::Sealed;
  sealed.limit = 0;
  DOT_ASSIGN_OR_RETURN(v.sealed, st.list(sealed));
  DOT_ASSIGN_OR_RETURN(auto newest, st.list(store::ListFilter{std::nullopt, 1}));
  if (!newest.empty()) v.newest = std::move(newest.front());
  DOT_ASSIGN_OR_RETURN(v.transactions, st.count());
  DOT_ASSIGN_OR_RETURN(v.drift, find_drift(root));
  return v;
}

Result<store::TxnSummary> only_sealed_plan(Root& root) {
  store::ListFilter sealed;
  sealed.state = store::State::Sealed;
  sealed.limit = 0;
  DOT_ASSIGN_OR_RETURN(std::vector<store::TxnSummary> waiting, root.store().list(sealed));
  if (waiting.size() == 1) return std::move(waiting.front());
  if (waiting.empty())
    return make_error(core::ErrorKind::NoSealedPlan,
                      fmt::format("no sealed plan is waiting; make one with `{}`", root.command("plan")));
  std::string listed;
  for (const auto& t : waiting)
    listed += fmt::format("{}{} from {}", listed.empty() ? "" : ", ", t.plan_id.substr(0, 12), t.plugin_id);
  // One line, like every error: the candidates in it, newest first.
  return make_error(core::ErrorKind::SeveralSealedPlans,
                    fmt::format("{} sealed plans are waiting: {}; name the one to apply: `{} ID`", waiting.size(),
                                listed, root.command("apply")));
}

}  // namespace dot::core
