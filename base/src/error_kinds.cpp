// The errno rows of base's error kinds (error_kinds.h): one row per errno
// name glibc's strerrorname_np knows, indexed by the errno number.
#include <cerrno>
#include <span>

#include "dot/base/error_kinds.h"

namespace dot::base {
namespace {

// EHWPOISON, 133, is the highest errno the Linux headers define.
constexpr int kErrnoRows = 134;

// A table, laid out by hand (clang-format would wrap it into a staircase).
// clang-format off
#define DOT_ERRNO_NAMES(X)                                                                                \
  X(EPERM) X(ENOENT) X(ESRCH) X(EINTR) X(EIO) X(ENXIO) X(E2BIG) X(ENOEXEC) X(EBADF) X(ECHILD)             \
  X(EAGAIN) X(ENOMEM) X(EACCES) X(EFAULT) X(ENOTBLK) X(EBUSY) X(EEXIST) X(EXDEV) X(ENODEV) X(ENOTDIR)     \
  X(EISDIR) X(EINVAL) X(ENFILE) X(EMFILE) X(ENOTTY) X(ETXTBSY) X(EFBIG) X(ENOSPC) X(ESPIPE) X(EROFS) X(EMLINK)      \
  X(EPIPE) X(EDOM) X(ERANGE) X(EDEADLK) X(ENAMETOOLONG) X(ENOLCK) X(ENOSYS) X(ENOTEMPTY) X(ELOOP)         \
  X(ENOMSG) X(EIDRM) X(ECHRNG) X(EL2NSYNC) X(EL3HLT) X(EL3RST) X(ELNRNG) X(EUNATCH) X(ENOCSI)             \
  X(EL2HLT) X(EBADE) X(EBADR) X(EXFULL) X(ENOANO) X(EBADRQC) X(EBADSLT) X(EBFONT) X(ENOSTR) X(ENODATA)    \
  X(ETIME) X(ENOSR) X(ENONET) X(ENOPKG) X(EREMOTE) X(ENOLINK) X(EADV) X(ESRMNT) X(ECOMM) X(EPROTO)        \
  X(EMULTIHOP) X(EDOTDOT) X(EBADMSG) X(EOVERFLOW) X(ENOTUNIQ) X(EBADFD) X(EREMCHG) X(ELIBACC)             \
  X(ELIBBAD) X(ELIBSCN) X(ELIBMAX) X(ELIBEXEC) X(EILSEQ) X(ERESTART) X(ESTRPIPE) X(EUSERS) X(ENOTSOCK)    \
  X(EDESTADDRREQ) X(EMSGSIZE) X(EPROTOTYPE) X(ENOPROTOOPT) X(EPROTONOSUPPORT) X(ESOCKTNOSUPPORT)          \
  X(EOPNOTSUPP) X(EPFNOSUPPORT) X(EAFNOSUPPORT) X(EADDRINUSE) X(EADDRNOTAVAIL) X(ENETDOWN)                \
  X(ENETUNREACH) X(ENETRESET) X(ECONNABORTED) X(ECONNRESET) X(ENOBUFS) X(EISCONN) X(ENOTCONN)             \
  X(ESHUTDOWN) X(ETOOMANYREFS) X(ETIMEDOUT) X(ECONNREFUSED) X(EHOSTDOWN) X(EHOSTUNREACH) X(EALREADY)      \
  X(EINPROGRESS) X(ESTALE) X(EUCLEAN) X(ENOTNAM) X(ENAVAIL) X(EISNAM) X(EREMOTEIO) X(EDQUOT)              \
  X(ENOMEDIUM) X(EMEDIUMTYPE) X(ECANCELED) X(ENOKEY) X(EKEYEXPIRED) X(EKEYREVOKED) X(EKEYREJECTED)        \
  X(EOWNERDEAD) X(ENOTRECOVERABLE) X(ERFKILL) X(EHWPOISON)
// clang-format on

constexpr std::array<KindRow, kErrnoRows> make_errno_rows() {
  std::array<KindRow, kErrnoRows> rows{};
  // 0 and the numbers without a name: nothing a system call reports.
  for (auto& r : rows)
    r = KindRow{"errno_unknown", Code::Io, "a system call failed with an errno that has no name", ""};
    // ELOOP and EXDEV are what RESOLVE_BENEATH answers for a symlink or a path
    // leaving the root: beneath reports them as escapes.
#define DOT_ERRNO_ROW(name)                                                          \
  rows[name] =                                                                       \
      KindRow{#name, (name == ELOOP || name == EXDEV) ? Code::PathEscape : Code::Io, \
              "a system call failed with " #name " (errno(3))",                      \
              (name == ELOOP || name == EXDEV) ? "paths resolve beneath the root (docs/threat-model.md)" : ""};
  DOT_ERRNO_NAMES(DOT_ERRNO_ROW)
#undef DOT_ERRNO_ROW
  return rows;
}

constexpr std::array<KindRow, kErrnoRows> kRows = make_errno_rows();

}  // namespace

const KindRow& kind_row(ErrnoKind err) noexcept {
  const int n = static_cast<int>(err);
  return n > 0 && n < kErrnoRows ? kRows[static_cast<std::size_t>(n)] : kRows[0];
}

std::span<const KindRow> errno_rows() noexcept { return kRows; }

int errno_of(Kind kind) noexcept {
  const KindRow* row = kind.row();
  if (row == nullptr || row < kRows.data() + 1 || row >= kRows.data() + kErrnoRows) return 0;
  return static_cast<int>(row - kRows.data());
}

}  // namespace dot::base
