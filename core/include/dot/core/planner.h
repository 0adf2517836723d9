#pragma once
// `dot-core plan`: drives the root's plugin one call at a time (dpp::HostSession),
// applying core's policy between the calls, and seals the result:
//
//   pinned plugin opened and hashed -> PROPOSING -> spawn from that descriptor
//   -> dot.initialize, identity check -> dot.plan, hello allowlists -> observe
//   every target (policy) -> proposal_id (recorded) -> dot.materialize -> read
//   and verify every staged file itself -> dot.validate -> dot.shutdown ->
//   plugin exit 0, group reaped -> seal (plan bytes, artifacts) -> SEALED.
//
// Any failure after PROPOSING leaves an ABANDONED proposal with its code and
// the plugin's stderr; no target is ever written by `plan`. A proposal whose
// every target already equals its `after` snapshot changes nothing: it is not
// sealed but ends ABANDONED with the reason store::kNoChangesCode, which is
// an outcome, not an error (docs/engine.md, "Plan").

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dot/base/result.h"
#include "dot/core/interrupt.h"
#include "dot/core/plan.h"
#include "dot/core/plan_v2.h"
#include "dot/core/progress.h"
#include "dot/core/registry.h"
#include "dot/core/root.h"
#include "dot/store/records.h"

namespace dot::core {

struct PlanOptions {
  // What the user asked for: --allow-audit-plugin (Audit) or
  // --require-process-sandbox (Process), overriding the registration; it
  // must match the manifest's assurance (DOT_E_POLICY otherwise). nullopt
  // (no flag): what `register` recorded, Process for a process-assurance
  // plugin, Audit for an audit one whose manifest records the consent given
  // at `register --allow-audit-plugin`, else DOT_E_POLICY kind audit_consent. Process runs the plugin inside
  // dot::Sandbox (base/sandbox.h), prepared for the pinned descriptor and this
  // plan's stage; a kernel without a layer fails closed with
  // DOT_E_SANDBOX_UNAVAILABLE before anything is recorded or started.
  std::optional<Assurance> consent;
  // The plugin to run (`plan --plugin ID`); empty: the root's only plugin
  // (registered_plugin's rules and errors).
  std::string plugin_id;
  std::chrono::milliseconds deadline{5000};
  // Signals: the plugin's group is killed on SIGINT/SIGTERM.
  InterruptGuard* interrupt = nullptr;
  // Test hook: runs after the pinned plugin was hashed and before it is
  // spawned from the same descriptor (the identity race test swaps the file).
  void (*after_hash)(void* ctx) = nullptr;
  void* after_hash_ctx = nullptr;
  // General profile: each dot.log message as it arrives (plan --verbose).
  std::function<void(const store::LogRecord&)> on_log;
  // After each target observed: targets done of those proposed, their bytes.
  ProgressFn on_progress;
  // General profile: `plan --exclude` patterns (base/path_glob.h). Every
  // proposed operation whose path one covers is left out of the plan; the
  // patterns are recorded in the plan document (PlanV2::exclude). A pattern
  // PathGlob refuses fails the plan before anything is recorded.
  std::vector<std::string> exclude;
};

// More target refusals than this are counted, not listed ("and N more").
inline constexpr std::size_t kMaxListedRefusals = 100;

struct PlannedSlot {
  std::string name;
  std::string before;  // bytes of the target ("" when absent)
  std::string after;   // staged bytes
};

// What `plan` shows of one operation of a version-2 plan beyond the
// operation itself (its path and snapshots, held once in the plan): the
// sizes, and the bytes of either side when small enough for a diff
// (the pipeline keeps at most kDiffFileBytes per file, kDiffTotalBytes
// per plan; beyond that a one-line summary is shown).
inline constexpr std::size_t kDiffFileBytes = 64 * 1024;
inline constexpr std::size_t kDiffTotalBytes = 8 * 1024 * 1024;
// A plan that changes nothing keeps its proposal document only up to this
// size (its store record stays small however many paths it named).
inline constexpr std::size_t kKeptNoChangeProposalBytes = 2048;
class PathSlot {
 public:
  std::uint64_t before_size = 0;
  std::uint64_t after_size = 0;
  // A write or link over an existing entry no plugin manages yet: the plan
  // takes it over (apply keeps its backup, rollback restores it exactly).
  bool take_over = false;

  // The bytes of each side, when kept (else nullopt).
  const std::optional<std::string>& before_content() const noexcept { return sides_ ? sides_->before : kNoBytes; }
  const std::optional<std::string>& after_content() const noexcept { return sides_ ? sides_->after : kNoBytes; }
  void keep_before(std::optional<std::string> bytes) { keep(&Sides::before, std::move(bytes)); }
  void keep_after(std::optional<std::string> bytes) { keep(&Sides::after, std::move(bytes)); }

  PathSlot() = default;
  PathSlot(PathSlot&&) noexcept = default;
  PathSlot& operator=(PathSlot&&) noexcept = default;
  PathSlot(const PathSlot& o)
      : before_size(o.before_size),
        after_size(o.after_size),
        take_over(o.take_over),
        sides_(o.sides_ ? std::make_unique<Sides>(*o.sides_) : nullptr) {}
  PathSlot& operator=(const PathSlot& o) { return *this = PathSlot(o); }

 private:
  // Most slots of a large plan keep no bytes (only the paths a diff is
  // shown of do, within kDiffTotalBytes): the two sides live behind one
  // pointer made when a side is kept (inline they were 80 of a slot's 104
  // bytes: 8 MB at 100,000 paths).
  struct Sides {
    std::optional<std::string> before;
    std::optional<std::string> after;
  };
  static inline const std::optional<std::string> kNoBytes{};
  void keep(std::optional<std::string> Sides::*side, std::optional<std::string> bytes) {
    if (!bytes && !sides_) return;
    if (!sides_) sides_ = std::make_unique<Sides>();
    (*sides_).*side = std::move(bytes);
  }
  std::unique_ptr<Sides> sides_;
};

struct PlanOutcome {
  store::TxnId txn = 0;
  Plan plan;
  // True when every operation's after equals its before: nothing was sealed,
  // plan_id is empty, the proposal is ABANDONED with kNoChangesCode.
  bool no_changes = false;
  std::string plan_id;
  std::vector<PlannedSlot> slots;
  std::string plugin_stderr;
  // The general profile (org.dot.dpp/v1): version kPlanVersion2, the plan
  // in plan_v2 (sealed; when no_changes, the proposal as proposed, every
  // after filled in), path_slots[i] what is shown of plan_v2.operations[i]
  // (none when no_changes), and the
  // plugin's dot.log messages in order. `plan` and `slots` stay empty.
  std::uint64_t version = kPlanVersion;
  PlanV2 plan_v2;
  std::vector<PathSlot> path_slots;
  std::vector<store::LogRecord> logs;
  // How many proposed operations `exclude` left out.
  std::size_t excluded = 0;
  // Empty, or why the plan's stage could not be removed once the plugin was
  // gone (`recover` removes it and says so).
  std::string stage_left;
};

// Errors carry their DOT_E_* code; after PROPOSING the proposal is ABANDONED
// with that code before the error is returned. One pipeline runs every
// profile (planner.cpp); the manifest's profile supplies what differs
// (core/src/plan_profile.h): org.dot.hello/v1 seals version-1 plans,
// org.dot.dpp/v1 version-2 plans (docs/spec/dpp-general.md).
Result<PlanOutcome> make_plan(Root& root, const PlanOptions& options);

// A unified diff of one slot (libdtl), "--- a/NAME" / "+++ b/NAME" headers.
std::string unified_diff(const PlannedSlot& slot);

}  // namespace dot::core
