#include "dot/dpp/body.h"

#include <fmt/format.h>

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
  std::string kind = e.kind;
  std::string detail = e.detail;
  if (kind == "bom") {
    // "First the whole body must be valid UTF-8": a BOM does not hide a later
    // invalid byte.
    auto rest = json::validate(body.substr(3), body_limits(body.size()));
    if (!rest.ok() && rest.error().kind == "utf8")
      return make_parse_error(Code::Protocol, "utf8", off + 3 + rest.error().offset.value_or(0), rest.error().detail);
    kind = "malformed";
    detail = "a byte-order mark is not JSON text";
  } else if (kind == "invalid_unicode") {
    kind = "malformed";
    detail = fmt::format("invalid unicode escape: {}", e.detail);
  } else if (kind == "invalid_number") {
    kind = "malformed";
    detail = fmt::format("invalid number: {}", e.detail);
  } else if (kind == "too_large") {
    kind = "length";  // unreachable through FrameReader: bodies are at most kMaxBody
  }
  return make_parse_error(Code::Protocol, std::move(kind), off, std::move(detail));
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
  bool in_string = false, escaped = false;
  for (char c : body) {
    if (in_string) {
      out += c;
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
      out += c;
    } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      out += c;
    }
  }
  return out;
}

}  // namespace dot::dpp
