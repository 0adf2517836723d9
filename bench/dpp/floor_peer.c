/* The trivial program of the floor (docs/spec/cli.md, "Benchmarks"): linked only
 * against libc; answers five requests of FLOOR_MSG bytes with five responses
 * of the same size on stdin/stdout, then exits 0. */
#include <unistd.h>

#include "floor.h"

static int read_exact(int fd, char* buf, size_t n) {
  while (n > 0) {
    ssize_t r = read(fd, buf, n);
    if (r <= 0) return -1;
    buf += r;
    n -= (size_t)r;
  }
  return 0;
}

static int write_exact(int fd, const char* buf, size_t n) {
  while (n > 0) {
    ssize_t r = write(fd, buf, n);
    if (r <= 0) return -1;
    buf += r;
    n -= (size_t)r;
  }
  return 0;
}

int main(void) {
  char buf[FLOOR_MSG];
  for (int i = 0; i < FLOOR_CALLS; ++i) {
    if (read_exact(0, buf, sizeof buf) != 0) return 1;
    buf[0] = 'R';
    if (write_exact(1, buf, sizeof buf) != 0) return 1;
  }
  return 0;
}
