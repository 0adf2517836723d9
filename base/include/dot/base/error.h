#pragma once
// The one error type of the whole project: a stable DOT_E_* code, a short
// machine-readable kind, a human detail naming what was wrong, and (for parse
// errors) the byte offset where the problem was proven.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <type_traits>

#include <fmt/core.h>
#include <optional>
#include <string>
#include <string_view>

namespace dot {

// Stable codes; the table lives in docs/errors.md (from docs/spec/cli.md). Never
// renumber or rename: the names are printed, stored in the database and tested.
enum class Code : std::uint8_t {
  Protocol,            // DOT_E_PROTOCOL
  PluginIdentity,      // DOT_E_PLUGIN_IDENTITY
  Policy,              // DOT_E_POLICY
  PathEscape,          // DOT_E_PATH_ESCAPE
  Conflict,            // DOT_E_CONFLICT
  ArtifactMismatch,    // DOT_E_ARTIFACT_MISMATCH
  Validation,          // DOT_E_VALIDATION
  Commit,              // DOT_E_COMMIT
  RecoveryRequired,    // DOT_E_RECOVERY_REQUIRED
  PostCommit,          // DOT_E_POST_COMMIT
  SandboxUnavailable,  // DOT_E_SANDBOX_UNAVAILABLE
  Timeout,             // DOT_E_TIMEOUT
  Store,               // DOT_E_STORE
  NotFound,            // DOT_E_NOT_FOUND
  Io,                  // DOT_E_IO: an input or output file the user named could not be used
  Internal,            // DOT_E_INTERNAL: a broken invariant of our own (a bug)
  PluginError,         // DOT_E_PLUGIN_ERROR: a general-profile plugin answered with a JSON-RPC error
};

// "DOT_E_PROTOCOL" etc.
std::string_view code_name(Code code) noexcept;
// Inverse of code_name; nullopt for an unknown name.
std::optional<Code> code_from_name(std::string_view name) noexcept;

// One row of a layer's table of error kinds (each layer lists its own in
// <layer>/error_kinds.h; docs/errors.md is generated from those tables by
// tools/errors-doc, so the page cannot drift from the code).
struct KindRow {
  // The snake_case name printed in the error line and its JSON, stored in
  // the database and asserted by tests: never renamed.
  std::string_view name;
  // The code an error of this kind carries (a higher layer may report it
  // under its own contract's code: Error::reported_as).
  Code code = Code::Internal;
  // One line: what happened.
  std::string_view meaning;
  // The rule it enforces, citing the contract page where there is one.
  std::string_view rule;
};

// A layer's kind enum E is one whose rows are found by ADL:
//   const KindRow& kind_row(E kind) noexcept;
template <class E>
concept KindEnum = std::is_enum_v<E> && requires(E e) {
  { kind_row(e) } -> std::same_as<const KindRow&>;
};

// Closes a layer's table `table` (its kErrorKinds: one row per value of its
// kind enum E, in the enum's order, `last` being E's last value): declares
// the kind_row(E) above, in the layer's namespace where ADL finds it, and
// checks at compile time that no row is missing or extra. Used as
// `DOT_KIND_TABLE(ErrorKind, kErrorKinds, LastKind);` after the table.
#define DOT_KIND_TABLE(E, table, last)                                                                        \
  constexpr const ::dot::KindRow& kind_row(E kind) noexcept { return table[static_cast<std::size_t>(kind)]; } \
  static_assert(table.size() == static_cast<std::size_t>(E::last) + 1, "one row per kind")

// Which row of which table an error is; empty when the code says it all.
// Compared by row (e.kind == dpp::ErrorKind::Timeout), printed by name.
class Kind {
 public:
  constexpr Kind() noexcept = default;
  template <KindEnum E>
  Kind(E kind) noexcept : row_(&kind_row(kind)) {}  // NOLINT(google-explicit-constructor): a kind is its row

  std::string_view name() const noexcept { return row_ != nullptr ? row_->name : std::string_view(); }
  bool empty() const noexcept { return name().empty(); }
  // The table row, for tools that list the tables; nullptr when empty.
  const KindRow* row() const noexcept { return row_; }
  operator std::string_view() const noexcept { return name(); }  // NOLINT: printing, JSON, details

  friend bool operator==(Kind a, Kind b) noexcept { return a.row_ == b.row_; }
  template <KindEnum E>
  friend bool operator==(Kind a, E b) noexcept {
    return a.row_ == &kind_row(b);
  }
  // By name: for tests, and for a kind that is data (read back from a
  // database or a peer). Product code branches on rows, never on names.
  friend bool operator==(Kind a, std::string_view name) noexcept { return a.name() == name; }
  friend std::ostream& operator<<(std::ostream& out, Kind k) { return out << k.name(); }

 private:
  const KindRow* row_ = nullptr;
};

struct Error {
  Code code = Code::Internal;
  // Short snake_case classification ("duplicate_key", "length", "timeout"...),
  // a row of one layer's table; may be empty when the code says it all.
  Kind kind;
  // Names what was wrong, for a human: which field, which file, which limit.
  std::string detail;
  // Byte offset where the problem was proven (parse errors only).
  std::optional<std::uint64_t> offset;

  template <KindEnum E>
  bool is(E k) const noexcept {
    return kind == k;
  }
  // The same error under another code: a protocol layer that reports a lower
  // layer's failure under its own contract (DPP reports the JSON reader's
  // kinds as DOT_E_PROTOCOL) keeps kind, detail and offset.
  Error reported_as(Code other) && {
    code = other;
    return std::move(*this);
  }
  Error reported_as(Code other) const& {
    Error e = *this;
    e.code = other;
    return e;
  }

  // The one-line rendering of docs/spec/cli.md without the code prefix:
  // "duplicate_key at byte 17: key \"a\" appears twice", or the detail alone.
  std::string message() const;
  // "DOT_E_VALIDATION: duplicate_key at byte 17: key \"a\" appears twice".
  std::string line() const;
  // {"error":{"code":...,"kind":...,"offset":...,"detail":...}} (kind and offset only when set).
  std::string json() const;
};

// Constructors: the code comes from the kind's row, so a kind cannot be
// paired with another code by mistake.
Error make_error(Kind kind, std::string detail);
Error make_parse_error(Kind kind, std::uint64_t offset, std::string detail);
// A lower layer's kind reported under this layer's code: a protocol reports
// the JSON reader's kinds (base/error_kinds.h) as DOT_E_PROTOCOL.
Error make_error_as(Code code, Kind kind, std::string detail);
Error make_parse_error_as(Code code, Kind kind, std::uint64_t offset, std::string detail);
// An error without a kind, when the code says it all.
Error make_error(Code code, std::string detail);

}  // namespace dot

// fmt::format("{}", e.kind) prints the kind's name.
template <>
struct fmt::formatter<dot::Kind> : fmt::formatter<std::string_view> {
  template <class Context>
  auto format(dot::Kind k, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(k.name(), ctx);
  }
};
