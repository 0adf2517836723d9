// Spawning and owning child processes: exact environment, own group, RAII kill and reap (process.h).
#include "dot/base/process.h"
#include "dot/base/error_kinds.h"

#include "dot/base/deadline.h"
#include "dot/base/orphan_sweep.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <unordered_set>

#include <fmt/format.h>

namespace dot {
namespace {

// The pids of children that a ChildProcess owns, from fork until reaped.
// Process parentage is process-wide state, so this registry is too: it is
// the one place that can tell an orphan (re-parented to us as subreaper)
// from a child that another session in this process still owns. The mutex is
// held across fork() so that a concurrent sweep never sees an unregistered
// new child.
struct ChildRegistry {
  std::mutex mu;
  std::unordered_set<pid_t> owned;
};
ChildRegistry& registry() {
  static ChildRegistry r;  // NOLINT: see above
  return r;
}
void unregister_child(pid_t pid) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.owned.erase(pid);
}

// 'R', 'S', 'Z'... from /proc/<pid>/stat; '?' when it cannot be read.
char process_state(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) return '?';
  char buf[512];
  ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
  if (n <= 0) return '?';
  buf[n] = 0;
  // The command name may contain spaces and parentheses: the state follows the last ')'.
  const char* close = std::strrchr(buf, ')');
  if (close == nullptr || close[1] == 0 || close[2] == 0) return '?';
  return close[2];
}

// Parses whitespace-separated decimal pids.
void append_pids(std::string_view text, std::vector<pid_t>& out) {
  long v = -1;
  for (char c : text) {
    if (c >= '0' && c <= '9')
      v = (v < 0 ? 0 : v * 10) + (c - '0');
    else if (v >= 0) {
      out.push_back(static_cast<pid_t>(v));
      v = -1;
    }
  }
  if (v >= 0) out.push_back(static_cast<pid_t>(v));
}

// What the child reports through the close-on-exec error pipe when a step
// before exec fails: which step and its errno.
struct ChildFailure {
  int stage;
  int err;
};
enum Stage : int { kStageDup = 1, kStageChdir, kStageGroup, kStagePdeath, kStagePreExec, kStageExec, kStageClose };

const char* stage_name(int stage, const SpawnOptions& o) {
  switch (stage) {
    case kStageDup:
      return "arranging descriptors";
    case kStageChdir:
      return "changing directory";
    case kStageGroup:
      return "creating a process group";
    case kStagePdeath:
      return "setting the parent-death signal";
    case kStagePreExec:
      return o.pre_exec_what;
    case kStageExec:
      return "exec";
    case kStageClose:
      return "closing inherited descriptors";
    default:
      return "spawn";
  }
}

[[noreturn]] void child_fail(int err_fd, int stage, int err) {
  ChildFailure f{stage, err};
  ssize_t ignored = ::write(err_fd, &f, sizeof f);
  (void)ignored;
  ::_exit(127);
}

ExitStatus decode_status(int wstatus, const rusage& ru) {
  ExitStatus s;
  if (WIFEXITED(wstatus))
    s.code = WEXITSTATUS(wstatus);
  else if (WIFSIGNALED(wstatus))
    s.signal = WTERMSIG(wstatus);
  auto us = [](const timeval& t) { return std::chrono::seconds(t.tv_sec) + std::chrono::microseconds(t.tv_usec); };
  s.cpu_time = us(ru.ru_utime) + us(ru.ru_stime);
  return s;
}

}  // namespace

std::string ExitStatus::describe() const {
  if (signal != 0) return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
  return fmt::format("exit {}", code);
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !reaped_) kill_and_reap();
}

ChildProcess::ChildProcess(ChildProcess&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)),
      own_group_(o.own_group_),
      reaped_(o.reaped_),
      status_(o.status_),
      pidfd_(std::move(o.pidfd_)),
      stdin_(std::move(o.stdin_)),
      stdout_(std::move(o.stdout_)),
      stderr_(std::move(o.stderr_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& o) noexcept {
  if (this != &o) {
    if (pid_ > 0 && !reaped_) kill_and_reap();
    pid_ = std::exchange(o.pid_, -1);
    own_group_ = o.own_group_;
    reaped_ = o.reaped_;
    status_ = o.status_;
    pidfd_ = std::move(o.pidfd_);
    stdin_ = std::move(o.stdin_);
    stdout_ = std::move(o.stdout_);
    stderr_ = std::move(o.stderr_);
  }
  return *this;
}

void ChildProcess::signal_group(int sig) noexcept {
  if (pid_ <= 0) return;
  // The group outlives its leader: signal it even after the leader was reaped.
  if (own_group_)
    ::kill(-pid_, sig);
  else if (!reaped_)
    ::kill(pid_, sig);
}

void ChildProcess::kill_group() noexcept { signal_group(SIGKILL); }

std::optional<ExitStatus> ChildProcess::try_wait() {
  if (pid_ <= 0) return std::nullopt;
  if (reaped_) return status_;
  int ws = 0;
  rusage ru{};
  pid_t r;
  do r = ::wait4(pid_, &ws, WNOHANG, &ru);
  while (r < 0 && errno == EINTR);
  if (r == pid_) {
    reaped_ = true;
    status_ = decode_status(ws, ru);
    unregister_child(pid_);
    return status_;
  }
  return std::nullopt;
}

std::optional<ExitStatus> ChildProcess::wait_until(Clock::time_point deadline) {
  for (;;) {
    if (auto s = try_wait()) return s;
    int ms = poll_timeout_ms(deadline);
    if (ms == 0) return std::nullopt;
    if (pidfd_) {
      pollfd p{pidfd_.get(), POLLIN, 0};
      ::poll(&p, 1, std::min(ms, 1000));
    } else {
      ::usleep(1000);
    }
  }
}

ExitStatus ChildProcess::kill_and_reap() {
  if (pid_ <= 0) return status_;
  kill_group();
  if (!reaped_) {
    int ws = 0;
    rusage ru{};
    pid_t r;
    do r = ::wait4(pid_, &ws, 0, &ru);
    while (r < 0 && errno == EINTR);
    reaped_ = true;
    if (r == pid_) status_ = decode_status(ws, ru);
    unregister_child(pid_);
  }
  // Members of the group that outlived the leader get the signal again.
  kill_group();
  return status_;
}

namespace {

// The descriptors a spawn prepares before fork: the stdio pipes asked for,
// /dev/null when a stream is discarded, and the pipe the child reports a
// failed step on (it closes on a successful exec).
struct SpawnPipes {
  Pipe in, out, err, report;
  UniqueFd devnull;
};

Result<SpawnPipes> make_spawn_pipes(const SpawnOptions& o) {
  SpawnPipes p;
  if (o.stdin_mode == StdioMode::Pipe) {
    DOT_ASSIGN_OR_RETURN(p.in, make_pipe());
  }
  if (o.stdout_mode == StdioMode::Pipe) {
    DOT_ASSIGN_OR_RETURN(p.out, make_pipe());
  }
  if (o.stderr_mode == StdioMode::Pipe) {
    DOT_ASSIGN_OR_RETURN(p.err, make_pipe());
  }
  DOT_ASSIGN_OR_RETURN(p.report, make_pipe());
  if (o.stdin_mode == StdioMode::DevNull || o.stdout_mode == StdioMode::DevNull ||
      o.stderr_mode == StdioMode::DevNull) {
    p.devnull.reset(::open("/dev/null", O_RDWR | O_CLOEXEC));
    if (!p.devnull)
      return make_error(base::ErrorKind::Spawn, fmt::format("cannot open /dev/null: {}", std::strerror(errno)));
  }
  return p;
}

// ---- the child, between fork and exec: async-signal-safe calls only ----

// A close-on-exec copy of `fd` at 100 or above.
int stash_fd(int fd, int rfd) {
  int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 100);
  if (copy < 0) child_fail(rfd, kStageDup, errno);
  return copy;
}

// The stash of what becomes stdio descriptor `mode`'s source; -1 to inherit.
int stdio_source(StdioMode mode, const Pipe& pipe, bool child_reads, const UniqueFd& devnull, int rfd) {
  if (mode == StdioMode::Pipe) return stash_fd(child_reads ? pipe.read.get() : pipe.write.get(), rfd);
  if (mode == StdioMode::DevNull) return stash_fd(devnull.get(), rfd);
  return -1;
}

// Signal dispositions, the mask, the parent-death signal and the group.
void child_reset_process(const SpawnOptions& o, int rfd) {
  // Signal dispositions set to ignore survive exec; the child starts clean.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaction(s, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (o.parent_death_signal && ::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) child_fail(rfd, kStagePdeath, errno);
  if (o.new_session) {
    if (::setsid() < 0) child_fail(rfd, kStageGroup, errno);
  } else if (o.new_process_group && ::setpgid(0, 0) != 0) {
    child_fail(rfd, kStageGroup, errno);
  }
}

[[noreturn]] void run_child(const SpawnOptions& o, const SpawnPipes& p, char** argv, char** envp) {
  // Every descriptor the child needs is first copied to >= 100 (close-on-exec),
  // then everything is marked close-on-exec, then stdio and the kept
  // descriptors are dup2'ed into place (dup2 clears close-on-exec on the
  // target). So exactly stdio and keep_fds survive exec. Kept targets must
  // be below 100.
  int rfd = ::fcntl(p.report.write.get(), F_DUPFD_CLOEXEC, 100);
  if (rfd < 0) child_fail(p.report.write.get(), kStageDup, errno);
  child_reset_process(o, rfd);
  const int src[3] = {stdio_source(o.stdin_mode, p.in, true, p.devnull, rfd),
                      stdio_source(o.stdout_mode, p.out, false, p.devnull, rfd),
                      stdio_source(o.stderr_mode, p.err, false, p.devnull, rfd)};
  int keep_src[64];
  std::size_t nkeep = 0;
  for (const auto& kept : o.keep_fds) {
    if (nkeep == 64 || kept.second >= 100 || kept.second < 3) child_fail(rfd, kStageDup, EINVAL);
    keep_src[nkeep++] = stash_fd(kept.first, rfd);
  }
  int exec_fd = o.exec_fd >= 0 ? stash_fd(o.exec_fd, rfd) : -1;
  if (::syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */) != 0) child_fail(rfd, kStageClose, errno);
  for (int target = 0; target < 3; ++target)
    if (src[target] >= 0 && ::dup2(src[target], target) < 0) child_fail(rfd, kStageDup, errno);
  for (std::size_t i = 0; i < nkeep; ++i)
    if (::dup2(keep_src[i], o.keep_fds[i].second) < 0) child_fail(rfd, kStageDup, errno);

  if (!o.cwd.empty() && ::chdir(o.cwd.c_str()) != 0) child_fail(rfd, kStageChdir, errno);
  if (o.pre_exec != nullptr) {
    int e = o.pre_exec(o.pre_exec_ctx);
    if (e != 0) child_fail(rfd, kStagePreExec, e);
  }
  if (exec_fd >= 0)
    ::fexecve(exec_fd, argv, envp);
  else
    ::execve(o.path.c_str(), argv, envp);
  child_fail(rfd, kStageExec, errno);
}

}  // namespace

Result<ChildProcess> spawn(const SpawnOptions& o) {
  if (o.argv.empty()) return make_error(base::ErrorKind::SpawnMisuse, "spawn needs argv[0]");
  if (o.path.empty() == (o.exec_fd < 0))
    return make_error(base::ErrorKind::SpawnMisuse, "spawn needs exactly one of a path or an exec descriptor");

  // Everything the child needs is prepared before fork: after fork only
  // async-signal-safe calls are made.
  std::vector<char*> argv, envp;
  for (const auto& a : o.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : o.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  DOT_ASSIGN_OR_RETURN(SpawnPipes p, make_spawn_pipes(o));

  std::unique_lock<std::mutex> registry_lock(registry().mu);
  pid_t pid = ::fork();
  if (pid < 0) return make_error(base::ErrorKind::Spawn, fmt::format("fork failed: {}", std::strerror(errno)));
  if (pid == 0) run_child(o, p, argv.data(), envp.data());

  registry().owned.insert(pid);
  registry_lock.unlock();
  ChildProcess child;
  child.pid_ = pid;
  child.own_group_ = o.new_process_group || o.new_session;
  child.pidfd_.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  p.report.write.reset();
  p.in.read.reset();
  p.out.write.reset();
  p.err.write.reset();
  child.stdin_ = std::move(p.in.write);
  child.stdout_ = std::move(p.out.read);
  child.stderr_ = std::move(p.err.read);

  ChildFailure f{};
  ssize_t n;
  do n = ::read(p.report.read.get(), &f, sizeof f);
  while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof f)) {
    child.kill_and_reap();
    return make_error(base::ErrorKind::Spawn, fmt::format("cannot start {}: {} failed: {}", o.argv[0],
                                                          stage_name(f.stage, o), std::strerror(f.err)));
  }
  return child;
}

Status become_child_subreaper() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
    return make_error(base::ErrorKind::Subreaper,
                      fmt::format("PR_SET_CHILD_SUBREAPER failed: {}", std::strerror(errno)));
  return {};
}

Result<OrphanSweep> OrphanSweep::begin() {
  DOT_TRY(become_child_subreaper());
  return OrphanSweep();
}

bool ChildProcess::group_alive() const noexcept {
  if (pid_ <= 0 || !own_group_) return false;
  return ::kill(-pid_, 0) == 0;
}

std::vector<pid_t> list_children() {
  std::vector<pid_t> out;
  // /proc/self/task/*/children (CONFIG_PROC_CHILDREN) lists each thread's
  // children; re-parented orphans land on one of our threads.
  bool have_children_files = false;
  if (DIR* tasks = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(tasks)) {
      if (e->d_name[0] == '.') continue;
      std::string path = fmt::format("/proc/self/task/{}/children", e->d_name);
      UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
      if (!fd) continue;
      have_children_files = true;
      auto text = read_all(fd.get(), 1 << 20, path);
      if (text.ok()) append_pids(*text, out);
    }
    ::closedir(tasks);
  }
  if (!have_children_files) {
    // Without CONFIG_PROC_CHILDREN: every process whose parent is us.
    pid_t self = ::getpid();
    if (DIR* procs = ::opendir("/proc")) {
      while (dirent* e = ::readdir(procs)) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        std::string path = fmt::format("/proc/{}/stat", e->d_name);
        UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd) continue;
        char buf[512];
        ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
        if (n <= 0) continue;
        buf[n] = 0;
        const char* close = std::strrchr(buf, ')');
        int ppid = -1;
        char state = 0;
        if (close != nullptr && std::sscanf(close + 1, " %c %d", &state, &ppid) == 2 && ppid == self)
          out.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
      }
      ::closedir(procs);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {
std::vector<pid_t> current_orphans() {
  auto children = list_children();
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  children.erase(std::remove_if(children.begin(), children.end(), [&](pid_t p) { return r.owned.count(p) != 0; }),
                 children.end());
  return children;
}
}  // namespace

void reap_orphans() {
  for (pid_t p : current_orphans()) {
    int ws;
    while (::waitpid(p, &ws, WNOHANG) < 0 && errno == EINTR) {
    }
  }
}

std::size_t kill_orphans() {
  std::size_t running = 0;
  // Each round kills the orphans found; their own children are re-parented
  // to us when they die and are found by the next round. A process that is
  // SIGKILLed cannot fork again, so the rounds end; the cap guards against a
  // kernel that does not re-parent to us (no subreaper).
  for (int round = 0; round < 64; ++round) {
    auto orphans = current_orphans();
    if (orphans.empty()) break;
    for (pid_t p : orphans) {
      if (process_state(p) != 'Z') ++running;
      ::kill(p, SIGKILL);
    }
    for (pid_t p : orphans) {
      int ws;
      while (::waitpid(p, &ws, 0) < 0 && errno == EINTR) {
      }
    }
  }
  return running;
}

}  // namespace dot
