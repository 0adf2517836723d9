#pragma once
// A hook run right after every durable SQLite commit of the store, named by a
// fault point. Production code leaves it empty; crash tests install one that
// raise(SIGKILL)s when the point they target is reached, so every durable step
// can be interrupted exactly after it became durable.
//
// Point names (stable, listed in docs/store.md):
//   store.init                       database created (init_root)
//   store.plugin                     plugin manifest registered or replaced
//   store.proposal.begin             PROPOSING row committed
//   store.proposal.id                proposal_id recorded
//   store.proposal.abandon           ABANDONED committed
//   store.seal                       SEALED with plan bytes and artifacts
//   store.prepare                    PREPARED with backups
//   store.transition.<STATE>         any other state change, e.g.
//                                    store.transition.COMMITTING
//   store.effect.<INDEX>.<STATE>     ledger entry, e.g. store.effect.0.ATTEMPTED
//   store.event                      a note event without a state change
//   store.migrate.<VERSION>          a schema migration to VERSION
//   store.prune                      prune finished
//   store.prune.vacuum               prune's free pages returned to the file system
//   store.stat_cache                 stat-cache rows stored

#include <functional>
#include <string_view>

namespace dot::store {

using CommitHook = std::function<void(std::string_view point)>;

}  // namespace dot::store
