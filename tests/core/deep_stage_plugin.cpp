// An org.dot.dpp/v1 plugin (id org.test.deep) that nests folders in its
// stage (test_deep_stage.cpp): one executable per case,
// core-deep-stage-<act>-<levels>, the act and the depth built in, so that it
// needs nothing outside its stage and runs under process assurance too.
//
//   seal   plans one file <levels> folders deep ("d/d/.../deep.txt") and
//          stages exactly it: a legitimate plan that seals.
//   extra  plans top.txt, stages it, and leaves beside it <levels> nested
//          folders "n", a file in each, 1 MiB at the bottom and an empty
//          folder of mode 0000 there: refused (the stage holds more than
//          was claimed).
//   fail   leaves the same tree, then answers dot.materialize with an error.
//   hold   leaves the same tree, writes "ready" into the stage, then sleeps
//          until its parent changes (the plan was killed) or 60 s pass.
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "dot/base/byte_stream.h"
#include "dot/base/error_kinds.h"
#include "../common/test_error_kinds.h"
#include "dot/base/fd.h"
#include "dot/dpp/runtime.h"

namespace g = dot::dpp::general;
using dot::Result;
using dot::Status;

namespace {

const std::string kAct = DEEP_ACT;
constexpr int kLevels = DEEP_LEVELS;

std::string deep_path() {
  std::string p;
  for (int i = 0; i < kLevels; ++i) p += "d/";
  return p + "deep.txt";
}

Status write_file(int dir, const char* name, const std::string& bytes) {
  dot::UniqueFd f(::openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!f) return dot::make_error(dot::base::ErrorKind::Open, std::string("cannot create ") + name);
  for (std::size_t done = 0; done < bytes.size();) {
    ssize_t n = ::write(f.get(), bytes.data() + done, bytes.size() - done);
    if (n <= 0) return dot::make_error(dot::base::ErrorKind::Write, std::string("cannot write ") + name);
    done += static_cast<std::size_t>(n);
  }
  return {};
}

// The nested tree, built by descriptor (a path 4,000 folders deep is longer
// than PATH_MAX).
Status nest(const std::string& stage) {
  dot::UniqueFd cur(::open(stage.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!cur) return dot::make_error(dot::base::ErrorKind::Open, "cannot open the stage");
  for (int i = 0; i < kLevels; ++i) {
    if (::mkdirat(cur.get(), "n", 0700) != 0) return dot::make_error(dot::test::ErrorKind::Mkdir, "cannot nest");
    DOT_TRY(write_file(cur.get(), "f", "level\n"));
    dot::UniqueFd next(::openat(cur.get(), "n", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!next) return dot::make_error(dot::base::ErrorKind::Open, "cannot descend");
    cur = std::move(next);
  }
  DOT_TRY(write_file(cur.get(), "big", std::string(1 << 20, 'x')));
  if (::mkdirat(cur.get(), "locked", 0) != 0) return dot::make_error(dot::test::ErrorKind::Mkdir, "cannot make locked");
  return {};
}

class DeepPlugin final : public g::Plugin {
 public:
  std::string id() const override { return "org.test.deep"; }
  bool wants_log() const override { return false; }
  Result<std::vector<g::Operation>> plan(g::Context&, const std::vector<std::string>&) override {
    return std::vector<g::Operation>{{"write", 0644, kAct == "seal" ? deep_path() : "top.txt"}};
  }
  Result<std::vector<g::Artifact>> materialize(g::Context&, const std::string& stage) override {
    if (kAct == "seal") {
      DOT_ASSIGN_OR_RETURN(g::Artifact a, g::write_staged_file(stage, deep_path(), "deep\n"));
      return std::vector<g::Artifact>{a};
    }
    DOT_ASSIGN_OR_RETURN(g::Artifact a, g::write_staged_file(stage, "top.txt", "top\n"));
    DOT_TRY(nest(stage));
    if (kAct == "fail") return dot::make_error(dot::test::ErrorKind::Source, "the source went away");
    if (kAct == "hold") {
      dot::UniqueFd dir(::open(stage.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (!dir) return dot::make_error(dot::base::ErrorKind::Open, "cannot open the stage");
      DOT_TRY(write_file(dir.get(), "ready", "ready\n"));
      const pid_t parent = ::getppid();
      for (int i = 0; i < 3000 && ::getppid() == parent; ++i) {
        struct timespec tick {0, 20 * 1000 * 1000};
        ::nanosleep(&tick, nullptr);
      }
      ::_exit(3);
    }
    return std::vector<g::Artifact>{a};
  }
};

}  // namespace

int main() {
  DeepPlugin plugin;
  dot::FdSource in(STDIN_FILENO, "standard input");
  dot::FdSink out(STDOUT_FILENO, "standard output");
  dot::FdSink err(STDERR_FILENO, "standard error");
  return g::serve(plugin, in, out, err);
}
