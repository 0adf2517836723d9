#pragma once
// The rules of one ignore file in gitignore syntax (dot-mirror's
// `.dotignore`): one pattern per line (path_glob.h), in order; a line that
// starts with `!` re-includes what an earlier line ignored; the last rule
// that matches an entry decides. As in git, an entry below an ignored
// folder cannot be re-included: a walk does not enter an ignored folder.
//
// Lines: blank lines and lines starting with `#` are skipped; one trailing
// CR is dropped (a file written on Windows); trailing spaces are dropped
// unless escaped (`\ `); `\#` and `\!` at the start are a literal `#`, `!`.

#include <cstddef>
#include <string_view>
#include <vector>

#include "dot/base/path_glob.h"
#include "dot/base/result.h"

namespace dot {

inline constexpr std::size_t kMaxIgnoreFileBytes = 1 << 20;
inline constexpr std::size_t kMaxIgnoreRules = 10000;

class IgnoreRules {
 public:
  // Code::Validation kind ignore_file, the detail naming the line and why
  // (the pattern's own refusal, path_glob.h), or the file's size or rule
  // count over kMaxIgnoreFileBytes, kMaxIgnoreRules.
  static Result<IgnoreRules> parse(std::string_view text);

  // Whether the entry at `path` (relative, "a/b") is ignored: the last rule
  // matching the entry itself decides (PathGlob::matches).
  bool ignored(std::string_view path, bool folder) const;
  std::size_t size() const noexcept { return rules_.size(); }

 private:
  struct Rule {
    PathGlob glob;
    bool negated = false;
  };
  std::vector<Rule> rules_;
};

}  // namespace dot
