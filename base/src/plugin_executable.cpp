// Which executables a plugin may be, and how an interpreted one is launched
// (dot/base/plugin_executable.h): the `#!` line read once, the interpreter
// resolved once, python3's library folders derived from its own path.

#include "dot/base/plugin_executable.h"

#include "dot/base/error_kinds.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "dot/base/path_search.h"

namespace dot {
namespace {

Error script_error(std::string_view what, std::string detail) {
  return make_error(base::ErrorKind::PluginScript, fmt::format("{} is a #! script {}", what, detail));
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// "python3.11" -> "3.11"; "" for any other name.
std::string python_version(std::string_view base) {
  constexpr std::string_view kPrefix = "python3.";
  if (base.substr(0, kPrefix.size()) != kPrefix || base.size() == kPrefix.size()) return {};
  for (char c : base.substr(kPrefix.size()))
    if (c < '0' || c > '9') return {};
  return std::string(base.substr(std::string_view("python").size()));
}

// Options and read-only folders of a known interpreter (python3.N under
// PREFIX/bin); none for any other.
void derive_runtime(Interpreter& in) {
  const std::size_t slash = in.path.rfind('/');
  const std::string version = python_version(std::string_view(in.path).substr(slash + 1));
  if (version.empty()) return;
  in.options = {"-I"};
  const std::string bin = in.path.substr(0, slash);
  const std::size_t up = bin.rfind('/');
  if (up == std::string::npos || bin.substr(up) != "/bin") return;
  const std::string prefix = bin.substr(0, up);
  for (const std::string& dir : {prefix + "/lib/python" + version, prefix + "/lib/python3/dist-packages",
                                 prefix + "/local/lib/python" + version + "/dist-packages"})
    if (is_directory(dir)) in.runtime_dirs.push_back(dir);
}

}  // namespace

bool is_script(std::string_view bytes) noexcept { return bytes.size() >= 2 && bytes.compare(0, 2, "#!") == 0; }

Result<Shebang> parse_shebang(std::string_view script, std::string_view what) {
  if (!is_script(script)) return script_error(what, "without a #! line");
  const std::size_t eol = script.find('\n');
  if (eol == std::string_view::npos || eol > 256) return script_error(what, "whose #! line has no end in 256 bytes");
  std::string_view line = script.substr(2, eol - 2);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  // A NUL would end the path where the system reads it, not where we did;
  // another control character (a CR inside the line) makes a path that
  // reads otherwise than it runs and has no canonical line. Tabs separate.
  for (char c : line) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f)
      return script_error(what, fmt::format("whose #! line holds the control character 0x{:02x}", u));
  }
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) words.emplace_back(line.substr(start, i - start));
  }
  if (words.size() == 1 && words[0].front() == '/' && words[0] != "/usr/bin/env") return Shebang{words[0], {}};
  if (words.size() == 2 && words[0] == "/usr/bin/env" && words[1].find('/') == std::string::npos &&
      words[1].front() != '-')
    return Shebang{{}, words[1]};
  return script_error(what,
                      "whose #! line is not `#!/ABSOLUTE/PATH` or `#!/usr/bin/env NAME` (without further "
                      "arguments)");
}

Result<Interpreter> resolve_interpreter(std::string_view script, std::string_view what, std::string_view path_list) {
  DOT_ASSIGN_OR_RETURN(Shebang line, parse_shebang(script, what));
  std::string named = line.path;
  if (named.empty()) {
    auto found = find_executable(line.env_name, path_list);
    if (!found.ok())
      return script_error(what,
                          fmt::format("whose interpreter {} is not found: {}", line.env_name, found.error().detail));
    named = *found;
  }
  char resolved[PATH_MAX];
  if (::realpath(named.c_str(), resolved) == nullptr)
    return script_error(what, fmt::format("whose interpreter {} cannot be resolved: {}", named, std::strerror(errno)));
  Interpreter in;
  in.path = resolved;
  derive_runtime(in);
  return in;
}

Result<SealedExecutable> seal_interpreter(const std::string& path, std::uint64_t max_bytes) {
  const std::string what = fmt::format("the interpreter {}", path);
  DOT_ASSIGN_OR_RETURN(SealedExecutable sealed, seal_executable_file(path, what, max_bytes));
  char magic[4] = {0, 0, 0, 0};
  if (::pread(sealed.fd.get(), magic, 4, 0) != 4 || std::memcmp(magic,
                                                                "\x7f"
                                                                "ELF",
                                                                4) != 0)
    return make_error(base::ErrorKind::PluginScript, fmt::format("{} is not an ELF executable", what));
  return sealed;
}

std::vector<std::string> interpreter_argv(const Interpreter& interpreter) {
  std::vector<std::string> argv{interpreter.path};
  argv.insert(argv.end(), interpreter.options.begin(), interpreter.options.end());
  argv.emplace_back(kScriptChildPath);
  return argv;
}

std::vector<std::string> interpreter_env(const std::string& stage_dir) { return {"HOME=" + stage_dir}; }

// An interpreter that is itself a script (a version manager's shim such as
// pyenv's, a wrapper) is refused by seal_interpreter; the author needs to
// know how the #! line led there and what to write instead.
Error explain_interpreter_refusal(Error refused, std::string_view script) {
  if (refused.kind != base::ErrorKind::Script && refused.kind != base::ErrorKind::PluginScript) return refused;
  auto line = parse_shebang(script, "");
  const std::string how = line.ok() && !line->env_name.empty()
                              ? fmt::format(" (`#!/usr/bin/env {}` found it first in PATH)", line->env_name)
                              : std::string();
  refused.detail += fmt::format(
      "{}; a plugin's #! line must lead to an ELF interpreter: write that interpreter's absolute path in the "
      "#! line (`command -v NAME`, or a version manager's `which NAME`, prints it)",
      how);
  return refused;
}

Result<PluginExecutable> open_plugin_executable(const std::string& path, std::string_view what,
                                                std::uint64_t max_bytes) {
  UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!file)
    return make_error(base::ErrorKind::Open, fmt::format("cannot open {} {}: {}", what, path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(file.get(), &st) != 0)
    return make_error(base::ErrorKind::Open, fmt::format("cannot stat {} {}: {}", what, path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    return make_error(base::ErrorKind::PluginType, fmt::format("{} {} is not a regular file", what, path));
  // Everything below is read from the sealed copy: the bytes that will run.
  DOT_ASSIGN_OR_RETURN(SealedExecutable sealed, seal_executable(file.get(), what, max_bytes));
  char head[257] = {};
  const ssize_t n = ::pread(sealed.fd.get(), head, sizeof head, 0);
  const std::string_view bytes(head, n > 0 ? static_cast<std::size_t>(n) : 0);
  PluginExecutable out;
  if (bytes.size() >= 4 && bytes.compare(0, 4,
                                         "\x7f"
                                         "ELF") == 0) {
    out.program = std::move(sealed);
    out.program_path = path;
    return out;
  }
  if (!is_script(bytes))
    return make_error(base::ErrorKind::PluginNotElf,
                      fmt::format("{} {} is neither an ELF executable nor a #! script", what, path));
  const char* env_path = std::getenv("PATH");
  DOT_ASSIGN_OR_RETURN(Interpreter in,
                       resolve_interpreter(bytes, fmt::format("{} {}", what, path),
                                           env_path != nullptr ? std::string_view(env_path) : kDefaultPath));
  auto program = seal_interpreter(in.path, max_bytes);
  if (!program.ok()) return explain_interpreter_refusal(std::move(program).error(), bytes);
  out.program = std::move(*program);
  out.program_path = in.path;
  out.script = std::move(sealed);
  out.interpreter = std::move(in);
  return out;
}

}  // namespace dot
