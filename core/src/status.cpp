// `dot-core status` as a view (status.h): six read-only queries, no output.
#include "dot/core/status.h"

#include <algorithm>

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

}  // namespace dot::core
