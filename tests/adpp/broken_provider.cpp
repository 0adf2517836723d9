// adpp-broken MODE: deliberately broken ADPP providers, one per failure the
// conformance suite must catch. Valid requests are answered by adpp-sim's
// devices through handle_request(); MODE decides what goes wrong.
//
//   good                      behaves (the harness's own control)
//   hang                      reads everything, never answers, never exits
//   crash-on-malformed        dies by SIGSEGV on malformed input
//   exit-code                 exits 1 (undocumented) on malformed input
//   ok-on-malformed           answers malformed input with CODE_OK
//   unspecified-on-malformed  answers malformed input with CODE_UNSPECIFIED
//   over-cap-response         answers Hello with a frame over 1 MiB
//   unparseable-response      answers every request with bytes that are not a Response
//   drip                      writes its answers one byte per 50 ms
//   wrong-id                  echoes request_id + 1
//   no-metadata               answers Hello without the profile's metadata
//   answer-then-abort         answers malformed input, then dies by SIGABRT
//                             (a joinable std::thread destroyed on the way out,
//                             the known failure in the field)
//   stdout-banner             prints a line of text on stdout before serving
//   hostile-stderr            writes terminal controls (ESC, OSC 52, C1 CSI) and a
//                             byte that is not UTF-8 on stderr, then acts as
//                             exit-code: its stderr is quoted in the case details
//   reorder                   answers the requests that arrive in one read in
//                             reverse order (allowed: semantics §4), a
//                             malformed frame only after the answers before it
//   value-for-unknown-signal  answers a ReadSignals naming an unknown signal OK,
//                             with a made-up value for it
//   crash-mid-session         answers Hello, dies by SIGSEGV on any other request
//   cap-off-by-one            refuses a frame of exactly 1 MiB as over the cap
//   lenient-cap               serves frames up to 2 MiB - 1 (over the profile's cap)
//   exit-before-reading       exits 0 before reading anything
//   setsid-grandchild PIDFILE forks a child that calls setsid() (leaving the
//                             process group), lets go of stdio, appends its
//                             pid to PIDFILE (a line) and sleeps forever;
//                             once it is written,
//                             behaves (and exits at the end of stdin,
//                             abandoning the child)
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "dot/adpp/frame.h"
#include "dot/adpp/provider.h"
#include "dot/adpp/sim_provider.h"
#include "dot/base/fd.h"

namespace {

using namespace dot::adpp;

class Broken {
 public:
  Broken(std::string mode, SimProvider& sim) : mode_(std::move(mode)), sim_(sim) {}

  int run() {
    if (mode_ == "hang") {
      char buf[4096];
      while (::read(STDIN_FILENO, buf, sizeof buf) > 0) {
      }
      for (;;) ::pause();
    }
    if (mode_ == "stdout-banner") write_raw("adpp-broken starting\n");
    std::uint32_t cap = kMaxFrameBytes;
    if (mode_ == "cap-off-by-one") cap = kMaxFrameBytes - 1;
    // Up to 2 MiB - 1: the 2 MiB prefix of oversized_prefix is still refused.
    if (mode_ == "lenient-cap") cap = 2 * kMaxFrameBytes - 1;
    FrameReader reader(cap);
    for (;;) {
      for (;;) {
        auto f = reader.next();
        if (!f.ok()) {
          flush();
          malformed();
          if (reader.broken()) return 2;
          continue;
        }
        if (!f->has_value()) break;
        pb::Request req;
        if (!parse_payload((*f)->payload, req, 0, "request").ok() ||
            req.payload_case() == pb::Request::PAYLOAD_NOT_SET) {
          flush();
          malformed();
          continue;
        }
        if (mode_ == "crash-mid-session" && !req.has_hello()) crash();
        pb::Response resp = answer(req);
        if (mode_ == "reorder") {
          held_.push_back(std::move(resp));
        } else {
          emit(std::move(resp));
        }
      }
      flush();
      char* area = reader.prepare(65536);
      ssize_t n = ::read(STDIN_FILENO, area, 65536);
      if (n <= 0) {
        if (!reader.finish().ok()) malformed();
        return n == 0 && reader.finish().ok() ? 0 : 2;
      }
      reader.commit(static_cast<std::size_t>(n));
    }
  }

 private:
  pb::Response answer(const pb::Request& req) {
    if (mode_ != "value-for-unknown-signal" || !req.has_read_signals()) return handle_request(sim_, req);
    pb::Response resp = handle_request(sim_, req);
    if (resp.status().code() == pb::Status::CODE_OK) return resp;
    pb::Request probe;
    probe.mutable_describe_device()->set_device_id(req.read_signals().device_id());
    if (handle_request(sim_, probe).status().code() != pb::Status::CODE_OK) return resp;  // an unknown device
    // Each signal read on its own; the ones the device lacks get a value anyway.
    resp.clear_status();
    resp.mutable_status()->set_code(pb::Status::CODE_OK);
    auto* out = resp.mutable_read_signals();
    out->Clear();
    out->set_device_id(req.read_signals().device_id());
    for (const auto& id : req.read_signals().signal_ids()) {
      pb::Request one = req;
      one.mutable_read_signals()->clear_signal_ids();
      one.mutable_read_signals()->add_signal_ids(id);
      pb::Response r = handle_request(sim_, one);
      if (r.status().code() == pb::Status::CODE_OK) {
        for (const auto& v : r.read_signals().values()) *out->add_values() = v;
      } else {
        auto* v = out->add_values();
        v->set_signal_id(id);
        v->mutable_value()->set_type(pb::VALUE_TYPE_DOUBLE);
        v->mutable_value()->set_double_value(0);
      }
    }
    return resp;
  }

  // The answers held back in reorder mode, newest first.
  void flush() {
    for (auto it = held_.rbegin(); it != held_.rend(); ++it) emit(std::move(*it));
    held_.clear();
  }

  [[noreturn]] void crash() {
    // The default action, not a sanitizer's handler that reports and exits 1.
    std::signal(SIGSEGV, SIG_DFL);
    std::raise(SIGSEGV);
    std::_Exit(70);
  }

  void write_raw(std::string_view bytes) {
    if (mode_ == "drip") {
      for (char c : bytes) {
        (void)dot::write_all(STDOUT_FILENO, std::string_view(&c, 1));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      return;
    }
    (void)dot::write_all(STDOUT_FILENO, bytes);
  }

  void emit(pb::Response r) {
    if (mode_ == "wrong-id") r.set_request_id(r.request_id() + 1);
    if (mode_ == "no-metadata" && r.has_hello()) r.mutable_hello()->clear_metadata();
    if (mode_ == "unparseable-response") {
      write_raw(std::string_view("\x0a\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 14));
      return;
    }
    if (mode_ == "over-cap-response" && r.has_hello())
      (*r.mutable_hello()->mutable_metadata())["pad"] = std::string(kMaxFrameBytes + 100, 'x');
    // Serialized by hand: the codec would refuse the over-cap frame.
    std::string payload = r.SerializeAsString();
    std::string frame(4, '\0');
    write_prefix(frame.data(), static_cast<std::uint32_t>(payload.size()));
    write_raw(frame + payload);
  }

  void malformed() {
    if (mode_ == "crash-on-malformed") crash();
    if (mode_ == "exit-code" || mode_ == "hostile-stderr") std::_Exit(1);
    pb::Response r;
    r.set_request_id(0);
    if (mode_ == "ok-on-malformed") {
      r.mutable_status()->set_code(pb::Status::CODE_OK);
    } else if (mode_ == "unspecified-on-malformed") {
      r.mutable_status()->set_code(pb::Status::CODE_UNSPECIFIED);
    } else {
      r.mutable_status()->set_code(pb::Status::CODE_INVALID_ARGUMENT);
      r.mutable_status()->set_message("malformed frame");
    }
    emit(r);
    if (mode_ == "answer-then-abort") {
      // Leaving the scope of a joinable thread calls std::terminate.
      std::thread worker([] {
        for (;;) ::pause();
      });
    }
  }

  std::string mode_;
  SimProvider& sim_;
  std::vector<pb::Response> held_;
};

// The setsid-grandchild mode's child: out of the group, its pid appended to
// `pid_file` (one write, so concurrent providers never mix their lines),
// then a byte on `ready`, then asleep until killed. Returns only in the
// parent, once the pid is written.
bool abandon_a_setsid_child(const char* pid_file) {
  int ready[2];
  if (::pipe(ready) != 0) return false;
  pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    ::close(ready[0]);
    if (::setsid() < 0) std::_Exit(71);
    // A daemon's manners: the provider's pipes are not held open, so only
    // the process itself is left behind.
    int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(null, 1) < 0 || ::dup2(null, 2) < 0) std::_Exit(75);
    int fd = ::open(pid_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) std::_Exit(72);
    std::string text = std::to_string(::getpid()) + "\n";
    if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()) || ::close(fd) != 0) std::_Exit(73);
    if (::write(ready[1], "r", 1) != 1) std::_Exit(74);
    ::close(ready[1]);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char byte = 0;
  ssize_t n;
  do n = ::read(ready[0], &byte, 1); while (n < 0 && errno == EINTR);
  ::close(ready[0]);
  return n == 1;
}

}  // namespace

int main(int argc, char** argv) {
  const bool grandchild = argc == 3 && std::string_view(argv[1]) == "setsid-grandchild";
  if (argc != 2 && !grandchild) {
    std::fputs("usage: adpp-broken MODE | adpp-broken setsid-grandchild PIDFILE\n", stderr);
    return 64;
  }
  if (std::string_view(argv[1]) == "exit-before-reading") return 0;
  if (grandchild && !abandon_a_setsid_child(argv[2])) return 70;
  // Crashing is the point of some modes; leave no core files behind.
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  std::signal(SIGPIPE, SIG_IGN);
  auto config = default_sim_config();
  config.set_init_time_ms(0);
  auto sim = SimProvider::create(std::move(config), "broken");
  if (!sim.ok()) return 70;
  if (std::string_view(argv[1]) == "hostile-stderr") {
    const std::string_view noise = "adpp-broken \x1b[2K\rerased \x1b]52;c;ZXZpbA==\x07 \xc2\x9b" "31m \xff\n";
    ssize_t ignored = ::write(STDERR_FILENO, noise.data(), noise.size());
    (void)ignored;
  }
  Broken broken(argv[1], *sim);
  return broken.run();
}
