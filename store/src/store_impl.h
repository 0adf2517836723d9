#pragma once
// Shared between the store's translation units; not a public header.

#include <string>
#include <string_view>
#include <vector>

#include "dot/store/store.h"
#include "sqlite.h"

namespace dot::store {

struct Store::Impl {
  detail::Db db;
  OpenOptions options;
  int opened_version = 0;

  void fire(std::string_view point) const {
    if (options.commit_hook) options.commit_hook(point);
  }
  Status writable() const;
  // The row's state, or DOT_E_NOT_FOUND.
  Result<State> state_of(TxnId id);
  Status add_event(TxnId id, State state, std::int64_t at_ms, std::string_view code, std::string_view detail);
  // Re-derives path_owner for the paths transaction `id` operates on
  // (inside the caller's write transaction, after its state changed).
  Status refresh_owners(TxnId id);
  // SEALED -> PREPARED, inside the caller's write transaction: the row is
  // SEALED, has `backups` operations and keeps its files `streamed` or not.
  Status begin_prepare(TxnId id, std::size_t backups, bool streamed);
  // The state change, its event, the commit and the store.prepare point.
  Status finish_prepare(TxnId id, detail::WriteTxn& txn);
  // Summary columns, shared by list/summary/in_flight (see kSummarySelect).
  Result<TxnSummary> read_summary(detail::Stmt& s) const;
};

// SELECT list matching Impl::read_summary; a macro so that statements stay
// string literals (the statement cache is keyed by their address).
#define DOT_STORE_SUMMARY_COLUMNS                                                           \
  "txn.id, txn.state, txn.plan_id, txn.proposal_id, txn.plugin_id, txn.created_at_ms, "     \
  "txn.updated_at_ms, txn.error_code, txn.operation_count, plan.effect_count, txn.pruned, " \
  "EXISTS (SELECT 1 FROM effect WHERE effect.txn_id = txn.id AND effect.state = 'FAILED') "

// How many columns DOT_STORE_SUMMARY_COLUMNS selects; a statement may select
// more after them.
inline constexpr int kSummaryColumnCount = 12;

// Reads a row selected with DOT_STORE_SUMMARY_COLUMNS.
Result<TxnSummary> read_summary(const std::string& db_path, detail::Stmt& s);

// The operation rows of a transaction, in slot order.
Result<std::vector<OperationSummary>> read_operations(detail::Db& db, TxnId id);

std::string row_name(TxnId id, std::string_view plan_id);
bool is_lower_hex(std::string_view s) noexcept;

}  // namespace dot::store
