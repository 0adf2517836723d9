// bench_make_json MIB: writes a deterministic synthetic JSON document of about
// MIB mebibytes to stdout (input for the side-by-side canonicalize timing).
#include <unistd.h>

#include <cstdlib>
#include <cstdio>

#include "doc_gen.h"
#include "dot/base/fd.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: bench_make_json MIB\n");
    return 2;
  }
  long mib = std::strtol(argv[1], nullptr, 10);
  if (mib <= 0 || mib > 1024) {
    std::fprintf(stderr, "bench_make_json: MIB must be 1..1024\n");
    return 2;
  }
  std::string doc = dot::bench::make_document(static_cast<std::size_t>(mib) << 20);
  return dot::write_all(STDOUT_FILENO, doc, "standard output").ok() ? 0 : 1;
}
