// {fmt}'s compiled part (fmt::vformat and what it calls), built into the
// dot-core executables from Debian's fmt 9 headers: format-inl.h holds the
// definitions libfmt.so itself is compiled from. With them here, dot-core
// links with --as-needed and no longer loads libfmt.so, which cost every
// process a mapping, ~140 K instructions of symbol look-ups and 8 page faults
// (docs/startup.md). The headers are the same ones every other translation
// unit compiles against, so there is one definition of each function.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {
// format.h declares these two as extern templates unless fmt is header-only;
// vformat needs their definitions.
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl<char>(locale_ref) -> char;
}  // namespace detail
FMT_END_NAMESPACE
