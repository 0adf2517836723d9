/* The trivial peer of the plan floor: linked only against libc, it answers
 * each request read from stdin with a response of the same size. */
#include <unistd.h>

int main(void) {
  char buf[4096];
  for (;;) {
    ssize_t n = read(0, buf, sizeof buf);
    if (n <= 0) return 0;
    for (ssize_t off = 0; off < n;) {
      ssize_t w = write(1, buf + off, (size_t)(n - off));
      if (w <= 0) return 1;
      off += w;
    }
  }
}
