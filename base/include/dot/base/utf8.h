#pragma once
// UTF-8 validity as every decoder of the project judges it.

#include <cstddef>
#include <string_view>

namespace dot {

// Length of the longest valid UTF-8 prefix (RFC 3629: Unicode scalar values
// only, so no overlong forms, surrogates or code points above U+10FFFF).
// Equals bytes.size() exactly when the whole input is valid.
std::size_t utf8_valid_prefix(std::string_view bytes) noexcept;

}  // namespace dot
