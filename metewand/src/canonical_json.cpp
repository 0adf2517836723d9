// Metewand's canonical-JSON value domain and its refusal kinds (canonical_json.h).
#include "dot/metewand/canonical_json.h"
#include "dot/base/error_kinds.h"
#include "dot/metewand/error_kinds.h"

namespace dot::metewand {
namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }

// Whether the grammar error at `at` is a number Metewand calls invalid: a
// NaN or Infinity literal, or a digit after a number's leading zero.
bool invalid_number_at(std::string_view in, std::size_t at) {
  if (at > in.size()) return false;
  std::string_view rest = in.substr(at);
  if (rest.starts_with("NaN") || rest.starts_with("Infinity")) return true;
  if (rest.starts_with("-Infinity")) return true;
  if (at >= 1 && in[at - 1] == '-' && rest.starts_with("Infinity")) return true;
  // "01", "-01", "[00]": the reader stops at the second digit.
  if (at >= 1 && at < in.size() && digit(in[at]) && in[at - 1] == '0') {
    if (at == 1) return true;
    char before = in[at - 2];
    return !(digit(before) || before == '.' || before == 'e' || before == 'E' || before == '+');
  }
  return false;
}

}  // namespace

Kind canonical_json_kind(const Error& error, std::string_view input) {
  using base::ErrorKind;
  if (error.is(ErrorKind::Utf8)) return ErrorKind::InvalidUnicode;
  if (error.is(ErrorKind::Malformed) || error.is(ErrorKind::Trailing)) {
    if (error.offset && invalid_number_at(input, static_cast<std::size_t>(*error.offset)))
      return ErrorKind::InvalidNumber;
    return metewand::ErrorKind::InvalidJson;
  }
  if (error.is(ErrorKind::Bom) || error.is(ErrorKind::Depth)) return metewand::ErrorKind::InvalidJson;
  // duplicate_key, unsafe_integer, invalid_number, invalid_unicode, too_large: the reader's own.
  return error.kind;
}

}  // namespace dot::metewand
