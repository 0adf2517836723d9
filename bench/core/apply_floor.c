/* The floor of `dot-core apply` of the two hello slots: the same durable
 * sequence written directly. Six fsync'd SQLite commits (WAL, synchronous=FULL:
 * prepare with 2 backups, committing, committed, effect attempted, effect
 * succeeded, done) and per slot: temp file O_EXCL 0600, write, fsync, rename,
 * fsync of the directory; then the root-sync fsync. Usage: apply_floor DIR DB */
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static sqlite3* db;

static int commit(const char* blob, int size) {
  sqlite3_stmt* st = NULL;
  if (sqlite3_prepare_v2(db, "INSERT INTO t (b) VALUES (?)", -1, &st, NULL) != SQLITE_OK) return -1;
  sqlite3_bind_blob(st, 1, blob, size, SQLITE_STATIC);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? 0 : -1;
}

static int slot(int dirfd, const char* name, const char* bytes) {
  char tmp[64];
  snprintf(tmp, sizeof tmp, ".floor-tmp-%s", name);
  int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  size_t n = strlen(bytes);
  if (write(fd, bytes, n) != (ssize_t)n || fsync(fd)) return -1;
  close(fd);
  if (renameat(dirfd, tmp, dirfd, name)) return -1;
  return fsync(dirfd);
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  int dirfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirfd < 0 || sqlite3_open(argv[2], &db) != SQLITE_OK) return 1;
  if (sqlite3_exec(db,
                   "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                   "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, b BLOB);",
                   NULL, NULL, NULL) != SQLITE_OK)
    return 1;
  char backup[128];
  memset(backup, 'b', sizeof backup);
  if (commit(backup, sizeof backup)) return 1;  /* PREPARED with backups */
  if (commit("c", 1)) return 1;                 /* COMMITTING */
  if (slot(dirfd, "hello.txt", "Hello, world!\n")) return 1;
  if (slot(dirfd, "welcome.txt", "Welcome to dot-core: this file was planned by org.dot.hello.\n")) return 1;
  if (commit("d", 1) || commit("e", 1)) return 1; /* COMMITTED, ATTEMPTED */
  if (fsync(dirfd)) return 1;                     /* root-sync */
  if (commit("f", 1) || commit("g", 1)) return 1; /* SUCCEEDED, DONE */
  sqlite3_close(db);
  return 0;
}
