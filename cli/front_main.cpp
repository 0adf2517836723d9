// dot-core, the front end: a statically linked executable that runs the store
// commands (init, store, inspect) and `version` itself, and replaces itself
// with dot-core-engine, installed next to it, for everything else.
//
// Why: a dynamically linked C++ process that loads libsimdjson and libstdc++
// costs ~4 ms on our VM before main(); `inspect show` does 0.5 ms of warm
// store work. The store commands need neither simdjson nor the plan model, so
// they live here, linked statically (no loader, no relocations against shared
// libraries); the engine commands pay one extra exec (docs/startup.md).
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <csignal>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

#include "app.h"
#include "exec_sibling.h"

namespace {

const dot::cli::CommandGroup kFrontGroups[] = {
    {{"version"}, dot::cli::add_version_command},
    {{"init"}, dot::cli::add_init_command},
    {{"store"}, dot::cli::add_store_commands},
    {{"inspect"}, dot::cli::add_inspect_commands},
};

// Maps the first `bytes` of heap in one system call instead of one page
// fault per page. A store command touches ~300 KiB of heap (SQLite's page
// cache and schema, CLI11's options); on our VM each of those ~60 faults
// costs more than the same page populated in bulk (`inspect show`: 5.04 ->
// 4.75 ms, docs/startup.md). Heap up to 4 MiB then comes from the brk heap,
// which is never trimmed: nothing a short-lived command notices.
void prefault_heap(std::size_t bytes) {
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  mallopt(M_TRIM_THRESHOLD, 8 << 20);
  char* before = static_cast<char*>(::sbrk(0));
  void* volatile block = std::malloc(bytes);  // volatile: the pair must not be optimised away
  char* after = static_cast<char*>(::sbrk(0));
  std::free(block);
  // Kernels before 5.14 lack MADV_POPULATE_WRITE: the pages then fault in as before.
  if (before != reinterpret_cast<char*>(-1) && after > before)
    (void)::madvise(before, static_cast<std::size_t>(after - before), MADV_POPULATE_WRITE);
}

}  // namespace

int main(int argc, char** argv) {
  // Help, typos and every other command: the engine has the whole app, so
  // listings and errors are those of the full command set.
  if (argc < 2 || !dot::cli::names_a_command(kFrontGroups, argv[1])) {
    std::vector<std::string> args(argv, argv + argc);
    bool json = dot::cli::wants_json(args);
    return dot::cli::exec_sibling("dot-core-engine", std::move(args), json);
  }
  prefault_heap(256 << 10);
  // A peer that closes a pipe must give us EPIPE, never kill us.
  std::signal(SIGPIPE, SIG_IGN);
  return dot::cli::run_app(argc, argv, kFrontGroups);
}
