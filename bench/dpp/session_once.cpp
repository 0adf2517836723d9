// dpp-session-once PLUGIN: one full five-call hello session with PLUGIN, the
// way core drives it (spawn from an opened descriptor, identity check,
// allowlists, artifact claims, finish), in a fresh stage that is removed
// afterwards. Exit 0 on a clean session. Timed as a whole process by
// session_vs_floor, side by side with dpp-floor.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "dot/base/error_kinds.h"
#include "dot/base/fd.h"
#include "dot/base/sha256.h"
#include "dot/dpp/hello.h"
#include "dot/dpp/host_session.h"

using namespace dot;

namespace {
Status run(const std::string& plugin, const std::string& stage) {
  UniqueFd fd(::open(plugin.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return make_error(base::ErrorKind::Open, "cannot open " + plugin);
  dpp::HostSessionOptions o;
  o.exec_fd = fd.get();
  o.stage_dir = stage;
  DOT_ASSIGN_OR_RETURN(auto s, dpp::HostSession::start(std::move(o)));
  DOT_ASSIGN_OR_RETURN(std::string nonce, random_hex32());
  auto sent = dpp::hello::initialize_params("audit", nonce);
  DOT_ASSIGN_OR_RETURN(auto echo, s.initialize(sent));
  DOT_TRY(dpp::hello::check_identity(sent, echo, dpp::hello::kPluginId));
  DOT_ASSIGN_OR_RETURN(auto plan, s.plan());
  DOT_TRY(dpp::hello::check_hello_allowlists(plan));
  DOT_ASSIGN_OR_RETURN(auto arts, s.materialize());
  DOT_TRY(dpp::hello::check_artifacts(plan.names, arts));
  DOT_TRY(s.validate());
  DOT_TRY(s.shutdown());
  return s.finish();
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: dpp-session-once PLUGIN\n");
    return 2;
  }
  std::string tmpl = (std::filesystem::temp_directory_path() / "dpp-bench-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) return 1;
  Status st = run(argv[1], tmpl);
  std::error_code ec;
  std::filesystem::remove_all(tmpl, ec);
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", st.error().line().c_str());
    return 1;
  }
  return 0;
}
