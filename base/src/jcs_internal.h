#pragma once
// The leaf writers of canonical JSON, writing through a pointer into room the
// caller has made (the canonical writer in jcs.cpp asks for a value's worst
// case once, then writes without bounds checks). Not installed.
#include <cstddef>
#include <string_view>

namespace dot::jcs::detail {

// Room put_number needs: the longest ECMAScript string of a binary64
// ("-1.2345678901234567e-308" and "-0.0000012345678901234567" are 24 bytes),
// and room for its fixed-size copies past the end of what it keeps.
inline constexpr std::size_t kMaxNumberBytes = 64;

// ECMAScript Number.prototype.toString of a finite `value` (-0 -> "0"),
// written at `p`, which has kMaxNumberBytes of room.
char* put_number(char* p, double value);

// Room put_string needs for `size` bytes of string: every byte may become a
// six-byte \u00XX escape, plus the quotes, plus one 16-byte store past the end.
inline constexpr std::size_t string_room(std::size_t size) { return 6 * size + 2 + 16; }

// A JSON string literal with RFC 8785 escaping; `utf8` must be valid UTF-8.
char* put_string(char* p, std::string_view utf8);

}  // namespace dot::jcs::detail
