#pragma once
// gitignore-style patterns over relative paths ("a/b/c", no leading or
// trailing slash), for `plan --exclude`: `*` is any run of characters but
// `/`, `?` one character but `/`, a whole component `**` any number of
// components (none included), `\` takes the next character literally; a
// trailing `/` matches folders only; a leading `/`, or a `/` inside the
// pattern, anchors it at the root, otherwise it matches at any depth. A
// pattern that matches a folder covers everything below it.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/result.h"

namespace dot {

inline constexpr std::size_t kMaxGlobBytes = 4095;

class PathGlob {
 public:
  // Code::Validation kind glob for an empty pattern (or only "/"), more than
  // kMaxGlobBytes, not UTF-8, a control byte, a leading `!` (negation is not
  // supported: the list only leaves paths out), an empty component ("a//b"),
  // or a trailing `\`.
  static Result<PathGlob> parse(std::string_view pattern);

  // True when `path` (a file's relative path) or one of its parent folders
  // matches.
  bool covers(std::string_view path) const;
  // True when the entry `path` itself matches (not a parent of it): what a
  // walk that does not enter a matched folder asks. A folders-only pattern
  // matches only when `folder`.
  bool matches(std::string_view path, bool folder) const;
  // The pattern as given.
  const std::string& text() const noexcept { return text_; }

 private:
  std::string text_;
  std::vector<std::string> components_;  // "**" kept as a component of its own
  bool folders_only_ = false;
};

}  // namespace dot
