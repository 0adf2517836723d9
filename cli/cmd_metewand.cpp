// metewand hello: run the Metewand v1 hello handshake against a worker
// executable and print what was negotiated. The worker runs in its own
// process group with only its two protocol pipes, and nothing of it outlives
// the command, whatever the worker does.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "commands.h"
#include "numbers.h"
#include "usage.h"
#include "dot/base/fd.h"
#include "dot/base/process.h"
#include "dot/base/sealed_executable.h"
#include "dot/metewand/hello.h"
#include "dot/metewand/worker_session.h"
#include "output.h"

namespace dot::cli {
namespace {

// --timeout: a millisecond at least (the deadline is counted in whole
// milliseconds), a day at most.
constexpr double kMinTimeoutS = 0.001;
constexpr double kMaxTimeoutS = 86400;

struct HelloOptions {
  std::string role = "implementation";
  std::string worker_id;
  double timeout_s = 5.0;
  std::vector<std::string> select;
  std::vector<std::string> command;  // WORKER [ARGS...]
  bool json = false;
};

// A worker is copied into memory to be sealed before it runs: the copy is capped.
constexpr std::uint64_t kMaxSealedWorkerBytes = 256ULL << 20;

// The executable a bare name means, searched on our PATH like a shell would.
Result<std::string> resolve_worker(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    auto colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return make_error(Code::Io, "worker", fmt::format("worker {} not found on PATH", name));
}

int run_hello(const HelloOptions& o) {
  using namespace metewand;
  auto role = role_from_name(o.role);
  if (!role) return report(make_error(Code::Validation, "role", fmt::format("unknown role {}", o.role)), o.json);
  std::vector<Capability> selected;
  for (const auto& name : o.select) {
    auto cap = capability_from_name(name);
    if (!cap) return report(make_error(Code::Validation, "capability", fmt::format("unknown capability {}", name)), o.json);
    selected.push_back(*cap);
  }

  auto path = resolve_worker(o.command.front());
  if (!path.ok()) return report(path.error(), o.json);
  UniqueFd exe(::open(path->c_str(), O_RDONLY | O_CLOEXEC));
  if (!exe)
    return report(make_error(Code::Io, "worker", fmt::format("cannot open worker {}: {}", *path, std::strerror(errno))), o.json);
  struct stat st {};
  if (::fstat(exe.get(), &st) != 0 || !S_ISREG(st.st_mode))
    return report(make_error(Code::Io, "worker", fmt::format("worker {} is not a regular file", *path)), o.json);
  // The identity is the digest of a sealed copy, and that copy is what runs.
  auto sealed = seal_executable(exe.get(), *path, kMaxSealedWorkerBytes);
  if (!sealed.ok()) return report(sealed.error(), o.json);
  std::string worker_id = o.worker_id.empty() ? worker_identity_from_digest(sealed->sha256) : o.worker_id;
  if (!is_worker_identity(worker_id))
    return report(make_error(Code::Validation, "worker_id",
                             fmt::format("--worker-id {} is not mw1-resolved-worker- and 64 lowercase hex digits", worker_id)),
                  o.json);

  auto total = std::chrono::milliseconds(static_cast<long long>(std::ceil(o.timeout_s * 1000)));
  auto started = Clock::now();
  SessionOptions so;
  so.command.argv = o.command;
  // The hashed descriptor is the one executed, except for a script: the
  // kernel needs a path to hand to its interpreter.
  char magic[2] = {0, 0};
  bool script = ::pread(exe.get(), magic, 2, 0) == 2 && magic[0] == '#' && magic[1] == '!';
  if (script) so.command.path = *path;
  else so.command.exec_fd = sealed->fd.get();
  so.command.env = {"PATH=/usr/local/bin:/usr/bin:/bin"};
  so.timeouts.hello = total;
  so.timeouts.shutdown = total;

  // A descendant that left the worker's process group (setsid) is
  // re-parented to us and swept with the other orphans at the end.
  (void)become_child_subreaper();
  auto session = WorkerSession::start(so);
  if (!session.ok()) return report(session.error().to_error(), o.json);
  auto negotiated = session->hello(*role, worker_id, selected);
  std::optional<SessionError> failure;
  if (!negotiated.ok()) failure = negotiated.error();
  if (session->usable()) {
    // What is left of the command's time, with a floor so a clean exit fits.
    auto left = total - std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
    auto done = session->shutdown(std::max(left, std::chrono::milliseconds(200)));
    if (!done.ok() && !failure) failure = done.error();
  }
  session->discard();
  kill_orphans();
  if (failure) return report(failure->to_error(), o.json);

  auto bytes = jcs::encode(negotiated->to_node(), jcs::Profile::Metewand);
  if (!bytes.ok()) return report(bytes.error(), o.json);
  *bytes += '\n';
  if (!write_stdout(*bytes)) return report(make_error(Code::Io, "write", "cannot write standard output"), o.json);
  return kExitOk;
}

}  // namespace

void add_metewand_commands(CLI::App& app, Context& ctx) {
  auto* group = app.add_subcommand("metewand", "Metewand v1 worker protocol");
  group->require_subcommand(1);
  auto* hello = group->add_subcommand("hello", "Run the hello handshake against a worker and print the result");
  auto o = std::make_shared<HelloOptions>();
  hello->add_option("--role", o->role, "Worker role")
      ->check(CLI::IsMember({"dataset_materializer", "implementation", "problem_evaluator"}));
  hello->add_option("--worker-id", o->worker_id,
                    "Expected resolved identity (default: mw1-resolved-worker- + SHA-256 of WORKER)");
  add_seconds_option(hello, "--timeout", o->timeout_s, "Seconds for the handshake and for the worker's exit (default 5)",
                     kMinTimeoutS, kMaxTimeoutS);
  add_repeatable_option(hello, "--select", o->select,
                        "Capability to select (repeatable, one per --select; implementation role only)");
  hello->add_flag("--json", o->json, "Errors also as JSON on standard output");
  hello->add_option("command", o->command, "WORKER [ARGS...] after --")->required();
  hello->footer(
      "Prints {\"capabilities\":[...],\"protocol\":1,\"role\":R,\"sdk\":...,\"selected\":[...],\"worker_id\":W}\n"
      "on success (exit 0); otherwise the typed error (a FrameError, correlation or handshake\n"
      "error name, or the worker's failure code) and exit 1.\n"
      "Examples:\n"
      "  dot-core metewand hello -- ./my-worker --verbose\n"
      "  dot-core metewand hello --role problem_evaluator --timeout 2 -- /opt/eval/worker\n");
  hello->callback([&ctx, o] { ctx.action = [o] { return run_hello(*o); }; });
}

}  // namespace dot::cli
