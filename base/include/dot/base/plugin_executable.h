#pragma once
// What a plugin executable may be, decided in one place for `register`, `plan`
// and `dpp conform`: an ELF executable, or a `#!` script whose interpreter is
// an absolute path to an ELF executable (a `#!/usr/bin/env NAME` line is
// resolved once, through the absolute PATH entries only). A script is never
// run by the kernel's `#!` handling (that would reopen both files by path
// after they were hashed): its interpreter is sealed and executed from the
// sealed copy, and the sealed script is handed over by a kept descriptor,
// opened by the interpreter as /proc/self/fd/3 (the same sealed bytes).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/result.h"
#include "dot/base/sealed_executable.h"

namespace dot {

// The descriptor number the sealed script has in the interpreter, and the
// path the interpreter is told to open.
inline constexpr int kScriptChildFd = 3;
inline constexpr std::string_view kScriptChildPath = "/proc/self/fd/3";

// How a script's interpreter is run. Recorded at register and used as is by
// every plan: nothing about it is derived again.
struct Interpreter {
  std::string path;                       // absolute, symlinks resolved: what is sealed, and argv[0]
  std::vector<std::string> options;       // between argv[0] and the script (python: "-I")
  std::vector<std::string> runtime_dirs;  // read-only under process assurance (python: its library folders)
};

// What a `#!` line names, read without touching the filesystem: an absolute
// path (`#!/ABSOLUTE/PATH`), or a name to look up (`#!/usr/bin/env NAME`).
struct Shebang {
  std::string path;  // the absolute path; empty when `env_name` is the one
  std::string env_name;
  bool operator==(const Shebang&) const = default;
};
// The `#!` line at the start of `script`: it ends with "\n" (a "\r" before it
// is dropped) within 256 bytes, holds no other control character than tabs
// (no NUL, no CR inside it), and is exactly one absolute path
// other than /usr/bin/env, or /usr/bin/env and one NAME without "/" that does
// not start with "-", separated by spaces or tabs. Anything else is
// Code::Policy kind "plugin_script" naming `what`.
Result<Shebang> parse_shebang(std::string_view script, std::string_view what);

// Reads the `#!` line at the start of `script` and resolves the interpreter
// it names: an absolute path (symlinks resolved), or `/usr/bin/env NAME`
// searched in `path_list`'s absolute entries. A python3 interpreter gets
// "-I" (isolated: no PYTHON* variables, no user site, no script folder on
// sys.path) and its library folders that exist (PREFIX/lib/python3.N,
// PREFIX/lib/python3/dist-packages, PREFIX/local/lib/python3.N/dist-packages).
// Errors: Code::Policy kind "plugin_script" naming `what` for a line that is
// not `#!/ABSOLUTE/PATH` or `#!/usr/bin/env NAME` (no further arguments), or
// whose interpreter is missing, not a regular file or not an ELF executable.
Result<Interpreter> resolve_interpreter(std::string_view script, std::string_view what, std::string_view path_list);

// True when `bytes` start with "#!".
bool is_script(std::string_view bytes) noexcept;

// Seals the interpreter at `path` (opened once, regular file, ELF): Code::Io
// naming it when it cannot be opened or read, Code::Policy kind
// "plugin_script" when it is not an ELF executable.
Result<SealedExecutable> seal_interpreter(const std::string& path, std::uint64_t max_bytes);

// The argv of an interpreted plugin: {path, options..., kScriptChildPath}.
std::vector<std::string> interpreter_argv(const Interpreter& interpreter);

// The environment an interpreted plugin gets besides LANG=C and
// DOT_STAGE_ROOT: HOME, set to its stage folder. Without HOME Python's
// start-up asks NSS for the user's home folder, which opens a socket.
std::vector<std::string> interpreter_env(const std::string& stage_dir);

// A plugin executable opened as register and dpp conform accept it.
struct PluginExecutable {
  SealedExecutable program;                // what is executed: the ELF plugin, or the script's interpreter
  std::string program_path;                // where `program` was read from
  std::optional<SealedExecutable> script;  // the sealed script (interpreted plugins)
  std::optional<Interpreter> interpreter;
};
// Opens `path` once and seals it: an ELF executable is the program; a `#!`
// script is sealed as the script, and its interpreter (resolve_interpreter,
// this process's PATH) sealed as the program. Errors: Code::Io naming `what`
// (missing, unreadable, not a regular file, too large), Code::Policy kind
// "plugin_not_elf" for anything else, resolve_interpreter's and
// seal_interpreter's.
Result<PluginExecutable> open_plugin_executable(const std::string& path, std::string_view what,
                                                std::uint64_t max_bytes);

}  // namespace dot
