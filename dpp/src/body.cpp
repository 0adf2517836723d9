// The JSON checks on a DPP frame body, in offset order (body.h).
#include "dot/dpp/body.h"

#include <fmt/format.h>

#include "dot/base/json_string_scan.h"
#include "dot/dpp/error_kinds.h"
#include "dot/dpp/frame.h"

namespace dot::dpp {

json::ReadLimits body_limits(std::size_t max_bytes) noexcept {
  json::ReadLimits l;
  l.max_bytes = max_bytes;
  l.max_depth = kMaxDepth;
  return l;
}

Error body_error(const Error& e, std::string_view body, std::uint64_t body_offset) {
  if (e.code != Code::Validation) return e;
  std::uint64_t off = body_offset + e.offset.value_or(0);
  Kind kind = e.kind;
  std::string detail = e.detail;
  if (e.is(base::ErrorKind::Bom)) {
    // "First the whole body must be valid UTF-8": a BOM does not hide a later
    // invalid byte.
    auto rest = json::validate(body.substr(3), body_limits(body.size()));
    if (!rest.ok() && rest.error().is(base::ErrorKind::Utf8))
      return make_parse_error_as(Code::Protocol, base::ErrorKind::Utf8, off + 3 + rest.error().offset.value_or(0),
                                 rest.error().detail);
    kind = base::ErrorKind::Malformed;
    detail = "a byte-order mark is not JSON text";
  } else if (e.is(base::ErrorKind::InvalidUnicode)) {
    kind = base::ErrorKind::Malformed;
    detail = fmt::format("invalid unicode escape: {}", e.detail);
  } else if (e.is(base::ErrorKind::InvalidNumber)) {
    kind = base::ErrorKind::Malformed;
    detail = fmt::format("invalid number: {}", e.detail);
  } else if (e.is(base::ErrorKind::TooLarge)) {
    kind = ErrorKind::Length;  // unreachable through FrameReader: bodies are at most kMaxBody
  }
  // The JSON reader's kinds, reported under the wire's code.
  return make_parse_error_as(Code::Protocol, kind, off, std::move(detail));
}

Status check_body(std::string_view body, std::uint64_t body_offset, std::size_t max_bytes) {
  auto st = json::validate(body, body_limits(max_bytes));
  if (!st.ok()) return body_error(st.error(), body, body_offset);
  return {};
}

Result<json::Document> parse_body(std::string_view body, std::uint64_t body_offset, std::size_t max_bytes) {
  auto doc = json::parse(body, body_limits(max_bytes));
  if (!doc.ok()) return body_error(doc.error(), body, body_offset);
  return doc;
}

std::string compact_json(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  json::StringScan strings;
  for (char c : body)
    if (strings.step(c) || (c != ' ' && c != '\t' && c != '\n' && c != '\r')) out += c;
  return out;
}

}  // namespace dot::dpp
