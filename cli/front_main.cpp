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

#include <climits>
#include <csignal>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "app.h"
#include "exec_sibling.h"

namespace {

constexpr std::string_view kEngine = "dot-core-engine";

// The commands this executable runs itself, and their groups. The names are
// a plain constant array because the early exec reads them before any
// constructor has run (a table of std::initializer_list is not a constant
// expression for g++ 12). Only a routing shortcut: the engine has every
// command, so a name missing here still works, it just pays the exec.
constexpr const char* kFrontCommands[] = {"version", "init", "store", "inspect"};
const dot::cli::CommandGroup kFrontGroups[] = {
    {{"version"}, dot::cli::add_version_command},
    {{"init"}, dot::cli::add_init_command},
    {{"store"}, dot::cli::add_store_commands},
    {{"inspect"}, dot::cli::add_inspect_commands},
};

bool is_front_command(int argc, char** argv) {
  if (argc < 2) return false;
  for (const char* name : kFrontCommands)
    if (std::strcmp(argv[1], name) == 0) return true;
  return false;
}

#ifdef DOT_FRONT_EARLY_EXEC
// The early exec. In the statically linked front end this runs from
// .preinit_array, before any constructor (libstdc++'s stream and locale
// set-up, OpenSSL's CPU probe) and before main, so an engine command pays the
// kernel's exec and little else (`jcs canonicalize`: +2.9 -> +2.4 ms over
// running dot-core-engine directly, docs/startup.md). C and system calls only.
// If the exec fails it returns, and main reports the failure the ordinary way.
void exec_engine_early(int argc, char** argv, char**) {
  if (is_front_command(argc, argv)) return;
  char path[PATH_MAX];
  if (!dot::cli::sibling_path(kEngine, path)) return;
  argv[0] = path;
  ::execv(path, argv);
}

// Sanitized builds link dynamically and their runtimes initialise from
// .preinit_array too, so only the static build takes this path.
__attribute__((used, section(".preinit_array"))) void (*const kEarlyExec)(int, char**, char**) = exec_engine_early;
#endif

// Maps the first `bytes` of heap in one system call instead of one page
// fault per page. A store command touches ~300 KiB of heap (SQLite's page
// cache and schema, CLI11's options); on our VM each of those ~60 faults
// costs more than the same page populated in bulk (`inspect show`: 0.25-0.3 ms
// less, docs/startup.md). Heap up to 4 MiB then comes from the brk heap,
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
  if (!is_front_command(argc, argv)) {
    std::vector<std::string> args(argv, argv + argc);
    bool json = dot::cli::wants_json(args);
    return dot::cli::exec_sibling(kEngine, std::move(args), json);
  }
  prefault_heap(256 << 10);
  // A peer that closes a pipe must give us EPIPE, never kill us.
  std::signal(SIGPIPE, SIG_IGN);
  return dot::cli::run_app(argc, argv, kFrontGroups);
}
