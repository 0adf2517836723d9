// The one post-commit effect, root-sync, under its idempotency ledger (effects.h).
#include "dot/core/effects.h"
#include "dot/core/error_kinds.h"

#include <cerrno>

#include <fcntl.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include "dot/base/beneath.h"

namespace dot::core {
namespace {

// Re-opens target `name` beneath the root and fsyncs it. O_PATH first, like
// beneath::observe_beneath: only a regular file is ever opened for I/O. A
// name that is gone, or no longer a regular file, holds none of the data we
// wrote (someone replaced it since): there is nothing of ours to flush, and
// the folder's fsync that follows makes whatever entry is there durable.
Status sync_target(int root_fd, std::string_view name, const TestHooks& hooks, const std::string& fault_point) {
  auto replaced = [](const Error& e) {
    const int err = beneath::error_errno(e);
    return e.code == Code::PathEscape || err == ENOENT || err == ENOTDIR;
  };
  auto path = beneath::open_beneath(root_fd, name, O_PATH);
  if (!path.ok()) return replaced(path.error()) ? Status{} : Status(std::move(path).error());
  struct stat st {};
  if (::fstat(path->get(), &st) != 0) return beneath::errno_error(errno, "fstat", name);
  if (!S_ISREG(st.st_mode)) return {};
  auto file = beneath::open_beneath(root_fd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (!file.ok()) return replaced(file.error()) ? Status{} : Status(std::move(file).error());
  if (int err = hooks.fault(fault_point)) return beneath::errno_error(err, "fsync", name);
  return beneath::fsync_fd(file->get(), name);
}

// Re-opens folder `folder` beneath the root ("" is the root) and fsyncs it.
// A folder that is gone or replaced by a symlink holds none of our entries
// any more: nothing of ours to flush there.
Status sync_folder(int root_fd, const std::string& folder, const TestHooks& hooks, const std::string& fault_point) {
  UniqueFd opened;
  int fd = root_fd;
  if (!folder.empty()) {
    auto dir = beneath::open_beneath(root_fd, folder, O_RDONLY | O_DIRECTORY);
    if (!dir.ok()) {
      const Error& e = dir.error();
      const int err = beneath::error_errno(e);
      if (e.code == Code::PathEscape || err == ENOENT || err == ENOTDIR) return {};
      return std::move(dir).error();
    }
    opened = std::move(dir).value();
    fd = opened.get();
  }
  if (int err = hooks.fault(fault_point)) return beneath::errno_error(err, "fsync", folder.empty() ? "." : folder);
  return beneath::fsync_fd(fd, folder.empty() ? "the managed root" : folder);
}

// One run of root-sync. The first run fsyncs the root folder: every target
// was already written to a temp file, made durable, renamed and its folder
// fsynced by the commit. A retried run (the ledger shows an earlier attempt
// that failed or was cut short) cannot trust that: after a failed fsync
// Linux may already have dropped the dirty pages it could not write and
// marked them clean, so fsync'ing the folder again would report success with
// nothing on disk. It re-establishes durability from the data instead: every
// target of the plan re-opened and fsynced, then every folder it touched,
// then the root (docs/engine.md, "Retried effects").
Status root_sync(Root& root, std::uint32_t i, const SyncTargets& targets, bool retried) {
  const TestHooks& hooks = root.hooks();
  if (retried) {
    for (std::size_t slot = 0; slot < targets.files.size(); ++slot) {
      std::string p = fmt::format("effect{}.slot{}", i, slot);
      DOT_TRY(sync_target(root.root_fd(), targets.files[slot], hooks, p + ".sync"));
      hooks.reached(p + ".synced");
    }
    for (std::size_t dir = 0; dir < targets.folders.size(); ++dir) {
      std::string p = fmt::format("effect{}.dir{}", i, dir);
      DOT_TRY(sync_folder(root.root_fd(), targets.folders[dir], hooks, p + ".sync"));
      hooks.reached(p + ".synced");
    }
  }
  if (int err = hooks.fault(fmt::format("effect{}.sync", i)))
    return beneath::errno_error(err, "fsync", "the managed root");
  return beneath::fsync_fd(root.root_fd(), "the managed root");
}

}  // namespace

bool is_root_sync(const Effect& effect) noexcept { return effect == root_sync_effect(); }

Status run_effects(Root& root, store::TxnId txn, const std::string& plan_id, const Plan& plan) {
  SyncTargets targets;
  for (const Operation& op : plan.operations) targets.files.push_back(op.name);
  return run_effects(root, txn, plan_id, *plan.effects, targets);
}

Status run_effects(Root& root, store::TxnId txn, const std::string& plan_id, const std::vector<Effect>& effects,
                   const SyncTargets& targets) {
  DOT_ASSIGN_OR_RETURN(std::vector<store::EffectEntry> ledger, root.store().effects(txn));
  auto entry = [&](std::uint32_t i) -> const store::EffectEntry* {
    for (const auto& e : ledger)
      if (e.index == i) return &e;
    return nullptr;
  };
  const TestHooks& hooks = root.hooks();
  for (std::uint32_t i = 0; i < effects.size(); ++i) {
    const store::EffectEntry* before = entry(i);
    if (before && before->state == store::EffectState::Succeeded) continue;
    DOT_TRY(root.store().effect_attempt(txn, i));
    Status ran;
    if (!is_root_sync(effects[i])) {
      // Never reached for a verified plan; refuse rather than guess.
      ran = make_error(core::ErrorKind::Effect, fmt::format("effect {} is not the allowlisted root-sync", i));
    } else {
      ran = root_sync(root, i, targets, before != nullptr);
    }
    if (!ran.ok()) {
      const Error& cause = ran.error();
      std::string detail = fmt::format("effect {} (root-sync) of plan {} failed: {}; run `{}`", i, plan_id,
                                       cause.message(), root.command("retry-effects"));
      DOT_TRY(root.store().effect_finish(txn, i, store::EffectState::Failed, code_name(Code::PostCommit), detail));
      return make_error_as(Code::PostCommit, cause.kind, detail);
    }
    hooks.reached(fmt::format("effect{}.synced", i));
    DOT_TRY(root.store().effect_finish(txn, i, store::EffectState::Succeeded));
  }
  return root.store().transition(txn, store::State::Done);
}

}  // namespace dot::core
