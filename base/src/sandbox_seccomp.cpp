// The seccomp filter of a contained plugin: an allowlist compiled by
// libseccomp and exported to classic BPF in the parent, so that the child
// only has to hand the finished program to the kernel (after writing its own
// pid into it, bind_to_self()).
//
// Anything not listed kills the whole plugin (SECCOMP_RET_KILL_PROCESS):
// sockets, ptrace and process_vm_*, mount and friends, keyctl, bpf,
// unshare/setns and namespace-creating clone flags, personality, io_uring,
// memfd_create, perf, userfaultfd, fork, chmod and chown, utimes, xattrs,
// every call that acts on another process (pidfd_*, kcmp, process_madvise,
// sched_set*, setpriority, rt_*sigqueueinfo...). The list is what a
// dynamically linked C/C++ program needs to start, use memory, threads and
// time, and read or write the files Landlock lets it open; the calls on it
// that name a process are allowed on the plugin itself only (kSelfOnly).

#include <linux/filter.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <termios.h>
#include <unistd.h>

#include <fcntl.h>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "dot/base/error_kinds.h"
#include "dot/base/fd.h"
#include "dot/base/sandbox.h"
#include "sandbox_seccomp.h"

namespace dot::sandbox_detail {
namespace {

// Allowed without conditions. Names, so that one list serves every
// architecture: a name the running architecture lacks is skipped.
constexpr const char* kAllowed[] = {
    // I/O on descriptors the process already holds or Landlock lets it open.
    "read",
    "write",
    "readv",
    "writev",
    "pread64",
    "pwrite64",
    "preadv",
    "pwritev",
    "preadv2",
    "pwritev2",
    "lseek",
    "close",
    "close_range",
    "open",
    "openat",
    "openat2",
    "creat",
    "dup",
    "dup2",
    "dup3",
    "pipe",
    "pipe2",
    "poll",
    "ppoll",
    "select",
    "pselect6",
    "fsync",
    "fdatasync",
    "ftruncate",
    "truncate",
    "sendfile",
    "copy_file_range",
    "splice",
    // Metadata (Landlock mediates the opens; these only look or act on allowed files).
    "fstat",
    "stat",
    "lstat",
    "newfstatat",
    "statx",
    "statfs",
    "fstatfs",
    "access",
    "faccessat",
    "faccessat2",
    "readlink",
    "readlinkat",
    "getdents64",
    "getcwd",
    "umask",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "mkdir",
    "mkdirat",
    "rmdir",
    // Memory.
    "brk",
    "mmap",
    "munmap",
    "mremap",
    "mprotect",
    "madvise",
    "msync",
    "mincore",
    // Process and thread plumbing the C and C++ runtimes use.
    // wait4 and waitid only see the caller's own children, and it can have none.
    "arch_prctl",
    "set_tid_address",
    "set_robust_list",
    "rseq",
    "futex",
    "futex_waitv",
    "sched_yield",
    "getrandom",
    "exit",
    "exit_group",
    "restart_syscall",
    "wait4",
    "waitid",
    "getrlimit",
    "getrusage",
    "times",
    "uname",
    "sysinfo",
    // Signal handling; sending one is a rule of its own (kSelfOnly).
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "rt_sigpending",
    "rt_sigsuspend",
    "rt_sigtimedwait",
    "sigaltstack",
    // Identity, read-only, of the caller itself.
    "getpid",
    "gettid",
    "getppid",
    "getpgrp",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getresuid",
    "getresgid",
    "getgroups",
    // Time.
    "clock_gettime",
    "clock_getres",
    "clock_nanosleep",
    "gettimeofday",
    "time",
    "nanosleep",
};

// prctl options a runtime asks for; everything else (PR_SET_SECCOMP too,
// PR_SET_MM, PR_SET_PTRACER...) kills.
constexpr int kAllowedPrctl[] = {PR_GET_NAME,         PR_SET_NAME,    PR_GET_DUMPABLE, PR_CAPBSET_READ,
                                 PR_GET_NO_NEW_PRIVS, PR_GET_SECCOMP, PR_GET_PDEATHSIG};

// ioctl requests: terminal probing (isatty) and descriptor flags.
constexpr unsigned long kAllowedIoctl[] = {TCGETS, FIONREAD, FIONBIO, FIOCLEX, FIONCLEX};

// fcntl commands that act on the descriptor or its file only. Not F_SETOWN
// (a rule of its own: the owner receives SIGIO and the F_SETSIG signal, which
// the kernel lets a root-owned descriptor send to any process), not
// F_SETOWN_EX (its owner is in memory, out of a filter's sight), not
// F_SETLEASE or F_NOTIFY (a lease on a root-owned library the plugin may read
// would stall every writer of it).
constexpr int kAllowedFcntl[] = {F_DUPFD,     F_DUPFD_CLOEXEC, F_GETFD,      F_SETFD,     F_GETFL,
                                 F_SETFL,     F_GETLK,         F_SETLK,      F_SETLKW,    F_OFD_GETLK,
                                 F_OFD_SETLK, F_OFD_SETLKW,    F_GETOWN,     F_GETOWN_EX, F_GETSIG,
                                 F_SETSIG,    F_GETPIPE_SZ,    F_SETPIPE_SZ, F_GET_SEALS, F_ADD_SEALS};

// System calls whose first argument names a process, a thread or a process
// group. The kernel would let a capability-less root act on every process of
// uid 0 through them (set dot-core's file-size limit to 0, signal it...), so
// they are allowed on the plugin itself only: 0 (the kernel's "the caller")
// or its own pid, and for kill() minus its pid, its process group, whose only
// member it is (a new session, and no fork). Any other target is refused
// with `refusal`; docs/sandbox.md lists each call with its rule.
struct SelfOnly {
  const char* name;
  bool group;   // also minus the pid
  int refusal;  // errno for any other target
};
constexpr SelfOnly kSelfOnly[] = {
    {"prlimit64", false, EPERM},
    {"getpgid", false, EPERM},
    {"getsid", false, EPERM},
    {"get_robust_list", false, EPERM},
    // Of the plugin's own threads only the main one (tid = pid) can be known
    // here. glibc's pthread_getattr_np asks for each thread's affinity and
    // takes ENOSYS as "no affinity support", so that answer keeps it working
    // on the other threads, where EPERM would make it fail.
    {"sched_getaffinity", false, ENOSYS},
    {"kill", true, EPERM},
    // The kernel checks that the thread belongs to the group: any thread of
    // the plugin (raise, abort and pthread_kill use this one).
    {"tgkill", false, EPERM},
    // A bare thread id: the main thread only (glibc does not use tkill).
    {"tkill", false, EPERM},
};

// Placeholders for the plugin's pid and minus its pid, until bind_to_self().
// Neither is a pid (above PID_MAX_LIMIT) nor any other constant of the
// program, which build_seccomp_filter() checks.
constexpr std::uint32_t kSelfPlaceholder = 0x7d01f2a3;
constexpr std::uint32_t kGroupPlaceholder = static_cast<std::uint32_t>(-static_cast<std::int32_t>(kSelfPlaceholder));

constexpr std::uint64_t kNamespaceFlags = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |
                                          CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWTIME;

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

// An int argument (a pid, an ioctl request, an fcntl command): the kernel
// reads the low 32 bits of the register only, so the upper half (sign
// extension, or anything a hostile caller puts there) must not decide.
scmp_arg_cmp low32_eq(unsigned arg, std::uint32_t value) {
  return arg_cmp(arg, SCMP_CMP_MASKED_EQ, 0xffffffffULL, value);
}

int add_rule(scmp_filter_ctx ctx, std::uint32_t action, int nr, const scmp_arg_cmp& cmp) {
  return seccomp_rule_add_array(ctx, action, nr, 1, &cmp);
}

Error filter_error(const char* step, int rc) {
  return make_error(base::ErrorKind::Seccomp,
                    fmt::format("seccomp: building the filter failed at {}: {}", step, std::strerror(-rc)));
}

// Allows `nr` when argument `arg` is the plugin itself (see kSelfOnly) and,
// with `also`, that comparison holds too; refuses any other target with
// `refusal`. The refusal rule matches every nonzero target, the plugin's
// pid included: libseccomp (2.5) emits the equality tests of the allow
// rules, added first, before it; CallOnItself checks that it still does.
// Were it ever the other way round, the plugin would be refused on itself
// too, never allowed on another.
int add_self_only(scmp_filter_ctx ctx, int nr, unsigned arg, bool group, int refusal,
                  const scmp_arg_cmp* also = nullptr) {
  int rc;
  for (std::uint32_t target : {0U, kSelfPlaceholder, kGroupPlaceholder}) {
    if (target == kGroupPlaceholder && !group) continue;
    const scmp_arg_cmp cmps[2] = {low32_eq(arg, target), also != nullptr ? *also : scmp_arg_cmp{}};
    if ((rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, also != nullptr ? 2 : 1, cmps)) != 0) return rc;
  }
  const scmp_arg_cmp cmps[2] = {arg_cmp(arg, SCMP_CMP_NE, 0), also != nullptr ? *also : scmp_arg_cmp{}};
  return seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(static_cast<std::uint32_t>(refusal)), nr, also != nullptr ? 2 : 1,
                                cmps);
}

// The instructions that compare with a placeholder. Each must be a plain
// equality test: anything else holding that constant would be rewritten by
// bind_to_self() as well.
Status find_slots(SeccompProgram& p) {
  for (std::size_t i = 0; i < p.insns.size(); ++i) {
    const sock_filter& in = p.insns[i];
    if (in.k != kSelfPlaceholder && in.k != kGroupPlaceholder) continue;
    if (in.code != (BPF_JMP | BPF_JEQ | BPF_K))
      return make_error(base::ErrorKind::Seccomp,
                        fmt::format("seccomp: instruction {} of the exported filter holds the pid placeholder but is "
                                    "not a comparison (code {:#x})",
                                    i, in.code));
    (in.k == kSelfPlaceholder ? p.self_slots : p.group_slots).push_back(i);
  }
  if (p.self_slots.empty() || p.group_slots.empty())
    return make_error(base::ErrorKind::Seccomp,
                      "seccomp: the exported filter lost its comparisons with the plugin's pid");
  return {};
}

}  // namespace

void bind_to_self(SeccompProgram& program, pid_t self) noexcept {
  for (std::size_t i : program.self_slots) program.insns[i].k = static_cast<std::uint32_t>(self);
  for (std::size_t i : program.group_slots) program.insns[i].k = static_cast<std::uint32_t>(-self);
}

Result<SeccompProgram> build_seccomp_filter() {
  FilterCtx f;
  f.ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
  if (f.ctx == nullptr)
    return make_error(base::ErrorKind::Seccomp, "seccomp: libseccomp could not initialise a filter");
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
  // Signals too: with the pid rule they stay inside the plugin on every
  // Landlock ABI (from ABI 6 Landlock scopes them as well).
  for (const SelfOnly& s : kSelfOnly) {
    int nr = seccomp_syscall_resolve_name(s.name);
    if (nr == __NR_SCMP_ERROR) continue;
    if ((rc = add_self_only(f.ctx, nr, 0, s.group, s.refusal)) != 0) return filter_error(s.name, rc);
  }
  for (int cmd : kAllowedFcntl)
    if ((rc = add_rule(f.ctx, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), low32_eq(1, static_cast<std::uint32_t>(cmd)))) != 0)
      return filter_error("fcntl", rc);
  const scmp_arg_cmp setown = low32_eq(1, F_SETOWN);
  if ((rc = add_self_only(f.ctx, SCMP_SYS(fcntl), 2, true, EPERM, &setown)) != 0)
    return filter_error("fcntl F_SETOWN", rc);
  if ((rc = add_rule(f.ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(fcntl), low32_eq(1, F_SETOWN_EX))) != 0)
    return filter_error("fcntl F_SETOWN_EX", rc);
  // capget names its process inside the header it points to, which a filter
  // cannot read: refused whatever it asks (the plugin has no capability to
  // learn about anyway).
  if ((rc = seccomp_rule_add(f.ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(capget), 0)) != 0)
    return filter_error("capget", rc);
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
  // is not allowed at all; fchmod only to 0600, the one mode a staged file
  // has, and 0700, the one mode a staged folder has (general profile).
  for (const scmp_datum_t mode : {0600, 0700})
    if ((rc = add_rule(f.ctx, SCMP_ACT_ALLOW, SCMP_SYS(fchmod), arg_cmp(1, SCMP_CMP_EQ, mode))) != 0)
      return filter_error("fchmod", rc);
  if ((rc = seccomp_rule_add(f.ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) != 0)
    return filter_error("clone3", rc);
  for (int opt : kAllowedPrctl) {
    if ((rc = add_rule(f.ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl),
                       arg_cmp(0, SCMP_CMP_EQ, static_cast<scmp_datum_t>(opt)))) != 0)
      return filter_error("prctl", rc);
  }
  for (unsigned long req : kAllowedIoctl) {
    if ((rc = add_rule(f.ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), low32_eq(1, static_cast<std::uint32_t>(req)))) != 0)
      return filter_error("ioctl", rc);
  }

  // Export through a memfd: no size guess, no pipe that could fill up.
  UniqueFd mem(::memfd_create("dot-seccomp", MFD_CLOEXEC));
  if (!mem) return make_error(base::ErrorKind::Seccomp, fmt::format("seccomp: memfd_create: {}", std::strerror(errno)));
  if ((rc = seccomp_export_bpf(f.ctx, mem.get())) != 0) return filter_error("export", rc);
  off_t size = ::lseek(mem.get(), 0, SEEK_END);
  if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0 || size > (1 << 20))
    return make_error(base::ErrorKind::Seccomp, "seccomp: exported filter has an impossible size");
  SeccompProgram prog;
  prog.insns.resize(static_cast<std::size_t>(size) / sizeof(sock_filter));
  std::size_t done = 0;
  auto* out = reinterpret_cast<char*>(prog.insns.data());
  while (done < static_cast<std::size_t>(size)) {
    ssize_t n = ::pread(mem.get(), out + done, static_cast<std::size_t>(size) - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return make_error(base::ErrorKind::Seccomp, "seccomp: reading the exported filter failed");
    done += static_cast<std::size_t>(n);
  }
  if (prog.insns.size() > BPF_MAXINSNS)
    return make_error(base::ErrorKind::Seccomp,
                      fmt::format("seccomp: filter of {} instructions is over the kernel's limit", prog.insns.size()));
  DOT_TRY(find_slots(prog));
  return prog;
}

}  // namespace dot::sandbox_detail
