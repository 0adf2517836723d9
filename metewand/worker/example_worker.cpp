// metewand-example-worker: a Metewand v1 worker for all three roles, on the
// module's worker runtime (worker_runtime.h): after hello it answers every
// request of the role it was given and `shutdown`. What each role does:
//   materialize  writes data.json ({"dataset_parameters","dataset_seed"}) and
//                dataset-manifest.json (its size and SHA-256) in output_dir
//   prepare      keeps the request's parameters and seed
//   execute      writes result.json (the prepared state) in result_dir;
//                operation_failed before a prepare
//   reset        forgets the prepared state
//   evaluate     writes {"checked":true,...} to metrics_path
// The switches make it misbehave in exactly one way each, for the tests:
//
//   --capabilities a,b     report these (default one_shot for implementation, else none)
//   --sdk NAME:VERSION     report SDK metadata (default null)
//   --id ID                answer with this id instead of the request's
//   --worker-id W          answer with this identity instead of the request's
//   --protocol N           report this protocol version
//   --fail CODE            answer hello with a failure response of this code
//   --raw-file PATH        answer hello with exactly these bytes, then end the stream
//   --extra                send the hello answer twice
//   --hang                 never answer
//   --close                close the response stream without answering
//   --endless              answer with bytes and never a line feed
//   --log-bytes N          write N bytes to stdout and to stderr first
//   --grandchild           leave a sleeping child in the process group (pid on stderr)
//   --escape FILE          leave a sleeping child in a session of its own (pid written to FILE)
//   --describe-fds FILE    write "fd target" for each open descriptor to FILE first
//   --fail-in METHOD:CODE  answer METHOD with a failure of CODE
//   --hang-in METHOD       never answer METHOD
//   --linger               keep running after the shutdown acknowledgment
//   --exit N               exit with N after the shutdown acknowledgment
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <memory>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "dot/base/byte_stream.h"
#include "dot/base/fd.h"
#include "dot/base/sha256.h"
#include "dot/metewand/frame_reader.h"
#include "dot/metewand/hello.h"
#include "dot/metewand/message.h"
#include "dot/metewand/worker_runtime.h"

namespace mw = dot::metewand;

namespace {

struct Options {
  std::optional<std::string> capabilities;
  std::optional<std::string> sdk;
  std::optional<std::string> id;
  std::optional<std::string> worker_id;
  std::optional<long> protocol;
  std::optional<std::string> fail;
  std::optional<std::string> raw_file;
  std::optional<std::string> escape;
  std::optional<std::string> describe_fds;
  std::optional<std::string> fail_in, hang_in;
  bool extra = false, hang = false, close = false, endless = false, grandchild = false, linger = false;
  long log_bytes = 0;
  int exit_code = 0;
};

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "metewand-example-worker: %s\n", why.c_str());
  std::exit(70);
}

int fd_from_env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) die(fmt::format("{} is not set", name));
  return std::atoi(v);
}

void send(int fd, std::string_view bytes) {
  if (!dot::write_all(fd, bytes, "response stream").ok()) std::exit(71);
}

[[noreturn]] void sleep_forever() {
  for (;;) ::pause();
}

std::string hello_answer(const Options& o, const mw::HelloRequest& request) {
  if (o.raw_file) {
    auto raw = dot::read_file(*o.raw_file, 64 * 1024 * 1024);
    if (!raw.ok()) die(raw.error().message());
    return *raw;
  }
  std::string id = o.id.value_or(request.id);
  if (o.fail) {
    mw::WorkerFailure f;
    f.id = id;
    f.code = *o.fail;
    f.message = "the example worker was told to fail";
    dot::jcs::Node details = dot::jcs::Node::object();
    details.set("phase", dot::jcs::Node::string("hello"));
    f.details = details;
    auto line = mw::encode_message(f.to_node());
    if (!line.ok()) die(line.error().message());
    return *line;
  }
  // Built by hand rather than from HelloResponse so that the switches can
  // produce values the typed layer would refuse to build.
  dot::jcs::Node caps = dot::jcs::Node::array();
  // Like a direct worker, capabilities are an implementation's to report.
  std::string list = o.capabilities.value_or(request.role == mw::WorkerRole::Implementation ? "one_shot" : "");
  for (std::size_t pos = 0; !list.empty() && pos <= list.size();) {
    std::size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    caps.push(dot::jcs::Node::string(list.substr(pos, comma - pos)));
    pos = comma + 1;
  }
  dot::jcs::Node sdk = dot::jcs::Node::null();
  if (o.sdk) {
    auto colon = o.sdk->find(':');
    sdk = dot::jcs::Node::object();
    sdk.set("name", dot::jcs::Node::string(o.sdk->substr(0, colon)));
    sdk.set("version", dot::jcs::Node::string(colon == std::string::npos ? "" : o.sdk->substr(colon + 1)));
  }
  dot::jcs::Node r = dot::jcs::Node::object();
  r.set("capabilities", std::move(caps));
  r.set("id", dot::jcs::Node::string(id));
  r.set("ok", dot::jcs::Node::boolean(true));
  r.set("protocol", dot::jcs::Node::integer(o.protocol.value_or(mw::kWireProtocolVersion)));
  r.set("sdk", std::move(sdk));
  r.set("worker_id", dot::jcs::Node::string(o.worker_id.value_or(request.worker_id)));
  auto line = mw::encode_message(r);
  if (!line.ok()) die(line.error().message());
  return *line;
}

// Writes `bytes` as `name` in the directory `dir` (created if missing),
// never through a symbolic link.
std::optional<mw::WorkerFailure> write_in(const std::string& dir, const std::string& name, std::string_view bytes) {
  ::mkdir(dir.c_str(), 0755);
  dot::UniqueFd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  dot::UniqueFd f(d ? ::openat(d.get(), name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644)
                    : -1);
  if (!f || !dot::write_all(f.get(), bytes, name).ok())
    return mw::make_failure("", "operation_failed", fmt::format("cannot write {} in {}", name, dir));
  return std::nullopt;
}

std::string canonical(const dot::jcs::Node& node) {
  auto bytes = dot::jcs::encode(node, dot::jcs::Profile::Metewand);
  return bytes.ok() ? *bytes : std::string("null");
}

std::string text(const mw::OperationRequest& r, const char* name) {
  const dot::jcs::Node* n = r.params.get(name);
  const auto* s = n ? std::get_if<std::string>(&n->storage()) : nullptr;
  return s ? *s : std::string();
}

// Shared by the handlers: what prepare kept, and the switches.
struct WorkerState {
  std::optional<dot::jcs::Node> prepared;
  std::int64_t executions = 0;
};

mw::WorkerHandlers role_handlers(const Options& o) {
  auto state = std::make_shared<WorkerState>();
  std::string fail_method, fail_code;
  if (o.fail_in) {
    auto colon = o.fail_in->find(':');
    fail_method = o.fail_in->substr(0, colon);
    fail_code = colon == std::string::npos ? "operation_failed" : o.fail_in->substr(colon + 1);
  }
  std::string hang_method = o.hang_in.value_or("");
  // Every handler first obeys the switches for its method.
  auto wrap = [=](mw::Method method, mw::OperationHandler inner) -> mw::OperationHandler {
    return [=](const mw::OperationRequest& r) -> mw::OperationResult {
      std::string_view name = mw::method_name(method);
      if (name == hang_method) sleep_forever();
      if (name == fail_method) {
        mw::WorkerFailure f = mw::make_failure("", fail_code, "the example worker was told to fail");
        dot::jcs::Node details = dot::jcs::Node::object();
        details.set("phase", dot::jcs::Node::string(std::string(name)));
        f.details = details;
        return f;
      }
      return inner(r);
    };
  };
  mw::WorkerHandlers h;
  h.materialize = wrap(mw::Method::Materialize, [](const mw::OperationRequest& r) -> mw::OperationResult {
    dot::jcs::Node data = dot::jcs::Node::object();
    data.set("dataset_parameters", *r.params.get("dataset_parameters"));
    data.set("dataset_seed", *r.params.get("dataset_seed"));
    std::string bytes = canonical(data);
    std::string out = text(r, "output_dir");
    if (auto f = write_in(out, "data.json", bytes)) return *f;
    dot::jcs::Node file = dot::jcs::Node::object();
    file.set("path", dot::jcs::Node::string("data.json"));
    file.set("sha256", dot::jcs::Node::string(dot::sha256_hex(bytes)));
    file.set("size_bytes", dot::jcs::Node::integer(static_cast<std::int64_t>(bytes.size())));
    dot::jcs::Node manifest = dot::jcs::Node::object();
    manifest.set("complete", dot::jcs::Node::boolean(true));
    manifest.set("files", dot::jcs::Node::array().push(std::move(file)));
    manifest.set("schema_version", dot::jcs::Node::integer(1));
    if (auto f = write_in(out, "dataset-manifest.json", canonical(manifest))) return *f;
    mw::OperationSuccess ok;
    ok.manifest = "dataset-manifest.json";
    return ok;
  });
  h.prepare = wrap(mw::Method::Prepare, [state](const mw::OperationRequest& r) -> mw::OperationResult {
    state->prepared = r.params;
    return mw::OperationSuccess{};
  });
  h.execute = wrap(mw::Method::Execute, [state](const mw::OperationRequest& r) -> mw::OperationResult {
    if (!state->prepared) return mw::make_failure("", "operation_failed", "prepare must succeed before execute");
    auto t0 = std::chrono::steady_clock::now();
    if (auto f = write_in(text(r, "result_dir"), "result.json", canonical(*state->prepared))) return *f;
    mw::OperationSuccess ok;
    ok.manifest = "result.json";
    ok.implementation_time_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
    ok.statistics.set("executions", dot::jcs::Node::integer(++state->executions));
    return ok;
  });
  h.reset = wrap(mw::Method::Reset, [state](const mw::OperationRequest&) -> mw::OperationResult {
    state->prepared.reset();
    return mw::OperationSuccess{};
  });
  h.evaluate = wrap(mw::Method::Evaluate, [](const mw::OperationRequest& r) -> mw::OperationResult {
    std::string path = text(r, "metrics_path");
    auto slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
    std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    dot::jcs::Node metrics = dot::jcs::Node::object();
    metrics.set("checked", dot::jcs::Node::boolean(true));
    metrics.set("result_dir", dot::jcs::Node::string(text(r, "result_dir")));
    if (auto f = write_in(dir, name, canonical(metrics))) return *f;
    return mw::OperationSuccess{};
  });
  return h;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(fmt::format("{} needs a value", a));
      return argv[++i];
    };
    if (a == "--capabilities")
      o.capabilities = value();
    else if (a == "--sdk")
      o.sdk = value();
    else if (a == "--id")
      o.id = value();
    else if (a == "--worker-id")
      o.worker_id = value();
    else if (a == "--protocol")
      o.protocol = std::atol(value().c_str());
    else if (a == "--fail")
      o.fail = value();
    else if (a == "--raw-file")
      o.raw_file = value();
    else if (a == "--extra")
      o.extra = true;
    else if (a == "--hang")
      o.hang = true;
    else if (a == "--close")
      o.close = true;
    else if (a == "--endless")
      o.endless = true;
    else if (a == "--log-bytes")
      o.log_bytes = std::atol(value().c_str());
    else if (a == "--grandchild")
      o.grandchild = true;
    else if (a == "--escape")
      o.escape = value();
    else if (a == "--describe-fds")
      o.describe_fds = value();
    else if (a == "--fail-in")
      o.fail_in = value();
    else if (a == "--hang-in")
      o.hang_in = value();
    else if (a == "--linger")
      o.linger = true;
    else if (a == "--exit")
      o.exit_code = std::atoi(value().c_str());
    else
      die(fmt::format("unknown switch {}", a));
  }
  return o;
}

// --describe-fds: every open descriptor and what it is, one per line.
void describe_fds(const std::string& path) {
  std::string lines;
  for (int fd = 0; fd < 1024; ++fd) {
    char target[512];
    std::string link = "/proc/self/fd/" + std::to_string(fd);
    ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
    if (n < 0) continue;
    lines += fmt::format("{} {}\n", fd, std::string_view(target, static_cast<std::size_t>(n)));
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) die("cannot write the fd description");
  std::fputs(lines.c_str(), f);
  std::fclose(f);
}

// What the switches ask for before the hello request is read: descriptors
// described, children left behind, log bytes on stdout and stderr.
void misbehave_at_start(const Options& o) {
  if (o.describe_fds) describe_fds(*o.describe_fds);
  if (o.grandchild) {
    pid_t pid = ::fork();
    if (pid == 0) sleep_forever();
    std::fprintf(stderr, "grandchild=%d\n", static_cast<int>(pid));
    std::fflush(stderr);
  }
  if (o.escape) {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::setsid();
      sleep_forever();
    }
    std::FILE* f = std::fopen(o.escape->c_str(), "w");
    if (f == nullptr) die("cannot write the escape file");
    std::fprintf(f, "%d\n", static_cast<int>(pid));
    std::fclose(f);
  }
  if (o.log_bytes > 0) {
    std::string chunk(4096, 'x');
    for (long left = o.log_bytes; left > 0; left -= 4096) {
      auto n = static_cast<std::size_t>(std::min<long>(left, 4096));
      (void)dot::write_all(STDOUT_FILENO, std::string_view(chunk).substr(0, n));
      (void)dot::write_all(STDERR_FILENO, std::string_view(chunk).substr(0, n));
    }
  }
}

// The hello answer, or what the switches put in its place; returns the
// response descriptor, -1 once it is closed.
int answer_hello(const Options& o, const mw::HelloRequest& request, int out) {
  if (o.hang) sleep_forever();
  if (o.close) {
    ::close(out);
    return -1;
  }
  if (o.endless) {
    std::string chunk(65536, ' ');
    for (;;)
      if (!dot::write_all(out, chunk, "response stream").ok()) break;
    return out;
  }
  std::string answer = hello_answer(o, request);
  send(out, answer);
  if (o.extra) send(out, answer);
  if (o.raw_file) {
    // Raw bytes are the whole story: the stream ends with them, so a line
    // without its LF is an early EOF rather than a wait.
    ::close(out);
    return -1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  Options o = parse(argc, argv);
  int in = fd_from_env("METEWAND_PROTOCOL_READ_FD");
  int out = fd_from_env("METEWAND_PROTOCOL_WRITE_FD");
  misbehave_at_start(o);

  dot::FdSource source(in, "the request stream");
  mw::FrameReader reader(source);
  auto first = reader.read_frame();
  if (!first.ok()) die(fmt::format("hello request: {}", first.error().message()));
  if (!first->has_value()) return 0;  // the orchestrator left before saying hello
  auto request = mw::decode_hello_request((*first)->document.root());
  if (!request.ok()) die(fmt::format("hello request: {}", request.error().message()));
  out = answer_hello(o, *request, out);

  // The role is the one the host asked for: this worker takes all three.
  mw::WorkerHandlers handlers = role_handlers(o);
  auto served = mw::serve_requests(reader, out, request->role, handlers);
  if (!served.ok()) die(served.error().message());
  if (o.linger) sleep_forever();
  return o.exit_code;
}
