// Rendering of dot::Error (line and JSON forms of docs/spec/cli.md) and its constructors.
#include "dot/base/error.h"

#include <array>

#include <fmt/format.h>

#include "dot/base/jcs.h"
#include "dot/base/utf8.h"

namespace dot {
namespace {
constexpr std::array<std::string_view, 17> kNames = {
    "DOT_E_PROTOCOL",
    "DOT_E_PLUGIN_IDENTITY",
    "DOT_E_POLICY",
    "DOT_E_PATH_ESCAPE",
    "DOT_E_CONFLICT",
    "DOT_E_ARTIFACT_MISMATCH",
    "DOT_E_VALIDATION",
    "DOT_E_COMMIT",
    "DOT_E_RECOVERY_REQUIRED",
    "DOT_E_POST_COMMIT",
    "DOT_E_SANDBOX_UNAVAILABLE",
    "DOT_E_TIMEOUT",
    "DOT_E_STORE",
    "DOT_E_NOT_FOUND",
    "DOT_E_IO",
    "DOT_E_INTERNAL",
    "DOT_E_PLUGIN_ERROR",
};
}  // namespace

std::string_view code_name(Code code) noexcept {
  auto i = static_cast<std::size_t>(code);
  return i < kNames.size() ? kNames[i] : std::string_view("DOT_E_INTERNAL");
}

std::optional<Code> code_from_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<Code>(i);
  return std::nullopt;
}

std::string Error::message() const {
  if (offset && !kind.empty()) return fmt::format("{} at byte {}: {}", kind, *offset, detail);
  if (offset) return fmt::format("at byte {}: {}", *offset, detail);
  if (!kind.empty() && detail.empty()) return std::string(kind.name());
  return detail;
}

std::string Error::line() const { return fmt::format("{}: {}", code_name(code), message()); }

std::string Error::json() const {
  // A detail can quote bytes nobody vouches for (a path, a plugin's words):
  // the object stays JSON whatever they are.
  std::string out = "{\"error\":{\"code\":";
  jcs::append_string(out, code_name(code));
  if (!kind.empty()) {
    out += ",\"kind\":";
    append_json_string(out, kind);
  }
  if (offset) out += fmt::format(",\"offset\":{}", *offset);
  out += ",\"detail\":";
  append_json_string(out, detail);
  out += "}}";
  return out;
}

Error make_error(Kind kind, std::string detail) {
  const Code code = kind.row() != nullptr ? kind.row()->code : Code::Internal;
  return Error{code, kind, std::move(detail), std::nullopt};
}

Error make_parse_error(Kind kind, std::uint64_t offset, std::string detail) {
  const Code code = kind.row() != nullptr ? kind.row()->code : Code::Internal;
  return Error{code, kind, std::move(detail), offset};
}

Error make_error_as(Code code, Kind kind, std::string detail) {
  return Error{code, kind, std::move(detail), std::nullopt};
}

Error make_parse_error_as(Code code, Kind kind, std::uint64_t offset, std::string detail) {
  return Error{code, kind, std::move(detail), offset};
}

Error make_error(Code code, std::string detail) { return Error{code, Kind(), std::move(detail), std::nullopt}; }

}  // namespace dot
