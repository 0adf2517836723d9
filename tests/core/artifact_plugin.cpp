// A dot-hello that lies about what it staged, one way per executable
// (core-artifact-<case>): core must catch each by reading the stage itself.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "dot/base/sha256.h"
#include "dot/dpp/plugin.h"

namespace {

constexpr std::string_view kCase = DOT_ARTIFACT_CASE;

class LyingHello : public dot::dpp::HelloPlugin {
 public:
  dot::Result<dot::dpp::MaterializeResult> materialize(const dot::dpp::MaterializeParams& params) override {
    auto r = HelloPlugin::materialize(params);
    if (!r.ok()) return r;
    // What `inspect show` must keep and show for the abandoned proposal.
    std::fprintf(stderr, "lying hello: %.*s\n", static_cast<int>(kCase.size()), kCase.data());
    const std::string dir = params.stage;
    const std::string hello = dir + "/hello.txt";
    if (kCase == "staged_symlink") {
      ::unlink(hello.c_str());
      if (::symlink("/etc/hostname", hello.c_str()) != 0) std::perror("symlink");
    } else if (kCase == "wrong_mode") {
      ::chmod(hello.c_str(), 0644);
    } else if (kCase == "wrong_digest") {
      r->artifacts[0].sha256 = dot::sha256_hex("something else");
    } else if (kCase == "wrong_size") {
      r->artifacts[0].size += 1;
    } else if (kCase == "changed_bytes") {
      int fd = ::open(hello.c_str(), O_WRONLY | O_APPEND);
      if (fd >= 0) {
        ssize_t n = ::write(fd, "!", 1);
        (void)n;
        ::close(fd);
      }
    } else if (kCase == "extra_file") {
      int fd = ::open((dir + "/extra.txt").c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
      if (fd >= 0) ::close(fd);
    } else if (kCase == "hard_link") {
      ::link(hello.c_str(), (dir + "/../linked").c_str());
    } else if (kCase == "replaced_stage") {
      ::rename(dir.c_str(), (dir + ".old").c_str());
      ::mkdir(dir.c_str(), 0700);
      auto again = HelloPlugin::materialize(params);
      if (!again.ok()) return again;
    } else if (kCase == "swapped_stage_folder") {
      // DIR/.dot/stage moved aside and replaced by a symlink to DIR/../victim,
      // which core's cleanup must never reach.
      const std::string folder = dir.substr(0, dir.rfind('/'));
      const std::string root = folder.substr(0, folder.size() - std::string_view("/.dot/stage").size());
      const std::string victim = root.substr(0, root.rfind('/')) + "/victim";
      if (::rename(folder.c_str(), (folder + ".moved").c_str()) != 0) std::perror("rename");
      if (::symlink(victim.c_str(), folder.c_str()) != 0) std::perror("symlink");
    }
    return r;
  }
};

}  // namespace

int main() {
  LyingHello plugin;
  return dot::dpp::serve(plugin);
}
