// Where the reference plugin installed with this dot-core is (commands.h:
// reference_plugin_path), resolved from /proc/self/exe.
#include <filesystem>
#include <system_error>

#include "commands.h"

#ifndef DOT_BIN_TO_PLUGIN
#error "DOT_BIN_TO_PLUGIN (the installed plugin relative to the installed dot-core) comes from cli/CMakeLists.txt"
#endif

namespace dot::cli {

std::optional<std::string> reference_plugin_path() {
  namespace fs = std::filesystem;
  // From where this executable is at run time, not from the prefix CMake was
  // configured with: `cmake --install --prefix P` may put it anywhere, and
  // the installed tree (P/bin, P/libexec) moves as a whole.
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  const fs::path dir = exe.parent_path();
  // Installed: P/libexec/dot-core/dot-hello. Build tree: bin/dot-hello.
  for (const fs::path& candidate : {(dir / DOT_BIN_TO_PLUGIN).lexically_normal(), dir / "dot-hello"}) {
    if (fs::is_regular_file(candidate, ec)) return candidate.string();
  }
  return std::nullopt;
}

}  // namespace dot::cli
