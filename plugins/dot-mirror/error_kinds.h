#pragma once
// The error kinds of the dot-mirror plugin beyond the DPP layer's (its
// negotiated-limit refusals use dpp/error_kinds.h). docs/errors.md is
// generated from this table with the others.

#include <array>
#include <cstddef>
#include <cstdint>

#include "dot/base/error.h"

namespace dot::mirror {

enum class ErrorKind : std::uint8_t { InvalidPlan, SourceChanged, DigestCache };

inline constexpr auto kErrorKinds = std::to_array<KindRow>({
    {"invalid_plan", Code::Internal, "dot.materialize was sent a plan dot-mirror did not propose (a bug of the host)",
     "docs/spec/dpp-general.md, Materialize and validate"},
    {"source_changed", Code::ArtifactMismatch, "a source file changed between dot.plan and dot.materialize",
     "docs/user-guide.md, dot-mirror"},
    {"digest_cache", Code::Validation,
     "dot-mirror's cache of source digests is not one it wrote for this source (it is set aside with a warning: "
     "every source file is read)",
     "docs/user-guide.md, dot-mirror"},
});

DOT_KIND_TABLE(ErrorKind, kErrorKinds, DigestCache);

}  // namespace dot::mirror
