/* adpp-bench-echo REQ RESP: reads REQ bytes, answers RESP bytes, until EOF.
   The floor a Hello round trip with adpp-sim is compared with: the same
   pipes and sizes, no framing, no protobuf. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 3) return 64;
  size_t req = (size_t)strtoul(argv[1], NULL, 10), resp = (size_t)strtoul(argv[2], NULL, 10);
  char* in = malloc(req + 1);
  char* out = calloc(resp + 1, 1);
  if (in == NULL || out == NULL) return 70;
  for (;;) {
    size_t got = 0;
    while (got < req) {
      ssize_t n = read(0, in + got, req - got);
      if (n <= 0) return n == 0 ? 0 : 2;
      got += (size_t)n;
    }
    size_t put = 0;
    while (put < resp) {
      ssize_t n = write(1, out + put, resp - put);
      if (n <= 0) return 2;
      put += (size_t)n;
    }
  }
}
