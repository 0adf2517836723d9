#pragma once
// The one way dot-core runs an executable it has hashed: check and exec are
// one object. A descriptor of a file on disk is not enough: whoever can write
// the file can rewrite it in place (same inode) after the hash and before the
// exec, and the kernel then runs the new bytes. So the bytes are first copied
// into an anonymous memory file (memfd_create), the copy is sealed against
// every change (F_SEAL_WRITE, F_SEAL_SHRINK, F_SEAL_GROW, then F_SEAL_SEAL so
// no seal can be lifted; F_SEAL_EXEC too where the kernel has it), and only
// then hashed. The digest names the sealed bytes, and the sealed descriptor
// is what SpawnOptions::exec_fd executes (fexecve): nobody, this process
// included, can change one byte of it any more.
//
// A writer racing the copy can only make the copy differ from what was
// registered; the caller's digest comparison then refuses it. It can never
// make other bytes run under the digest that was checked.

#include <cstdint>
#include <string>
#include <string_view>

#include "dot/base/fd.h"
#include "dot/base/result.h"

namespace dot {

struct SealedExecutable {
  UniqueFd fd;         // the sealed memfd, close-on-exec; execute it with fexecve
  std::string sha256;  // lowercase hex digest of exactly the sealed bytes
  std::uint64_t size = 0;
};

// Copies everything readable from `source_fd` (from offset 0, by pread: its
// file position is untouched) into a sealed memfd and hashes the sealed copy.
// Errors (Code::Io, naming `what`): reading the source, creating, writing or
// sealing the memfd (a kernel whose vm.memfd_noexec forbids executable memfds
// says so); a source of more than `max_bytes` is Code::Io kind "too_large".
Result<SealedExecutable> seal_executable(int source_fd, std::string_view what, std::uint64_t max_bytes);

// The launch rule for an executable named by a path, in one place: the path
// is opened once (never again: what runs is the sealed copy of what was read
// through this descriptor), it must be a regular file, and it must not be a
// `#!` script: the kernel hands a script's interpreter a path to open anew, so
// the bytes hashed would not be the bytes run (and a sealed memfd, closed on
// exec, has no path an interpreter could open). Errors: Code::Io naming
// `what` when it cannot be opened, read or sealed, or is not a regular file;
// Code::Policy kind "script" for a `#!` script.
Result<SealedExecutable> seal_executable_file(const std::string& path, std::string_view what, std::uint64_t max_bytes);

// Seals `memfd` (made with MFD_ALLOW_SEALING) against every change of its
// bytes and against further seals; the step of seal_executable, public so a
// test can hold a writable mapping across it. The kernel's transient EBUSY
// (page references it waits ~150 ms for) is asked again a bounded number of
// times. Errors: Code::Io naming `what` when the kernel refuses the seals,
// including a writable shared mapping that outlives the retries.
Result<void> seal_memfd_contents(int memfd, std::string_view what);

// True when `fd` is a memfd sealed against writing (what seal_executable
// returns). The sandbox asks: Landlock cannot name such a file in a rule.
bool is_sealed_memfd(int fd) noexcept;

}  // namespace dot
