#pragma once
// The error kinds of the dot-core command line itself (usage of metewand and adpp commands, store check, conformance
// verdicts). Each row: the kind printed and stored (never renamed), its code, what it means, the rule it enforces.
// docs/errors.md is generated from this table.

#include <array>
#include <cstddef>
#include <cstdint>

#include "dot/base/error.h"
#include "dot/base/error_kinds.h"

namespace dot::cli {

enum class ErrorKind : std::uint8_t {
  Args,
  NotReady,
  ProviderStatus,
  Usage,
  Role,
  Capability,
  MissingOption,
  CheckFailed,
  NoVectors,
  Conformance,
  DatasetParameters,
  ProblemParameters,
  ImplementationParameters,
  OutsideRoot,
};

inline constexpr auto kErrorKinds = std::to_array<KindRow>({
    {"args", Code::Validation, "adpp client arguments that are not what the command takes",
     "docs/user-guide.md"},                                                          // Args
    {"not_ready", Code::Protocol, "WaitReady answered …: …", "docs/user-guide.md"},  // NotReady
    {"provider_status", Code::Protocol, "answered …: …", "docs/user-guide.md"},      // ProviderStatus
    {"usage", Code::Validation, "no provider given: dot-core adpp conform -- PROVIDER [ARGS...]",
     "docs/user-guide.md"},                                                                         // Usage
    {"role", Code::Validation, "unknown role …", "docs/user-guide.md"},                             // Role
    {"capability", Code::Validation, "unknown capability …", "docs/user-guide.md"},                 // Capability
    {"missing_option", Code::Validation, "a … session needs …", "docs/user-guide.md"},              // MissingOption
    {"check_failed", Code::Store, "… problem(s) found by the store check", "docs/store.md"},        // CheckFailed
    {"no_vectors", Code::Io, "no vectors found in the given paths", "docs/user-guide.md"},          // NoVectors
    {"conformance", Code::Protocol, "of … cases failed; first: …: …", "docs/dpp.md, conformance"},  // Conformance
    {"dataset-parameters", Code::Validation, "--dataset-parameters is not one JSON object",
     "docs/user-guide.md"},  // DatasetParameters
    {"problem-parameters", Code::Validation, "--problem-parameters is not one JSON object",
     "docs/user-guide.md"},  // ProblemParameters
    {"implementation-parameters", Code::Validation, "--implementation-parameters is not one JSON object",
     "docs/user-guide.md"},  // ImplementationParameters
    {"outside_root", Code::Validation, "forget: a path that is not below the managed root",
     "docs/user-guide.md, forget"},  // OutsideRoot
});

DOT_KIND_TABLE(ErrorKind, kErrorKinds, OutsideRoot);

}  // namespace dot::cli
