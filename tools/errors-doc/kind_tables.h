#pragma once
// Every layer's table of error kinds, in layering order: what docs/errors.md
// is generated from (errors_doc.cpp) and what tests/base/test_error_kinds.cpp
// holds to the table rules. A layer that adds a table adds it here.

#include <span>
#include <string_view>

#include "../../cli/error_kinds.h"
#include "../../plugins/dot-mirror/error_kinds.h"
#include "dot/adopt/error_kinds.h"
#include "dot/adpp/error_kinds.h"
#include "dot/base/error_kinds.h"
#include "dot/core/error_kinds.h"
#include "dot/dpp/error_kinds.h"
#include "dot/metewand/error_kinds.h"
#include "dot/store/error_kinds.h"

namespace dot::errors_doc {

struct KindTable {
  std::string_view layer;   // the heading
  std::string_view source;  // where the table lives
  std::string_view about;   // one line on what the layer's kinds are about
  std::span<const KindRow> rows;
};

inline constexpr KindTable kKindTables[] = {
    {"base", "base/include/dot/base/error_kinds.h",
     "Strict JSON (offsets as docs/jcs.md says), canonical JSON, files, pipes, processes, containment, paths "
     "beneath a root. Protocol layers report the JSON reader's kinds under their own code (DPP: DOT_E_PROTOCOL) "
     "and keep kind and offset.",
     base::kErrorKinds},
    {"dpp", "dpp/include/dot/dpp/error_kinds.h",
     "The DPP layer: framing, JSON-RPC, the hello and general profiles, the path rules, the host session, the "
     "plugin runtime and the conformance runner.",
     dpp::kErrorKinds},
    {"store", "store/include/dot/store/error_kinds.h", "The managed root, the database and its rows.",
     store::kErrorKinds},
    {"core", "core/include/dot/core/error_kinds.h",
     "Plan documents, planning, registration, apply, effects, rollback and recovery.", core::kErrorKinds},
    {"adopt", "adopt/include/dot/adopt/error_kinds.h",
     "`dot-core adopt`: a root made by the Go reference. Every detail starts with the file it is about; nothing "
     "is changed by a refused adopt. A plan.json the JSON reader or the plan decoder refuses keeps their kinds.",
     adopt::kErrorKinds},
    {"adpp", "adpp/include/dot/adpp/error_kinds.h", "ADPP: frames, the provider process and its answers.",
     adpp::kErrorKinds},
    {"metewand", "metewand/include/dot/metewand/error_kinds.h",
     "Metewand: frames, correlation, messages, the hello handshake, the worker session (whose code is the "
     "session's: DOT_E_TIMEOUT for a deadline, DOT_E_PLUGIN_IDENTITY for the handshake, DOT_E_IO for a spawn, "
     "DOT_E_VALIDATION for a local refusal, else DOT_E_PROTOCOL) and the worker's failure codes.",
     metewand::kErrorKinds},
    {"cli", "cli/error_kinds.h", "The command line's own: option values, store check, conformance verdicts.",
     cli::kErrorKinds},
    {"dot-mirror", "plugins/dot-mirror/error_kinds.h", "The dot-mirror plugin (its limit refusals are DPP's).",
     mirror::kErrorKinds},
};

}  // namespace dot::errors_doc
