#pragma once
// What the two profiles' planners share (planner.cpp, the hello profile and
// make_plan; planner_general.cpp, org.dot.dpp/v1). Internal to core.

#include <optional>
#include <string>
#include <utility>

#include "dot/base/sandbox.h"
#include "dot/core/planner.h"
#include "dot/core/registry.h"
#include "dot/dpp/host_session.h"
#include "stage.h"

namespace dot::core {

// The plugin session of one proposal, kept by make_plan so that a failure
// anywhere records the plugin's stderr (and dot.log messages) and kills it.
struct Session {
  std::optional<dpp::HostSession> host;
  std::string stderr_bytes() const { return host ? host->stderr_bytes() : std::string(); }
};

Error interrupted_error(int sig);
// The session's dot.log messages as the store keeps them.
std::vector<store::LogRecord> log_records(const std::vector<dpp::LogEntry>& logs);
// The signal's error once SIGINT or SIGTERM was seen.
Status check_interrupt(const PlanOptions& options);

// A call's failure, reported as the signal when one killed the plugin.
template <class R>
R during(const PlanOptions& options, R result) {
  if (!result.ok() && options.interrupt && options.interrupt->interrupted())
    return R(interrupted_error(options.interrupt->signal()));
  return result;
}

// Spawns the pinned plugin (its sealed descriptor, then closed) for `stage`
// with the caller's session options (profile, limits, log handler): under
// process assurance inside a Sandbox prepared for that descriptor and stage
// (`sandbox` keeps it alive for the session) shaped by `profile`; the
// plugin's group is handed to the interrupt guard.

struct ProfileContainment {
  SandboxLimits limits;           // the hello profile's are the defaults
  std::vector<UniqueFd> inputs;   // readable directories (open_input's descriptors)
  bool stage_folders = false;     // nested paths in the stage
};
Status start_session(const PlanOptions& options, PinnedPlugin& pinned, const Stage& stage,
                     dpp::HostSessionOptions ho, std::optional<Sandbox>& sandbox, Session& session,
                     const ProfileContainment& profile = {});

// The general profile's proposal (planner_general.cpp). The stage it makes
// is kept in `stage`, which make_plan removes once the plugin is dead.
Result<PlanOutcome> run_general_proposal(Root& root, const PlanOptions& options, const Manifest& manifest,
                                         PinnedPlugin& pinned, store::TxnId txn, Session& session,
                                         std::optional<Stage>& stage);

}  // namespace dot::core
