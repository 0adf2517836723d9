#pragma once
// Drives one plugin through a whole session the way core does: spawn from a
// sealed copy (an ELF plugin, or a #! script's interpreter with the sealed
// script as descriptor 3), optionally contained as under process assurance,
// initialize, identity check, plan, (hello: allowlists),
// materialize, (hello: artifact claims), validate, shutdown, finish: one
// drive() for both profiles (DriveOptions::profile).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dot/base/plugin_executable.h"
#include "dot/base/sandbox.h"
#include "dot/base/sha256.h"
#include "dot/base/error_kinds.h"
#include "dot/dpp/general.h"
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

struct DriveOptions {
  Profile profile = Profile::Hello;
  SessionLimits limits;  // the hello session's (a general session's come from general_limits)
  // ---- the general profile ----
  general::Limits general_limits = general::kLimits;  // sent, and kept by the session
  std::string id;  // the manifest id the echo must carry
  std::vector<std::string> inputs = {"/in"};
  std::vector<std::string> managed;
  // Called after dot.plan answered, before dot.materialize is sent.
  std::function<void()> before_materialize;
  // End the session after dot.plan (what core does when planning fails).
  bool stop_after_plan = false;
  // Run the plugin contained as `plan --require-process-sandbox` runs a
  // process-assurance plugin (the stage writable, an interpreter's runtime
  // folders readable, seccomp and the profile's limits).
  bool contained = false;
  // Offer "digests"; when negotiated, dot.materialize names `stage_only`
  // (every write when unset).
  bool offer_digests = true;
  std::optional<std::vector<std::string>> stage_only;
  // Offer "cache" with this folder (writable when contained, as core grants it).
  std::optional<std::string> cache;
};

// The general profile, the echo to carry manifest id `id`.
inline DriveOptions general_options(std::string id) {
  DriveOptions o;
  o.profile = Profile::General;
  o.id = std::move(id);
  return o;
}

struct DriveResult {
  Status status;
  std::string stderr_bytes;
  MaterializeResult hello;  // the hello profile's claims
  // The general profile's answers, error response and log.
  general::PlanResult plan;
  general::MaterializeResult artifacts;
  bool digests = false;  // negotiated
  bool cache = false;    // negotiated
  std::optional<PluginErrorInfo> plugin_error;
  std::vector<LogEntry> logs;
};

inline std::string bin(const std::string& name) { return std::string(DOT_BIN_DIR) + "/" + name; }

// Starts `exe` as core does: what register accepts (an ELF executable, or a
// #! script run by its interpreter), executed from sealed copies made here
// and needed only until start() returns; `contained`: under the containment
// of process assurance for o.stage_dir, as core installs it.
inline Result<HostSession> start(const std::string& exe, HostSessionOptions o, bool contained = false,
                                  const std::optional<std::string>& cache = std::nullopt) {
  DOT_ASSIGN_OR_RETURN(PluginExecutable found, open_plugin_executable(exe, "the plugin", kMaxPluginBytes));
  o.exec_fd = found.program.fd.get();
  if (found.interpreter) {
    o.spawn.argv = interpreter_argv(*found.interpreter);
    o.spawn.keep_fds = {{found.script->fd.get(), kScriptChildFd}};
    o.extra_env = interpreter_env(o.stage_dir);
  }
  if (!contained) return HostSession::start(std::move(o));
  UniqueFd stage(::open(o.stage_dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!stage) return make_error(base::ErrorKind::Open, "cannot open the stage " + o.stage_dir);
  std::vector<UniqueFd> runtime;
  SandboxPolicy policy;
  policy.executable_fd = found.program.fd.get();
  policy.executable_path = found.program_path;
  policy.script_fd = found.script ? found.script->fd.get() : -1;
  policy.stage_fd = stage.get();
  policy.stage_folders = o.profile == Profile::General;
  policy.limits = containment_limits(o.profile);
  UniqueFd cache_dir;
  if (cache) {
    cache_dir.reset(::open(cache->c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!cache_dir) return make_error(base::ErrorKind::Open, "cannot open the cache folder " + *cache);
    policy.cache_fd = cache_dir.get();
  }
  for (const auto& dir : found.interpreter ? found.interpreter->runtime_dirs : std::vector<std::string>{}) {
    runtime.emplace_back(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!runtime.back()) return make_error(base::ErrorKind::Open, "cannot open the runtime folder " + dir);
    policy.read_only_dir_fds.push_back(runtime.back().get());
  }
  // The sandbox outlives the spawn: the child reads it between fork and exec.
  DOT_ASSIGN_OR_RETURN(Sandbox sandbox, Sandbox::prepare(policy));
  DOT_TRY(sandbox.apply_to(o.spawn));
  o.containment = sandbox.limits();
  return HostSession::start(std::move(o));
}

inline DriveResult drive(const std::string& exe, const std::string& stage, const DriveOptions& opt = {}) {
  const bool is_general = opt.profile == Profile::General;
  DriveResult out;
  HostSessionOptions o;
  o.stage_dir = stage;
  o.profile = opt.profile;
  o.limits = opt.limits;
  o.general_limits = opt.general_limits;
  o.plugin_id = opt.id;
  auto s = start(exe, std::move(o), opt.contained, opt.cache);
  if (!s.ok()) {
    out.status = s.error();
    return out;
  }
  // Each profile's requests up to dot.materialize's answer and its checks.
  auto hello = [&]() -> Status {
    DOT_ASSIGN_OR_RETURN(std::string nonce, random_hex32());
    InitializeParams sent = hello::initialize_params("audit", nonce);
    DOT_ASSIGN_OR_RETURN(InitializeResult echo, s->initialize(sent));
    DOT_TRY(hello::check_identity(sent, echo, hello::kPluginId));
    DOT_ASSIGN_OR_RETURN(PlanResult plan, s->plan());
    DOT_TRY(hello::check_hello_allowlists(plan));
    DOT_ASSIGN_OR_RETURN(out.hello, s->materialize());
    return hello::check_artifacts(plan.names, out.hello);
  };
  auto general = [&]() -> Status {
    DOT_ASSIGN_OR_RETURN(std::string nonce, random_hex32());
    auto sent = general::initialize_params("audit", nonce, opt.inputs, opt.cache);
    sent.limits = opt.general_limits;
    if (!opt.offer_digests) std::erase(sent.capabilities, std::string(general::kDigestsCapability));
    DOT_ASSIGN_OR_RETURN(general::InitializeResult echo, s->initialize(sent));
    DOT_ASSIGN_OR_RETURN(general::Negotiated negotiated, general::check_identity(sent, echo, opt.id));
    out.digests = negotiated.digests;
    out.cache = negotiated.cache;
    DOT_ASSIGN_OR_RETURN(out.plan, s->plan(general::PlanParams{opt.managed}, out.digests));
    if (opt.stop_after_plan) return {};
    if (opt.before_materialize) opt.before_materialize();
    std::vector<std::string_view> asked;
    if (out.digests && opt.stage_only) {
      for (const auto& path : *opt.stage_only) asked.push_back(path);
    } else if (out.digests) {
      for (const auto& op : out.plan.operations)
        if (op.action == "write") asked.push_back(op.path);
    }
    std::optional<std::span<const std::string_view>> paths;
    if (out.digests) paths = asked;
    DOT_ASSIGN_OR_RETURN(out.artifacts, s->materialize_general(paths));
    return {};
  };
  auto run = [&]() -> Status {
    DOT_TRY(is_general ? general() : hello());
    if (is_general && opt.stop_after_plan) return {};
    DOT_TRY(s->validate());
    DOT_TRY(s->shutdown());
    return s->finish();
  };
  out.status = run();
  s->abort();  // what core does on every failure path (a no-op after finish)
  out.plugin_error = s->plugin_error();
  out.logs = s->logs();
  out.stderr_bytes = s->stderr_bytes();
  return out;
}

}  // namespace dot::dpp::testing
