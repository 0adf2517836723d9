// The seccomp filter of a contained plugin: an allowlist compiled by
// libseccomp and exported to classic BPF in the parent, so that the child
// only has to hand the finished program to the kernel.
//
// Anything not listed kills the whole plugin (SECCOMP_RET_KILL_PROCESS):
// sockets, ptrace and process_vm_*, mount and friends, keyctl, bpf,
// unshare/setns and namespace-creating clone flags, personality, io_uring,
// memfd_create, perf, userfaultfd, fork, chmod and chown, utimes, xattrs...
// The list is what a dynamically linked
// C/C++ program needs to start, use memory, threads and time, and read or
// write the files Landlock lets it open.

#include <linux/filter.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>

#include <fmt/format.h>

#include "dot/base/fd.h"
#include "dot/base/sandbox.h"

namespace dot::sandbox_detail {
namespace {

// Allowed without conditions. Names, so that one list serves every
// architecture: a name the running architecture lacks is skipped.
constexpr const char* kAllowed[] = {
    // I/O on descriptors the process already holds or Landlock lets it open.
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2",
    "pwritev2", "lseek", "close", "close_range", "open", "openat", "openat2", "creat", "dup", "dup2",
    "dup3", "fcntl", "pipe", "pipe2", "poll", "ppoll", "select", "pselect6", "fsync", "fdatasync",
    "ftruncate", "truncate", "sendfile", "copy_file_range", "splice",
    // Metadata (Landlock mediates the opens; these only look or act on allowed files).
    "fstat", "stat", "lstat", "newfstatat", "statx", "statfs", "fstatfs", "access", "faccessat",
    "faccessat2", "readlink", "readlinkat", "getdents64", "getcwd", "umask", "unlink", "unlinkat",
    "rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir",
    // Memory.
    "brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "msync", "mincore",
    // Process and thread plumbing the C and C++ runtimes use.
    "arch_prctl", "set_tid_address", "set_robust_list", "get_robust_list", "rseq", "futex",
    "futex_waitv", "sched_yield", "sched_getaffinity", "getrandom", "exit", "exit_group",
    "restart_syscall", "wait4", "waitid", "prlimit64", "getrlimit", "getrusage", "times", "uname",
    "sysinfo", "capget",
    // Signals: Landlock scopes them to the plugin's own domain where the ABI can.
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigsuspend",
    "rt_sigtimedwait", "sigaltstack",
    // Identity, read-only.
    "getpid", "gettid", "getppid", "getpgrp", "getpgid", "getsid", "getuid", "geteuid", "getgid",
    "getegid", "getresuid", "getresgid", "getgroups",
    // Time.
    "clock_gettime", "clock_getres", "clock_nanosleep", "gettimeofday", "time", "nanosleep",
};

// prctl options a runtime asks for; everything else (PR_SET_SECCOMP too,
// PR_SET_MM, PR_SET_PTRACER...) kills.
constexpr int kAllowedPrctl[] = {PR_GET_NAME, PR_SET_NAME, PR_GET_DUMPABLE, PR_CAPBSET_READ,
                                 PR_GET_NO_NEW_PRIVS, PR_GET_SECCOMP, PR_GET_PDEATHSIG};

// ioctl requests: terminal probing (isatty) and descriptor flags.
constexpr unsigned long kAllowedIoctl[] = {TCGETS, FIONREAD, FIONBIO, FIOCLEX, FIONCLEX};

constexpr std::uint64_t kNamespaceFlags = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC |
                                          CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWTIME;

struct FilterCtx {
  scmp_filter_ctx ctx = nullptr;
  ~FilterCtx() {
    if (ctx != nullptr) seccomp_release(ctx);
  }
};

// libseccomp's SCMP_A0.. macros are C compound literals, which C++ lacks.
scmp_arg_cmp arg_cmp(unsigned arg, scmp_compare op, scmp_datum_t a, scmp_datum_t b = 0) {
  scmp_arg_cmp c{};
  c.arg = arg;
  c.op = op;
  c.datum_a = a;
  c.datum_b = b;
  return c;
}

int add_rule(scmp_filter_ctx ctx, std::uint32_t action, int nr, const scmp_arg_cmp& cmp) {
  return seccomp_rule_add_array(ctx, action, nr, 1, &cmp);
}

Error filter_error(const char* step, int rc) {
  return make_error(Code::SandboxUnavailable, "seccomp",
                    fmt::format("seccomp: building the filter failed at {}: {}", step, std::strerror(-rc)));
}

}  // namespace

Result<std::vector<sock_filter>> build_seccomp_filter(int landlock_abi) {
  FilterCtx f;
  f.ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
  if (f.ctx == nullptr) return make_error(Code::SandboxUnavailable, "seccomp", "seccomp: libseccomp could not initialise a filter");
  int rc;
  // A syscall from another ABI (x32, i386 int 0x80) is as foreign as any other.
  if ((rc = seccomp_attr_set(f.ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) != 0)
    return filter_error("the bad-architecture action", rc);
  // no_new_privs is set by the child itself, before Landlock.
  if ((rc = seccomp_attr_set(f.ctx, SCMP_FLTATR_CTL_NNP, 0)) != 0) return filter_error("the NNP attribute", rc);
  // A binary tree keeps the per-syscall cost flat over the long allowlist.
  if ((rc = seccomp_attr_set(f.ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) != 0) return filter_error("optimisation", rc);

  for (const char* name : kAllowed) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture
    if ((rc = seccomp_rule_add(f.ctx, SCMP_ACT_ALLOW, nr, 0)) != 0) return filter_error(name, rc);
  }
  // Signals: from Landlock ABI 6 the kernel keeps them inside the plugin's
  // domain. Before that a capability-less root process could still signal
  // every process of uid 0, so only kill(0, sig) (its own process group) is left.
  if (landlock_abi >= 6) {
    for (int nr : {SCMP_SYS(kill), SCMP_SYS(tgkill), SCMP_SYS(tkill)})
      if ((rc = seccomp_rule_add(f.ctx, SCMP_ACT_ALLOW, nr, 0)) != 0) return filter_error("kill", rc);
  } else if ((rc = add_rule(f.ctx, SCMP_ACT_ALLOW, SCMP_SYS(kill), arg_cmp(0, SCMP_CMP_EQ, 0))) != 0) {
    return filter_error("kill", rc);
  }
  // The one exec the plugin needs is the fexecve() of its verified descriptor
  // (execveat with AT_EMPTY_PATH). Landlock then allows executing only the
  // plugin and its interpreter; a path exec (execve) is never needed.
  if ((rc = add_rule(f.ctx, SCMP_ACT_ALLOW, SCMP_SYS(execveat),
                     arg_cmp(4, SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH))) != 0)
    return filter_error("execveat", rc);
  // Threads only: no new process (a fork bomb, each child with its own
  // rlimits) and no new namespace. clone3 passes its flags in memory that a
  // filter cannot read, so it says ENOSYS and the C library falls back to clone.
  if ((rc = add_rule(f.ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone),
                     arg_cmp(0, SCMP_CMP_MASKED_EQ, kNamespaceFlags | CLONE_THREAD, CLONE_THREAD))) != 0)
    return filter_error("clone", rc);
  // Landlock does not mediate chmod, and a capability-less root still owns
  // every root-owned file it can open (its libraries too). Path-based chmod
  // is not allowed at all; fchmod only to 0600, the one mode a staged file has.
  if ((rc = add_rule(f.ctx, SCMP_ACT_ALLOW, SCMP_SYS(fchmod), arg_cmp(1, SCMP_CMP_EQ, 0600))) != 0)
    return filter_error("fchmod", rc);
  if ((rc = seccomp_rule_add(f.ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) != 0)
    return filter_error("clone3", rc);
  for (int opt : kAllowedPrctl) {
    if ((rc = add_rule(f.ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl),
                       arg_cmp(0, SCMP_CMP_EQ, static_cast<scmp_datum_t>(opt)))) != 0)
      return filter_error("prctl", rc);
  }
  for (unsigned long req : kAllowedIoctl) {
    // The request is an unsigned int in the kernel; compare the low 32 bits only.
    if ((rc = add_rule(f.ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), arg_cmp(1, SCMP_CMP_MASKED_EQ, 0xffffffffULL, req))) != 0)
      return filter_error("ioctl", rc);
  }

  // Export through a memfd: no size guess, no pipe that could fill up.
  UniqueFd mem(::memfd_create("dot-seccomp", MFD_CLOEXEC));
  if (!mem) return make_error(Code::SandboxUnavailable, "seccomp", fmt::format("seccomp: memfd_create: {}", std::strerror(errno)));
  if ((rc = seccomp_export_bpf(f.ctx, mem.get())) != 0) return filter_error("export", rc);
  off_t size = ::lseek(mem.get(), 0, SEEK_END);
  if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0 || size > (1 << 20))
    return make_error(Code::SandboxUnavailable, "seccomp", "seccomp: exported filter has an impossible size");
  std::vector<sock_filter> prog(static_cast<std::size_t>(size) / sizeof(sock_filter));
  std::size_t done = 0;
  auto* out = reinterpret_cast<char*>(prog.data());
  while (done < static_cast<std::size_t>(size)) {
    ssize_t n = ::pread(mem.get(), out + done, static_cast<std::size_t>(size) - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return make_error(Code::SandboxUnavailable, "seccomp", "seccomp: reading the exported filter failed");
    done += static_cast<std::size_t>(n);
  }
  if (prog.size() > BPF_MAXINSNS)
    return make_error(Code::SandboxUnavailable, "seccomp", fmt::format("seccomp: filter of {} instructions is over the kernel's limit", prog.size()));
  return prog;
}

}  // namespace dot::sandbox_detail
