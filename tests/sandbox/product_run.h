#pragma once
// Running the real product from a sandbox test: `dot-core ARGS` from this
// build, with an exact environment, its output, exit code and signal.

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "dot/base/fd.h"
#include "dot/base/process.h"

namespace dot::sandbox_testing {

struct CmdResult {
  int code = -1;
  int signal = 0;
  std::string out, err;
};

inline CmdResult dot_core(const std::vector<std::string>& args, std::vector<std::string> env = {"LANG=C"}) {
  SpawnOptions o;
  o.path = std::string(DOT_BIN_DIR) + "/dot-core";
  o.argv = {"dot-core"};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.env = std::move(env);
  o.stdin_mode = StdioMode::DevNull;
  CmdResult r;
  auto child = spawn(o);
  if (!child.ok()) {
    r.err = child.error().line();
    return r;
  }
  r.out = read_all(child->stdout_fd().get(), 4 << 20).value();
  r.err = read_all(child->stderr_fd().get(), 4 << 20).value();
  auto st = child->wait_until(Clock::now() + std::chrono::seconds(60));
  if (!st) st = child->kill_and_reap();
  r.code = st->code;
  r.signal = st->signal;
  return r;
}

inline bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

}  // namespace dot::sandbox_testing
