// gitignore-syntax rule files (ignore_rules.h).
#include "dot/base/ignore_rules.h"

#include <fmt/format.h>

#include "dot/base/error_kinds.h"

namespace dot {
namespace {

Error bad_file(std::string why) { return make_error(base::ErrorKind::IgnoreFile, std::move(why)); }

// Trailing spaces go unless the last one is escaped ("a\ " keeps "a ").
std::string_view trim_trailing_spaces(std::string_view line) {
  while (!line.empty() && line.back() == ' ') {
    std::size_t backslashes = 0;
    for (std::size_t i = line.size() - 1; i > 0 && line[i - 1] == '\\'; --i) ++backslashes;
    if (backslashes % 2 == 1) break;
    line.remove_suffix(1);
  }
  return line;
}

}  // namespace

Result<IgnoreRules> IgnoreRules::parse(std::string_view text) {
  if (text.size() > kMaxIgnoreFileBytes)
    return bad_file(fmt::format("the ignore file has {} bytes, more than {}", text.size(), kMaxIgnoreFileBytes));
  IgnoreRules rules;
  std::size_t number = 0;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    line = trim_trailing_spaces(line);
    if (line.empty() || line.front() == '#') continue;
    Rule rule{.glob = PathGlob{}, .negated = line.front() == '!'};
    if (rule.negated) line.remove_prefix(1);
    // "\!x" and "\#x": PathGlob takes the escaped character literally.
    auto glob = PathGlob::parse(line);
    if (!glob.ok()) return bad_file(fmt::format("line {}: {}", number, glob.error().detail));
    if (rules.rules_.size() == kMaxIgnoreRules)
      return bad_file(fmt::format("line {}: more than {} rules", number, kMaxIgnoreRules));
    rule.glob = std::move(glob).value();
    rules.rules_.push_back(std::move(rule));
  }
  return rules;
}

bool IgnoreRules::ignored(std::string_view path, bool folder) const {
  for (auto rule = rules_.rbegin(); rule != rules_.rend(); ++rule)
    if (rule->glob.matches(path, folder)) return !rule->negated;
  return false;
}

}  // namespace dot
