#pragma once
// The error kinds of ADPP (docs/spec/adpp.md): frames, the provider process and its answers, the conformance runner.
// Each row: the kind printed and stored (never renamed), its code, what it
// means, the rule it enforces. docs/errors.md is generated from this table.

#include <array>
#include <cstddef>
#include <cstdint>

#include "dot/base/error.h"
#include "dot/base/error_kinds.h"

namespace dot::adpp {

enum class ErrorKind : std::uint8_t {
  Spawn,
  Closed,
  Metadata,
  RequestId,
  Status,
  Payload,
  Version,
  Case,
  Length,
  Parse,
  EarlyEof,
  SimConfig,
};

inline constexpr auto kErrorKinds = std::to_array<KindRow>({
    {"spawn", Code::Internal, "no provider command given", "ADPP (docs/spec/adpp.md)"},                // Spawn
    {"closed", Code::Protocol, "the provider's stdin is already closed", "ADPP (docs/spec/adpp.md)"},  // Closed
    {"metadata", Code::Protocol, "Hello metadata lacks \"…\"", "ADPP (docs/spec/adpp.md)"},            // Metadata
    {"request_id", Code::Protocol, "response carries request_id … for request …",
     "ADPP (docs/spec/adpp.md)"},                                                                   // RequestId
    {"status", Code::Protocol, "response to request … has no status", "ADPP (docs/spec/adpp.md)"},  // Status
    {"payload", Code::Protocol, "OK response to … carries payload …", "ADPP (docs/spec/adpp.md)"},  // Payload
    {"version", Code::Protocol, "provider answered Hello with protocol_version \"…\", expected \"…\"",
     "ADPP (docs/spec/adpp.md)"},                                                                  // Version
    {"case", Code::NotFound, "no conformance case \"…\"", "ADPP (docs/spec/adpp.md)"},             // Case
    {"length", Code::Protocol, "zero-length frame", "ADPP (docs/spec/adpp.md)"},                   // Length
    {"parse", Code::Protocol, "the …-byte payload is not a valid …", "ADPP (docs/spec/adpp.md)"},  // Parse
    {"early_eof", Code::Protocol, "the stream ended after … of 4 prefix bytes",
     "ADPP (docs/spec/adpp.md)"},  // EarlyEof
    {"config", Code::Validation, "adpp-sim, the test provider: its configuration is not what it reads",
     "ADPP (docs/spec/adpp.md)"},  // SimConfig
});

DOT_KIND_TABLE(ErrorKind, kErrorKinds, SimConfig);

}  // namespace dot::adpp
