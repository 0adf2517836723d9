// A Hello round trip with adpp-sim over pipes (client encode, write, provider
// read + parse + answer + write, client read + parse + checks), against the
// floor: a C program that reads the same number of request bytes and writes
// the same number of response bytes over the same kind of pipes.
#include <benchmark/benchmark.h>

#include <poll.h>
#include <unistd.h>

#include "dot/adpp/client.h"
#include "dot/adpp/frame.h"

namespace {

using namespace dot::adpp;

pb::Request hello(std::uint64_t id) {
  pb::Request r;
  r.set_request_id(id);
  auto* h = r.mutable_hello();
  h->set_protocol_version("v1");
  h->set_client_name("bench");
  h->set_client_version("1");
  return r;
}

void BM_HelloRoundTripAdppSim(benchmark::State& state) {
  auto client = Client::launch({DOT_BIN_DIR "/adpp-sim"});
  if (!client.ok()) {
    state.SkipWithError(client.error().line().c_str());
    return;
  }
  std::size_t req_bytes = 0, resp_bytes = 0;
  for (auto _ : state) {
    auto r = client->request(hello(0));
    if (!r.ok() || r->status().code() != pb::Status::CODE_OK) {
      state.SkipWithError("hello failed");
      break;
    }
    req_bytes = kPrefixBytes + hello(1).ByteSizeLong();
    resp_bytes = kPrefixBytes + r->ByteSizeLong();
  }
  state.counters["request_bytes"] = static_cast<double>(req_bytes);
  state.counters["response_bytes"] = static_cast<double>(resp_bytes);
  (void)client->shutdown();
}
BENCHMARK(BM_HelloRoundTripAdppSim)->UseRealTime();

// Sizes measured from adpp-sim's Hello exchange (see the counters above).
void BM_RawPipeRoundTrip(benchmark::State& state) {
  const auto req = static_cast<std::size_t>(state.range(0));
  const auto resp = static_cast<std::size_t>(state.range(1));
  dot::SpawnOptions o;
  o.argv = {"adpp-bench-echo", std::to_string(req), std::to_string(resp)};
  o.path = DOT_BIN_DIR "/adpp-bench-echo";
  o.stderr_mode = dot::StdioMode::Inherit;
  auto child = dot::spawn(o);
  if (!child.ok()) {
    state.SkipWithError(child.error().line().c_str());
    return;
  }
  std::string out(req, 'r'), in(resp, '\0');
  for (auto _ : state) {
    if (!dot::write_all(child->stdin_fd().get(), out).ok()) {
      state.SkipWithError("write failed");
      break;
    }
    std::size_t got = 0;
    while (got < resp) {
      // Poll like the client does, so both sides pay the same syscalls.
      pollfd p{child->stdout_fd().get(), POLLIN, 0};
      ::poll(&p, 1, 5000);
      ssize_t n = ::read(child->stdout_fd().get(), in.data() + got, resp - got);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
  }
  child->stdin_fd().reset();
  child->wait_until(dot::Clock::now() + std::chrono::seconds(5));
}
BENCHMARK(BM_RawPipeRoundTrip)->Args({22, 135})->UseRealTime();

}  // namespace
