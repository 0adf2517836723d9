// sandbox-probe: a plugin that attempts one forbidden act. Built without
// sanitizers (a sanitizer runtime cannot start under a 1 GiB address-space
// limit) and against nothing of ours, so that what it does is only what the
// source says.
//
// The act is argv[1], or else taken from the name of the executable file
// (`probe-<act>`), or built in (PROBE_ACT, for the sandbox-plan-probe-<act>
// plugins that `dot-core plan` runs with no arguments from a pinned copy).
// Targets live next to the executable, or for a plan probe in <base>/targets
// when the root is <base>/root (found from DOT_STAGE_ROOT, which is
// <base>/root/.dot/stage/<id>: one folder per test, so tests run in
// parallel), which a contained probe is not allowed to read or write:
// <dir>/secret (read), <dir>/written-outside (write), <dir>/port (its size is
// the port to connect to).
// Acts that are not forbidden but end the probe the way a forbidden one
// would: write-1m-sigxfsz (killed by SIGXFSZ), raise-sigsys, sleep, abort
// (SIGABRT, which glibc raises through tgkill on itself). at-<call>-<who>
// aims one system call at a process (act_at); threads signals and inspects
// its own threads.
//
// With an argument it prints one line, `<act>: <outcome>`, and exits 0 (it
// may of course be killed first). Without one it prints that line on stderr
// and then serves the DPP hello profile, putting the line into hello.txt, so
// that an act that succeeded shows in the sealed plan (or, asked for the
// general profile, org.dot.dpp/v1 as plugin org.test.probe, into probe.txt).

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

std::string errno_text(int e) { return std::string("blocked (") + std::strerror(e) + ")"; }

std::string exe_path() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  return std::string(buf, static_cast<std::size_t>(n));
}

[[maybe_unused]] std::string exe_dir() {
  std::string p = exe_path();
  auto slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

std::string act_read_outside(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_text(errno);
  char buf[256];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n < 0) return errno_text(errno);
  std::string s(buf, static_cast<std::size_t>(n));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return "read " + s;
}

std::string act_list(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno_text(errno);
  char buf[4096];
  long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
  ::close(fd);
  return n < 0 ? errno_text(errno) : "listed the folder";
}

std::string act_write_outside(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return errno_text(errno);
  ssize_t n = ::write(fd, "pwned\n", 6);
  ::close(fd);
  return n == 6 ? "wrote " + path : errno_text(errno);
}

// In a general plugin's cache folder <dir>/cache: what a plugin keeping a
// cache does (a file written beside the old one and renamed over it, a
// folder), one "name: outcome" per step; or, with `link`, what it must not
// do there: a symlink, or a hard link to a file outside (which would make
// that file readable through the cache).
std::string act_cache(const std::string& dir, const std::string& link) {
  const std::string cache = dir + "/cache";
  if (link == "symlink")
    return ::symlinkat("/etc/passwd", AT_FDCWD, (cache + "/link").c_str()) == 0 ? "made a symlink" : errno_text(errno);
  if (link == "link")
    return ::linkat(AT_FDCWD, (dir + "/secret").c_str(), AT_FDCWD, (cache + "/secret").c_str(), 0) == 0
               ? "linked the secret"
               : errno_text(errno);
  std::string out;
  auto step = [&](const char* name, int rc) {
    out += std::string(out.empty() ? "" : ", ") + name + ": " + (rc == 0 ? "done" : errno_text(errno));
  };
  std::string wrote = act_write_outside(cache + "/index.new");
  step("write", wrote.rfind("wrote", 0) == 0 ? 0 : -1);
  step("rename", ::renameat(AT_FDCWD, (cache + "/index.new").c_str(), AT_FDCWD, (cache + "/index").c_str()));
  step("mkdir", ::mkdirat(AT_FDCWD, (cache + "/sub").c_str(), 0700));
  return out;
}

std::string act_connect(int port) {
  int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return errno_text(errno);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int rc = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  int e = errno;
  if (rc == 0) (void)!::write(s, "probe\n", 6);
  ::close(s);
  return rc == 0 ? "connected to port " + std::to_string(port) : errno_text(e);
}

// As a plugin, stdout is the protocol: the shell leaves a marker file instead.
std::string act_exec_sh(const std::string& marker) {
  char arg0[] = "sh", arg1[] = "-c";
  std::string cmd = marker.empty() ? "echo exec-sh: sh ran" : "echo sh ran > " + marker;
  char* argv[] = {arg0, arg1, cmd.data(), nullptr};
  char* envp[] = {nullptr};
  ::execve("/bin/sh", argv, envp);
  return errno_text(errno);
}

// The same through a descriptor, the way the plugin itself was started:
// seccomp allows this form, so only Landlock stands in the way.
std::string act_exec_sh_fd() {
  int fd = ::open("/bin/sh", O_PATH | O_CLOEXEC);
  if (fd < 0) return errno_text(errno);
  char arg0[] = "sh", arg1[] = "-c", arg2[] = "echo exec-sh-fd: sh ran";
  char* argv[] = {arg0, arg1, arg2, nullptr};
  char* envp[] = {nullptr};
  char empty[] = "";
  ::syscall(SYS_execveat, fd, empty, argv, envp, AT_EMPTY_PATH);
  return errno_text(errno);
}

std::string act_alloc_2g() {
  const std::size_t size = std::size_t{2} << 30;
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return errno_text(errno);
  // Touch both ends so the pages really exist.
  static_cast<volatile char*>(p)[0] = 1;
  static_cast<volatile char*>(p)[size - 1] = 1;
  ::munmap(p, size);
  return "allocated 2 GiB";
}

double cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

std::string act_spin_cpu(double seconds) {
  volatile unsigned long sink = 0;
  while (cpu_seconds() < seconds)
    for (int i = 0; i < 100000; ++i) sink = sink + static_cast<unsigned long>(i);
  return "spun " + std::to_string(static_cast<int>(seconds)) + " s of CPU";
}

// With `survive_limit`, SIGXFSZ is ignored and the limit shows as EFBIG;
// without, the kernel's SIGXFSZ ends the probe (what the host must report).
std::string act_write_1m(const std::string& path, bool survive_limit) {
  if (survive_limit) ::signal(SIGXFSZ, SIG_IGN);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return errno_text(errno);
  std::string chunk(64 * 1024, 'x');
  std::size_t total = 0;
  for (int i = 0; i < 16; ++i) {
    ssize_t n = ::write(fd, chunk.data(), chunk.size());
    if (n < 0) {
      int e = errno;
      ::close(fd);
      return errno_text(e) + " after " + std::to_string(total) + " bytes";
    }
    total += static_cast<std::size_t>(n);
    if (static_cast<std::size_t>(n) < chunk.size()) break;
  }
  ::close(fd);
  return total == (std::size_t{1} << 20) ? "wrote 1 MiB" : "short write (" + std::to_string(total) + " bytes)";
}

std::string act_ptrace_parent() {
  // SEIZE does not stop the parent, so the attempt leaves it undisturbed.
  pid_t parent = ::getppid();
  if (::ptrace(PTRACE_SEIZE, parent, nullptr, nullptr) != 0) return errno_text(errno);
  ::ptrace(PTRACE_DETACH, parent, nullptr, nullptr);
  return "attached to parent " + std::to_string(parent);
}

std::string act_signal_parent() {
  if (::kill(::getppid(), 0) != 0) return errno_text(errno);
  return "signalled parent";
}

std::string act_fork() {
  pid_t pid = ::fork();
  if (pid < 0) return errno_text(errno);
  if (pid == 0) ::_exit(0);
  int ws = 0;
  ::waitpid(pid, &ws, 0);
  return "forked a child";
}

std::string act_chmod_outside(const std::string& path) {
  if (::chmod(path.c_str(), 0604) != 0) return errno_text(errno);
  return "chmod 0604 " + path;
}

// fchmod through a descriptor Landlock does hand out (the probe's own
// executable, read-only): the mode filter is what refuses it.
std::string act_fchmod_exe(const std::string& exe) {
  int fd = ::open(exe.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_text(errno);
  int rc = ::fchmod(fd, 0777);
  int e = errno;
  ::close(fd);
  return rc == 0 ? "fchmod 0777 " + exe : errno_text(e);
}

// Not blocked, by design of Landlock: metadata of any path stays visible.
std::string act_stat_outside(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return errno_text(errno);
  return "size " + std::to_string(st.st_size) + " uid " + std::to_string(st.st_uid);
}

// What a raw system call returned: "returned 0", "returned -1 (Bad address)".
std::string returned(long r, int e) {
  return "returned " + std::to_string(r) + (r < 0 ? std::string(" (") + std::strerror(e) + ")" : "");
}

// One system call the seccomp allowlist leaves out, with arguments that
// change nothing when the kernel does run it (a missing path, a bad
// descriptor, a query). Uncontained the call returns; contained the filter
// kills the probe before it does.
std::string act_syscall(const std::string& name) {
  long r = -2;
  errno = 0;
  if (name == "mount")
    r = ::syscall(SYS_mount, "none", "/nonexistent-dot-probe", "tmpfs", 0UL, nullptr);
  else if (name == "umount2")
    r = ::syscall(SYS_umount2, "/nonexistent-dot-probe", 0);
  else if (name == "chroot")
    r = ::syscall(SYS_chroot, "/nonexistent-dot-probe");
  else if (name == "pivot_root")
    r = ::syscall(SYS_pivot_root, "/nonexistent-dot-probe", "/nonexistent-dot-probe");
  else if (name == "keyctl")
    r = ::syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* session */, 0);
  else if (name == "add_key")
    r = ::syscall(SYS_add_key, "dot-no-such-type", "d", nullptr, 0, -3);
  else if (name == "bpf")
    r = ::syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, nullptr, 0);
  else if (name == "unshare")
    r = ::syscall(SYS_unshare, 0);
  else if (name == "setns")
    r = ::syscall(SYS_setns, -1, 0);
  else if (name == "personality")
    r = ::syscall(SYS_personality, 0xffffffffUL);
  else if (name == "io_uring_setup")
    r = ::syscall(SYS_io_uring_setup, 0, nullptr);
  else if (name == "perf_event_open")
    r = ::syscall(SYS_perf_event_open, nullptr, 0, -1, -1, 0);
  else if (name == "process_vm_readv")
    r = ::syscall(SYS_process_vm_readv, ::getppid(), nullptr, 0, nullptr, 0, 0);
  else if (name == "setuid")
    r = ::syscall(SYS_setuid, ::getuid());
  else if (name == "memfd_create") {
    r = ::syscall(SYS_memfd_create, "dot-probe", 0);
    if (r >= 0) ::close(static_cast<int>(r));
  } else
    return "unknown system call";
  return returned(r, errno);
}

// A system call aimed at a process: `who` is "parent" (the host that spawned
// the probe), "init" (pid 1), "self" (the probe's own pid) or "zero" (0, the
// kernel's word for the caller). Each acts as little as the call allows where
// the kernel does run it: a query, signal 0, or a bad pointer or descriptor
// the kernel rejects before it acts. The one exception is prlimit64-write,
// which lowers the target's soft RLIMIT_MSGQUEUE by one (never init's): the
// act the test looks for in its own limits.
std::string act_at(const std::string& call, const std::string& who) {
  const pid_t pid = who == "parent" ? ::getppid() : who == "init" ? 1 : who == "self" ? ::getpid() : 0;
  if (pid == 0 && who != "zero") return "unknown target";
  long r = -2;
  errno = 0;
  if (call == "prlimit64") {
    rlimit old{};
    r = ::syscall(SYS_prlimit64, pid, RLIMIT_NOFILE, nullptr, &old);
  } else if (call == "prlimit64-write") {
    if (pid == 1) return "not on init";
    rlimit own{};
    if (::syscall(SYS_prlimit64, 0, RLIMIT_MSGQUEUE, nullptr, &own) != 0) return errno_text(errno);
    const rlimit lower{own.rlim_cur > 0 ? own.rlim_cur - 1 : 0, own.rlim_max};
    r = ::syscall(SYS_prlimit64, pid, RLIMIT_MSGQUEUE, &lower, nullptr);
  } else if (call == "getpgid") {
    r = ::syscall(SYS_getpgid, pid);
  } else if (call == "getsid") {
    r = ::syscall(SYS_getsid, pid);
  } else if (call == "get_robust_list") {
    void* head = nullptr;
    std::size_t len = 0;
    r = ::syscall(SYS_get_robust_list, pid, &head, &len);
  } else if (call == "sched_getaffinity") {
    cpu_set_t set;
    r = ::syscall(SYS_sched_getaffinity, pid, sizeof set, &set);
  } else if (call == "kill") {
    r = ::syscall(SYS_kill, pid, 0);
  } else if (call == "kill-group") {
    // Minus the pid: its process group; for init, kill(-1): every process.
    r = ::syscall(SYS_kill, -pid, 0);
  } else if (call == "tgkill") {
    r = ::syscall(SYS_tgkill, pid, pid, 0);
  } else if (call == "tkill") {
    r = ::syscall(SYS_tkill, pid, 0);
  } else if (call == "fcntl-setown") {
    // The owner of stderr's open file gets its SIGIO (never raised: no O_ASYNC).
    r = ::syscall(SYS_fcntl, 2, F_SETOWN, pid);
  } else if (call == "fcntl-setown-group") {
    r = ::syscall(SYS_fcntl, 2, F_SETOWN, -pid);
  } else if (call == "capget") {
    __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, pid};
    __user_cap_data_struct data[2]{};
    r = ::syscall(SYS_capget, &hdr, data);
  } else if (call == "sched_setaffinity") {
    r = ::syscall(SYS_sched_setaffinity, pid, sizeof(cpu_set_t), nullptr);  // EFAULT
  } else if (call == "sched_getparam") {
    r = ::syscall(SYS_sched_getparam, pid, nullptr);  // EINVAL
  } else if (call == "sched_setparam") {
    r = ::syscall(SYS_sched_setparam, pid, nullptr);  // EINVAL
  } else if (call == "sched_getscheduler") {
    r = ::syscall(SYS_sched_getscheduler, pid);
  } else if (call == "sched_setscheduler") {
    r = ::syscall(SYS_sched_setscheduler, pid, 0, nullptr);  // EINVAL
  } else if (call == "sched_getattr") {
    r = ::syscall(SYS_sched_getattr, pid, nullptr, 0, 0);  // EINVAL
  } else if (call == "sched_setattr") {
    r = ::syscall(SYS_sched_setattr, pid, nullptr, 0);  // EINVAL
  } else if (call == "sched_rr_get_interval") {
    timespec t{};
    r = ::syscall(SYS_sched_rr_get_interval, pid, &t);
  } else if (call == "getpriority") {
    r = ::syscall(SYS_getpriority, PRIO_PROCESS, pid);
  } else if (call == "setpriority") {
    r = ::syscall(SYS_setpriority, 99 /* no such kind of target: EINVAL */, pid, 0);
  } else if (call == "ioprio_get") {
    r = ::syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, pid);
  } else if (call == "ioprio_set") {
    r = ::syscall(SYS_ioprio_set, 1, pid, 7 << 13 /* no such class: EINVAL */);
  } else if (call == "setpgid") {
    r = ::syscall(SYS_setpgid, pid, pid);  // only itself or its children: ESRCH
  } else if (call == "rt_sigqueueinfo") {
    r = ::syscall(SYS_rt_sigqueueinfo, pid, 0, nullptr);  // EFAULT
  } else if (call == "rt_tgsigqueueinfo") {
    r = ::syscall(SYS_rt_tgsigqueueinfo, pid, pid, 0, nullptr);  // EFAULT
  } else if (call == "pidfd_open") {
    r = ::syscall(SYS_pidfd_open, pid, 0);
    if (r >= 0) ::close(static_cast<int>(r));
  } else if (call == "pidfd_send_signal") {
    r = ::syscall(SYS_pidfd_send_signal, -1, 0, nullptr, 0);  // EBADF: a pidfd is needed first
  } else if (call == "pidfd_getfd") {
    r = ::syscall(SYS_pidfd_getfd, -1, 0, 0);  // EBADF
  } else if (call == "process_madvise") {
    r = ::syscall(SYS_process_madvise, -1, nullptr, 0, 0, 0);  // EBADF
  } else if (call == "process_mrelease") {
    r = ::syscall(SYS_process_mrelease, -1, 0);  // EBADF
  } else if (call == "migrate_pages") {
    // A node mask longer than a page: EINVAL before the target is looked up.
    static const unsigned long nodes = 0;
    r = ::syscall(SYS_migrate_pages, pid, 1UL << 30, &nodes, &nodes);
  } else if (call == "kcmp") {
    r = ::syscall(SYS_kcmp, pid, ::getpid(), 1 /* KCMP_VM */, 0, 0);
  } else if (call == "process_vm_readv") {
    r = ::syscall(SYS_process_vm_readv, pid, nullptr, 0, nullptr, 0, 0);  // nothing to read
  } else if (call == "process_vm_writev") {
    r = ::syscall(SYS_process_vm_writev, pid, nullptr, 0, nullptr, 0, 0);  // nothing to write
  } else if (call == "ptrace") {
    r = ::syscall(SYS_ptrace, PTRACE_INTERRUPT, pid, nullptr, nullptr);  // ESRCH: not its tracee
  } else if (call == "move_pages") {
    r = ::syscall(SYS_move_pages, pid, 0, nullptr, nullptr, nullptr, 0);  // no page
  } else if (call == "perf_event_open") {
    r = ::syscall(SYS_perf_event_open, nullptr, pid, -1, -1, 0);  // EFAULT
  } else {
    return "unknown system call";
  }
  return returned(r, errno);
}

// Another process's /proc folder: what a same-uid process would read there
// (environment, executable, working directory, status), and its metadata.
std::string act_proc(const std::string& who) {
  const std::string dir = "/proc/" + std::to_string(who == "init" ? 1 : ::getppid());
  std::string out;
  for (const char* file : {"environ", "status"}) {
    int fd = ::open((dir + "/" + file).c_str(), O_RDONLY | O_CLOEXEC);
    out += std::string(file) + " " + (fd >= 0 ? "opened" : errno_text(errno)) + ", ";
    if (fd >= 0) ::close(fd);
  }
  for (const char* link : {"exe", "cwd"}) {
    char buf[256];
    ssize_t n = ::readlink((dir + "/" + link).c_str(), buf, sizeof buf);
    out += std::string(link) + " " + (n >= 0 ? "read" : errno_text(errno)) + ", ";
  }
  struct stat st;
  out += ::stat(dir.c_str(), &st) == 0 ? "stat uid " + std::to_string(st.st_uid) : "stat " + errno_text(errno);
  return out;
}

// What a program linked with pthreads does to its own threads: glibc's
// pthread_getattr_np asks for a thread's CPU affinity (sched_getaffinity on
// its tid), raise() in a thread and pthread_kill() signal through tgkill.
// (Not pthread_getattr_np on the main thread: that one reads
// /proc/self/maps, which Landlock does not hand out.)
std::atomic<int> g_usr1_seen{0};

std::string act_threads() {
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_usr1_seen.fetch_add(1); };
  if (::sigaction(SIGUSR1, &sa, nullptr) != 0) return errno_text(errno);
  struct Seen {
    int attr = -1, raised = -1;
  } seen;
  pthread_t t;
  int e = ::pthread_create(
      &t, nullptr,
      [](void* p) -> void* {
        auto* s = static_cast<Seen*>(p);
        pthread_attr_t a;
        s->attr = ::pthread_getattr_np(::pthread_self(), &a);
        if (s->attr == 0) ::pthread_attr_destroy(&a);
        s->raised = ::raise(SIGUSR1);
        return nullptr;
      },
      &seen);
  if (e != 0) return errno_text(e);
  ::pthread_join(t, nullptr);
  int killed = ::pthread_kill(::pthread_self(), SIGUSR1);
  return "getattr " + std::to_string(seen.attr) + ", raise " + std::to_string(seen.raised) + ", pthread_kill " +
         std::to_string(killed) + ", handled " + std::to_string(g_usr1_seen.load());
}

// Threads as a hostile plugin would make them: clone() with a 16 KiB stack
// each rather than glibc's megabytes, so the address-space limit does not
// bound their number. Each waits on a futex no one wakes until exit_group
// ends them all. They share the main thread's TLS (no CLONE_SETTLS), so they
// run nothing but that system call.
int park_forever(void*) {
  static int never = 0;
  for (;;) ::syscall(SYS_futex, &never, FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
}

std::string act_raw_threads(int n) {
  const std::size_t stack = 16 * 1024;
  auto* stacks = static_cast<char*>(
      ::mmap(nullptr, stack * static_cast<std::size_t>(n), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (stacks == MAP_FAILED) return errno_text(errno);
  timespec t0{}, t1{};
  ::clock_gettime(CLOCK_MONOTONIC, &t0);
  const int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
  for (int made = 0; made < n; ++made) {
    if (::clone(park_forever, stacks + stack * static_cast<std::size_t>(made + 1), flags, nullptr) < 0)
      return errno_text(errno) + " after " + std::to_string(made) + " threads";
  }
  ::clock_gettime(CLOCK_MONOTONIC, &t1);
  const long us = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
  // The time goes to stderr: the line on stdout is what a test compares.
  std::fprintf(stderr, "started %d threads in %ld us\n", n, us);
  return "started " + std::to_string(n) + " threads";
}

// The host's own file-size limit set to 0: the next file the host writes
// (its store) kills it with SIGXFSZ.
std::string act_fsize_parent() {
  const rlimit zero{0, 0};
  if (::syscall(SYS_prlimit64, ::getppid(), RLIMIT_FSIZE, &zero, nullptr) != 0) return errno_text(errno);
  return "set the parent's file-size limit to 0";
}

// RLIMIT_NOFILE: duplicates of stderr until 64 or the first failure.
std::string act_dup_files() {
  for (int n = 0; n < 64; ++n) {
    if (::fcntl(2, F_DUPFD_CLOEXEC, 3) < 0) return errno_text(errno) + " after " + std::to_string(n);
  }
  return "opened 64 more descriptors";
}

std::string act_wait() {
  std::printf("ready\n");
  std::fflush(stdout);
  char c;
  while (::read(0, &c, 1) > 0) {
  }
  return "done";
}

std::string sha256_hex(const std::string& bytes);

// The port of the loopback listener is the size of <dir>/port: stat() is not
// mediated by Landlock, so a contained probe learns it too and really tries.
int port_from(const std::string& dir) {
  struct stat st;
  return ::stat((dir + "/port").c_str(), &st) == 0 ? static_cast<int>(st.st_size) : 0;
}

std::string run_act(const std::string& act, const std::string& dir, bool plugin) {
  // Not forbidden: libcrypto initialises (and looks for its configuration
  // file, which Landlock hides) and hashes, as a real plugin would.
  if (act == "hash") return "sha256(abc) " + sha256_hex("abc");
  if (act == "none" || act == "wrong-assurance") return "nothing attempted";
  if (act == "read-outside") return act_read_outside(dir + "/secret");
  // A general plugin's declared input is <dir>/input (readable, never writable).
  if (act == "read-input") return act_read_outside(dir + "/input/inside.txt");
  if (act == "list-input") return act_list(dir + "/input");
  if (act == "write-input") return act_write_outside(dir + "/input/written");
  if (act == "write-outside") return act_write_outside(dir + "/written-outside");
  if (act == "cache") return act_cache(dir, "");
  if (act == "cache-symlink") return act_cache(dir, "symlink");
  if (act == "cache-link") return act_cache(dir, "link");
  if (act.rfind("connect-", 0) == 0) return act_connect(std::atoi(act.c_str() + 8));
  if (act == "connect") return act_connect(port_from(dir));
  if (act == "exec-sh") return act_exec_sh(plugin ? dir + "/sh-ran" : "");
  if (act == "exec-sh-fd") return act_exec_sh_fd();
  if (act == "alloc-2g") return act_alloc_2g();
  if (act == "spin-cpu") return act_spin_cpu(3.0);
  if (act == "spin-cpu-ignore-xcpu") {
    ::signal(SIGXCPU, SIG_IGN);  // past the soft limit, on to the hard one
    return act_spin_cpu(4.0);
  }
  if (act == "write-1m" || act == "write-1m-sigxfsz") {
    // In the working directory (the stage), where writing is allowed: only
    // the file-size limit stands in the way. A plugin removes it again, so
    // the stage holds exactly what it claims.
    std::string r = act_write_1m("big.bin", act == "write-1m");
    if (plugin) ::unlink("big.bin");
    return r;
  }
  if (act == "raise-sigsys") {
    // A SIGSYS no seccomp filter sent: the host must not blame one.
    ::raise(SIGSYS);
    return "survived SIGSYS";
  }
  if (act.rfind("syscall-", 0) == 0) return act_syscall(act.substr(8));
  if (act.rfind("at-", 0) == 0) {
    // at-<call>-<who>: the target is after the last dash.
    auto dash = act.rfind('-');
    return act_at(act.substr(3, dash - 3), act.substr(dash + 1));
  }
  if (act == "threads") return act_threads();
  if (act.rfind("raw-threads-", 0) == 0) return act_raw_threads(std::atoi(act.c_str() + 12));
  if (act == "proc-parent" || act == "proc-init") return act_proc(act.substr(5));
  if (act == "abort") std::abort();
  if (act == "fsize-parent") return act_fsize_parent();
  if (act == "dup-files") return act_dup_files();
  if (act == "sleep") {
    // Wall-clock time only: the session deadline, not an rlimit, ends this.
    timespec t{30, 0};
    while (::nanosleep(&t, &t) != 0) {
    }
    return "slept 30 s";
  }
  if (act == "ptrace-parent") return act_ptrace_parent();
  if (act == "signal-parent") return act_signal_parent();
  if (act == "wait") return act_wait();
  if (act == "fork") return act_fork();
  if (act == "stat-outside") return act_stat_outside(dir + "/secret");
  if (act == "chmod-outside") return act_chmod_outside(dir + "/secret");
  if (act == "fchmod-exe") return act_fchmod_exe(exe_path());
  return "unknown act";
}

// ---- a minimal DPP hello plugin (trusting core's well-formed requests) ----

bool read_exact(int fd, char* p, std::size_t n) {
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

bool read_frame(std::string& body) {
  std::string header;
  char c;
  while (header.size() < 64) {
    if (::read(0, &c, 1) != 1) return false;
    header += c;
    if (header.size() >= 4 && header.compare(header.size() - 4, 4, "\r\n\r\n") == 0) break;
  }
  const std::string prefix = "Content-Length: ";
  if (header.rfind(prefix, 0) != 0) return false;
  std::size_t n = std::strtoul(header.c_str() + prefix.size(), nullptr, 10);
  if (n == 0 || n > 65536) return false;
  body.assign(n, '\0');
  return read_exact(0, body.data(), n);
}

void write_frame(const std::string& body) {
  std::string out = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  const char* p = out.data();
  std::size_t n = out.size();
  while (n > 0) {
    ssize_t w = ::write(1, p, n);
    if (w <= 0) std::exit(3);
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

// The string value of "key" in a flat JSON text (core's values have no escapes).
std::string string_field(const std::string& json, const std::string& key) {
  auto k = json.find("\"" + key + "\":\"");
  if (k == std::string::npos) return "";
  auto start = k + key.size() + 4;
  auto end = json.find('"', start);
  return end == std::string::npos ? "" : json.substr(start, end - start);
}

long id_field(const std::string& json) {
  auto k = json.find("\"id\":");
  return k == std::string::npos ? 0 : std::strtol(json.c_str() + k + 5, nullptr, 10);
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) > 0x7e) continue;
    out += ch;
  }
  return out;
}

std::string sha256_hex(const std::string& bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr) != 1) return "";
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  return out;
}

bool write_stage_file(const std::string& stage, const std::string& name, const std::string& content) {
  int fd = ::open((stage + "/" + name).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  bool ok = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  ::fchmod(fd, 0600);
  return ::close(fd) == 0 && ok;
}

// The text of `"key":<open>...<close>` in a flat JSON text (core's limits
// object and inputs array hold no nested brackets).
std::string raw_member(const std::string& json, const std::string& key, char open, char close) {
  auto k = json.find("\"" + key + "\":" + open);
  if (k == std::string::npos) return "";
  auto end = json.find(close, k);
  return end == std::string::npos ? "" : json.substr(k, end + 1 - k);
}

// The general profile org.dot.dpp/v1: one written file, probe.txt, holding
// the act's outcome (the plugin is registered as org.test.probe).
std::string general_result(const std::string& method, const std::string& body, const std::string& act,
                           const std::string& outcome) {
  if (method == "dot.initialize")
    return "{\"assurance\":\"" + string_field(body, "required_assurance") +
           "\",\"capabilities\":[\"materialize\",\"plan\",\"post-commit-effects\",\"validate\"],"
           "\"id\":\"org.test.probe\"," +
           raw_member(body, "inputs", '[', ']') + "," + raw_member(body, "limits", '{', '}') + ",\"nonce\":\"" +
           string_field(body, "nonce") + "\",\"profile\":\"org.dot.dpp/v1\",\"protocol\":1}";
  if (method == "dot.plan")
    return "{\"effects\":[{\"failure_policy\":\"required\",\"kind\":\"sync\",\"target\":\"managed-root\"}],"
           "\"operations\":[{\"action\":\"write\",\"mode\":420,\"path\":\"probe.txt\"}]}";
  if (method == "dot.materialize") {
    const std::string text = "probe " + act + ": " + outcome + "\n";
    if (!write_stage_file(string_field(body, "stage"), "probe.txt", text)) return "";
    return "{\"artifacts\":[{\"path\":\"probe.txt\",\"sha256\":\"" + sha256_hex(text) +
           "\",\"size\":" + std::to_string(text.size()) + "}]}";
  }
  if (method == "dot.validate" || method == "dot.shutdown") return "{\"valid\":true}";
  return "";
}

int serve_dpp(const std::string& act, const std::string& outcome) {
  std::string body;
  std::string asked;  // required_assurance as core sent it, shown in welcome.txt
  bool general = false;
  while (read_frame(body)) {
    long id = id_field(body);
    std::string method = string_field(body, "method");
    std::string result;
    if (method == "dot.initialize") general = string_field(body, "profile") == "org.dot.dpp/v1";
    if (general) {
      result = general_result(method, body, act, outcome);
      if (result.empty()) return 5;
    } else if (method == "dot.initialize") {
      std::string assurance = string_field(body, "required_assurance");
      asked = assurance;
      if (act == "wrong-assurance") assurance = assurance == "process" ? "audit" : "process";
      result = "{\"protocol\":1,\"profile\":\"org.dot.hello/v1\",\"assurance\":\"" + assurance +
               "\",\"capabilities\":[\"materialize\",\"plan\",\"post-commit-effects\",\"validate\"],"
               "\"nonce\":\"" +
               string_field(body, "nonce") + "\",\"id\":\"org.dot.hello\"}";
    } else if (method == "dot.plan") {
      result =
          "{\"names\":[\"hello.txt\",\"welcome.txt\"],\"effects\":[{\"kind\":\"sync\","
          "\"target\":\"managed-root\",\"failure_policy\":\"required\"}]}";
    } else if (method == "dot.materialize") {
      std::string stage = string_field(body, "stage");
      const std::string files[2][2] = {
          {"hello.txt", "probe " + act + ": " + outcome + "\n"},
          {"welcome.txt", "welcome from the sandbox probe, asked for assurance " + asked + "\n"}};
      result = "{\"artifacts\":[";
      for (int i = 0; i < 2; ++i) {
        if (!write_stage_file(stage, files[i][0], files[i][1])) return 4;
        if (i) result += ",";
        result += "{\"name\":\"" + files[i][0] + "\",\"sha256\":\"" + sha256_hex(files[i][1]) +
                  "\",\"size\":" + std::to_string(files[i][1].size()) + "}";
      }
      result += "]}";
    } else if (method == "dot.validate" || method == "dot.shutdown") {
      result = "{\"valid\":true}";
    } else {
      return 5;
    }
    write_frame("{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) + ",\"result\":" + result + "}");
    if (method == "dot.shutdown") return 0;
  }
  return 6;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef PROBE_ACT
  // sandbox-plan-probe-<act>: a plugin for `dot-core plan`, which passes no
  // arguments and pins a copy under another name; the act is built in.
  (void)argc;
  (void)argv;
  const std::string act = PROBE_ACT;
  const char* stage_env = std::getenv("DOT_STAGE_ROOT");
  std::string dir = stage_env != nullptr ? stage_env : "";
  for (int up = 0; up < 4 && !dir.empty(); ++up) dir.erase(dir.rfind('/') == std::string::npos ? 0 : dir.rfind('/'));
  dir += "/targets";
#else
  const std::string dir = exe_dir();
  if (argc > 1) {
    std::string act = argv[1];
    std::string outcome = run_act(act, dir, false);
    std::printf("%s: %s\n", act.c_str(), json_escape(outcome).c_str());
    return 0;
  }
  std::string name = exe_path();
  name = name.substr(name.rfind('/') + 1);
  const std::string act = name.rfind("probe-", 0) == 0 ? name.substr(6) : "none";
#endif
  std::string outcome = json_escape(run_act(act, dir, true));
  std::fprintf(stderr, "%s: %s\n", act.c_str(), outcome.c_str());
  return serve_dpp(act, outcome);
}
