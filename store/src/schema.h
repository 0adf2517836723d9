#pragma once
// The schema of every version and the forward-only migrations between them
// (docs/store.md). A new database is built as version 1 and migrated, so the
// path every old database takes is the one every new database took.

#include "dot/store/store.h"
#include "sqlite.h"

namespace dot::store::detail {

// The version-1 (pre-capability) layout, exactly as that release created it.
extern const char* const kSchemaV1;

// Runs, inside the caller's write transaction, every migration from `from`
// up to `to` and sets user_version. Only tests stop short of kSchemaVersion
// (to build a database exactly as an older release left it).
Status migrate(Db& db, int from, int to = kSchemaVersion);

}  // namespace dot::store::detail
