// Process containment: probing what the kernel offers, preparing every layer
// in the parent, and applying it in the child between fork and exec.

#include "dot/base/sandbox.h"
#include "dot/base/error_kinds.h"

#include "dot/base/plugin_executable.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include <fmt/format.h>

#include "dot/base/fd.h"
#include "dot/base/sealed_executable.h"
#include "sandbox_seccomp.h"

// Debian 12's <linux/landlock.h> stops at ABI 2; the values below are the
// kernel's UAPI for later ABIs (3: truncate, 4: TCP, 5: device ioctl,
// 6: scopes). Ours, named apart, so a newer header cannot clash.
namespace {
constexpr std::uint64_t kFsExecute = 1ULL << 0;
constexpr std::uint64_t kFsWriteFile = 1ULL << 1;
constexpr std::uint64_t kFsReadFile = 1ULL << 2;
constexpr std::uint64_t kFsReadDir = 1ULL << 3;
constexpr std::uint64_t kFsRemoveDir = 1ULL << 4;
constexpr std::uint64_t kFsRemoveFile = 1ULL << 5;
constexpr std::uint64_t kFsMakeDir = 1ULL << 7;
constexpr std::uint64_t kFsMakeReg = 1ULL << 8;
constexpr std::uint64_t kFsAbi1All = (1ULL << 13) - 1;   // EXECUTE .. MAKE_SYM
constexpr std::uint64_t kFsRefer = 1ULL << 13;           // ABI 2
constexpr std::uint64_t kFsTruncate = 1ULL << 14;        // ABI 3
constexpr std::uint64_t kFsIoctlDev = 1ULL << 15;        // ABI 5
constexpr std::uint64_t kNetBindTcp = 1ULL << 0;         // ABI 4
constexpr std::uint64_t kNetConnectTcp = 1ULL << 1;      // ABI 4
constexpr std::uint64_t kScopeAbstractUnix = 1ULL << 0;  // ABI 6
constexpr std::uint64_t kScopeSignal = 1ULL << 1;        // ABI 6
constexpr unsigned kCreateRulesetVersion = 1U << 0;

// The ruleset attribute grew with the ABI; the size passed tells the kernel
// which fields we know.
struct RulesetAttr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;  // ABI 4
  std::uint64_t scoped;              // ABI 6
};
struct PathBeneathAttr {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
} __attribute__((packed));
static_assert(sizeof(PathBeneathAttr) == 12, "landlock_path_beneath_attr is packed");
constexpr int kRulePathBeneath = 1;

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
}  // namespace

namespace dot {

namespace {

Error unavailable(base::ErrorKind layer, std::string detail) {
  const Kind kind = layer;
  return make_error(kind, fmt::format("{}: {}", kind.name(), detail));
}

std::uint64_t handled_fs(int abi) {
  std::uint64_t a = kFsAbi1All;
  if (abi >= 2) a |= kFsRefer;
  if (abi >= 3) a |= kFsTruncate;
  if (abi >= 5) a |= kFsIoctlDev;
  return a;
}

struct CapsState {
  bool ok = false;
  std::uint64_t effective = 0, permitted = 0;
};
CapsState read_own_caps() {
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  CapsState s;
  if (::syscall(SYS_capget, &hdr, data) != 0) return s;
  s.ok = true;
  s.effective = data[0].effective | (std::uint64_t{data[1].effective} << 32);
  s.permitted = data[0].permitted | (std::uint64_t{data[1].permitted} << 32);
  return s;
}

}  // namespace

Status SandboxSupport::require_complete() const {
  if (!landlock()) return unavailable(base::ErrorKind::Landlock, landlock_detail);
  if (!seccomp) return unavailable(base::ErrorKind::Seccomp, seccomp_detail);
  if (!no_new_privs) return unavailable(base::ErrorKind::NoNewPrivs, no_new_privs_detail);
  if (!capabilities) return unavailable(base::ErrorKind::Capabilities, capabilities_detail);
  if (!rlimits) return unavailable(base::ErrorKind::Rlimits, rlimits_detail);
  return {};
}

SandboxSupport probe_sandbox_support() {
  SandboxSupport s;

  long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  if (abi < 0) {
    int e = errno;
    s.landlock_detail = e == ENOSYS       ? "not built into this kernel (ENOSYS)"
                        : e == EOPNOTSUPP ? "built in but disabled at boot (add landlock to the lsm= list)"
                                          : fmt::format("probe failed: {}", std::strerror(e));
  } else {
    s.landlock_abi = static_cast<int>(abi);
    s.landlock_detail = abi >= kMinLandlockAbi
                            ? fmt::format("ABI {}", abi)
                            : fmt::format("ABI {} is older than the required {} (truncate() would not be mediated)",
                                          abi, kMinLandlockAbi);
  }

  if (::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0) {
    s.seccomp_detail = fmt::format("not built into this kernel ({})", std::strerror(errno));
  } else {
    std::uint32_t action = SECCOMP_RET_KILL_PROCESS;
    if (::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0) {
      s.seccomp = true;
      s.seccomp_detail = "filter mode, kill-process action";
    } else {
      s.seccomp_detail = errno == EOPNOTSUPP ? "the kill-process action is missing (kernel older than 4.14)"
                                             : fmt::format("filter mode unavailable ({})", std::strerror(errno));
    }
  }

  if (::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) < 0) {
    s.no_new_privs_detail = fmt::format("PR_GET_NO_NEW_PRIVS failed ({})", std::strerror(errno));
  } else {
    s.no_new_privs = true;
    s.no_new_privs_detail = "prctl(PR_SET_NO_NEW_PRIVS)";
  }

  CapsState caps = read_own_caps();
  if (!caps.ok) {
    s.capabilities_detail = fmt::format("capget failed ({})", std::strerror(errno));
  } else if (caps.effective & (1ULL << CAP_SETPCAP)) {
    s.capabilities = true;
    s.capabilities_detail = "all dropped, bounding set and ambient included; securebits locked";
  } else if (::geteuid() != 0 && ::getuid() != 0) {
    s.capabilities = true;
    s.capabilities_detail =
        "unprivileged: effective/permitted/inheritable dropped; no_new_privs keeps file capabilities out";
  } else {
    s.capabilities_detail = "running as root without CAP_SETPCAP: the bounding set cannot be emptied";
  }

  rlimit rl{};
  if (::getrlimit(RLIMIT_AS, &rl) != 0) {
    s.rlimits_detail = fmt::format("getrlimit failed ({})", std::strerror(errno));
  } else {
    s.rlimits = true;
    s.rlimits_detail = "AS, CPU, FSIZE, NOFILE, CORE";
  }
  return s;
}

struct Sandbox::ChildState {
  struct Limit {
    int resource;
    rlimit value;
  };
  UniqueFd ruleset;
  int landlock_abi = 0;
  sandbox_detail::SeccompProgram seccomp;
  sock_fprog prog{};  // over seccomp.insns
  Limit limits[5]{};
  bool drop_bounding_set = false;
  pid_t parent = -1;
  int exec_fd = -1;
  int script_fd = -1;
  LoaderFiles files;
};

namespace {

// Between fork and exec: raw system calls only, no allocation, no locks.
// Returns 0 or the errno of the first step that failed.
int apply_in_child(void* ctx) {
  // The child's own copy of the parent's state (fork), so it may write to it.
  auto& st = *static_cast<Sandbox::ChildState*>(ctx);

  for (const auto& l : st.limits)
    if (::setrlimit(static_cast<__rlimit_resource>(l.resource), &l.value) != 0) return errno;

  if (st.drop_bounding_set) {
    // Locked securebits: root gets no capabilities back on exec, and nothing
    // can undo that. Needs CAP_SETPCAP, so it comes before the drop.
    const unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                               SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
                               SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    if (::prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) return errno;
    for (unsigned long cap = 0; cap < 64; ++cap) {
      if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
        if (errno == EINVAL) break;  // past the kernel's last capability
        return errno;
      }
    }
  }
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return errno;
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct none[2]{};
  if (::syscall(SYS_capset, &hdr, none) != 0) return errno;

  // Again here: credential changes above must not have cleared it, and a
  // parent that died before this point must not leave an orphan running.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return errno;
  if (::getppid() != st.parent) return ESRCH;

  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  if (::syscall(SYS_landlock_restrict_self, st.ruleset.get(), 0) != 0) return errno;
  // Last: from here on only the allowlist works (the exec and the failure
  // report of spawn() are on it). Its pid rules name this process, whose pid
  // exec keeps.
  sandbox_detail::bind_to_self(st.seccomp, ::getpid());
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &st.prog) != 0) return errno;
  return 0;
}

Status add_rule(int ruleset, int fd, std::uint64_t access, const std::string& what) {
  PathBeneathAttr attr{access, fd};
  if (::syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &attr, 0) != 0)
    return unavailable(base::ErrorKind::Landlock,
                       fmt::format("cannot add a rule for {}: {}", what, std::strerror(errno)));
  return {};
}

Status add_path_rule(int ruleset, const std::string& path, std::uint64_t access, bool directory) {
  UniqueFd fd(::open(path.c_str(), O_PATH | O_CLOEXEC | (directory ? O_DIRECTORY : 0)));
  if (!fd)
    return make_error(base::ErrorKind::SandboxOpen,
                      fmt::format("cannot open {} for the Landlock ruleset: {}", path, std::strerror(errno)));
  return add_rule(ruleset, fd.get(), access, path);
}

}  // namespace

Sandbox::Sandbox() = default;
Sandbox::~Sandbox() = default;
Sandbox::Sandbox(Sandbox&&) noexcept = default;
Sandbox& Sandbox::operator=(Sandbox&&) noexcept = default;

Result<Sandbox> Sandbox::prepare(const SandboxPolicy& policy) { return prepare(policy, probe_sandbox_support()); }

namespace {

// The limits a contained plugin gets, never above what we have ourselves:
// lowering is always allowed, and a lower hard limit is only stricter.
Status cap_limits(const SandboxLimits& asked, decltype(Sandbox::ChildState::limits)& out) {
  struct Wanted {
    int resource;
    rlim_t soft, hard;
  };
  const Wanted wanted[5] = {{RLIMIT_AS, asked.address_space, asked.address_space},
                            {RLIMIT_CPU, asked.cpu_seconds, asked.cpu_hard_seconds},
                            {RLIMIT_FSIZE, asked.file_size, asked.file_size},
                            {RLIMIT_NOFILE, asked.open_files, asked.open_files},
                            {RLIMIT_CORE, asked.core_size, asked.core_size}};
  for (std::size_t i = 0; i < 5; ++i) {
    rlimit cur{};
    if (::getrlimit(static_cast<__rlimit_resource>(wanted[i].resource), &cur) != 0)
      return unavailable(base::ErrorKind::Rlimits, fmt::format("getrlimit failed: {}", std::strerror(errno)));
    auto capped = [&](rlim_t v) { return cur.rlim_max == RLIM_INFINITY ? v : std::min(v, cur.rlim_max); };
    const rlim_t hard = capped(wanted[i].hard);
    out[i] = {wanted[i].resource, {std::min(capped(wanted[i].soft), hard), hard}};
  }
  return {};
}

}  // namespace

Result<Sandbox> Sandbox::prepare(const SandboxPolicy& policy, const SandboxSupport& support) {
  DOT_TRY(support.require_complete());
  if (policy.executable_fd < 0)
    return make_error(base::ErrorKind::SandboxMisuse, "containment needs the verified executable descriptor");

  auto st = std::make_unique<ChildState>();
  st->landlock_abi = support.landlock_abi;
  st->exec_fd = policy.executable_fd;
  // The one descriptor a contained plugin may keep: a script nobody can
  // change any more (dot/base/plugin_executable.h).
  if (policy.script_fd >= 0 && !is_sealed_memfd(policy.script_fd))
    return make_error(base::ErrorKind::SandboxMisuse, "a contained plugin's script must be a sealed copy");
  st->script_fd = policy.script_fd;
  st->parent = ::getpid();
  st->drop_bounding_set = (read_own_caps().effective & (1ULL << CAP_SETPCAP)) != 0;

  DOT_TRY(cap_limits(policy.limits, st->limits));

  DOT_ASSIGN_OR_RETURN(st->files, resolve_loader_files(policy.executable_fd, policy.executable_path));

  const int abi = support.landlock_abi;
  RulesetAttr attr{handled_fs(abi), abi >= 4 ? (kNetBindTcp | kNetConnectTcp) : 0,
                   abi >= 6 ? (kScopeAbstractUnix | kScopeSignal) : 0};
  std::size_t attr_size = abi >= 6 ? sizeof(RulesetAttr) : abi >= 4 ? 2 * sizeof(std::uint64_t) : sizeof(std::uint64_t);
  st->ruleset.reset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0)));
  if (!st->ruleset)
    return unavailable(base::ErrorKind::Landlock,
                       fmt::format("creating a ruleset (ABI {}) failed: {}", abi, std::strerror(errno)));

  // Only the plugin and its interpreter may be executed; libraries are
  // mapped, not executed, and the loader cache is only read. No network
  // rule: with TCP handled and nothing allowed, bind and connect are denied.
  // A sealed copy (dot/base/sealed_executable.h) lives on the kernel's
  // internal memfd mount, which Landlock cannot name in a rule (EBADFD) and
  // does not restrict: its exec needs no rule. The plugin cannot make a memfd
  // of its own (seccomp) nor reach another process's (no rule for /proc).
  const std::string exe_name = policy.executable_path.empty() ? "the plugin executable" : policy.executable_path;
  if (!is_sealed_memfd(policy.executable_fd))
    DOT_TRY(add_rule(st->ruleset.get(), policy.executable_fd, kFsExecute | kFsReadFile, exe_name));
  if (!st->files.interpreter.empty())
    DOT_TRY(add_path_rule(st->ruleset.get(), st->files.interpreter, kFsExecute | kFsReadFile, false));
  for (const auto& lib : st->files.libraries) DOT_TRY(add_path_rule(st->ruleset.get(), lib, kFsReadFile, false));
  if (!st->files.loader_cache.empty())
    DOT_TRY(add_path_rule(st->ruleset.get(), st->files.loader_cache, kFsReadFile, false));
  // The stage and the cache: regular files only (and folders when the
  // policy asks): no links, devices, sockets or fifos, and no rename into or
  // out of either (REFER stays denied; a rename within one folder needs no
  // REFER).
  std::uint64_t rw = kFsReadFile | kFsWriteFile | kFsReadDir | kFsRemoveFile | kFsMakeReg;
  if (abi >= 3) rw |= kFsTruncate;
  if (policy.stage_fd >= 0)
    DOT_TRY(add_rule(st->ruleset.get(), policy.stage_fd, rw | (policy.stage_folders ? kFsMakeDir | kFsRemoveDir : 0),
                     "the stage directory"));
  if (policy.cache_fd >= 0)
    DOT_TRY(add_rule(st->ruleset.get(), policy.cache_fd, rw | kFsMakeDir | kFsRemoveDir, "the plugin's cache folder"));
  for (int fd : policy.read_only_dir_fds)
    DOT_TRY(add_rule(st->ruleset.get(), fd, kFsReadFile | kFsReadDir, "an input directory"));

  DOT_ASSIGN_OR_RETURN(st->seccomp, sandbox_detail::build_seccomp_filter());
  st->prog.len = static_cast<unsigned short>(st->seccomp.insns.size());
  st->prog.filter = st->seccomp.insns.data();

  Sandbox sb;
  sb.state_ = std::move(st);
  return sb;
}

Status Sandbox::apply_to(SpawnOptions& options) const {
  if (!state_) return make_error(base::ErrorKind::SandboxMisuse, "applying a sandbox that was never prepared");
  // exec_fd may still be unset when a session fills it in later; Landlock
  // lets only the policy's executable (by inode) be executed either way.
  if ((options.exec_fd >= 0 && options.exec_fd != state_->exec_fd) || !options.path.empty())
    return make_error(base::ErrorKind::SandboxMisuse,
                      "a contained plugin is executed from its verified descriptor only");
  const bool only_script = options.keep_fds.size() == 1 && state_->script_fd >= 0 &&
                           options.keep_fds[0] == std::pair<int, int>{state_->script_fd, kScriptChildFd};
  if (!options.keep_fds.empty() && !only_script)
    return make_error(base::ErrorKind::SandboxMisuse,
                      "a contained plugin inherits no descriptor but stdin, stdout, stderr and its sealed script");
  if (options.pre_exec != nullptr)
    return make_error(base::ErrorKind::SandboxMisuse, "the spawn already has a pre-exec hook");
  options.new_session = true;
  options.new_process_group = true;
  options.parent_death_signal = true;
  options.pre_exec = &apply_in_child;
  options.pre_exec_ctx = state_.get();
  options.pre_exec_what = "applying process containment";
  return {};
}

int Sandbox::landlock_abi() const noexcept { return state_ ? state_->landlock_abi : 0; }

const LoaderFiles& Sandbox::loader_files() const noexcept {
  static const LoaderFiles kNone;
  return state_ ? state_->files : kNone;
}

std::size_t Sandbox::seccomp_instructions() const noexcept { return state_ ? state_->seccomp.insns.size() : 0; }

SandboxLimits Sandbox::limits() const noexcept {
  SandboxLimits out;
  if (!state_) return out;
  for (const auto& l : state_->limits) {
    switch (l.resource) {
      case RLIMIT_AS:
        out.address_space = l.value.rlim_cur;
        break;
      case RLIMIT_CPU:
        out.cpu_seconds = l.value.rlim_cur;
        out.cpu_hard_seconds = l.value.rlim_max;
        break;
      case RLIMIT_FSIZE:
        out.file_size = l.value.rlim_cur;
        break;
      case RLIMIT_NOFILE:
        out.open_files = l.value.rlim_cur;
        break;
      case RLIMIT_CORE:
        out.core_size = l.value.rlim_cur;
        break;
      default:
        break;
    }
  }
  return out;
}

SignalDeath explain_signal_death(const ExitStatus& status, const SandboxLimits* limits) {
  const int sig = status.signal;
  SignalDeath d;
  const char* abbrev = sig > 0 ? ::sigabbrev_np(sig) : nullptr;
  d.signal = abbrev != nullptr ? fmt::format("SIG{} (signal {})", abbrev, sig) : fmt::format("signal {}", sig);
  const double cpu = std::chrono::duration<double>(status.cpu_time).count();
  if (limits == nullptr) {
    d.kind = base::ErrorKind::Killed;
    d.cause = fmt::format("{} after {:.2f} s of CPU time (no containment: audit assurance)",
                          sig == SIGSYS ? "a bad system call" : ::strsignal(sig), cpu);
    return d;
  }
  switch (sig) {
    case SIGSYS:
      d.kind = base::ErrorKind::SeccompKill;
      d.cause = "seccomp blocked a system call that is not on the allowlist (process containment, seccomp layer)";
      return d;
    case SIGXFSZ:
      d.kind = base::ErrorKind::FileSizeLimit;
      d.cause = fmt::format("a file it wrote reached the {}-byte file-size limit (process containment, RLIMIT_FSIZE)",
                            limits->file_size);
      return d;
    case SIGXCPU:
      // Sent by the kernel at the soft CPU limit (SandboxLimits says why the
      // signal, not the CPU time, names the cause).
      if (limits->cpu_seconds == RLIM_INFINITY) break;
      d.kind = base::ErrorKind::CpuLimit;
      d.cause = fmt::format(
          "it reached the {} s CPU limit, which the kernel enforces with SIGXCPU (process "
          "containment, RLIMIT_CPU; {:.2f} s of CPU by the scheduler's exact count)",
          limits->cpu_seconds, cpu);
      return d;
    case SIGKILL:
      // Only a plugin that caught SIGXCPU or raised its soft limit reaches
      // the hard limit. The exact runtime can come out well below the
      // kernel's tick-sampled count under load, so "near" is generous:
      // three quarters of the soft limit.
      if (limits->cpu_hard_seconds != RLIM_INFINITY && cpu >= 0.75 * static_cast<double>(limits->cpu_seconds)) {
        d.kind = base::ErrorKind::CpuLimit;
        d.cause = fmt::format(
            "it went on past SIGXCPU at the {} s CPU limit and reached the {} s hard limit, which "
            "the kernel enforces with SIGKILL (process containment, RLIMIT_CPU; {:.2f} s of CPU by "
            "the scheduler's exact count)",
            limits->cpu_seconds, limits->cpu_hard_seconds, cpu);
        return d;
      }
      d.kind = base::ErrorKind::Killed;
      d.cause = fmt::format(
          "not sent by dot-core and not the CPU limit ({:.2f} s of CPU used): the kernel's "
          "out-of-memory killer or another process of the same user",
          cpu);
      return d;
    default:
      break;
  }
  d.kind = base::ErrorKind::Killed;
  d.cause = fmt::format("{}, not a containment layer's signal{}", ::strsignal(sig),
                        sig == SIGABRT || sig == SIGSEGV || sig == SIGBUS
                            ? fmt::format(" (the plugin crashed; under containment an allocation beyond the "
                                          "{}-byte address-space limit fails, which many runtimes turn into an abort)",
                                          limits->address_space)
                            : "");
  return d;
}

}  // namespace dot
