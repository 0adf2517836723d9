// The smallest complete org.dot.dpp/v1 plugin (docs/writing-plugins.md). It
// manages one file, `motd`, and removes `motd.old` if an earlier plan of its
// own wrote it. Built and driven by the test suite (dpp-example-motd,
// tests/dpp/test_hostile_general.cpp), so this page cannot drift from the API.
#include "dot/dpp/runtime.h"

namespace g = dot::dpp::general;

class Motd final : public g::Plugin {
 public:
  // The id you register it with: dot-core register --id org.example.motd ...
  std::string id() const override { return "org.example.motd"; }
  // Ask for dot.log (dot-core always offers it).
  bool wants_log() const override { return true; }

  // What should change. `managed` lists the paths this plugin owns in the
  // root (written by its applied plans and not removed since), ascending.
  // Operations go in strictly ascending byte order of their paths.
  dot::Result<std::vector<g::Operation>> plan(g::Context& ctx, const std::vector<std::string>& managed) override {
    std::vector<g::Operation> ops{{"write", 0644, "motd"}};
    for (const auto& path : managed)
      if (path == "motd.old") ops.push_back({"remove", 0, path});
    (void)ctx.log("info", "proposing motd");
    return ops;
  }

  // Write every planned file into the stage and return what was written.
  dot::Result<std::vector<g::Artifact>> materialize(g::Context&, const std::string& stage) override {
    DOT_ASSIGN_OR_RETURN(g::Artifact motd, g::write_staged_file(stage, "motd", "Welcome.\n"));
    return std::vector<g::Artifact>{motd};
  }
};

int main() {
  Motd plugin;
  return g::serve(plugin);  // stdin and stdout; diagnostics on stderr
}
