#pragma once
// The error kinds of the store: the managed root, the database, the plan and transaction rows.
// Each row: the kind printed and stored (never renamed), its code, what it
// means, the rule it enforces. docs/errors.md is generated from this table.

#include <array>
#include <cstddef>
#include <cstdint>

#include "dot/base/error.h"
#include "dot/base/error_kinds.h"

namespace dot::store {

enum class ErrorKind : std::uint8_t {
  File,
  Read,
  Path,
  Exists,
  Symlink,
  Missing,
  NotOurs,
  Replaced,
  NoRoot,
  LockTimeout,
  Locked,
  Io,
  Mkdir,
  Open,
  Chmod,
  LockFile,
  Migration,
  Defensive,
  PathTooLong,
  RootId,
  ReadOnlyHandle,
  State,
  Sha256,
  PluginId,
  Registered,
  Log,
  Count,
  OpenFile,
  Digest,
  IllegalTransition,
  ProposalId,
  ProposalDocument,
  Slot,
  Size,
  Absent,
  PlanId,
  DuplicatePlan,
  BackupKind,
  Transition,
  NoPlan,
  EffectsUnfinished,
  PreCapability,
  EffectIndex,
  EffectOrder,
  EffectDone,
  Effect,
  ReadOnly,
  CannotOpen,
  IoStore,
  NotSqlite,
  Truncated,
  Corrupt,
  NewerSchema,
  Journal,
  DatabaseExists,
  Id,
  Unknown,
  Ambiguous,
  Tampered,
  EffectState,
  NoFile,
  NotSealed,
  Pruned,
  LockedDb,
  Full,
  Constraint,
  Sqlite,
  StatEntry,
  RootOwner,
  RootWritable,
  NotOwned,
  PluginOwnsPaths,
  PluginBusy,
  NoSuchPlugin,
  PackedDocument,
};

inline constexpr auto kErrorKinds = std::to_array<KindRow>({
    {"file", Code::ArtifactMismatch, "a stored file blob that is not the bytes its row names",
     "the store schema (docs/spec/store-schema.md)"},                                                         // File
    {"read", Code::Io, "a stored file blob cannot be read", "the store schema (docs/spec/store-schema.md)"},  // Read
    {"path", Code::Io, "the root path is empty", "docs/store.md"},                                            // Path
    {"exists", Code::Io, "init: the root is not a directory, or already holds a state folder .dot",
     "docs/store.md"},  // Exists
    {"symlink", Code::PathEscape, "a path of the managed root is a symlink (refused, never followed)",
     "docs/store.md"},  // Symlink
    {"missing", Code::Store, "no database (or no state folder) here: create a root with dot-core init",
     "docs/store.md"},  // Missing
    {"not_ours", Code::Store,
     "the database path is not a dot-core store (a symlink, not a regular file, empty, another schema)",
     "docs/store.md"},  // NotOurs
    {"replaced", Code::PathEscape, "no longer the database in the state folder this command opened (moved or ",
     "docs/store.md"},  // Replaced
    {"no_root", Code::Store, "no managed root in … or any parent; pass --root or set DOT_ROOT",
     "docs/store.md"},                                                                              // NoRoot
    {"lock", Code::Store, "cannot open the lock file: …", "docs/store.md"},                         // LockTimeout
    {"locked", Code::Conflict, "the root is locked by another dot-core command", "docs/store.md"},  // Locked
    {"io", Code::Io, "cannot open the directory", "docs/store.md"},                                 // Io
    {"mkdir", Code::Io, "cannot create the root", "docs/store.md"},                                 // Mkdir
    {"open", Code::Io, "cannot open the new root", "docs/store.md"},                                // Open
    {"chmod", Code::Io, "cannot set mode 0700", "docs/store.md"},                                   // Chmod
    {"lock", Code::Io, "cannot create the lock file", "docs/store.md"},                             // LockFile
    {"migration", Code::Internal, "no migration path from version … to …",
     "the store schema (docs/spec/store-schema.md)"},  // Migration
    {"defensive", Code::Store, "SQLite refused defensive mode or trusted_schema=OFF",
     "the store schema (docs/spec/store-schema.md)"},  // Defensive
    {"path_too_long", Code::Io, "the database path is … bytes (with \"…\"); SQLite opens at most …: ",
     "the store schema (docs/spec/store-schema.md)"},  // PathTooLong
    {"root_id", Code::Internal, "a root id is 64 lowercase hex characters",
     "the store schema (docs/spec/store-schema.md)"},  // RootId
    {"read_only", Code::Internal, "opened read-only",
     "the store schema (docs/spec/store-schema.md)"},  // ReadOnlyHandle
    {"state", Code::RecoveryRequired, "transaction … has unknown state \"…\"",
     "the store schema (docs/spec/store-schema.md)"},  // State
    {"sha256", Code::Validation, "the plugin digest must be 64 lowercase hex characters",
     "the store schema (docs/spec/store-schema.md)"},  // Sha256
    {"plugin_id", Code::Validation, "the plugin id is empty",
     "the store schema (docs/spec/store-schema.md)"},  // PluginId
    {"registered", Code::Conflict, "a plugin … is already registered; replace it explicitly",
     "the store schema (docs/spec/store-schema.md)"},  // Registered
    {"log", Code::Validation, "log message … has a bad level, method or size",
     "the store schema (docs/spec/store-schema.md)"},  // Log
    {"count", Code::ArtifactMismatch, "a streamed plan carries its artifacts as files",
     "the store schema (docs/spec/store-schema.md)"},  // Count
    {"open_file", Code::Internal, "a streamed plan's files need an opener",
     "the store schema (docs/spec/store-schema.md)"},  // OpenFile
    {"digest", Code::ArtifactMismatch, "operation … and its artifact disagree (after digest \"…\")",
     "the store schema (docs/spec/store-schema.md)"},  // Digest
    {"illegal_transition", Code::RecoveryRequired, "transaction … is …, … needs …",
     "the store schema (docs/spec/store-schema.md)"},  // IllegalTransition
    {"proposal_id", Code::Validation, "a proposal id is 64 lowercase hex characters",
     "the store schema (docs/spec/store-schema.md)"},  // ProposalId
    {"proposal_document", Code::Validation, "a proposal document of … bytes is over …",
     "the store schema (docs/spec/store-schema.md)"},  // ProposalDocument
    {"slot", Code::ArtifactMismatch, "… is given for slot …", "the store schema (docs/spec/store-schema.md)"},  // Slot
    {"size", Code::ArtifactMismatch, "… has … bytes, more than …",
     "the store schema (docs/spec/store-schema.md)"},  // Size
    {"absent", Code::ArtifactMismatch, "… is absent but carries bytes",
     "the store schema (docs/spec/store-schema.md)"},  // Absent
    {"plan_id", Code::Validation, "a plan id is 64 lowercase hex characters",
     "the store schema (docs/spec/store-schema.md)"},  // PlanId
    {"duplicate_plan", Code::Conflict, "plan … is already stored as transaction …",
     "the store schema (docs/spec/store-schema.md)"},  // DuplicatePlan
    {"backup_kind", Code::Internal, "transaction …: … backups for a … plan",
     "the store schema (docs/spec/store-schema.md)"},  // BackupKind
    {"transition", Code::Internal, "is entered through its own call (begin_proposal, seal, prepare)",
     "the store schema (docs/spec/store-schema.md)"},  // Transition
    {"no_plan", Code::RecoveryRequired, "transaction … has no plan row",
     "the store schema (docs/spec/store-schema.md)"},  // NoPlan
    {"effects_unfinished", Code::RecoveryRequired, "transaction …: … of … effects succeeded; DONE needs all",
     "the store schema (docs/spec/store-schema.md)"},  // EffectsUnfinished
    {"pre_capability", Code::RecoveryRequired, "a pre-capability plan has no effect ledger",
     "the store schema (docs/spec/store-schema.md)"},  // PreCapability
    {"effect_index", Code::RecoveryRequired, "effect … of a plan with … effects",
     "the store schema (docs/spec/store-schema.md)"},  // EffectIndex
    {"effect_order", Code::RecoveryRequired, "effect … before every earlier effect succeeded",
     "the store schema (docs/spec/store-schema.md)"},  // EffectOrder
    {"effect_done", Code::RecoveryRequired, "effect … already succeeded",
     "the store schema (docs/spec/store-schema.md)"},  // EffectDone
    {"effect", Code::Internal, "an effect finishes as SUCCEEDED or FAILED",
     "the store schema (docs/spec/store-schema.md)"},  // Effect
    {"read_only", Code::Store, "the database (or its folder) is read-only",
     "the store schema (docs/spec/store-schema.md)"},  // ReadOnly
    {"cannot_open", Code::Store, "the database cannot be opened",
     "the store schema (docs/spec/store-schema.md)"},  // CannotOpen
    {"io", Code::Store, "an I/O error reading or writing the database",
     "the store schema (docs/spec/store-schema.md)"},  // IoStore
    {"not_sqlite", Code::Store, "not a SQLite database (no SQLite header)",
     "the store schema (docs/spec/store-schema.md)"},  // NotSqlite
    {"truncated", Code::Store, "truncated inside the SQLite header",
     "the store schema (docs/spec/store-schema.md)"},  // Truncated
    {"corrupt", Code::Store, "invalid page size … in the header",
     "the store schema (docs/spec/store-schema.md)"},  // Corrupt
    {"newer_schema", Code::Store, "schema version … is newer than this dot-core supports (…)",
     "the store schema (docs/spec/store-schema.md)"},  // NewerSchema
    {"journal", Code::Store, "cannot enable WAL (journal mode …)",
     "the store schema (docs/spec/store-schema.md)"},  // Journal
    {"exists", Code::Store, "a file already exists here; refusing to overwrite it",
     "the store schema (docs/spec/store-schema.md)"},  // DatabaseExists
    {"id", Code::NotFound, "\"…\" is not a transaction number (…N, N from 1)",
     "the transaction states (docs/spec/transactions.md)"},  // Id
    {"unknown", Code::NotFound, "no plan or proposal with id \"…\"",
     "the transaction states (docs/spec/transactions.md)"},  // Unknown
    {"ambiguous", Code::NotFound, "\"…\" is a prefix of more than one id: …",
     "the transaction states (docs/spec/transactions.md)"},  // Ambiguous
    {"tampered", Code::RecoveryRequired, "…: the stored plan bytes hash to …, not to the plan id",
     "the transaction states (docs/spec/transactions.md)"},  // Tampered
    {"effect_state", Code::RecoveryRequired, "transaction … effect … has unknown state \"…\"",
     "the transaction states (docs/spec/transactions.md)"},  // EffectState
    {"no_file", Code::NotFound, "has no stored … for operation …",
     "the transaction states (docs/spec/transactions.md)"},  // NoFile
    {"not_sealed", Code::NotFound, "is …, not a sealed plan",
     "the transaction states (docs/spec/transactions.md)"},  // NotSealed
    {"pruned", Code::NotFound, "its blobs were pruned",
     "the transaction states (docs/spec/transactions.md)"},  // Pruned
    {"locked", Code::Store, "locked by another process past the busy timeout",
     "the store schema (docs/spec/store-schema.md)"},  // LockedDb
    {"full", Code::Store, "the disk is full (SQLITE_FULL)", "the store schema (docs/spec/store-schema.md)"},  // Full
    {"constraint", Code::Store, "a database constraint failed",
     "the store schema (docs/spec/store-schema.md)"},                                                 // Constraint
    {"sqlite", Code::Store, "another SQLite error", "the store schema (docs/spec/store-schema.md)"},  // Sqlite
    {"stat_entry", Code::Validation, "the stat of … carries digest … and size …: a digest is 64 lowercase hex",
     "the store schema (docs/spec/store-schema.md)"},  // StatEntry
    {"root_owner", Code::Policy, "init: an existing folder owned by another user cannot become a root",
     "docs/store.md"},  // RootOwner
    {"root_writable", Code::Policy,
     "init: an existing folder that group or others can write (mode, group and members named) is not a root",
     "docs/store.md"},                                                                                  // RootWritable
    {"not_owned", Code::Validation, "forget: a path no plugin manages", "docs/user-guide.md, forget"},  // NotOwned
    {"plugin_owns_paths", Code::Policy, "unregister: the plugin still manages paths (--forget releases them)",
     "docs/user-guide.md, unregister"},  // PluginOwnsPaths
    {"plugin_busy", Code::Conflict, "unregister: a plan of the plugin is sealed or being applied",
     "docs/user-guide.md, unregister"},  // PluginBusy
    {"no_such_plugin", Code::Validation, "unregister: no plugin is registered under that id",
     "docs/user-guide.md, unregister"},  // NoSuchPlugin
    {"packed_document", Code::Store, "a stored proposal document is not one zstd frame of a declared size up to …",
     "the store schema (docs/spec/store-schema.md)"},  // PackedDocument
});

DOT_KIND_TABLE(ErrorKind, kErrorKinds, PackedDocument);

}  // namespace dot::store
