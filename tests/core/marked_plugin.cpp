// core-marked-hello: a dot-hello that cannot run unnoticed. When started it
// appends a line to `ran` in the state folder (two levels above its stage:
// <root>/.dot/stage/<plan>), and the hello.txt it stages says what it is.
// tests/core/test_engine.cpp writes it over the registered dot-hello in place
// (its bytes must never run under dot-hello's digest) and registers it under
// tampered manifests (it must never be started at all).
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <string_view>

#include "dot/base/sha256.h"
#include "dot/dpp/plugin.h"

namespace {

constexpr std::string_view kMarkedHello = "core-marked-hello ran\n";

class MarkedHello : public dot::dpp::HelloPlugin {
 public:
  dot::Result<dot::dpp::MaterializeResult> materialize(const dot::dpp::MaterializeParams& params) override {
    auto r = HelloPlugin::materialize(params);
    if (!r.ok()) return r;
    ::unlink((params.stage + "/hello.txt").c_str());
    if (auto s = dot::dpp::write_stage_file(params.stage, "hello.txt", kMarkedHello); !s.ok()) return s.error();
    for (auto& a : r->artifacts) {
      if (a.name != "hello.txt") continue;
      a.size = kMarkedHello.size();
      a.sha256 = dot::sha256_hex(kMarkedHello);
    }
    return r;
  }
};

void leave_the_mark() {
  const char* stage = std::getenv("DOT_STAGE_ROOT");
  if (stage == nullptr) return;
  std::string path = std::string(stage) + "/../../ran";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  std::string line = std::to_string(::getpid()) + "\n";
  ssize_t ignored = ::write(fd, line.data(), line.size());
  (void)ignored;
  ::close(fd);
}

}  // namespace

int main() {
  leave_the_mark();
  MarkedHello plugin;
  return dot::dpp::serve(plugin);
}
