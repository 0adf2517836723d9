#pragma once
// What `dot-core status` shows of a root, read in one pass as a view: the
// plugins, what waits for recover or apply, the newest transaction and the
// drift of applied targets. No formatting here: the CLI renders the view
// (cli/cmd_engine.cpp, text or JSON). A read-only command: nothing is locked
// or written.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "dot/base/result.h"
#include "dot/core/drift.h"
#include "dot/core/registry.h"
#include "dot/core/root.h"
#include "dot/store/records.h"

namespace dot::core {

struct StatusView {
  std::vector<ListedPlugin> plugins;
  // Every transaction `recover` acts on, oldest first: the in-flight ones
  // and the PROPOSING ones (a plan killed before it sealed, or one running
  // now: status takes no lock, so it cannot tell them apart).
  std::vector<store::TxnSummary> unfinished;
  std::vector<store::TxnSummary> sealed;    // SEALED, waiting for apply
  std::optional<store::TxnSummary> newest;  // the newest transaction, any state
  std::size_t transactions = 0;
  std::vector<Drift> drift;  // find_drift
};

// The view of `root`. Errors: those of list_plugins, the store's queries
// and find_drift, unchanged.
Result<StatusView> read_status(Root& root);

// The plan `apply` without an id applies: the one SEALED transaction
// waiting. None: DOT_E_NOT_FOUND kind no_sealed_plan (naming `plan`);
// several: kind several_sealed_plans, the detail listing each (plan id
// prefix and plugin, newest first), so the user can pick one.
Result<store::TxnSummary> only_sealed_plan(Root& root);

}  // namespace dot::core
