// Opening a managed root for one command as a list of named passes (root.h).
#include "dot/core/root.h"

#include <string_view>

#include "dot/dpp/path_rules.h"

namespace dot::core {

// The protocol's path rules refuse every plan path inside the host's state
// folder by the name they know; it must be the one the store creates.
static_assert(std::string_view(store::kStateDirName) == dpp::kHostStateFolder);

Result<Root> Root::open(const std::string& dir, Access access, TestHooks hooks, CommandHint hint) {
  Root r;
  r.hint_ = std::move(hint);
  r.hooks_ = std::make_unique<TestHooks>(std::move(hooks));
  DOT_ASSIGN_OR_RETURN(r.dirs_, store::open_root(dir));
  if (access == Access::Mutating) {
    DOT_ASSIGN_OR_RETURN(store::RootLock lock, store::RootLock::acquire(r.dirs_));
    r.lock_ = std::make_unique<store::RootLock>(std::move(lock));
  }
  store::OpenOptions options;
  options.read_only = access == Access::ReadOnly;
  const TestHooks* h = r.hooks_.get();
  if (h->armed()) options.commit_hook = [h](std::string_view point) { h->reached(point); };
  DOT_ASSIGN_OR_RETURN(store::Store st, store::Store::open(r.dirs_.layout.database, options));
  DOT_TRY(r.dirs_.confirm_database());
  r.store_ = std::make_unique<store::Store>(std::move(st));
  DOT_ASSIGN_OR_RETURN(r.root_id_, r.store_->root_id());
  return r;
}

std::string Root::command(std::string_view command) const {
  if (hint_) return hint_(dirs_.layout.root, command);
  return "dot-core " + std::string(command);
}

}  // namespace dot::core
