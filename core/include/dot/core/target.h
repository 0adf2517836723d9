#pragma once
// One target under the managed root: observing it under the target policy,
// committing a slot (temp file beside it, fsync, re-check, rename, directory
// fsync) and restoring it from its backup. Every step that reaches the disk
// is a named crash point and, for the commit, a fault point (test_hooks.h).

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/beneath.h"
#include "dot/base/result.h"
#include "dot/base/write_access.h"
#include "dot/core/plan.h"
#include "dot/core/test_hooks.h"
#include "dot/dpp/hello.h"
#include "dot/dpp/path_rules.h"

namespace dot::core {

class StatCache;

// A target is at most 64 KiB: the hello profile's largest artifact, which
// the stage reader holds staged files to.
inline constexpr std::size_t kMaxTargetBytes = dpp::hello::kMaxArtifactSize;
// Temp files beside targets start with this: the prefix the protocol's path
// rules reserve for the host and refuse to every plan (dpp/path_rules.h).
inline constexpr std::string_view kTempPrefix = dpp::kHostTempPrefix;
// The link text bound observation reads up to is the protocol's.
inline constexpr std::size_t kMaxLinkTextBytes = dpp::kMaxLinkTextBytes;
static_assert(kMaxLinkTextBytes == beneath::kMaxLinkTextBytes);

// Which walk a temp file belongs to: a commit (its bytes are the artifact)
// or a rollback (its bytes are the backup).
enum class TempPhase { Apply, Rollback };
// The name of the temp file of operation (slot) `index` of plan `plan_id` in
// `phase`: kTempPrefix and the first 32 hex digits of
// SHA-256("dot-core temp\0" plan_id "\0" phase "\0" index). Derived from the
// stored plan alone, so every name a crash can leave is known to the journal
// before the file exists, and recovery removes those names and nothing else
// (a file merely named like a temp file is never touched).
std::string temp_name(std::string_view plan_id, TempPhase phase, std::size_t index);
// Creates temp file `name` (a temp_name) in `dir_fd`: O_CREAT | O_EXCL |
// O_NOFOLLOW, mode 0600. A regular file already there under this name is the
// same plan's own leftover (an interrupted walk) and is replaced; anything
// else there is left and the error is EEXIST. Errors: Code::Io (errno kind).
Result<beneath::CreatedFile> create_own_temp(int dir_fd, const std::string& name);

// Creates temp symlink `name` (a temp_name) in `dir_fd` holding
// want.link_text (symlinkat: exclusive, never following anything), owned by
// want.uid and want.gid (fchownat AT_SYMLINK_NOFOLLOW when they differ). A
// regular file or symlink already under this name is the same plan's own
// leftover and is replaced; anything else there stays (EEXIST). Errors are
// commit_error; on failure no link of ours is left under `name`.
Status create_own_temp_link(int dir_fd, const std::string& name, const Snapshot& want);
// A descriptor reading `bytes` from their start (a sealed memfd): how the
// store reads a link's text as its artifact or backup, like a file's bytes.
Result<UniqueFd> text_fd(std::string_view bytes, std::string_view what);

// The plan model's view of an observation (absent, or the five fields).
Snapshot snapshot_of(const beneath::FileObservation& observation);

// The target policy of docs/spec/dpp-hello.md: absent, or a private (no group or
// other bits, owner-read set, no setuid/setgid/sticky), owned (uid = our
// effective uid), regular, single-link file of at most 64 KiB (the mode and
// owner rules are plan.h check_snapshot_policy, which every stored `before`
// is held to again on load). A symlink is
// Code::PathEscape; anything else outside the policy is Code::Policy, with a
// detail naming the target and the rule.
Status check_target_policy(std::string_view name, const beneath::FileObservation& observation);

struct ObservedTarget {
  Snapshot snapshot;
  std::string content;  // the bytes, when the target exists
};
// Observes `name` directly under the root and applies the policy.
Result<ObservedTarget> observe_target(int root_fd, std::string_view name);

// ---- the general profile (docs/spec/dpp-general.md "Plan") -------------------
// A target that exists must be a regular, single-link file owned by the
// effective uid, without setuid, setgid, sticky or other write bits, group
// write only for the owner's private group (WriteAccessJudge, the one rule),
// of at most max_file_bytes, or a single-link symlink owned by the
// effective uid whose text is 1 to kMaxLinkTextBytes bytes of UTF-8 (its
// snapshot holds the text; the link is never followed); every existing
// parent folder a real folder owned by the effective uid, writable by its
// owner only under the same rule, and not another managed root (a folder
// holding its own .dot: kind nested_root). A symlink parent folder is
// Code::PathEscape; anything else outside the policy Code::Policy, the
// detail naming the path and the rule.
struct PathTarget {
  Snapshot snapshot;  // absent, or the five fields
  std::uint64_t size = 0;
  std::optional<std::string> content;  // when it exists and has at most keep_bytes
};
// That policy on one observation of target `path` (the owner and mode rules
// are plan_v2.h check_path_snapshot_policy, which every stored `before` is
// held to again on load; Code::Policy for what breaks it; an absent target
// passes).
Status check_path_target_policy(std::string_view path, const beneath::FileObservation& observation,
                                std::uint64_t max_file_bytes, WriteAccessJudge& judge);
// The parent folders already judged for one plan, by relative path: true
// when the folder exists (and passed the parent policy), false when missing.
using ParentFolders = std::map<std::string, bool, std::less<>>;
// Observes `path` (already past path_rules.h) beneath the root, its parents
// first, component by component (each judged once per plan through
// `parents`); below a missing parent nothing exists. The digest streams; the
// bytes are kept when at most `keep_bytes`. With a `cache` (and keep_bytes
// 0) a target whose stat matches its entry is not read (stat_cache.h).
Result<PathTarget> observe_path_target(int root_fd, std::string_view path, std::uint64_t max_file_bytes,
                                       std::size_t keep_bytes, ParentFolders& parents, WriteAccessJudge& judge,
                                       StatCache* cache = nullptr);

// An injected or real errno at a commit step: Code::Commit (Code::PathEscape
// stays) with the errno name as kind, so tests (and users) see ENOSPC vs EIO.
Error commit_error(int err, std::string_view step, std::string_view name);
// Gives the file open on `fd` the owner and mode of `want` (a temp file
// before it replaces a target); failures are commit_error.
Status set_owner_and_mode(int fd, const Snapshot& want, std::string_view name);

// The re-check before a rename (and the precondition check of apply): the
// target still passes the policy and equals `expected`. Symlink:
// Code::PathEscape; anything else different: Code::Conflict.
Status recheck_target(int root_fd, std::string_view name, const Snapshot& expected);

// Commits slot `slot` of plan `plan_id`: writes `bytes` to the temp file
// temp_name(plan_id, Apply, slot) beside the target (create_own_temp), fsyncs it, re-checks the target against
// op.before, renames over the target (RENAME_NOREPLACE when it was absent), fsyncs the root. Crash points
// commit.slot<N>.temp_synced|renamed|dir_synced; fault points commit.slot<N>.write|fsync|rename|dirsync. An I/O error
// is Code::Commit (kind = errno name); the temp file is removed on every failure path. `renamed` tells the caller
// whether the target was already replaced.
Status commit_slot(int root_fd, std::string_view plan_id, std::size_t slot, const Operation& op, std::string_view bytes,
                   const TestHooks& hooks, bool& renamed);

enum class RestoreOutcome { AlreadyBefore, Restored };
// Undoes slot `slot`: a target equal to op.before is left alone; a target
// equal to op.after is restored from `backup` (the before bytes; nullopt when
// the target did not exist, then it is removed) through the temp file
// temp_name(plan_id, Rollback, slot); anything else is left untouched and is
// Code::RecoveryRequired (a concurrent edit: evidence kept).
// Crash points <prefix>.slot<N>.restored|dir_synced (prefix "rollback").
Result<RestoreOutcome> restore_slot(int root_fd, std::string_view plan_id, std::size_t slot, const Operation& op,
                                    const std::optional<std::string>& backup, const TestHooks& hooks);

// An entry the temp-file cleanup did not remove, and why ("." for the
// directory itself). The name is the directory's bytes, not escaped.
struct LeftAlone {
  std::string name;
  std::string why;
};
// What a temp-file cleanup did.
struct TempCleanup {
  std::size_t removed = 0;
  std::vector<LeftAlone> left_alone;
};
// Removes, from the folder open on `dir_fd`, the temp files named `names`
// (temp_name()s of one plan's journal) that are there as regular files or
// symlinks, and
// fsyncs the folder when one went. A name held by anything else (a folder,
// a FIFO) or that cannot be removed is reported in `out.left_alone`
// (prefixed with `folder` and "/", unless `folder` is empty); nothing here
// is an error, so the cleanup never stops a rollback.
void remove_own_temps(int dir_fd, std::string_view folder, const std::vector<std::string>& names, TempCleanup& out);

}  // namespace dot::core
