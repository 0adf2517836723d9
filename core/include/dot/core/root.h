#pragma once
// A managed root opened for one command: its layout, its store, descriptors
// pinning the root directory (every target operation goes through it) and
// its state folder (every stage, lock and plugin operation goes through
// that, store::OpenedRoot), and,
// for mutating commands, the root's exclusive lock (a second mutating
// dot-core gets DOT_E_CONFLICT at once). Read-only commands never lock.

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "dot/base/fd.h"
#include "dot/base/result.h"
#include "dot/core/test_hooks.h"
#include "dot/store/root.h"
#include "dot/store/store.h"

namespace dot::core {

enum class Access { ReadOnly, Mutating };

// How a person types `dot-core COMMAND` for this root, for the hints core's
// errors carry ("run `dot-core recover --root DIR` first"). The front end
// that opens the root supplies it, given the root's folder as the layout
// names it (the command line quotes it for a shell: cli/hints.h); without
// one a hint is the bare "dot-core COMMAND".
using CommandHint = std::function<std::string(std::string_view root_dir, std::string_view command)>;

class Root {
 public:
  // Opens DIR: the layout must exist (DOT_E_STORE otherwise), the lock is
  // taken for Mutating, the store opened (read-only for ReadOnly) with every
  // durable store commit reported to `hooks` as a crash point.
  static Result<Root> open(const std::string& dir, Access access, TestHooks hooks = {}, CommandHint hint = {});

  Root(Root&&) noexcept = default;
  Root& operator=(Root&&) noexcept = default;

  const store::RootLayout& layout() const noexcept { return dirs_.layout; }
  const store::OpenedRoot& dirs() const noexcept { return dirs_; }
  store::Store& store() noexcept { return *store_; }
  int root_fd() const noexcept { return dirs_.root_fd.get(); }
  const std::string& root_id() const noexcept { return root_id_; }
  const TestHooks& hooks() const noexcept { return *hooks_; }
  bool mutating() const noexcept { return lock_ != nullptr; }
  // The hint text for `command` (CommandHint above).
  std::string command(std::string_view command) const;

 private:
  Root() = default;
  store::OpenedRoot dirs_;
  // Heap-held so the store's commit hook can refer to them across moves.
  std::unique_ptr<TestHooks> hooks_;
  std::unique_ptr<store::RootLock> lock_;
  std::unique_ptr<store::Store> store_;
  std::string root_id_;
  CommandHint hint_;
};

}  // namespace dot::core
