#pragma once
// The error kinds of dot-core adopt: a root made by the Go reference, read by its own rules (docs/spec/go-roots.md).
// Each row: the kind printed and stored (never renamed), its code, what it
// means, the rule it enforces. docs/errors.md is generated from this table.

#include <array>
#include <cstddef>
#include <cstdint>

#include "dot/base/error.h"
#include "dot/base/error_kinds.h"

namespace dot::adopt {

enum class ErrorKind : std::uint8_t {
  NotRegular,
  Links,
  TooLarge,
  Mode,
  Owner,
  Symlink,
  NotDirectory,
  CorruptWal,
  IllegalTransition,
  CorruptLedger,
  NotWriterForm,
  PlanSchema,
  RootIdMismatch,
  Unregistered,
  PluginDigest,
  Stage,
  UnknownEntry,
  StagedFile,
  NotAbandoned,
  ExtraSlot,
  Artifact,
  Backup,
  UnexpectedLedger,
  ConcurrentEdit,
  Group,
  ChangedTarget,
  Manifest,
  NotReferenceRoot,
  ArchiveIntent,
  Locked,
  Registration,
  Plugin,
  PlanIdMismatch,
  History,
  JournalFull,
  AdoptionRecord,
  Digest,
  DotCoreRoot,
  NoEntryRecord,
  NotImported,
  Changed,
};

inline constexpr auto kErrorKinds = std::to_array<KindRow>({
    {"not_regular", Code::Policy, "a file of the reference that is not a regular file (its read rules)",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // NotRegular
    {"links", Code::Policy, "a file of the reference with more than one link",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // Links
    {"too_large", Code::Policy, "a file of the reference over its 64 KiB read limit",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // TooLarge
    {"mode", Code::Policy,
     "the root or a reference folder not 0700, a file with group or other bits, setuid, setgid or sticky, the manifest "
     "or lock not 0600",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // Mode
    {"owner", Code::Policy, "the root or a file of the reference not owned by us",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // Owner
    {"symlink", Code::PathEscape, "a symlink anywhere among the reference's files, or the root being one",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // Symlink
    {"not_directory", Code::Policy, "a reference folder that is not a directory",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // NotDirectory
    {"corrupt_wal", Code::Validation,
     "a journal line the reference does not write (a torn tail that is not the start of one included)",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // CorruptWal
    {"illegal_transition", Code::Validation, "a journal succession the reference never makes",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // IllegalTransition
    {"corrupt_ledger", Code::Validation, "an effect-ledger line the reference does not write",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // CorruptLedger
    {"not_writer_form", Code::Validation,
     "plan.json that decodes but is not byte for byte what the reference writes (order, spacing, a newline, a version "
     "other than 1)",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // NotWriterForm
    {"plan_schema", Code::Validation, "a before mode outside 0400/0500/0600/0700",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // PlanSchema
    {"root_id_mismatch", Code::Validation, "a plan of another root",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // RootIdMismatch
    {"unregistered", Code::PluginIdentity, "a sealed plan in a root where no plugin is registered",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // Unregistered
    {"plugin_digest", Code::PluginIdentity, "a plan naming another plugin than the registered one",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // PluginDigest
    {"stage", Code::Validation, "a stage of more than 16 entries",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // Stage
    {"unknown_entry", Code::Validation,
     "a .dot-* entry of the root, or an entry of a transaction, stage or history folder the reference never writes",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // UnknownEntry
    {"stage", Code::ArtifactMismatch, "a staged file that differs from the plan the reference sealed",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // StagedFile
    {"not_abandoned", Code::Validation,
     "leftovers without a durable PREPARED that the reference's discard would not accept",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // NotAbandoned
    {"extra_slot", Code::ArtifactMismatch, "an artifact or backup for a slot the plan does not have",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // ExtraSlot
    {"artifact", Code::ArtifactMismatch, "an artifact that differs from the plan",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // Artifact
    {"backup", Code::ArtifactMismatch, "a backup that differs from the plan's before",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // Backup
    {"unexpected_ledger", Code::Validation,
     "an effect ledger beside a plan without effects or a journal that never committed",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // UnexpectedLedger
    {"concurrent_edit", Code::RecoveryRequired, "a target edited where the reference's recover would refuse to go on",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // ConcurrentEdit
    {"group", Code::Policy,
     "finishing would restore a target whose before has another group than the files adopt creates",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // Group
    {"changed_target", Code::RecoveryRequired, "a target edited where the reference's archive would refuse to go on",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // ChangedTarget
    {"manifest", Code::PluginIdentity, "a manifest the reference does not write",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // Manifest
    {"not_reference_root", Code::Validation,
     "no .dot-root, or one that is not dot-hello-profile-v1: + 64 lowercase hex + a newline",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // NotReferenceRoot
    {"archive_intent", Code::Validation,
     ".dot-archive not in the writer's form, naming a generation that is nowhere, or contradicting the folders it "
     "describes",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // ArchiveIntent
    {"locked", Code::Conflict, "a reference command holds .dot-lock",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // Locked
    {"registration", Code::PluginIdentity, "a plugin copy without a manifest, or a manifest without its copy",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // Registration
    {"plugin", Code::Policy, "the registered plugin copy is not a regular file of at most 16 MiB",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // Plugin
    {"plan_id_mismatch", Code::Validation,
     "plan.json whose ids do not recompute from its plan, or a history folder named by another id",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // PlanIdMismatch
    {"history", Code::Validation, "an archived generation that is not COMMITTED (effects done) or ROLLED_BACK",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // History
    {"journal_full", Code::RecoveryRequired,
     "wal or effects.wal too close to the reference's 64 KiB read limit for another record (the reference refuses the "
     "append too)",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // JournalFull
    {"adoption_record", Code::Store, ".dot/adopted.json or .dot/adopted-entries.json is not the record adopt writes",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // AdoptionRecord
    {"digest", Code::PluginIdentity, "a plugin copy changed while adopt read it",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // Digest
    {"dot_core_root", Code::Validation, "the root already holds a .dot that adopt did not make (no adoption record)",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // DotCoreRoot
    {"no_entry_record", Code::RecoveryRequired,
     "an interrupted cleanup of a root adopted by a dot-core that did not record which files it imported: nothing is "
     "removed",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // NoEntryRecord
    {"not_imported", Code::RecoveryRequired,
     "an interrupted cleanup beside reference files the import did not cover byte for byte: each is named, nothing is "
     "removed",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // NotImported
    {"changed", Code::Conflict, "a file changed while adopt looked at it; run adopt again",
     "the Go reference's root format (docs/spec/go-roots.md)"},  // Changed
});

DOT_KIND_TABLE(ErrorKind, kErrorKinds, Changed);

}  // namespace dot::adopt
