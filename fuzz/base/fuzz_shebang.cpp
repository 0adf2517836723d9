// The `#!` line parser (dot/base/plugin_executable.h, parse_shebang) over
// arbitrary bytes: what register, plan and dpp conform read first in a file
// someone hands them as a plugin. Deterministic oracles:
//   - a refusal is Code::Policy kind plugin_script naming the file;
//   - what is accepted is exactly one of an absolute path (not /usr/bin/env)
//     or an env NAME (no "/", no leading "-"), with no space, tab, CR, LF or
//     NUL in it, found verbatim in the first line;
//   - only the first line counts: more bytes after it change nothing;
//   - the canonical line of the result ("#!PATH\n", "#!/usr/bin/env NAME\n")
//     parses to the same result.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "dot/base/plugin_executable.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

bool plain_word(std::string_view w) {
  return !w.empty() && w.find_first_of(std::string_view(" \t\r\n\0", 5)) == std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto r = dot::parse_shebang(bytes, "the script");
  if (!r.ok()) {
    check(r.error().code == dot::Code::Policy && r.error().kind == "plugin_script");
    check(r.error().detail.rfind("the script is a #! script ", 0) == 0);
    return 0;
  }
  const dot::Shebang& s = *r;
  check(bytes.substr(0, 2) == "#!");
  const std::string_view first_line = bytes.substr(0, bytes.find('\n'));
  check(first_line.size() <= 256);
  std::string canonical;
  if (!s.path.empty()) {
    check(s.env_name.empty() && s.path.front() == '/' && s.path != "/usr/bin/env" && plain_word(s.path));
    check(first_line.find(s.path) != std::string_view::npos);
    canonical = "#!" + s.path + "\n";
  } else {
    check(plain_word(s.env_name) && s.env_name.find('/') == std::string::npos && s.env_name.front() != '-');
    check(first_line.find("/usr/bin/env") != std::string_view::npos);
    check(first_line.find(s.env_name) != std::string_view::npos);
    canonical = "#!/usr/bin/env " + s.env_name + "\n";
  }
  auto more = dot::parse_shebang(std::string(bytes) + "\n#!/other\n", "the script");
  check(more.ok() && *more == s);
  auto again = dot::parse_shebang(canonical, "the script");
  check(again.ok() && *again == s);
  return 0;
}
