// dot-core: every command. Each group lives in its own cmd_<group>.cpp
// (commands.h); app.cpp builds and runs the app.
#include <malloc.h>

#include <csignal>

#include "app.h"

int main(int argc, char** argv) {
  // A peer that closes a pipe must give us EPIPE, never kill us.
  std::signal(SIGPIPE, SIG_IGN);
  // Large buffers (a request of 100,000 paths, a packed plan text, the
  // stage's claims) are mapped on their own and given back when freed, as
  // dot-mirror does: left to itself glibc raises this threshold to the size
  // of each such buffer it frees, so the next ones come from the heap and
  // stay there once freed (a first plan of 100,000 files peaked at 66.8 MiB
  // with it raised, 61.5 with it fixed; mallopt(3)).
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  return dot::cli::run_app(argc, argv, dot::cli::all_command_groups());
}
