// dpp-scripted: a scripted peer for the general-profile session tests. After
// reading request k (one frame, any body up to 16 MiB) it carries out
// argv[k]: raw bytes written to stdout as they are, or one of
//   !exit N     exit with status N at once
//   !sleep      sleep until killed
//   !stderr N:B write N bytes to stderr, then the bytes B to stdout
//   !file P     write the contents of the file P to stdout (frames larger
//               than an argument may be)
//   !drip MS:B  write the frames B one at a time, each after MS ms asleep
//               (a plugin that keeps talking while it works)
// Once the script is used up it keeps reading and exits 0 at end of input
// (2 on a framing error). The tests write the frames themselves, byte for
// byte, so every rule of the host is probed by exactly the bytes it names.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <string_view>

#include "dot/base/fd.h"
#include "dot/base/byte_stream.h"
#include "dot/dpp/frame.h"

int main(int argc, char** argv) {
  dot::FdSource in(STDIN_FILENO);
  dot::dpp::FrameReader reader(in, 16 * 1024 * 1024);
  for (int k = 1;; ++k) {
    auto frame = reader.next();
    if (!frame.ok()) return 2;
    if (!frame->has_value()) return 0;
    if (k >= argc) continue;
    std::string_view step = argv[k];
    if (step.rfind("!exit ", 0) == 0) return std::atoi(argv[k] + 6);
    if (step == "!sleep")
      for (;;) ::pause();
    if (step.rfind("!drip ", 0) == 0) {
      const auto pause = std::chrono::milliseconds(std::atol(argv[k] + 6));
      step.remove_prefix(step.find(':') + 1);
      // Each frame is its header and the Content-Length bytes after it.
      while (!step.empty()) {
        const auto body = step.find("\r\n\r\n");
        if (body == std::string_view::npos) return 3;
        const std::size_t end = body + 4 + std::strtoul(step.data() + 16, nullptr, 10);
        if (end > step.size()) return 3;
        std::this_thread::sleep_for(pause);
        if (!dot::write_all(STDOUT_FILENO, step.substr(0, end), "stdout").ok()) return 3;
        step.remove_prefix(end);
      }
      continue;
    }
    if (step.rfind("!stderr ", 0) == 0) {
      std::string noise(static_cast<std::size_t>(std::atol(argv[k] + 8)), 'e');
      if (!dot::write_all(STDERR_FILENO, noise, "stderr").ok()) return 3;
      step.remove_prefix(step.find(':') + 1);
    } else if (step.rfind("!file ", 0) == 0) {
      auto bytes = dot::read_file(std::string(step.substr(6)), std::size_t{1} << 30);
      if (!bytes.ok()) return 3;
      if (!dot::write_all(STDOUT_FILENO, *bytes, "stdout").ok()) return 3;
      continue;
    }
    if (!dot::write_all(STDOUT_FILENO, step, "stdout").ok()) return 3;
  }
}
