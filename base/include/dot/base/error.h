#pragma once
// The one error type of the whole project: a stable DOT_E_* code, a short
// machine-readable kind, a human detail naming what was wrong, and (for parse
// errors) the byte offset where the problem was proven.

#include <cstdint>
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

struct Error {
  Code code = Code::Internal;
  // Short snake_case classification ("duplicate_key", "length", "timeout"...);
  // may be empty when the code says it all.
  std::string kind;
  // Names what was wrong, for a human: which field, which file, which limit.
  std::string detail;
  // Byte offset where the problem was proven (parse errors only).
  std::optional<std::uint64_t> offset;

  // The one-line rendering of docs/spec/cli.md without the code prefix:
  // "duplicate_key at byte 17: key \"a\" appears twice", or the detail alone.
  std::string message() const;
  // "DOT_E_VALIDATION: duplicate_key at byte 17: key \"a\" appears twice".
  std::string line() const;
  // {"error":{"code":...,"kind":...,"offset":...,"detail":...}} (kind and offset only when set).
  std::string json() const;
};

// Convenience constructors; `kind` may be empty.
Error make_error(Code code, std::string kind, std::string detail);
Error make_parse_error(Code code, std::string kind, std::uint64_t offset, std::string detail);

}  // namespace dot
