#pragma once
// The error kinds of core: plan documents, planning, registration, apply, recovery.
// Each row: the kind printed and stored (never renamed), its code, what it
// means, the rule it enforces. docs/errors.md is generated from this table.

#include <array>
#include <cstddef>
#include <cstdint>

#include "dot/base/error.h"
#include "dot/base/error_kinds.h"

namespace dot::core {

enum class ErrorKind : std::uint8_t {
  Tampered,
  Interrupted,
  Unfinished,
  OtherRoot,
  PlanVersion,
  Artifact,
  NotSealed,
  PreCapability,
  Changed,
  Folders,
  ConcurrentEdit,
  Effect,
  SlotName,
  NotCanonical,
  ProposalIdMismatch,
  Target,
  PlanInvariant,
  InvalidId,
  InconsistentSnapshot,
  TooManyEffects,
  UnsupportedVersion,
  OperationCount,
  DuplicateSlot,
  ProposalMissing,
  PlanIdMismatch,
  ProposalBinding,
  Effects,
  OperationLimit,
  Mode,
  PlanProfile,
  PluginId,
  WriteAfter,
  ProposalAfter,
  RemoveAfter,
  Unsorted,
  Directory,
  InterruptedPlan,
  AssuranceMisuse,
  Assurance,
  Manifest,
  ProposalId,
  Staged,
  NotCommitted,
  Archived,
  NotNewest,
  ManifestAssurance,
  ManifestEncoding,
  Symlink,
  Profile,
  Inputs,
  PluginPath,
  PluginRegistered,
  Interpreter,
  Runtime,
  NoPlugin,
  PluginRequired,
  UnknownPlugin,
  Digest,
  OwnedByOther,
  InputPath,
  InputRoot,
  InputType,
  StageReplaced,
  Parent,
  MissingBackup,
  Exclude,
  NestedRoot,
  InsideInput,
  TestHook,
  LinkAfter,
  Consent,
  AuditConsent,
  NoSealedPlan,
  SeveralSealedPlans,
};

inline constexpr auto kErrorKinds = std::to_array<KindRow>({
    {"tampered", Code::RecoveryRequired, "stored plan … is inconsistent: …; nothing is applied from it",
     "the transaction states (docs/spec/transactions.md)"},  // Tampered
    {"interrupted", Code::RecoveryRequired, "apply of … interrupted by … and stopped at a safe point (…): run `…`",
     "the transaction states (docs/spec/transactions.md)"},  // Interrupted
    {"unfinished", Code::RecoveryRequired, "transaction … is …: run `…` first",
     "the transaction states (docs/spec/transactions.md)"},  // Unfinished
    {"other_root", Code::Policy, "plan … was sealed for root …, not this root (…)",
     "the transaction states (docs/spec/transactions.md)"},  // OtherRoot
    {"plan_version", Code::Policy, "plan … is a version-2 plan (…), not a version-1 one",
     "the transaction states (docs/spec/transactions.md)"},  // PlanVersion
    {"artifact", Code::ArtifactMismatch, "plan … has … slots but … stored artifacts",
     "the transaction states (docs/spec/transactions.md)"},  // Artifact
    {"not_sealed", Code::Policy, "plan … is …, not SEALED: a sealed plan applies exactly once",
     "the transaction states (docs/spec/transactions.md)"},  // NotSealed
    {"pre_capability", Code::Policy, "plan … was sealed before the post-commit-effects capability and is never newly ",
     "the transaction states (docs/spec/transactions.md)"},  // PreCapability
    {"changed", Code::Conflict, "target … changed since it was observed at plan time",
     "the transaction states (docs/spec/transactions.md)"},  // Changed
    {"folders", Code::Conflict,
     "the folders apply would create are no longer the ones the plan lists (a folder appeared or ",
     "the transaction states (docs/spec/transactions.md)"},  // Folders
    {"concurrent_edit", Code::RecoveryRequired,
     "rolling back …: … equal neither their before nor their after snapshot: ",
     "the transaction states (docs/spec/transactions.md)"},                                   // ConcurrentEdit
    {"effect", Code::Policy, "effect … is not the allowlisted root-sync", "docs/engine.md"},  // Effect
    {"slot_name", Code::PathEscape, "slot name \"…\" does not match ^[a-z][a-z0-9-]…}\\.txt$",
     "the plan documents (docs/spec/plans.md)"},  // SlotName
    {"not_canonical", Code::Validation, "the stored plan bytes are not in canonical form",
     "the plan documents (docs/spec/plans.md)"},  // NotCanonical
    {"proposal_id_mismatch", Code::Validation, "plan.proposal_id … does not match the plan (recomputed …)",
     "the plan documents (docs/spec/plans.md)"},  // ProposalIdMismatch
    {"target", Code::Policy,
     "a target outside the policy: not a private owned regular single-link file of at most 64 KiB",
     "the plan documents (docs/spec/plans.md)"},  // Target
    {"plan_invariant", Code::Policy, "a plan that breaks a rule plan seals with (names, effects, snapshots)",
     "the plan documents (docs/spec/plans.md)"},  // PlanInvariant
    {"invalid_id", Code::Validation, "must be 64 lowercase hex characters",
     "the plan documents (docs/spec/plans.md)"},  // InvalidId
    {"inconsistent_snapshot", Code::Validation,
     "says exists:false but is not the absent snapshot (all zero, sha256 \"\")",
     "the plan documents (docs/spec/plans.md)"},  // InconsistentSnapshot
    {"too_many_effects", Code::Validation, "plan.effects has more than … entries",
     "the plan documents (docs/spec/plans.md)"},  // TooManyEffects
    {"unsupported_version", Code::Validation, "plan.version … is not 1",
     "the plan documents (docs/spec/plans.md)"},  // UnsupportedVersion
    {"operation_count", Code::Validation, "plan.operations must hold 1 to … slots",
     "the plan documents (docs/spec/plans.md)"},  // OperationCount
    {"duplicate_slot", Code::Validation, "slot name \"…\" appears twice",
     "the plan documents (docs/spec/plans.md)"},  // DuplicateSlot
    {"proposal_missing", Code::Validation,
     "a version-2 plan's proposal_id is checked against its proposal document: give the ",
     "the plan documents (docs/spec/plans.md)"},  // ProposalMissing
    {"plan_id_mismatch", Code::Validation, "the document claims plan_id … but the plan hashes to …",
     "the plan documents (docs/spec/plans.md)"},  // PlanIdMismatch
    {"proposal_binding", Code::Validation, "the sealed plan does not follow from its proposal document: …",
     "the plan documents (docs/spec/plans.md)"},  // ProposalBinding
    {"effects", Code::Policy, "plan.effects must be exactly [{\"failure_policy\":\"required\",\"kind\":\"sync\",",
     "the plan documents (docs/spec/plans.md)"},  // Effects
    {"operation_count", Code::Protocol, "plan.operations has … entries, more than max_operations …",
     "the plan documents (docs/spec/plans.md)"},  // OperationLimit
    {"mode", Code::Policy,
     "….mode … is not a folder mode, or a folder would be created writable by more than its owner",
     "the plan documents (docs/spec/plans.md)"},  // Mode
    {"profile", Code::Validation, "plan.profile \"…\" is not \"…\"",
     "the plan documents (docs/spec/plans.md)"},  // PlanProfile
    {"plugin_id", Code::Validation, "plan.plugin_id must be 1 to … bytes",
     "the plan documents (docs/spec/plans.md)"},  // PluginId
    {"write_after", Code::Validation, "….after of a write must exist",
     "the plan documents (docs/spec/plans.md)"},  // WriteAfter
    {"proposal_after", Code::Validation, "….after must be absent in a proposal document",
     "the plan documents (docs/spec/plans.md)"},  // ProposalAfter
    {"remove_after", Code::Validation, "….after of a remove must be absent",
     "the plan documents (docs/spec/plans.md)"},  // RemoveAfter
    {"unsorted", Code::Validation, "is not after the folder before it",
     "the plan documents (docs/spec/plans.md)"},  // Unsorted
    {"directory", Code::Validation, "\"…\" is not the parent folder of a write",
     "the plan documents (docs/spec/plans.md)"},  // Directory
    {"interrupted", Code::Protocol, "interrupted by …: the plugin's process group was killed",
     "docs/engine.md"},  // InterruptedPlan
    {"assurance", Code::Internal, "negotiated assurance differs from the manifest's",
     "docs/engine.md"},  // AssuranceMisuse
    {"assurance", Code::Policy,
     "the plugin is registered with process assurance: audit consent never satisfies it; use ",
     "docs/engine.md"},  // Assurance
    {"manifest", Code::PluginIdentity, "the stored manifest does not name the plugin its plugin row names",
     "docs/engine.md"},  // Manifest
    {"proposal_id", Code::Internal, "the after staged for … is not the one its stored proposal declared",
     "docs/engine.md"},  // ProposalId
    {"staged", Code::Internal, "fewer staged files were read back than the plan has writes (a bug of the pipeline)",
     "docs/engine.md"},  // Staged
    {"not_committed", Code::Policy, "plan … is …: only a COMMITTED or DONE transaction can be rolled back",
     "the transaction states (docs/spec/transactions.md)"},  // NotCommitted
    {"archived", Code::Policy, "plan … was archived by the Go reference before adoption; archived generations ",
     "the transaction states (docs/spec/transactions.md)"},  // Archived
    {"not_newest", Code::Policy, "only the newest applied transaction can be rolled back; … is newer",
     "the transaction states (docs/spec/transactions.md)"},  // NotNewest
    {"assurance", Code::Validation, "assurance \"…\" is not audit or process",
     "docs/spec/dpp-general.md, Registration and manifest"},  // ManifestAssurance
    {"manifest", Code::Internal, "a hello-profile manifest has no inputs",
     "docs/spec/dpp-general.md, Registration and manifest"},  // ManifestEncoding
    {"symlink", Code::PathEscape, "--input …: … is a symlink (never followed)",
     "docs/spec/dpp-general.md, Registration and manifest"},  // Symlink
    {"profile", Code::Policy, "plugin … needs --profile … (only … may leave it out)",
     "docs/spec/dpp-general.md, Registration and manifest"},  // Profile
    {"inputs", Code::Policy, "profile … has no inputs; --input needs --profile …",
     "docs/spec/dpp-general.md, Registration and manifest"},  // Inputs
    {"plugin_path", Code::Policy, "--plugin must be an absolute path (got \"…\"): plugins are never looked up",
     "docs/spec/dpp-general.md, Registration and manifest"},  // PluginPath
    {"plugin_registered", Code::Conflict, "the root already has a plugin …; use --replace to swap it",
     "docs/spec/dpp-general.md, Registration and manifest"},  // PluginRegistered
    {"interpreter", Code::PluginIdentity, "the pinned plugin's interpreter is not what register saw (changed, gone)",
     "docs/spec/dpp-general.md, Registration and manifest"},  // Interpreter
    {"runtime", Code::Policy, "--runtime … is for a #! script's interpreter (…), or is given twice",
     "docs/spec/dpp-general.md, Registration and manifest"},  // Runtime
    {"no_plugin", Code::Policy, "no plugin is registered; run `…` first",
     "docs/spec/dpp-general.md, Registration and manifest"},  // NoPlugin
    {"plugin_required", Code::Policy, "plugins are registered (…): pass --plugin ID to choose one",
     "docs/spec/dpp-general.md, Registration and manifest"},  // PluginRequired
    {"unknown_plugin", Code::Policy, "no plugin … is registered (registered: …): pass --plugin ID with one of them",
     "docs/spec/dpp-general.md, Registration and manifest"},  // UnknownPlugin
    {"digest", Code::PluginIdentity, "the pinned plugin changed after register: sha256 … but the manifest pins …",
     "docs/spec/dpp-general.md, Registration and manifest"},  // Digest
    {"owned_by_other", Code::Policy, "path \"…\" is owned by plugin … (written by transaction …): plugin … may ",
     "docs/spec/dpp-general.md, Registration and manifest"},  // OwnedByOther
    {"input_path", Code::Policy, "not an absolute path",
     "docs/spec/dpp-general.md, Registration and manifest"},  // InputPath
    {"input_root", Code::Policy,
     "the managed root, its state folder or above the root: a plugin never reads the root's state folder",
     "docs/spec/dpp-general.md, Registration and manifest"},  // InputRoot
    {"input_type", Code::Policy, "is not a directory",
     "docs/spec/dpp-general.md, Registration and manifest"},  // InputType
    {"stage_replaced", Code::PathEscape, "the stage directory … was replaced during materialize",
     "docs/engine.md"},  // StageReplaced
    {"parent", Code::Policy, "a parent folder of a target outside the policy",
     "the transaction states (docs/spec/transactions.md)"},  // Parent
    {"missing_backup", Code::RecoveryRequired, "no backup of …",
     "the transaction states (docs/spec/transactions.md)"},  // MissingBackup
    {"exclude", Code::Validation, "plan.exclude is not a non-empty, ascending array of valid patterns",
     "the plan documents (docs/spec/plans.md)"},  // Exclude
    {"nested_root", Code::Policy, "a target inside another managed root below this one (a folder holding its own .dot)",
     "docs/spec/dpp-general.md, Targets and ownership"},  // NestedRoot
    {"inside_input", Code::Policy, "a target inside one of the plugin's own declared inputs",
     "docs/spec/dpp-general.md, Targets and ownership"},  // InsideInput
    // (The variable's name is not spelled here: no product executable may
    // hold a test hook's name, EngineTest.ProductExecutablesIgnoreEveryTestHook.)
    {"test_hook", Code::Validation,
     "a test build's fault variable is not <point>:<ERRNO name> (e.g. apply.op0.rename:EIO)",
     "docs/engine.md"},  // TestHook
    {"link_after", Code::Validation, "….after of a link must be a symlink's snapshot (and a write's a file's)",
     "the plan documents (docs/spec/plans.md)"},  // LinkAfter
    {"consent", Code::Policy, "--allow-audit-plugin at register is for a plugin registered with audit assurance",
     "docs/engine.md"},  // Consent
    {"audit_consent", Code::Policy,
     "an audit-assurance plugin runs uncontained only with consent: plan --allow-audit-plugin, or register "
     "--allow-audit-plugin once",
     "docs/engine.md"},  // AuditConsent
    {"no_sealed_plan", Code::NotFound, "apply without an id: no sealed plan is waiting",
     "the transaction states (docs/spec/transactions.md)"},  // NoSealedPlan
    {"several_sealed_plans", Code::NotFound, "apply without an id: several sealed plans are waiting (listed); name one",
     "the transaction states (docs/spec/transactions.md)"},  // SeveralSealedPlans
});

DOT_KIND_TABLE(ErrorKind, kErrorKinds, SeveralSealedPlans);

}  // namespace dot::core
