// The child-process layer of base: deadline-bounded pipe I/O, bounded log
// capture, PATH search, the launch rule for a path, and the orphan sweep.
// Bounds on time are one-sided where the machine's load could break them:
// a deadline is never cut short (a lower bound that holds on any schedule),
// and the upper bounds are generous enough only to catch a hang.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <fstream>
#include <sstream>

#include "dot/base/byte_stream.h"
#include "dot/base/orphan_sweep.h"
#include "dot/base/path_search.h"
#include "dot/base/pipe_io.h"
#include "dot/base/process.h"
#include "dot/base/sealed_executable.h"
#include "dot/base/stream_capture.h"

#include "../common/process_gone.h"

namespace dot {
namespace {

using namespace std::chrono_literals;

// A child of /bin/sh running `script`, stdout and stderr piped.
ChildProcess sh(const std::string& script) {
  SpawnOptions o;
  o.path = "/bin/sh";
  o.argv = {"sh", "-c", script};
  o.env = {"PATH=/usr/bin:/bin"};
  o.stdin_mode = StdioMode::DevNull;
  auto child = spawn(o);
  EXPECT_TRUE(child.ok()) << child.error().line();
  return std::move(child).value();
}

// Reads `fd` to its end under `deadline`, draining `logs`.
Result<std::string> read_to_end(int fd, Clock::time_point deadline, Captures logs) {
  std::string out;
  char buf[4096];
  for (;;) {
    DOT_ASSIGN_OR_RETURN(std::size_t n, read_before(fd, buf, sizeof buf, deadline, logs, "the child's stdout"));
    if (n == 0) return out;
    out.append(buf, n);
  }
}

TEST(PipeIo, ReadEndsAtTheDeadlineNotBefore) {
  auto p = make_pipe();
  ASSERT_TRUE(p.ok());
  char c;
  auto t0 = Clock::now();
  auto r = read_before(p->read.get(), &c, 1, t0 + 300ms, {}, "the silent pipe");
  auto took = Clock::now() - t0;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Timeout);
  EXPECT_EQ(r.error().kind, "timeout");
  EXPECT_NE(r.error().detail.find("the silent pipe"), std::string::npos) << r.error().detail;
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 20s);
}

TEST(PipeIo, ReadTakesWhatIsThereAndZeroAtTheEnd) {
  auto p = make_pipe();
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(write_all(p->write.get(), "abc").ok());
  p->write.reset();
  char buf[8];
  auto r = read_before(p->read.get(), buf, sizeof buf, Clock::now() + 10s, {}, "pipe");
  ASSERT_TRUE(r.ok()) << r.error().line();
  EXPECT_EQ(std::string(buf, *r), "abc");
  auto end = read_before(p->read.get(), buf, sizeof buf, Clock::now() + 10s, {}, "pipe");
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(*end, 0u);
}

TEST(PipeIo, ReadableNowWithoutWaiting) {
  auto p = make_pipe();
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(readable_now(p->read.get()));  // nothing yet: no wait either
  ASSERT_TRUE(write_all(p->write.get(), "x").ok());
  EXPECT_TRUE(readable_now(p->read.get()));
  char c;
  ASSERT_EQ(::read(p->read.get(), &c, 1), 1);
  EXPECT_FALSE(readable_now(p->read.get()));
  // The writer gone: the end of the stream is there to be read.
  p->write.reset();
  EXPECT_TRUE(readable_now(p->read.get()));
  EXPECT_EQ(::read(p->read.get(), &c, 1), 0);
}

TEST(PipeIo, NothingIsReadOnceTheDeadlineHasPassed) {
  auto p = make_pipe();
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(write_all(p->write.get(), "late").ok());
  char buf[8];
  auto r = read_before(p->read.get(), buf, sizeof buf, Clock::now() - 1ms, {}, "pipe");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Timeout);
}

TEST(PipeIo, WriteToAFullPipeEndsAtTheDeadline) {
  auto p = make_pipe();
  ASSERT_TRUE(p.ok());
  std::string big(4 << 20, 'x');  // more than any pipe buffer holds
  auto t0 = Clock::now();
  Status w = write_before(p->write.get(), big, t0 + 300ms, {}, "the full pipe");
  auto took = Clock::now() - t0;
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code, Code::Timeout);
  EXPECT_NE(w.error().detail.find("room in the full pipe"), std::string::npos) << w.error().detail;
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 20s);
}

TEST(PipeIo, WriteToAClosedPipeIsClosedAndRaisesNoSigpipe) {
  // SIGPIPE at its default would kill this test process.
  struct sigaction old {}, dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGPIPE, &dfl, &old);
  auto p = make_pipe();
  ASSERT_TRUE(p.ok());
  p->read.reset();
  Status w = write_before(p->write.get(), "to nobody", Clock::now() + 10s, {}, "the request pipe");
  ::sigaction(SIGPIPE, &old, nullptr);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code, Code::Io);
  EXPECT_EQ(w.error().kind, "closed");
  sigset_t pending;
  sigemptyset(&pending);
  ::sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);
}

TEST(PipeIo, AChildFloodingStderrNeverBlocksTheRead) {
  // 1 MB on stderr before the one stdout line: without draining, the child
  // would block on its full stderr pipe and the read would time out.
  ChildProcess child = sh("head -c 1000000 /dev/zero >&2; echo done");
  StreamCapture err(std::move(child.stderr_fd()), 100, StreamCapture::Keep::First, "the child's stderr");
  StreamCapture* logs[] = {&err};
  auto out = read_to_end(child.stdout_fd().get(), Clock::now() + 30s, logs);
  ASSERT_TRUE(out.ok()) << out.error().line();
  EXPECT_EQ(*out, "done\n");
  drain_until(logs, Clock::now() + 30s);
  EXPECT_FALSE(err.open());
  EXPECT_EQ(err.total(), 1000000u);
  EXPECT_EQ(err.bytes(), std::string(100, '\0'));
  EXPECT_TRUE(err.truncated());
  EXPECT_TRUE(child.wait_until(Clock::now() + 30s)->success());
}

TEST(StreamCapture, KeepsTheLastBytesWhenAskedTo) {
  ChildProcess child = sh("head -c 50000 /dev/zero >&2; printf 'the end' >&2");
  StreamCapture err(std::move(child.stderr_fd()), 7, StreamCapture::Keep::Last, "stderr");
  StreamCapture* logs[] = {&err};
  drain_until(logs, Clock::now() + 30s);
  EXPECT_FALSE(err.open());
  EXPECT_EQ(err.bytes(), "the end");
  EXPECT_EQ(err.total(), 50007u);
  EXPECT_TRUE(err.truncated());
  EXPECT_FALSE(err.over_limit());
}

TEST(StreamCapture, WithinItsCapNothingIsTruncated) {
  ChildProcess child = sh("printf 'short' >&2");
  StreamCapture err(std::move(child.stderr_fd()), 5, StreamCapture::Keep::FirstOrFail, "stderr");
  StreamCapture* logs[] = {&err};
  drain_until(logs, Clock::now() + 30s);
  EXPECT_EQ(err.bytes(), "short");
  EXPECT_FALSE(err.truncated());
  EXPECT_FALSE(err.over_limit());
}

TEST(StreamCapture, OneByteOverAFailingCapEndsTheWait) {
  // The child never writes stdout and never exits: only the log limit can
  // end the read before its (long) deadline.
  ChildProcess child = sh("printf '123456' >&2; exec sleep 60");
  StreamCapture err(std::move(child.stderr_fd()), 5, StreamCapture::Keep::FirstOrFail, "the plugin's stderr");
  StreamCapture* logs[] = {&err};
  char c;
  auto t0 = Clock::now();
  auto r = read_before(child.stdout_fd().get(), &c, 1, t0 + 60s, logs, "stdout");
  ASSERT_FALSE(r.ok());
  EXPECT_LT(Clock::now() - t0, 30s);
  EXPECT_EQ(r.error().code, Code::Protocol);
  EXPECT_EQ(r.error().kind, "capture_limit");
  EXPECT_EQ(r.error().detail, "the plugin's stderr had more than 5 bytes");
  EXPECT_EQ(err.bytes(), "12345");
  EXPECT_TRUE(err.over_limit());
}

TEST(WaitReady, APidfdEndsTheWaitWhenTheChildExits) {
  auto p = make_pipe();
  ASSERT_TRUE(p.ok());
  ChildProcess child = sh("exit 0");
  ASSERT_GE(child.pidfd(), 0);
  auto r = wait_ready(p->read.get(), POLLIN, Clock::now() + 60s, {}, child.pidfd());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(*r);
  EXPECT_TRUE(child.wait_until(Clock::now() + 30s)->success());
}

TEST(GroupKill, KillAndReapLeavesNoProcessOfTheGroup) {
  // As a subreaper the test inherits the sleepers when their shell dies, so
  // it can reap them itself instead of waiting for init to.
  auto sweep = OrphanSweep::begin();
  ASSERT_TRUE(sweep.ok());
  // Three sleepers in the child's group, their pids on stdout.
  ChildProcess child = sh("sleep 60 & echo $!; sleep 60 & echo $!; sleep 60 & echo $!; exec sleep 60");
  std::string pids;
  char buf[256];
  while (std::count(pids.begin(), pids.end(), '\n') < 3) {
    auto n = read_before(child.stdout_fd().get(), buf, sizeof buf, Clock::now() + 30s, {}, "pids");
    ASSERT_TRUE(n.ok()) << n.error().line();
    ASSERT_GT(*n, 0u);
    pids.append(buf, *n);
  }
  ASSERT_TRUE(child.group_alive());
  ExitStatus st = child.kill_and_reap();
  EXPECT_EQ(st.signal, SIGKILL);
  EXPECT_TRUE(child.reaped());
  std::istringstream in(pids);
  long pid;
  int checked = 0;
  while (in >> pid) {
    EXPECT_TRUE(process_gone(static_cast<pid_t>(pid))) << "sleeper " << pid << " survived";
    ++checked;
  }
  EXPECT_EQ(checked, 3);
  // Dead, and once reaped not even a zombie is left in the group.
  EXPECT_EQ(sweep->sweep(), 0u);
  EXPECT_FALSE(child.group_alive());
}

TEST(GroupKill, TheSweepFindsADescendantThatLeftTheGroup) {
  pid_t escaped = -1;
  {
    auto sweep = OrphanSweep::begin();
    ASSERT_TRUE(sweep.ok()) << sweep.error().line();
    // setsid puts the sleeper out of the child's group: the group kill cannot
    // reach it, only the sweep of orphans re-parented to us can.
    ChildProcess child = sh("setsid sleep 60 & echo $!; exec sleep 60");
    std::string line;
    char buf[64];
    while (line.find('\n') == std::string::npos) {
      auto n = read_before(child.stdout_fd().get(), buf, sizeof buf, Clock::now() + 30s, {}, "pid");
      ASSERT_TRUE(n.ok()) << n.error().line();
      ASSERT_GT(*n, 0u);
      line.append(buf, *n);
    }
    escaped = static_cast<pid_t>(std::stol(line));
    ASSERT_GT(escaped, 1);
    child.kill_and_reap();
    // The leader is dead; the escaped sleeper is re-parented to us.
  }
  EXPECT_TRUE(process_gone(escaped)) << "escaped descendant " << escaped << " survived the sweep";
}

struct TempDir {
  std::string path;
  TempDir() {
    std::string tmpl = testing::TempDir() + "dot-path-search-XXXXXX";
    char* made = ::mkdtemp(tmpl.data());
    EXPECT_NE(made, nullptr);
    path = tmpl;
  }
  ~TempDir() { (void)::system(("rm -rf '" + path + "'").c_str()); }
  std::string file(const std::string& rel, mode_t mode, const std::string& bytes = "\x7f" "ELF") const {
    std::string p = path + "/" + rel;
    std::ofstream(p, std::ios::binary) << bytes;
    ::chmod(p.c_str(), mode);
    return p;
  }
};

TEST(PathSearch, OnlyAbsoluteEntriesAreSearched) {
  TempDir d;
  ASSERT_EQ(::mkdir((d.path + "/rel").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((d.path + "/abs").c_str(), 0700), 0);
  d.file("tool", 0700);
  d.file("rel/tool", 0700);
  std::string found = d.file("abs/tool", 0700);
  char old[4096];
  ASSERT_NE(::getcwd(old, sizeof old), nullptr);
  ASSERT_EQ(::chdir(d.path.c_str()), 0);
  // An empty entry, "." and "rel" would each find a tool here; none is searched.
  auto r = find_executable("tool", ":.:rel:" + d.path + "/abs/");
  auto none = find_executable("tool", "::.:rel");
  ASSERT_EQ(::chdir(old), 0);
  ASSERT_TRUE(r.ok()) << r.error().line();
  EXPECT_EQ(*r, found);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, Code::Io);
  EXPECT_EQ(none.error().kind, "not_found");
  EXPECT_EQ(none.error().detail, "no executable named tool on PATH (4 empty or relative PATH entries were not searched)");
}

TEST(PathSearch, SkipsWhatCannotBeExecuted) {
  TempDir d;
  ASSERT_EQ(::mkdir((d.path + "/a").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((d.path + "/b").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((d.path + "/c").c_str(), 0700), 0);
  d.file("a/tool", 0600);                                      // not executable
  ASSERT_EQ(::mkdir((d.path + "/b/tool").c_str(), 0700), 0);  // a directory
  std::string found = d.file("c/tool", 0500);
  auto r = find_executable("tool", d.path + "/a:" + d.path + "/b:" + d.path + "/c");
  ASSERT_TRUE(r.ok()) << r.error().line();
  EXPECT_EQ(*r, found);
}

TEST(PathSearch, NamesAndPaths) {
  auto path = find_executable("./x/y", "/bin");
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(*path, "./x/y");  // the user named a path: no search
  for (const char* bad : {"", ".", ".."}) {
    auto r = find_executable(bad, "/usr/bin:/bin");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().kind, "not_found");
  }
  auto sh_path = find_executable("sh", "/bin");
  ASSERT_TRUE(sh_path.ok());
  EXPECT_EQ(*sh_path, "/bin/sh");
}

TEST(SealExecutableFile, RefusesScriptsAndWhatIsNotAFile) {
  TempDir d;
  std::string script = d.file("script", 0700, "#!/bin/sh\nexit 0\n");
  auto s = seal_executable_file(script, "worker " + script, 1 << 20);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Code::Policy);
  EXPECT_EQ(s.error().kind, "script");
  auto dir = seal_executable_file(d.path, "worker", 1 << 20);
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.error().code, Code::Io);
  std::string fifo = d.path + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto f = seal_executable_file(fifo, "worker", 1 << 20);  // must not hang on open
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().kind, "not_regular");
  auto missing = seal_executable_file(d.path + "/missing", "worker", 1 << 20);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, Code::Io);
}

TEST(SealExecutableFile, TheSealedCopyRuns) {
  auto sealed = seal_executable_file("/bin/echo", "echo", 64 << 20);
  ASSERT_TRUE(sealed.ok()) << sealed.error().line();
  EXPECT_TRUE(is_sealed_memfd(sealed->fd.get()));
  SpawnOptions o;
  o.exec_fd = sealed->fd.get();
  o.argv = {"echo", "sealed"};
  auto child = spawn(o);
  ASSERT_TRUE(child.ok()) << child.error().line();
  auto out = read_to_end(child->stdout_fd().get(), Clock::now() + 30s, {});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "sealed\n");
  EXPECT_TRUE(child->wait_until(Clock::now() + 30s)->success());
}

TEST(MemorySource, HandsOutTheChunksGivenCycled) {
  MemorySource src("abcdefgh", {1, 3, 0});
  char buf[16];
  std::string seen;
  std::vector<std::size_t> sizes;
  for (;;) {
    auto n = src.read(buf, 4);
    ASSERT_TRUE(n.ok());
    if (*n == 0) break;
    sizes.push_back(*n);
    seen.append(buf, *n);
  }
  EXPECT_EQ(seen, "abcdefgh");
  EXPECT_EQ(sizes, (std::vector<std::size_t>{1, 3, 4}));  // 0: only the reader's own limit
  EXPECT_EQ(src.consumed(), 8u);
  EXPECT_EQ(src.reads(), 4u);
}

}  // namespace
}  // namespace dot
