#pragma once
// The Metewand layers (framing, correlation, handshake, session) each return
// dot::Expected<T, TheirErrorEnum> (base/expected.h), so callers branch on the
// variant and its payload instead of parsing text; every error type also
// converts to a dot::Error for reporting.

#include "dot/base/expected.h"

namespace dot::metewand {

// Spelled dot::metewand::Expected by users of this module's API.
using dot::Expected;
using dot::Unexpected;
using dot::unexpected;

// For operations that produce nothing but can fail.
struct Done {};

}  // namespace dot::metewand
