// gitignore-style patterns over relative paths (path_glob.h).
#include "dot/base/path_glob.h"

#include <fmt/format.h>

#include "dot/base/error_kinds.h"
#include "dot/base/utf8.h"

namespace dot {
namespace {

Error bad_glob(std::string_view pattern, std::string_view why) {
  return make_error(base::ErrorKind::Glob, fmt::format("pattern \"{}\" {}", shown(pattern.substr(0, 256)), why));
}

// One component against one pattern component: `*`, `?` and `\` escapes,
// backtracking to the last `*` (linear in practice, quadratic at worst).
bool component_matches(std::string_view pat, std::string_view name) {
  std::size_t p = 0, n = 0, star_p = std::string_view::npos, star_n = 0;
  while (n < name.size()) {
    if (p < pat.size() && pat[p] == '*') {
      star_p = ++p;
      star_n = n;
      continue;
    }
    if (p < pat.size()) {
      const bool escaped = pat[p] == '\\' && p + 1 < pat.size();
      const char want = escaped ? pat[p + 1] : pat[p];
      if ((!escaped && want == '?') || want == name[n]) {
        p += escaped ? 2 : 1;
        ++n;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p;
    n = ++star_n;
  }
  while (p < pat.size() && pat[p] == '*') ++p;
  return p == pat.size();
}

// Pattern components [pi..) against path components [ni..): `**` takes
// zero or more components. `seen` rules out revisiting a (pi, ni) pair
// that already failed, so a pattern of many `**` stays polynomial.
bool components_match(const std::vector<std::string>& pat, const std::vector<std::string_view>& names, std::size_t pi,
                      std::size_t ni, std::vector<char>& failed) {
  const std::size_t key = pi * (names.size() + 1) + ni;
  if (failed[key]) return false;
  bool ok = false;
  if (pi == pat.size()) {
    ok = ni == names.size();
  } else if (pat[pi] == "**") {
    for (std::size_t k = ni; k <= names.size() && !ok; ++k) ok = components_match(pat, names, pi + 1, k, failed);
  } else {
    ok = ni < names.size() && component_matches(pat[pi], names[ni]) &&
         components_match(pat, names, pi + 1, ni + 1, failed);
  }
  if (!ok) failed[key] = 1;
  return ok;
}

}  // namespace

Result<PathGlob> PathGlob::parse(std::string_view pattern) {
  if (pattern.size() > kMaxGlobBytes) return bad_glob(pattern, fmt::format("is longer than {} bytes", kMaxGlobBytes));
  if (utf8_valid_prefix(pattern) != pattern.size()) return bad_glob(pattern, "is not valid UTF-8");
  for (unsigned char c : pattern)
    if (c < 0x20 || c == 0x7f) return bad_glob(pattern, fmt::format("holds the control byte 0x{:02x}", c));
  if (!pattern.empty() && pattern.front() == '!')
    return bad_glob(pattern, "starts with \"!\": negation is not supported (a pattern only leaves paths out)");
  PathGlob glob;
  glob.text_ = std::string(pattern);
  std::string_view rest = pattern;
  if (!rest.empty() && rest.back() == '/') {
    glob.folders_only_ = true;
    rest.remove_suffix(1);
  }
  bool anchored = false;
  if (!rest.empty() && rest.front() == '/') {
    anchored = true;
    rest.remove_prefix(1);
  }
  if (rest.empty()) return bad_glob(pattern, "names no path");
  anchored = anchored || rest.find('/') != std::string_view::npos;
  if (!anchored) glob.components_.emplace_back("**");
  for (std::size_t start = 0; start <= rest.size();) {
    std::size_t end = rest.find('/', start);
    if (end == std::string_view::npos) end = rest.size();
    const std::string_view component = rest.substr(start, end - start);
    if (component.empty()) return bad_glob(pattern, "has an empty component (\"//\")");
    std::size_t backslashes = 0;
    for (std::size_t i = component.size(); i > 0 && component[i - 1] == '\\'; --i) ++backslashes;
    if (backslashes % 2 == 1) return bad_glob(pattern, "has a \"\\\" escaping nothing");
    glob.components_.emplace_back(component);
    start = end + 1;
  }
  return glob;
}

namespace {

std::vector<std::string_view> path_components(std::string_view path) {
  std::vector<std::string_view> names;
  for (std::size_t start = 0; start <= path.size();) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    names.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return names;
}

bool whole_match(const std::vector<std::string>& pattern, const std::vector<std::string_view>& names) {
  std::vector<char> failed((pattern.size() + 1) * (names.size() + 1), 0);
  return components_match(pattern, names, 0, 0, failed);
}

}  // namespace

bool PathGlob::covers(std::string_view path) const {
  std::vector<std::string_view> names = path_components(path);
  // The file itself (unless only folders match), then each parent folder.
  for (std::size_t count = names.size(); count > 0; --count) {
    if (count == names.size() && folders_only_) continue;
    if (whole_match(components_, {names.begin(), names.begin() + static_cast<std::ptrdiff_t>(count)})) return true;
  }
  return false;
}

bool PathGlob::matches(std::string_view path, bool folder) const {
  if (folders_only_ && !folder) return false;
  return whole_match(components_, path_components(path));
}

}  // namespace dot
