// metewand-example-worker: a Metewand v1 worker that answers hello and then
// refuses every other request until its request stream ends. The switches
// make it misbehave in exactly one way each, for the process-level tests:
//
//   --capabilities a,b     report these (default one_shot; "" for none)
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
//   --linger               keep running after the request stream ends
//   --exit N               exit with N after the request stream ends
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "dot/base/fd.h"
#include "dot/base/byte_stream.h"
#include "dot/metewand/frame_reader.h"
#include "dot/metewand/hello.h"
#include "dot/metewand/message.h"

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
  std::string list = o.capabilities.value_or("one_shot");
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

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(fmt::format("{} needs a value", a));
      return argv[++i];
    };
    if (a == "--capabilities") o.capabilities = value();
    else if (a == "--sdk") o.sdk = value();
    else if (a == "--id") o.id = value();
    else if (a == "--worker-id") o.worker_id = value();
    else if (a == "--protocol") o.protocol = std::atol(value().c_str());
    else if (a == "--fail") o.fail = value();
    else if (a == "--raw-file") o.raw_file = value();
    else if (a == "--extra") o.extra = true;
    else if (a == "--hang") o.hang = true;
    else if (a == "--close") o.close = true;
    else if (a == "--endless") o.endless = true;
    else if (a == "--log-bytes") o.log_bytes = std::atol(value().c_str());
    else if (a == "--grandchild") o.grandchild = true;
    else if (a == "--escape") o.escape = value();
    else if (a == "--describe-fds") o.describe_fds = value();
    else if (a == "--linger") o.linger = true;
    else if (a == "--exit") o.exit_code = std::atoi(value().c_str());
    else die(fmt::format("unknown switch {}", a));
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  Options o = parse(argc, argv);
  int in = fd_from_env("METEWAND_PROTOCOL_READ_FD");
  int out = fd_from_env("METEWAND_PROTOCOL_WRITE_FD");

  if (o.describe_fds) {
    std::string lines;
    for (int fd = 0; fd < 1024; ++fd) {
      char target[512];
      std::string link = "/proc/self/fd/" + std::to_string(fd);
      ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
      if (n < 0) continue;
      lines += fmt::format("{} {}\n", fd, std::string_view(target, static_cast<std::size_t>(n)));
    }
    std::FILE* f = std::fopen(o.describe_fds->c_str(), "w");
    if (f == nullptr) die("cannot write the fd description");
    std::fputs(lines.c_str(), f);
    std::fclose(f);
  }
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

  dot::FdSource source(in, "the request stream");
  mw::FrameReader reader(source);
  auto first = reader.read_frame();
  if (!first.ok()) die(fmt::format("hello request: {}", first.error().message()));
  if (!first->has_value()) return 0;  // the orchestrator left before saying hello
  auto request = mw::decode_hello_request((*first)->document.root());
  if (!request.ok()) die(fmt::format("hello request: {}", request.error().message()));

  if (o.hang) sleep_forever();
  if (o.close) {
    ::close(out);
    out = -1;
  } else if (o.endless) {
    std::string chunk(65536, ' ');
    for (;;)
      if (!dot::write_all(out, chunk, "response stream").ok()) break;
  } else {
    std::string answer = hello_answer(o, *request);
    send(out, answer);
    if (o.extra) send(out, answer);
    if (o.raw_file) {
      // Raw bytes are the whole story: the stream ends with them, so a line
      // without its LF is an early EOF rather than a wait.
      ::close(out);
      out = -1;
    }
  }

  // Every later request is refused; the session ends when requests end.
  for (;;) {
    auto frame = reader.read_frame();
    if (!frame.ok()) die(frame.error().message());
    if (!frame->has_value()) break;
    auto root = (*frame)->document.root();
    auto id = root.is_object() ? root.find("id") : std::nullopt;
    if (out < 0 || !id || !id->is_string()) continue;
    mw::WorkerFailure f;
    f.id = std::string(id->as_string());
    f.code = "unsupported_operation";
    f.message = "the example worker only says hello";
    auto line = mw::encode_message(f.to_node());
    if (line.ok()) send(out, *line);
  }
  if (o.linger) sleep_forever();
  return o.exit_code;
}
