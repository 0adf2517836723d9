#pragma once
// The bytes the hostile-output plugin (hostile_output_plugin.cpp) puts in
// front of a reader, and the test's judge of what reached one raw.

#include <string>
#include <string_view>

#include "dot/base/utf8.h"

namespace dot::testing {

// Erase the line and move up (CSI), overwrite with CR and BS, DEL, write the
// clipboard (OSC 52, BEL-terminated), and the one-byte C1 CSI U+009B: each
// would hide or rewrite what a reviewer sees, or act behind their back.
inline constexpr std::string_view kHostileText =
    "\x1b[2K\x1b[1Aerased\rCR\bBS\x7f \x1b]52;c;ZXZpbA==\x07 osc \xc2\x9b" "31mC1";

inline std::string hostile_text_artifact() { return "Hello, world!\n" + std::string(kHostileText) + "\nend\n"; }
inline std::string hostile_binary_artifact() { return "Hello, world!\n" + std::string(kHostileText) + "\xff\xfe\nend\n"; }
inline std::string hostile_stderr() { return "plugin says " + std::string(kHostileText) + " \xff\n"; }

// The first byte of `s` a terminal would act on rather than show, described
// ("" when there is none): a C0 control other than tab (and newline), DEL, a
// C1 control, or a byte that is not UTF-8.
inline std::string raw_control(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    std::string at = " at byte " + std::to_string(i) + " of: " + dot::shown(s.substr(i > 40 ? i - 40 : 0, 80));
    if (c < 0x80) {
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return "control " + std::to_string(c) + at;
      ++i;
      continue;
    }
    std::size_t n = dot::utf8_valid_prefix(s.substr(i, c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2));
    if (n == 0) return "invalid UTF-8" + at;
    if (c == 0xC2 && static_cast<unsigned char>(s[i + 1]) <= 0x9F) return "C1 control" + at;
    i += c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
  }
  return "";
}

}  // namespace dot::testing
