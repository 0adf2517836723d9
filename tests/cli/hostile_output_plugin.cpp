// A dot-hello whose bytes are built to attack the terminal of whoever reads
// dot-core's output, one way per executable (cli-hostile-<case>):
//   text   hello.txt holds escape sequences, CR, BS, DEL, an OSC 52 clipboard
//          write and the one-byte C1 CSI, all valid UTF-8; stderr too, plus
//          a byte that is not UTF-8;
//   binary the same artifact with bytes that are not UTF-8;
//   error  the plugin refuses dot.plan with an error object whose message
//          holds the same controls, and writes them on stderr.
// Everything else is the honest org.dot.hello, so `plan` seals the first two.
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <string_view>

#include "dot/base/sha256.h"
#include "dot/dpp/plugin.h"
#include "hostile_bytes.h"

namespace {

constexpr std::string_view kCase = DOT_HOSTILE_CASE;

class HostileHello : public dot::dpp::HelloPlugin {
 public:
  explicit HostileHello(dot::dpp::PluginConnection& conn) : conn_(conn) {}

  dot::Result<dot::dpp::PlanResult> plan() override {
    if (kCase == "error") {
      // serve() would reduce a handler's error to printable ASCII: answer
      // with the raw message ourselves (JSON-escaped on the wire, decoded
      // back into these bytes by the host) and end the session.
      (void)conn_.reply_error(2, -32000, dot::testing::kHostileText);
      std::_Exit(1);
    }
    return HelloPlugin::plan();
  }

  dot::Result<dot::dpp::MaterializeResult> materialize(const dot::dpp::MaterializeParams& params) override {
    auto r = HelloPlugin::materialize(params);
    if (!r.ok()) return r;
    const std::string content = kCase == "binary" ? dot::testing::hostile_binary_artifact()
                                                  : dot::testing::hostile_text_artifact();
    ::unlink((params.stage + "/hello.txt").c_str());
    DOT_TRY(dot::dpp::write_stage_file(params.stage, "hello.txt", content));
    for (auto& a : r->artifacts)
      if (a.name == "hello.txt") {
        a.sha256 = dot::sha256_hex(content);
        a.size = content.size();
      }
    return r;
  }

 private:
  dot::dpp::PluginConnection& conn_;
};

}  // namespace

int main() {
  const std::string noise = dot::testing::hostile_stderr();
  ssize_t ignored = ::write(STDERR_FILENO, noise.data(), noise.size());
  (void)ignored;
  dot::dpp::PluginConnection conn(STDIN_FILENO, STDOUT_FILENO);
  HostileHello plugin(conn);
  return dot::dpp::serve(plugin, conn);
}
