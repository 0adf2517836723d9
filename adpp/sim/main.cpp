// adpp-sim: the example ADPP v1 provider over framed stdio. A few simulated
// devices (from --config PATH, or built in), served by the provider runtime
// until stdin ends.
#include <cstdio>
#include <string>
#include <string_view>

#include <unistd.h>

#include "dot/adpp/sim_provider.h"
#include "dot/base/fd.h"

namespace {

// Exit codes. 0, 2 and 3 belong to the framed-stdio profile (clean EOF,
// frame/read error, parse error): a host reads them as verdicts on the
// stream, so errors met before serving use the sysexits codes instead and
// can never be mistaken for one.
constexpr int kExitUsage = 64;   // EX_USAGE: an unknown or incomplete argument
constexpr int kExitConfig = 78;  // EX_CONFIG: a config that cannot be read or is invalid

constexpr std::string_view kUsage =
    "usage: adpp-sim [--config PATH]\n"
    "       adpp-sim --check-config PATH\n"
    "       adpp-sim --version\n"
    "Serves ADPP v1 (framed-stdio profile) on stdin/stdout; diagnostics on stderr.\n"
    "Exit: 0 clean end of stdin (or --version, --help, a valid --check-config),\n"
    "      2 frame/read error, 64 usage error, 78 configuration error.\n"
    "Example: adpp-sim --config adpp/examples/basic.textproto\n";

void err(std::string_view line) {
  std::string l(line);
  l += '\n';
  (void)dot::write_all(STDERR_FILENO, l, "stderr");
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  bool check_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--version") {
      // Nothing but frames may reach stdout while serving; --version does not serve.
      std::string v = std::string("adpp-sim ") + DOT_VERSION + "\n";
      return dot::write_all(STDOUT_FILENO, v, "stdout").ok() ? 0 : 1;
    }
    if (a == "--help" || a == "-h") {
      return dot::write_all(STDOUT_FILENO, kUsage, "stdout").ok() ? 0 : 1;
    }
    if ((a == "--config" || a == "--check-config") && i + 1 < argc) {
      check_only = check_only || a == "--check-config";
      config_path = argv[++i];
    } else if (a.substr(0, 9) == "--config=") {
      config_path = std::string(a.substr(9));
    } else {
      err("adpp-sim: unknown argument: " + std::string(a));
      err(kUsage);
      return kExitUsage;
    }
  }

  auto config = config_path.empty() ? dot::Result<dot::adpp::simpb::SimConfig>(dot::adpp::default_sim_config())
                                    : dot::adpp::load_sim_config(config_path);
  if (!config.ok()) {
    err("adpp-sim: " + config.error().line());
    return kExitConfig;
  }
  auto sim = dot::adpp::SimProvider::create(std::move(config).value(), DOT_VERSION);
  if (!sim.ok()) {
    err("adpp-sim: " + sim.error().line());
    return kExitConfig;
  }
  if (check_only) return 0;
  return dot::adpp::run_provider_stdio(*sim);
}
