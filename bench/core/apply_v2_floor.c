/* The floor of `dot-core apply` of a version-2 plan that writes FILES new
 * files in FOLDERS new folders (docs/PERFORMANCE.md, "Version-2 apply"): the
 * durable steps docs/spec/dpp-general.md ("Apply, rollback, recover") asks of
 * apply, written directly against libc and SQLite (WAL, synchronous=FULL),
 * in the order apply takes them, nothing more:
 *   PREPARED: one SQLite commit with a backup row per file (the targets are
 *   absent, so each row is empty);
 *   the folders made (mkdir 0700);
 *   per file a temp file O_EXCL 0600 in its folder, filled from its stored
 *   artifact (incremental blob I/O) and given its mode; then one syncfs for
 *   all of them (the batching the spec allows);
 *   COMMITTING: one commit; per file one renameat2 RENAME_NOREPLACE; one
 *   fsync per folder and of the root;
 *   COMMITTED: one commit that also records the owner of every written path
 *   (docs/spec/dpp-general.md "Plan": `managed` is what applied plans wrote);
 *   ATTEMPTED, the root-sync fsync, SUCCEEDED and DONE, one commit each.
 * Not in the floor, though apply does them: the before-checks, the re-check
 * of each target before its rename, the digests verified while streaming.
 * Usage: apply_v2_floor setup DB FILES SIZE   (stores the artifacts once)
 *        apply_v2_floor DIR DB FILES FOLDERS  (DIR empty; the timed part) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static sqlite3* db;

static int exec(const char* sql) { return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1; }

static int open_db(const char* path) {
  if (sqlite3_open(path, &db) != SQLITE_OK) return -1;
  return exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
              "CREATE TABLE IF NOT EXISTS artifact (idx INTEGER PRIMARY KEY, bytes BLOB NOT NULL);"
              "CREATE TABLE IF NOT EXISTS backup (txn INTEGER, idx INTEGER, bytes BLOB, PRIMARY KEY (txn, idx));"
              "CREATE TABLE IF NOT EXISTS state (id INTEGER PRIMARY KEY, s TEXT);"
              "CREATE TABLE IF NOT EXISTS owner (path TEXT PRIMARY KEY, txn INTEGER) WITHOUT ROWID;");
}

static int record(const char* state) {
  sqlite3_stmt* st = NULL;
  if (sqlite3_prepare_v2(db, "INSERT INTO state (s) VALUES (?)", -1, &st, NULL) != SQLITE_OK) return -1;
  sqlite3_bind_text(st, 1, state, -1, SQLITE_STATIC);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? 0 : -1;
}

static int setup(const char* path, long files, long size) {
  if (open_db(path) || exec("BEGIN")) return 1;
  sqlite3_stmt* st = NULL;
  if (sqlite3_prepare_v2(db, "INSERT INTO artifact (idx, bytes) VALUES (?, ?)", -1, &st, NULL) != SQLITE_OK) return 1;
  char* bytes = malloc((size_t)size);
  for (long i = 0; i < files; ++i) {
    for (long k = 0; k < size; ++k) bytes[k] = (char)((i * 31 + k * 7) & 0xff);
    sqlite3_bind_int64(st, 1, i);
    sqlite3_bind_blob(st, 2, bytes, (int)size, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) return 1;
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  free(bytes);
  return exec("COMMIT") ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc == 5 && strcmp(argv[1], "setup") == 0) return setup(argv[2], atol(argv[3]), atol(argv[4]));
  if (argc != 5) return 2;
  const long files = atol(argv[3]), folders = atol(argv[4]);
  int root = open(argv[1], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (root < 0 || open_db(argv[2])) return 1;
  const long txn = (long)getpid();

  /* PREPARED: a backup row per file, with the state, in one commit. */
  if (exec("BEGIN")) return 1;
  sqlite3_stmt* st = NULL;
  if (sqlite3_prepare_v2(db, "INSERT INTO backup (txn, idx, bytes) VALUES (?, ?, zeroblob(0))", -1, &st, NULL))
    return 1;
  for (long i = 0; i < files; ++i) {
    sqlite3_bind_int64(st, 1, txn);
    sqlite3_bind_int64(st, 2, i);
    if (sqlite3_step(st) != SQLITE_DONE) return 1;
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  if (record("PREPARED") || exec("COMMIT")) return 1;

  int* dirs = calloc((size_t)folders, sizeof *dirs);
  char name[64], temp[64];
  for (long f = 0; f < folders; ++f) {
    snprintf(name, sizeof name, "d%03ld", f);
    if (mkdirat(root, name, 0700)) return 1;
    dirs[f] = openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dirs[f] < 0) return 1;
  }
  char buf[1 << 16];
  for (long i = 0; i < files; ++i) {
    sqlite3_blob* blob = NULL;
    if (sqlite3_blob_open(db, "main", "artifact", "bytes", i, 0, &blob) != SQLITE_OK) return 1;
    int n = sqlite3_blob_bytes(blob);
    if (n > (int)sizeof buf || sqlite3_blob_read(blob, buf, n, 0) != SQLITE_OK) return 1;
    sqlite3_blob_close(blob);
    snprintf(temp, sizeof temp, ".floor-tmp-%05ld", i);
    int fd = openat(dirs[i % folders], temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, buf, (size_t)n) != n || fchmod(fd, 0644) || close(fd)) return 1;
  }
  if (syncfs(root) || record("COMMITTING")) return 1;
  for (long i = 0; i < files; ++i) {
    snprintf(temp, sizeof temp, ".floor-tmp-%05ld", i);
    snprintf(name, sizeof name, "f%05ld", i);
    int d = dirs[i % folders];
    if (renameat2(d, temp, d, name, RENAME_NOREPLACE)) return 1;
  }
  for (long f = 0; f < folders; ++f)
    if (fsync(dirs[f]) || close(dirs[f])) return 1;
  if (fsync(root) || exec("BEGIN")) return 1;
  /* COMMITTED, with the owner of every path it wrote. */
  if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO owner (path, txn) VALUES (?, ?)", -1, &st, NULL)) return 1;
  for (long i = 0; i < files; ++i) {
    snprintf(name, sizeof name, "d%03ld/f%05ld", i % folders, i);
    sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, txn);
    if (sqlite3_step(st) != SQLITE_DONE) return 1;
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  if (record("COMMITTED") || exec("COMMIT") || record("ATTEMPTED")) return 1;
  if (fsync(root) || record("SUCCEEDED") || record("DONE")) return 1;
  free(dirs);
  sqlite3_close(db);
  return 0;
}
