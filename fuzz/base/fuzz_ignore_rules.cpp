// Ignore files in gitignore syntax (dot/base/ignore_rules.h, IgnoreRules)
// over arbitrary bytes: what dot-mirror reads from a source's `.dotignore`,
// a file anyone with write access to the source controls. Deterministic
// oracles:
//   - a refusal is Code::Validation kind ignore_file;
//   - a comment line or a blank line added at the end changes nothing;
//   - a last line "*" ignores every entry, a last line "!*" none (the last
//     rule that matches decides).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "dot/base/error_kinds.h"
#include "dot/base/ignore_rules.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

constexpr std::string_view kPaths[] = {"a", "a/b", ".git", "x/y/z.txt", "#x", "!y", "a b"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto rules = dot::IgnoreRules::parse(text);
  if (!rules.ok()) {
    check(rules.error().is(dot::base::ErrorKind::IgnoreFile));
    return 0;
  }
  if (text.size() + 16 > dot::kMaxIgnoreFileBytes || rules->size() + 1 > dot::kMaxIgnoreRules) return 0;
  auto with = [&](std::string_view last) { return dot::IgnoreRules::parse(text + "\n" + std::string(last) + "\n"); };
  auto commented = with("# a comment");
  auto blank = with("   ");
  auto all = with("*");
  auto none = with("!*");
  check(commented.ok() && blank.ok() && all.ok() && none.ok());
  for (std::string_view path : kPaths)
    for (bool folder : {false, true}) {
      const bool was = rules->ignored(path, folder);
      check(commented->ignored(path, folder) == was && blank->ignored(path, folder) == was);
      check(all->ignored(path, folder) && !none->ignored(path, folder));
    }
  return 0;
}
