/* dpp-floor: the floor of docs/spec/cli.md, "Benchmarks". Spawns the trivial peer
 * (dpp-floor-peer, libc only) with stdin/stdout pipes, exchanges five
 * request/response pairs of FLOOR_MSG bytes, waits for it; then (unless
 * --no-store) makes one fsync'd SQLite insert of 2 KiB in WAL mode with
 * synchronous=FULL. Timed as a whole process by bench/dpp/session_vs_floor
 * (and by core's plan benchmark).
 *
 * usage: dpp-floor PEER [--no-store | DB] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "floor.h"

extern char** environ;

static int io_exact(int fd, char* buf, size_t n, int writing) {
  while (n > 0) {
    ssize_t r = writing ? write(fd, buf, n) : read(fd, buf, n);
    if (r <= 0) return -1;
    buf += r;
    n -= (size_t)r;
  }
  return 0;
}

static int store(const char* db_path) {
  sqlite3* db = NULL;
  char blob[2048];
  memset(blob, 'b', sizeof blob);
  if (sqlite3_open(db_path, &db) != SQLITE_OK) return 1;
  int rc = sqlite3_exec(db,
                        "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                        "CREATE TABLE IF NOT EXISTS floor(id INTEGER PRIMARY KEY, body BLOB NOT NULL);",
                        NULL, NULL, NULL);
  sqlite3_stmt* st = NULL;
  if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, "INSERT INTO floor(body) VALUES(?1)", -1, &st, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_bind_blob(st, 1, blob, sizeof blob, SQLITE_STATIC);
  if (rc == SQLITE_OK) rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
  sqlite3_finalize(st);
  sqlite3_close(db);
  return rc == SQLITE_OK ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: dpp-floor PEER [--no-store | DB]\n");
    return 2;
  }
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) return 1;
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    char* args[] = {argv[1], NULL};
    char* env[] = {"LANG=C", NULL};
    execve(argv[1], args, env);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  char buf[FLOOR_MSG];
  memset(buf, 'q', sizeof buf);
  for (int i = 0; i < FLOOR_CALLS; ++i) {
    if (io_exact(in[1], buf, sizeof buf, 1) != 0) return 1;
    if (io_exact(out[0], buf, sizeof buf, 0) != 0) return 1;
  }
  close(in[1]);
  close(out[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  if (argc >= 3 && strcmp(argv[2], "--no-store") != 0) return store(argv[2]);
  return 0;
}
