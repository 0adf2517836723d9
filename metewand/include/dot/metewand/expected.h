#pragma once
// The Metewand layers (framing, correlation, handshake, session) each return
// dot::Expected<T, TheirErrorEnum> (base/expected.h), so callers branch on the
// variant and its payload instead of parsing text; every error type also
// converts to a dot::Error for reporting.

#include "dot/base/expected.h"

namespace dot::metewand {

// For operations that produce nothing but can fail.
struct Done {};

}  // namespace dot::metewand
