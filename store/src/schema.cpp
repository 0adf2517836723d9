// The schema of every version and the forward-only migrations (schema.h).
#include "schema.h"

#include <fmt/format.h>

#include "dot/store/error_kinds.h"
#include "dot/store/store.h"

namespace dot::store::detail {

// Version 1: everything but post-commit effects. Kept verbatim forever; the
// fixtures in vectors/store/ replay it.
const char* const kSchemaV1 = R"sql(
CREATE TABLE root (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  root_id TEXT NOT NULL CHECK (length(root_id) = 64),
  created_at_ms INTEGER NOT NULL
);
CREATE TABLE plugin (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  plugin_id TEXT NOT NULL,
  sha256 TEXT NOT NULL CHECK (length(sha256) = 64),
  manifest BLOB NOT NULL,
  registered_at_ms INTEGER NOT NULL
);
CREATE TABLE txn (
  id INTEGER PRIMARY KEY,
  state TEXT NOT NULL CHECK (state IN ('PROPOSING','ABANDONED','SEALED','DISCARDED','STALE',
    'PREPARED','COMMITTING','COMMITTED','ROLLING_BACK','ROLLED_BACK','DONE')),
  plugin_id TEXT NOT NULL,
  plugin_digest TEXT NOT NULL,
  proposal_id TEXT CHECK (proposal_id IS NULL OR length(proposal_id) = 64),
  plan_id TEXT UNIQUE CHECK (plan_id IS NULL OR length(plan_id) = 64),
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  finished_at_ms INTEGER,
  error_code TEXT,
  error_detail TEXT,
  plugin_stderr BLOB CHECK (plugin_stderr IS NULL OR length(plugin_stderr) <= 65536),
  stderr_truncated INTEGER NOT NULL DEFAULT 0,
  operation_count INTEGER NOT NULL DEFAULT 0,
  pruned INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX txn_by_state ON txn (state, id);
CREATE INDEX txn_by_proposal ON txn (proposal_id);
CREATE TABLE plan (
  txn_id INTEGER PRIMARY KEY REFERENCES txn (id),
  canonical BLOB NOT NULL,
  sealed_at_ms INTEGER NOT NULL
);
CREATE TABLE operation (
  txn_id INTEGER NOT NULL REFERENCES txn (id),
  slot INTEGER NOT NULL CHECK (slot >= 0),
  name TEXT NOT NULL,
  before_sha256 TEXT NOT NULL,
  after_sha256 TEXT NOT NULL,
  PRIMARY KEY (txn_id, slot)
) WITHOUT ROWID;
CREATE TABLE artifact (
  txn_id INTEGER NOT NULL REFERENCES txn (id),
  slot INTEGER NOT NULL CHECK (slot >= 0),
  bytes BLOB NOT NULL CHECK (length(bytes) <= 65536),
  sha256 TEXT NOT NULL CHECK (length(sha256) = 64),
  PRIMARY KEY (txn_id, slot)
);
CREATE TABLE backup (
  txn_id INTEGER NOT NULL REFERENCES txn (id),
  slot INTEGER NOT NULL CHECK (slot >= 0),
  present INTEGER NOT NULL CHECK (present IN (0, 1)),
  bytes BLOB NOT NULL CHECK (length(bytes) <= 65536),
  sha256 TEXT NOT NULL,
  PRIMARY KEY (txn_id, slot)
);
CREATE TABLE event (
  seq INTEGER PRIMARY KEY,
  txn_id INTEGER NOT NULL REFERENCES txn (id),
  state TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  code TEXT,
  detail TEXT
);
CREATE INDEX event_by_txn ON event (txn_id, seq);
)sql";

namespace {

// Version 2: the post-commit-effects capability. Existing plans are all
// pre-capability, so their effect_count stays NULL ("no effects key"); their
// bytes and plan ids are untouched.
const char* const kMigrateTo2 = R"sql(
ALTER TABLE plan ADD COLUMN effect_count INTEGER
  CHECK (effect_count IS NULL OR (effect_count >= 0 AND effect_count <= 1024));
CREATE TABLE effect (
  txn_id INTEGER NOT NULL REFERENCES txn (id),
  idx INTEGER NOT NULL CHECK (idx >= 0),
  state TEXT NOT NULL CHECK (state IN ('ATTEMPTED','SUCCEEDED','FAILED')),
  idempotency_key TEXT NOT NULL CHECK (length(idempotency_key) = 64),
  attempts INTEGER NOT NULL CHECK (attempts >= 1),
  updated_at_ms INTEGER NOT NULL,
  code TEXT,
  detail TEXT,
  PRIMARY KEY (txn_id, idx)
) WITHOUT ROWID;
)sql";

// Version 3: the proposal document of every proposal, sealed or abandoned
// (NULL for the rows before it, which never kept one).
const char* const kMigrateTo3 = R"sql(
ALTER TABLE txn ADD COLUMN proposal BLOB CHECK (proposal IS NULL OR length(proposal) <= 268435456);
)sql";

// Version 4: several plugins per root, one row per plugin id (the id is the
// key; version 1 allowed one row, id = 1). The row a root already has moves
// over unchanged (manifest bytes included), so an existing root's one hello
// plugin keeps working without a flag.
const char* const kMigrateTo4 = R"sql(
CREATE TABLE plugin_v4 (
  plugin_id TEXT PRIMARY KEY NOT NULL CHECK (length(plugin_id) BETWEEN 1 AND 128),
  sha256 TEXT NOT NULL CHECK (length(sha256) = 64),
  manifest BLOB NOT NULL,
  registered_at_ms INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO plugin_v4 (plugin_id, sha256, manifest, registered_at_ms)
  SELECT plugin_id, sha256, manifest, registered_at_ms FROM plugin;
DROP TABLE plugin;
ALTER TABLE plugin_v4 RENAME TO plugin;
)sql";

// Version 5: path ownership (docs/spec/dpp-general.md, "Plan": a path another
// plugin owns cannot be written or removed). The rule lives in one place,
// the view derived_owner over the one source of truth, the operation rows:
// a path's owner is the plugin of the newest (highest txn id) COMMITTED or
// DONE transaction with an operation on it, when that operation wrote it
// (after_sha256 non-empty); a removal leaves it unowned, and a rolled-back
// transaction never counts (the same "newest applied plan" rule `status`
// uses for drift). path_owner is that view materialized and kept current in
// the SQLite transaction of every state change that alters it
// (Store::transition into COMMITTED or ROLLING_BACK), so one plugin's paths
// are an index range whatever the history's length; operation_by_name finds
// a path's newest applied operation by walking back from its newest one
// (the view is written so that `WHERE path = ?` reaches into it: one path
// costs its own index range, never the whole history). Filled from the
// history the root already has; `store check` compares it with the view.
const char* const kMigrateTo5 = R"sql(
CREATE INDEX operation_by_name ON operation (name, txn_id);
CREATE VIEW derived_owner (path, plugin_id, txn_id) AS
SELECT n.name, t.plugin_id, o.txn_id FROM (SELECT DISTINCT name FROM operation) n
JOIN operation o ON o.name = n.name
  AND o.txn_id = (SELECT o2.txn_id FROM operation o2 JOIN txn t2 ON t2.id = o2.txn_id
                  WHERE o2.name = n.name AND t2.state IN ('COMMITTED','DONE')
                  ORDER BY o2.txn_id DESC LIMIT 1)
JOIN txn t ON t.id = o.txn_id
WHERE o.after_sha256 <> '';
CREATE TABLE path_owner (
  path TEXT PRIMARY KEY NOT NULL,
  plugin_id TEXT NOT NULL,
  txn_id INTEGER NOT NULL REFERENCES txn (id)
) WITHOUT ROWID;
CREATE INDEX path_owner_by_plugin ON path_owner (plugin_id, path);
INSERT INTO path_owner (path, plugin_id, txn_id) SELECT path, plugin_id, txn_id FROM derived_owner;
)sql";

// Version 6: the general profile (docs/spec/dpp-general.md). A version-2 plan's
// files are too large to be one value in memory: each written file (and, at
// apply, each backup) is a row of its own keyed by (txn, operation index),
// written and read with SQLite's incremental blob I/O in bounded chunks
// (file_blobs.cpp). plan.streamed says where a plan's artifacts are: 0 the
// version-1 `artifact` table, 1 `file_artifact`, one row per operation that
// writes (after_sha256 non-empty). proposal_log keeps a proposal's dot.log
// messages in the order they came.
const char* const kMigrateTo6 = R"sql(
ALTER TABLE plan ADD COLUMN streamed INTEGER NOT NULL DEFAULT 0 CHECK (streamed IN (0, 1));
CREATE TABLE file_artifact (
  txn_id INTEGER NOT NULL REFERENCES txn (id),
  idx INTEGER NOT NULL CHECK (idx >= 0),
  size INTEGER NOT NULL CHECK (size >= 0 AND size <= 16777216),
  sha256 TEXT NOT NULL CHECK (length(sha256) = 64),
  bytes BLOB NOT NULL,
  PRIMARY KEY (txn_id, idx)
);
CREATE TABLE file_backup (
  txn_id INTEGER NOT NULL REFERENCES txn (id),
  idx INTEGER NOT NULL CHECK (idx >= 0),
  present INTEGER NOT NULL CHECK (present IN (0, 1)),
  size INTEGER NOT NULL CHECK (size >= 0 AND size <= 16777216),
  sha256 TEXT NOT NULL,
  bytes BLOB NOT NULL,
  PRIMARY KEY (txn_id, idx)
);
CREATE TABLE proposal_log (
  txn_id INTEGER NOT NULL REFERENCES txn (id),
  seq INTEGER NOT NULL CHECK (seq >= 0),
  level TEXT NOT NULL CHECK (level IN ('debug','info','warning','error')),
  method TEXT NOT NULL,
  message BLOB NOT NULL CHECK (length(message) <= 4096),
  PRIMARY KEY (txn_id, seq)
) WITHOUT ROWID;
)sql";

// Version 7: derived_owner again, the rule unchanged, the query shaped so
// that `WHERE path = ?` is index probes only. Version 5 listed the names
// through `SELECT DISTINCT name FROM operation`, which visits every
// operation ever made on the path (100,000 applied plans of the same 16
// files: 0.8 s per commit), and SQLite found the applied operation row by
// the txn_id prefix of the primary key, walking every operation of that
// transaction (a 10,000-operation commit: 10^8 rows, most of a 20 s apply).
// Now each path's row is driven by its oldest operation (min over
// operation_by_name: one probe) and the applied one is one (name, txn_id)
// probe of operation_by_name, pinned with INDEXED BY.
// The ownership rule as version 7 states it (each path's newest COMMITTED
// or DONE operation, when it wrote the path); version 9 adds releases to
// the same statement rather than writing the rule again.
#define DOT_APPLIED_OWNER_SELECT                                                            \
  "SELECT n.name, t.plugin_id, o.txn_id FROM operation n INDEXED BY operation_by_name\n"    \
  "JOIN operation o INDEXED BY operation_by_name ON o.name = n.name\n"                      \
  "  AND o.txn_id = (SELECT o2.txn_id FROM operation o2 JOIN txn t2 ON t2.id = o2.txn_id\n" \
  "                  WHERE o2.name = n.name AND t2.state IN ('COMMITTED','DONE')\n"         \
  "                  ORDER BY o2.txn_id DESC LIMIT 1)\n"                                    \
  "JOIN txn t ON t.id = o.txn_id\n"                                                         \
  "WHERE n.txn_id = (SELECT min(o3.txn_id) FROM operation o3 WHERE o3.name = n.name)\n"     \
  "  AND o.after_sha256 <> ''\n"
const char* const kMigrateTo7 = R"sql(
DROP VIEW derived_owner;
CREATE VIEW derived_owner (path, plugin_id, txn_id) AS
)sql" DOT_APPLIED_OWNER_SELECT ";";

// Version 8: the stat cache (docs/spec/store-schema.md). What core last saw
// of each target it observed: the stat fields that change whenever the
// content can have, with the SHA-256 read then and when it was read. A
// target whose stat still matches (and is not racy) is not read again. An
// optimisation only: it starts empty, and a missing or stale row costs a
// read, never a wrong answer.
const char* const kMigrateTo8 = R"sql(
CREATE TABLE stat_cache (
  path TEXT PRIMARY KEY NOT NULL,
  dev INTEGER NOT NULL,
  ino INTEGER NOT NULL,
  size INTEGER NOT NULL CHECK (size >= 0),
  mtime_ns INTEGER NOT NULL,
  ctime_ns INTEGER NOT NULL,
  mode INTEGER NOT NULL,
  uid INTEGER NOT NULL,
  gid INTEGER NOT NULL,
  sha256 TEXT NOT NULL CHECK (length(sha256) = 64),
  recorded_ns INTEGER NOT NULL
) WITHOUT ROWID;
)sql";

// Version 9: released paths (`dot-core forget`, `unregister --forget`). A
// path whose owner was released stays unowned until a later applied
// transaction operates on it: path_release keeps the transaction whose
// ownership was given up, and derived_owner (the one statement of the rule)
// leaves out an applied operation at or before it. The file itself is never
// touched: releasing is a change of record only.
const char* const kMigrateTo9 = R"sql(
CREATE TABLE path_release (
  path TEXT PRIMARY KEY NOT NULL,
  plugin_id TEXT NOT NULL,
  txn_id INTEGER NOT NULL,
  released_at_ms INTEGER NOT NULL
) WITHOUT ROWID;
DROP VIEW derived_owner;
CREATE VIEW derived_owner (path, plugin_id, txn_id) AS
)sql" DOT_APPLIED_OWNER_SELECT R"sql(
  AND NOT EXISTS (SELECT 1 FROM path_release r WHERE r.path = n.name AND r.txn_id >= o.txn_id);
)sql";
#undef DOT_APPLIED_OWNER_SELECT

// Version 10: txn.proposal may hold its document packed as one zstd frame
// (packed_document.h); rows written before keep the document itself, and
// both read back as the same bytes. No table changes: the version is raised
// so that a build that knows only the plain form refuses the store (a newer
// schema) instead of judging a packed document tampered.
const char* const kMigrateTo10 = "-- no table changes";
// plan.canonical of at least kPackedPlanBytes is packed like txn.proposal.
const char* const kMigrateTo11 = "-- no table changes";

struct Migration {
  int to;
  const char* sql;
};
const Migration kMigrations[] = {{2, kMigrateTo2},   {3, kMigrateTo3},  {4, kMigrateTo4}, {5, kMigrateTo5},
                                 {6, kMigrateTo6},   {7, kMigrateTo7},  {8, kMigrateTo8}, {9, kMigrateTo9},
                                 {10, kMigrateTo10}, {11, kMigrateTo11}};

}  // namespace

Status migrate(Db& db, int from, int to) {
  int version = from;
  for (const Migration& m : kMigrations) {
    if (m.to <= version || m.to > to) continue;
    DOT_TRY(db.exec(m.sql, fmt::format("migration to schema version {}", m.to)));
    version = m.to;
  }
  if (version != to)
    return make_error(store::ErrorKind::Migration,
                      fmt::format("{}: no migration path from version {} to {}", db.path(), from, to));
  std::string pragma = fmt::format("PRAGMA user_version = {}", to);
  return db.exec(pragma.c_str(), "setting the schema version");
}

}  // namespace dot::store::detail
