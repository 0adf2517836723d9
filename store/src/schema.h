#pragma once
// The schema of every version and the forward-only migrations between them
// (docs/store.md). A new database is built as version 1 and migrated, so the
// path every old database takes is the one every new database took.

#include "sqlite.h"

namespace dot::store::detail {

// The version-1 (pre-capability) layout, exactly as that release created it.
extern const char* const kSchemaV1;

// Runs, inside the caller's write transaction, every migration from `from`
// up to kSchemaVersion and sets user_version.
Status migrate(Db& db, int from);

}  // namespace dot::store::detail
