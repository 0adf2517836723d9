#pragma once
// Error kinds that only tests raise (a fake input, a harness's own failure):
// a table like every layer's, so a test, too, builds an Error from a row.

#include <array>
#include <cstddef>
#include <cstdint>

#include "dot/base/error.h"

namespace dot::test {

enum class ErrorKind : std::uint8_t { Input, Memfd, PidfdOpen, Test, T, Odd, Locked, OpenInvalidUtf8, Mkdir, Source };

inline constexpr auto kErrorKinds = std::to_array<KindRow>({
    {"input", Code::Io, "a fake plugin input could not be read", ""},
    {"memfd", Code::Io, "memfd_create failed in a test", ""},
    {"pidfd_open", Code::Io, "pidfd_open failed in a test", ""},
    {"test", Code::Internal, "a test harness's own failure", ""},
    {"t", Code::Internal, "a test handler's refusal", ""},
    {"odd", Code::Validation, "an odd number where a test wants an even one", ""},
    {"locked", Code::Conflict, "a conflict, as the store reports a locked root", ""},
    {"open\xff", Code::Io, "a kind that is not UTF-8 (rendering tests)", ""},
    {"mkdir", Code::Io, "a test plugin could not make a folder in its stage", ""},
    {"source", Code::Io, "a test plugin's source is gone", ""},
});

DOT_KIND_TABLE(ErrorKind, kErrorKinds, Source);

}  // namespace dot::test
