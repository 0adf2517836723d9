#pragma once
// Metewand's names for why a text is outside its canonical-JSON value domain
// (the public vectors' `kind`s): duplicate_key, unsafe_integer,
// invalid_number, invalid_unicode, invalid_json. The strict reader and the
// `metewand` JCS profile refuse exactly what Metewand refuses; only some of
// their kinds are finer or named otherwise: `NaN`, `Infinity`, `-Infinity`
// and a leading zero are grammar errors to the reader (malformed, trailing)
// but invalid_number to Metewand; `utf8` is invalid_unicode; every other
// grammar error (malformed, trailing, bom, depth) is invalid_json.

#include <string>
#include <string_view>

#include "dot/base/error.h"
#include "dot/metewand/error_kinds.h"

namespace dot::metewand {

// The Metewand kind of a rejection of `input` by the strict reader or the
// metewand profile; kinds that are not value rejections (too_large, i/o)
// are returned unchanged.
Kind canonical_json_kind(const Error& error, std::string_view input);

}  // namespace dot::metewand
