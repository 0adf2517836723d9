#pragma once
// Drives one plugin through a whole hello session the way core does: spawn
// from an opened descriptor, initialize, identity check, plan, allowlists,
// materialize, artifact claims, validate, shutdown, finish.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "dot/base/sha256.h"
#include "dot/dpp/hello.h"
#include "dot/dpp/host_session.h"

namespace dot::dpp::testing {

// A fresh 0700 stage directory, removed with everything in it.
class TempStage {
 public:
  TempStage() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "dpp-stage-XXXXXX").string();
    char* made = ::mkdtemp(tmpl.data());
    if (made != nullptr) path_ = made;
  }
  ~TempStage() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct DriveResult {
  Status status;
  std::string stderr_bytes;
  MaterializeResult artifacts;
};

inline std::string bin(const std::string& name) { return std::string(DOT_BIN_DIR) + "/" + name; }

inline DriveResult drive(const std::string& exe, const std::string& stage, SessionLimits limits = {}) {
  DriveResult out;
  UniqueFd fd(::open(exe.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    out.status = make_error(Code::Io, "open", "cannot open " + exe);
    return out;
  }
  HostSessionOptions o;
  o.exec_fd = fd.get();
  o.stage_dir = stage;
  o.limits = limits;
  auto s = HostSession::start(std::move(o));
  if (!s.ok()) {
    out.status = s.error();
    return out;
  }
  auto run = [&]() -> Status {
    auto nonce = random_hex32();
    if (!nonce.ok()) return nonce.error();
    InitializeParams sent = hello::initialize_params("audit", *nonce);
    DOT_ASSIGN_OR_RETURN(InitializeResult echo, s->initialize(sent));
    DOT_TRY(hello::check_identity(sent, echo, hello::kPluginId));
    DOT_ASSIGN_OR_RETURN(PlanResult plan, s->plan());
    DOT_TRY(hello::check_hello_allowlists(plan));
    DOT_ASSIGN_OR_RETURN(out.artifacts, s->materialize());
    DOT_TRY(hello::check_artifacts(plan.names, out.artifacts));
    DOT_TRY(s->validate());
    DOT_TRY(s->shutdown());
    return s->finish();
  };
  out.status = run();
  s->abort();  // what core does on every failure path (a no-op after finish)
  out.stderr_bytes = s->stderr_bytes();
  return out;
}

}  // namespace dot::dpp::testing
