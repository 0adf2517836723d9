#pragma once
// Reading a managed root made by the Go reference implementation of ADR-014
// (docs/spec/go-roots.md): recognise it, verify every byte of it the way the
// reference's own readers do (stricter where the reference tolerates forms
// its writer never produces), and say which state its `status` would name
// and what its `recover` / `retry-effects` would do to finish it.
//
// Read-only by construction: every entry is opened beneath the root
// descriptor without following a symlink (base/beneath.h), nothing is
// created, written, renamed or removed, and the reference's `.dot-lock` is
// only flock()ed shared when it exists, so a running reference command is
// seen (DOT_E_CONFLICT) without either side waiting. `dot-core adopt` runs
// this first, and `adopt --dry-run` runs only this.
//
// Where docs/spec/go-roots.md marks a fact as inferred, the safe reading is taken:
// what the reference's writer could not have produced is refused, naming the
// file, and nothing is changed (docs/user-guide.md, "Coming from the Go
// reference").

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dot/base/result.h"
#include "dot/core/plan.h"

namespace dot::adopt {

// The three marker bytes of a reference root (docs/spec/go-roots.md section 1).
inline constexpr std::string_view kMarkerName = ".dot-root";
inline constexpr std::string_view kMarkerPrefix = "dot-hello-profile-v1:";
inline constexpr std::string_view kTxnDir = ".dot-txn";
inline constexpr std::string_view kHistoryDir = ".dot-history";
inline constexpr std::string_view kStageDir = ".dot-stage";
inline constexpr std::string_view kArchiveIntent = ".dot-archive";
inline constexpr std::string_view kLockName = ".dot-lock";
inline constexpr std::string_view kPluginName = ".dot-plugin";
inline constexpr std::string_view kManifestName = ".dot-plugin.json";
// Every file the reference reads is at most this long (fs_unix.go).
inline constexpr std::size_t kMaxFileBytes = 65536;
// The plugin copy register accepts.
inline constexpr std::size_t kMaxPluginBytes = 16u << 20;

// Which reader generation wrote the plans (docs/spec/go-roots.md section 0):
// capabilities are not on disk, so a root without any plan is Unknown.
enum class Generation { PreCapability, Effects, Unknown };
std::string_view generation_name(Generation g) noexcept;  // pre-capability, effects, unknown
std::optional<Generation> generation_from_name(std::string_view name) noexcept;

// What finishing the active transaction leaves, as `adopt` reports it:
//   Nothing    no transaction is active (IDLE);
//   AllBefore  rolled back, or to be rolled back by the reference's recover
//              (every target as it was before);
//   AllAfter   committed (every target as the plan sealed it);
//   Effects    committed, with its post-commit effect still to run
//              (retry-effects), then all-after;
//   Discard    work that never reached a durable PREPARED: its leftovers go,
//              the targets were never touched.
enum class Finish { Nothing, AllBefore, AllAfter, Effects, Discard };
std::string_view finish_name(Finish f) noexcept;

enum class WalState { Prepared, Committing, Committed, RollingBack, RolledBack };
std::string_view wal_state_name(WalState s) noexcept;
enum class EffectState { Attempted, Failed, Succeeded };
std::string_view effect_state_name(EffectState s) noexcept;  // ATTEMPTED, FAILED, SUCCEEDED

// The reference's status word (docs/spec/go-roots.md section 7): a
// transaction's own (every one but Idle and Archiving), or the root's (Idle,
// Abandoned, Archiving, or the active transaction's).
enum class RefState {
  Idle,
  Abandoned,
  Archiving,
  Prepared,
  Committing,
  Committed,
  PostCommitPending,
  PostCommitFailed,
  RollingBack,
  RolledBack,
};
// As the reference prints it: IDLE, ABANDONED, ARCHIVING, PREPARED,
// COMMITTING, COMMITTED, POST_COMMIT_PENDING, POST_COMMIT_FAILED,
// ROLLING_BACK, ROLLED_BACK.
std::string_view ref_state_name(RefState s) noexcept;
std::optional<RefState> ref_state_from_name(std::string_view name) noexcept;

// The records of the reference's journal and ledger, byte for byte as its
// writer makes them, without the newline (sections 3 and 4): what the
// survey compares each record with and what adopt appends. A ledger record's
// members are in Go's field order, not sorted, so it is not canonical JSON
// and is written here as the reference writes it.
std::string_view wal_record(WalState s) noexcept;
// The idempotency key of the one effect of `plan_id`: SHA-256 hex of
// "<plan_id>:commit:0".
std::string effect_key(std::string_view plan_id);
std::string ledger_record(std::string_view key, EffectState s);

// One transaction folder: `.dot-txn`, or `.dot-history/<plan_id>`.
struct Transaction {
  std::string dir;  // relative to the root, for messages
  // plan.json verified (writer form, ids recomputed). Absent only for
  // ABANDONED leftovers whose plan.json is missing or torn.
  std::optional<core::Plan> plan;
  std::string plan_bytes;  // plan.json exactly as on disk
  std::string plan_id;
  std::string proposal_id;
  std::vector<WalState> wal;        // the complete records, in order
  std::size_t wal_torn_bytes = 0;   // an unterminated last record (ignored, as the reference does)
  std::vector<EffectState> ledger;  // complete effects.wal records (index 0)
  bool has_ledger = false;
  std::size_t artifacts = 0;  // artifact-N files present
  std::size_t backups = 0;    // backup-N files present
  // Their bytes, by slot, as verified against the plan (the import keeps
  // them); a slot without a backup has none here.
  std::vector<std::string> artifact_bytes;
  std::vector<std::optional<std::string>> backup_bytes;
  // When `wal` last changed (seconds and nanoseconds since the epoch, kept
  // apart: any mtime someone set must compare without overflow): the only
  // trace on disk of the order archived generations were made in, which
  // their names do not say. A guess (adopt.h, kArchivedCode).
  std::pair<std::int64_t, std::int64_t> wal_mtime{0, 0};
  bool has_stage = false;  // stage/ inside (moved there by archive)
  // The reference's status word for it alone (never Idle or Archiving).
  RefState state = RefState::Abandoned;
};

struct Manifest {
  std::string sha256;
  bool has_profile = false;  // hosts from 1b7b6e2 on write "profile"
  std::string assurance;     // "audit" or "process"
};

struct ArchiveIntent {
  std::string plan_id;
  bool stage = false;
};

struct Survey {
  std::string root;  // as given
  std::string root_id;
  Generation generation = Generation::Unknown;
  // The reference's status word for the root: Idle, Abandoned, Archiving,
  // or the active transaction's state.
  RefState state = RefState::Idle;
  Finish finish = Finish::Nothing;
  std::optional<Manifest> manifest;  // registered
  // Why the registered plugin's copy is not to be trusted: `.dot-plugin`
  // is missing, no longer hashes to the manifest's digest, or is a file
  // someone else could write (one sentence; empty when it is sound).
  // Finishing never runs the plugin, so this blocks nothing: adopt finishes
  // and imports the root and registers no plugin (docs/user-guide.md).
  std::string plugin_untrusted;
  bool has_lock = false;
  std::size_t stage_files = 0;  // files in a root .dot-stage
  bool has_stage = false;
  std::vector<std::string> next_files;  // .dot-next-N leftovers
  std::optional<ArchiveIntent> archive;
  // The slots the reference's recover will restore (ascending): those whose
  // target is not its `before` now (the others it skips).
  std::vector<std::size_t> to_restore;
  // The active transaction: `.dot-txn`, or while ARCHIVING the one being
  // archived (wherever the renames left it).
  std::optional<Transaction> active;
  // Every archived generation but the one being archived, by plan_id.
  std::vector<Transaction> history;
  // dot-core's own state folder (.dot) exists beside the reference's files.
  bool has_dot_core_state = false;
  // An import `adopt` began and never made durable (its folder is
  // kImportDir); the next `adopt` starts it again.
  bool has_partial_import = false;
};

// The folder `adopt` builds dot-core's state folder in before one rename
// makes it `.dot` (adopt.h): only ever `adopt`'s own, never the user's.
inline constexpr std::string_view kImportDir = ".dot-adopting";

struct SurveyOptions {
  // The caller (adopt) already holds the reference's lock exclusively; the
  // survey does not take it again.
  bool caller_holds_lock = false;
};

// Recognises and verifies the reference root at `dir` (absolute or relative;
// never through a symlink). Typed errors, each naming the file:
//   DOT_E_VALIDATION   not a reference root (kind not_reference_root); a
//                      marker, manifest, plan, WAL, ledger or intent that is
//                      not what the reference writes (kinds corrupt_wal,
//                      illegal_transition, plan_id_mismatch,
//                      proposal_id_mismatch, not_writer_form, unknown_entry,
//                      archive_intent, root_id_mismatch...);
//   DOT_E_POLICY       the root or a folder not 0700, a file breaking the
//                      reference's read rules, anything not owned by us;
//   DOT_E_PATH_ESCAPE  a symlink anywhere among the reference's files;
//   DOT_E_PLUGIN_IDENTITY  a manifest the reference does not write, a
//                      plugin copy without a manifest, or a plan naming
//                      another plugin than the manifest (a plugin copy that
//                      no longer matches the manifest is no error: see
//                      Survey::plugin_untrusted);
//   DOT_E_ARTIFACT_MISMATCH  an artifact, backup or stage file that differs
//                      from the plan;
//   DOT_E_RECOVERY_REQUIRED  a target edited by someone else where the
//                      reference's recover or archive would refuse it;
//   DOT_E_CONFLICT     a reference command holds the root's lock.
Result<Survey> survey(const std::string& dir, const SurveyOptions& options = {});

// One sentence: what finishing the survey's root will do.
std::string describe_finish(const Survey& s);

// The bytes the reference's writer produces for `plan` sealed as `plan_id`
// (Go's field order, compact, no newline; docs/spec/go-roots.md section 2).
std::string writer_form(const core::Plan& plan, std::string_view plan_id);

}  // namespace dot::adopt
