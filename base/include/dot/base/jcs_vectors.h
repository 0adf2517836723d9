#pragma once
// Replaying canonical-JSON test vectors in the three layouts of docs/spec/jcs.md:
//   1. a directory with input/ and output/ (outhex/ ignored), profile rfc8785;
//   2. JSON fixture files {"version":1,"profile":...,"accepted":[...],"rejected":[...]};
//   3. number files of "<hex bits>,<ECMAScript string>" lines (*.numbers, or
//      *.txt under a numbers/ folder).
// Extensions of layout 2 (docs/jcs.md): an optional top-level "description",
// an optional "note" per vector, and "input_hex" in place of "input" for
// inputs that no JSON string can hold (invalid UTF-8).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dot/base/jcs.h"
#include "dot/base/result.h"

namespace dot::jcs {

struct VectorFailure {
  std::string name;                     // "file#vector", "dir/input/x.json", "file:line"
  std::optional<std::uint64_t> offset;  // first differing byte of the canonical output, when it differs
  std::string detail;
};

struct ReplayReport {
  std::size_t passed = 0;
  std::vector<VectorFailure> failures;
  std::vector<std::string> skipped;  // files under a directory that are not vectors
};

struct ReplayOptions {
  // Rejected vectors must fail with the kind they name (informational by default).
  bool strict_kinds = false;
  // The profile of a fixture document that names none (the public Metewand
  // vectors name none); nullopt: rfc8785.
  std::optional<Profile> profile;
  // Names a rejection for the kind comparison, given the refused input and
  // the profile it was checked under (a profile's own kind names: the
  // metewand module's canonical_json_kind); a vector's kind may name either
  // that or the error's own kind. Unset: the error's kind alone.
  std::function<std::string(const Error&, std::string_view input, Profile)> kind_of;
};

// Runs every vector under `path` (a vector file or a directory, searched
// recursively in name order) and adds the results to `report`. Fails only
// when `path` cannot be read at all.
Status replay_vectors(const std::string& path, const ReplayOptions& options, ReplayReport& report);

// True when an error of kind `actual` satisfies a vector expecting `expected`
// (docs/spec/jcs.md names some kinds more coarsely: invalid_json, invalid_unicode).
bool rejection_kind_matches(std::string_view expected, std::string_view actual) noexcept;

}  // namespace dot::jcs
