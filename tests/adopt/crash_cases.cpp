#include "crash_cases.h"

#include <unistd.h>

#include <sstream>
#include <stdexcept>

#include "dot/adopt/adopt.h"
#include "dot/adopt/go_root.h"
#include "tree.h"

namespace dot::adopt_test {

std::vector<CrashCase> compute_crash_cases() {
  const fs::path shm = "/dev/shm";
  Scratch scratch(fs::is_directory(shm) && ::access(shm.c_str(), W_OK) == 0 ? shm : fs::temp_directory_path());
  std::vector<CrashCase> out;
  std::size_t n = 0;
  for (const Case& c : all_cases()) {
    const fs::path root = scratch.dir() / std::to_string(n++);
    make_go_root(root, crash_spec(c));
    auto s = adopt::survey(root.string());
    if (!s.ok()) continue;
    for (const auto& p : adopt::adopt_crash_points(*s)) out.push_back({c.gen, c.state, p});
  }
  return out;
}

std::string crash_cases_text(const std::vector<CrashCase>& cases) {
  std::string out;
  for (const auto& c : cases) out += gen_name(c.gen) + " " + c.state + " " + c.point + "\n";
  return out;
}

std::vector<CrashCase> parse_crash_cases(const std::string& text) {
  std::vector<CrashCase> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string gen, state, point, extra;
    if (!(fields >> gen >> state >> point) || (fields >> extra) || (gen != "effects" && gen != "pre-capability"))
      throw std::runtime_error("crash case list: malformed line: " + line);
    out.push_back({gen == "effects" ? GoGen::Effects : GoGen::PreCapability, state, point});
  }
  return out;
}

}  // namespace dot::adopt_test
