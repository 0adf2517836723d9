/* The floor of `dot-core plan` with a general plugin that copies a tree
 * (docs/spec/dpp-general.md, "Performance goals": spawn, stage read and hash,
 * sealed insert), written directly against libc, OpenSSL and SQLite:
 *   1. spawn a child (fork + exec of this same program in its copy role)
 *      that copies every regular file of SRC into STAGE at the same relative
 *      path, making folders as it goes (what a mirroring plugin must do);
 *   2. wait for it; then read every staged file back and hash it (SHA-256);
 *   3. insert every file (path, digest, bytes) in one SQLite transaction
 *      (WAL, synchronous=FULL: one durable commit).
 * Nothing else: no protocol, no target observation, no proposal document.
 * Usage: plan_floor SRC STAGE DB   (STAGE must not exist; DB is created)
 *        plan_floor --copy SRC STAGE   (the child's role) */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <openssl/evp.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char* g_from;
static const char* g_to;
static sqlite3* g_db;
static sqlite3_stmt* g_insert;

static int die(const char* what) {
  fprintf(stderr, "plan_floor: %s: %s\n", what, strerror(errno));
  exit(1);
}

static char* read_file(const char* path, size_t* size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) die(path);
  struct stat st;
  if (fstat(fd, &st) != 0) die(path);
  char* buf = malloc((size_t)st.st_size + 1);
  size_t got = 0;
  while (got < (size_t)st.st_size) {
    ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
    if (n <= 0) die(path);
    got += (size_t)n;
  }
  close(fd);
  *size = got;
  return buf;
}

static int copy_one(const char* path, const struct stat* st, int type, struct FTW* ftw) {
  (void)st;
  (void)ftw;
  char out[8192];
  snprintf(out, sizeof out, "%s%s", g_to, path + strlen(g_from));
  if (type == FTW_D) {
    if (mkdir(out, 0700) != 0 && errno != EEXIST) die(out);
    return 0;
  }
  if (type != FTW_F) return 0;
  size_t n = 0;
  char* bytes = read_file(path, &n);
  int fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 || write(fd, bytes, n) != (ssize_t)n || close(fd) != 0) die(out);
  free(bytes);
  return 0;
}

static int hash_and_insert(const char* path, const struct stat* st, int type, struct FTW* ftw) {
  (void)st;
  (void)ftw;
  if (type != FTW_F) return 0;
  size_t n = 0;
  char* bytes = read_file(path, &n);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes, n, md, &len, EVP_sha256(), NULL) != 1) die("sha256");
  sqlite3_bind_text(g_insert, 1, path + strlen(g_from), -1, SQLITE_STATIC);
  sqlite3_bind_blob(g_insert, 2, md, (int)len, SQLITE_STATIC);
  sqlite3_bind_blob(g_insert, 3, bytes, (int)n, SQLITE_STATIC);
  if (sqlite3_step(g_insert) != SQLITE_DONE) die(sqlite3_errmsg(g_db));
  sqlite3_reset(g_insert);
  free(bytes);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "--copy") == 0) {
    g_from = argv[2];
    g_to = argv[3];
    if (nftw(g_from, copy_one, 16, FTW_PHYS) != 0) die("copy");
    return 0;
  }
  if (argc != 4) {
    fprintf(stderr, "usage: plan_floor SRC STAGE DB\n");
    return 2;
  }
  pid_t pid = fork();
  if (pid < 0) die("fork");
  if (pid == 0) {
    execl("/proc/self/exe", argv[0], "--copy", argv[1], argv[2], (char*)NULL);
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) die("the copying child");

  if (sqlite3_open(argv[3], &g_db) != SQLITE_OK) die("sqlite3_open");
  if (sqlite3_exec(g_db,
                   "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                   "CREATE TABLE IF NOT EXISTS f (path TEXT, sha256 BLOB, bytes BLOB); BEGIN IMMEDIATE;",
                   NULL, NULL, NULL) != SQLITE_OK)
    die(sqlite3_errmsg(g_db));
  if (sqlite3_prepare_v2(g_db, "INSERT INTO f VALUES (?, ?, ?)", -1, &g_insert, NULL) != SQLITE_OK)
    die(sqlite3_errmsg(g_db));
  g_from = argv[2];
  if (nftw(argv[2], hash_and_insert, 16, FTW_PHYS) != 0) die("hash");
  sqlite3_finalize(g_insert);
  if (sqlite3_exec(g_db, "COMMIT;", NULL, NULL, NULL) != SQLITE_OK) die(sqlite3_errmsg(g_db));
  sqlite3_close(g_db);
  return 0;
}
