#pragma once
// The error kinds of base (strict JSON, canonical JSON, descriptors,
// processes, containment, paths beneath a root) and the errno kinds: each
// row names the kind, its code, what it means and the rule it enforces.

#include <array>
#include <cstddef>
#include <span>

#include "dot/base/error.h"

namespace dot::base {

enum class ErrorKind : std::uint8_t {
  // Strict JSON reader (json::parse, json::validate; docs/spec/jcs.md).
  TooLarge,
  Bom,
  Utf8,
  Depth,
  DuplicateKey,
  InvalidUnicode,
  InvalidNumber,
  Malformed,
  Trailing,
  // Object readers (json::ObjectReader).
  MissingField,
  UnknownField,
  WrongType,
  OutOfRange,
  // Canonical profiles (jcs::canonicalize, jcs::encode).
  NotPrintableAscii,
  Fraction,
  Negative,
  UnsafeInteger,
  // Files, pipes and processes.
  Open,
  Read,
  Write,
  Closed,
  FileTooLarge,
  NotRegular,
  NotFound,
  Pipe,
  Poll,
  PollSetup,
  Spawn,
  SpawnMisuse,
  Subreaper,
  SealedExec,
  Random,
  Timeout,
  CaptureLimit,
  // Containment (docs/sandbox.md).
  Elf,
  Script,
  SandboxOpen,
  SandboxMisuse,
  Capabilities,
  Landlock,
  NoNewPrivs,
  Rlimits,
  Seccomp,
  Killed,
  SeccompKill,
  FileSizeLimit,
  CpuLimit,
  // Paths beneath a root.
  Path,
  Symlink,
  Replaced,
  Moved,
  Changing,
  // What may be a plugin (plugin_executable.h).
  PluginType,
  PluginScript,
  PluginNotElf,
  Glob,
  IgnoreFile,
};

inline constexpr auto kErrorKinds = std::to_array<KindRow>({
    {"too_large", Code::Validation, "the input is over the reader's size limit (offset: the limit)",
     "inputs are bounded (docs/spec/jcs.md)"},
    {"bom", Code::Validation, "the text starts with a byte order mark (offset 0)", "RFC 8259 §8.1 (docs/spec/jcs.md)"},
    {"utf8", Code::Validation, "invalid UTF-8 (offset: the first invalid sequence), or an invalid string built in code",
     "RFC 8259 §8.1 (docs/spec/jcs.md)"},
    {"depth", Code::Validation, "nesting one level too deep (offset: that bracket)",
     "bounded depth (docs/spec/jcs.md)"},
    {"duplicate_key", Code::Validation, "a key appears twice in one object (offset: the repeated key)",
     "I-JSON, RFC 7493 §2.3 (docs/spec/jcs.md)"},
    {"invalid_unicode", Code::Validation, "a lone surrogate escape (offset: its backslash)",
     "I-JSON, RFC 7493 §2.1 (docs/spec/jcs.md)"},
    {"invalid_number", Code::Validation, "a number that overflows binary64, or a non-finite number built in code",
     "I-JSON, RFC 7493 §2.2 (docs/spec/jcs.md)"},
    {"malformed", Code::Validation,
     "the text stops being a prefix of valid JSON, or a value is not the object asked for",
     "RFC 8259 grammar (docs/spec/jcs.md)"},
    {"trailing", Code::Validation, "non-whitespace after the value (offset: its first byte)", "one value per text"},
    {"missing_field", Code::Validation, "a required member is absent (offset: the object)",
     "the message's shape (the contract page of its protocol)"},
    {"unknown_field", Code::Validation, "a member the shape does not define (offset: its key)",
     "closed shapes (the contract page of its protocol)"},
    {"wrong_type", Code::Validation, "a member of the wrong JSON type (offset: the value)",
     "the message's shape (the contract page of its protocol)"},
    {"out_of_range", Code::Validation, "a number outside the member's range (offset: the value)",
     "the message's shape (the contract page of its protocol)"},
    {"not_printable_ascii", Code::Validation, "a string outside printable ASCII in the hello profile",
     "docs/spec/jcs.md, hello profile"},
    {"fraction", Code::Validation, "a number with a fraction where the profile allows integers only",
     "docs/spec/jcs.md, hello profile"},
    {"negative", Code::Validation, "a negative number in the hello profile", "docs/spec/jcs.md, hello profile"},
    {"unsafe_integer", Code::Validation, "an integer beyond ±(2^53−1)",
     "docs/spec/jcs.md (hello profile), docs/spec/metewand.md (metewand)"},
    {"open", Code::Io, "a file the user named cannot be opened", ""},
    {"read", Code::Io, "a file or pipe cannot be read", ""},
    {"write", Code::Io, "a file or pipe cannot be written", ""},
    {"closed", Code::Io, "the other end of a pipe is gone (EPIPE)", ""},
    {"too_large", Code::Io, "a file is larger than the limit it is read with", ""},
    {"not_regular", Code::Io, "an executable that is not a regular file", ""},
    {"not_found", Code::Io, "no executable of that name on PATH", ""},
    {"pipe", Code::Io, "pipe2 failed", ""},
    {"poll", Code::Io, "poll failed", ""},
    {"poll", Code::Internal, "more streams to watch than the poller holds (a bug)", ""},
    {"spawn", Code::Io, "a child process could not be started (fork, exec, /dev/null)", "docs/processes.md"},
    {"spawn", Code::Internal, "spawn options that name no program, or two (a bug)", "docs/processes.md"},
    {"subreaper", Code::Io, "PR_SET_CHILD_SUBREAPER failed", "docs/processes.md"},
    {"sealed_exec", Code::Io, "an executable could not be copied into a sealed memfd", "docs/sandbox.md"},
    {"random", Code::Internal, "getrandom failed", ""},
    {"timeout", Code::Timeout, "no data on a pipe before the deadline", "docs/processes.md"},
    {"capture_limit", Code::Protocol, "a child wrote more to a captured stream than its cap",
     "bounded stderr (docs/spec/dpp-hello.md)"},
    {"elf", Code::Policy, "the executable is not an ELF file containment can run", "docs/sandbox.md"},
    {"script", Code::Policy, "a script (#!) where process containment needs an ELF executable", "docs/sandbox.md"},
    {"sandbox", Code::Io, "a path of the Landlock ruleset cannot be opened", "docs/sandbox.md"},
    {"sandbox", Code::Internal, "containment applied out of order or to the wrong descriptor (a bug)",
     "docs/sandbox.md"},
    {"capabilities", Code::SandboxUnavailable, "capabilities could not be dropped", "docs/sandbox.md"},
    {"landlock", Code::SandboxUnavailable, "Landlock is missing or refused the ruleset", "docs/sandbox.md"},
    {"no_new_privs", Code::SandboxUnavailable, "PR_SET_NO_NEW_PRIVS failed", "docs/sandbox.md"},
    {"rlimits", Code::SandboxUnavailable, "a resource limit could not be set", "docs/sandbox.md"},
    {"seccomp", Code::SandboxUnavailable, "the seccomp filter could not be built or loaded", "docs/sandbox.md"},
    {"killed", Code::Protocol, "a plugin died by a signal that is not a containment layer's", "docs/sandbox.md"},
    {"seccomp_kill", Code::Protocol, "a contained plugin made a system call off the allowlist (SIGSYS)",
     "docs/sandbox.md"},
    {"file_size_limit", Code::Protocol, "a contained plugin reached the file-size limit (SIGXFSZ)", "docs/sandbox.md"},
    {"cpu_limit", Code::Protocol, "a contained plugin reached its CPU limit (SIGXCPU, or SIGKILL at the hard limit)",
     "docs/sandbox.md"},
    {"path", Code::PathEscape, "a relative path that is empty, absolute, has . or .. or leaves the root",
     "paths stay beneath the root (docs/threat-model.md)"},
    {"symlink", Code::PathEscape, "a symlink on the way to a path beneath the root",
     "symlinks are refused, never followed (docs/threat-model.md)"},
    {"replaced", Code::Conflict, "an entry was replaced while it was being removed or renamed", "docs/threat-model.md"},
    {"moved", Code::Conflict, "an entry moved away while it was being renamed", "docs/threat-model.md"},
    {"changing", Code::Conflict, "an entry kept changing while it was read", "docs/threat-model.md"},
    {"plugin_type", Code::Policy, "a plugin (or its interpreter) is not a regular file",
     "docs/spec/dpp-general.md, Registration and manifest"},
    {"plugin_script", Code::Policy, "a #! line this core cannot pin: arguments, a relative or script interpreter",
     "docs/spec/dpp-general.md, Registration and manifest"},
    {"plugin_not_elf", Code::Policy, "a plugin (or its interpreter) is neither an ELF executable nor a #! script",
     "docs/spec/dpp-general.md, Registration and manifest"},
    {"glob", Code::Validation, "an exclude pattern that is empty, too long, not UTF-8, holds a control byte or a !",
     "docs/user-guide.md, plan --exclude"},
    {"ignore_file", Code::Validation, "an ignore file (.dotignore) with a line that is no pattern, or over its limits",
     "docs/user-guide.md, dot-mirror"},
});

DOT_KIND_TABLE(ErrorKind, kErrorKinds, IgnoreFile);

// The errno names as strerrorname_np spells them, each a kind of its own
// (beneath::errno_error): the value of an ErrnoKind is the errno number.
enum class ErrnoKind : int {};
const KindRow& kind_row(ErrnoKind err) noexcept;
// Every errno row, in errno order (for the generated docs/errors.md).
std::span<const KindRow> errno_rows() noexcept;
// The errno number of an errno kind, 0 for any other kind.
int errno_of(Kind kind) noexcept;

}  // namespace dot::base
