/* The floor of `dot-core plan` (spec/cli.md, "Benchmarks"): spawn a trivial
 * libc-only program, five request/response pairs of about 600 bytes over
 * pipes, wait for it, then one fsync'd SQLite insert of 2 KiB in WAL mode with
 * synchronous=FULL. Usage: plan_floor ECHO_BINARY DATABASE */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int exchange(int to, int from, size_t size) {
  char req[600], resp[600];
  memset(req, 'x', sizeof req);
  if (write(to, req, size) != (ssize_t)size) return -1;
  size_t got = 0;
  while (got < size) {
    ssize_t n = read(from, resp + got, size - got);
    if (n <= 0) return -1;
    got += (size_t)n;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  int in[2], out[2];
  if (pipe(in) || pipe(out)) return 1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[1]);
    close(out[0]);
    char* args[] = {argv[1], NULL};
    char* env[] = {"LANG=C", NULL};
    execve(argv[1], args, env);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  for (int i = 0; i < 5; ++i)
    if (exchange(in[1], out[0], 600)) return 1;
  close(in[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  sqlite3* db = NULL;
  if (sqlite3_open(argv[2], &db) != SQLITE_OK) return 1;
  char* err = NULL;
  if (sqlite3_exec(db,
                   "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                   "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, b BLOB);",
                   NULL, NULL, &err) != SQLITE_OK)
    return 1;
  sqlite3_stmt* st = NULL;
  sqlite3_prepare_v2(db, "INSERT INTO t (b) VALUES (?)", -1, &st, NULL);
  char blob[2048];
  memset(blob, 'p', sizeof blob);
  sqlite3_bind_blob(st, 1, blob, sizeof blob, SQLITE_STATIC);
  if (sqlite3_step(st) != SQLITE_DONE) return 1;
  sqlite3_finalize(st);
  sqlite3_close(db);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
