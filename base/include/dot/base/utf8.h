#pragma once
// UTF-8 as every part of the project judges it, and the two ways arbitrary
// bytes leave the program: as a JSON string (append_json_string) and as text
// shown to a person (append_shown).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace dot {

// Length of the longest valid UTF-8 prefix (RFC 3629: Unicode scalar values
// only, so no overlong forms, surrogates or code points above U+10FFFF).
// Equals bytes.size() exactly when the whole input is valid.
std::size_t utf8_valid_prefix(std::string_view bytes) noexcept;

// Writes the UTF-8 form of the Unicode scalar value `cp` (1 to 4 bytes) at
// `out` and returns its length.
std::size_t encode_utf8(std::uint32_t cp, char out[4]) noexcept;

// Appends the UTF-8 form of the Unicode scalar value `cp`.
void append_utf8(std::string& out, std::uint32_t cp);

// `bytes` with each byte that is not part of valid UTF-8 replaced by U+FFFD.
// Valid input comes back unchanged.
std::string utf8_repaired(std::string_view bytes);

// Appends a JSON string literal of any bytes: how bytes nobody vouches for (a
// plugin's stderr, a path, a forged store row) enter JSON, which must be
// valid UTF-8. Valid UTF-8 is written exactly as jcs::append_string writes
// it; each byte that is not part of valid UTF-8 becomes U+FFFD.
void append_json_string(std::string& out, std::string_view bytes);

// Whether '\n' is shown as a line break (text whose lines are the unit, such
// as a diff or a stderr transcript) or escaped (one field on one line).
enum class LineBreaks { Escape, Keep };

// Appends `bytes` as text that is safe to put in front of a person on a
// terminal: nothing in it can move the cursor, rewrite a line, change colours,
// reach the clipboard (OSC 52) or reorder what is shown. Valid UTF-8 is kept,
// except for these, which are written as \xNN, one per byte:
//   - every C0 control (U+0000-U+001F) but tab, and '\n' unless `lines` is
//     Keep; this includes ESC, CR and BS;
//   - DEL (U+007F) and every C1 control (U+0080-U+009F, e.g. the one-byte CSI
//     U+009B shown as \xc2\x9b);
//   - the bidirectional marks, embeddings, overrides and isolates (U+061C,
//     U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) and the Unicode line and
//     paragraph separators (U+2028, U+2029);
//   - every byte that is not part of valid UTF-8.
// A backslash is kept as it is, so a literal "\x1b" in the input reads the
// same as an escaped ESC: the output is for reading, not for decoding.
// Applying it to its own output changes nothing.
void append_shown(std::string& out, std::string_view bytes, LineBreaks lines = LineBreaks::Escape);
std::string shown(std::string_view bytes, LineBreaks lines = LineBreaks::Escape);

}  // namespace dot
