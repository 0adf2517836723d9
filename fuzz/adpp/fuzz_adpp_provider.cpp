// The provider loop (run_provider + adpp-sim's devices) fed arbitrary stdin
// bytes in-process, split into reads of fuzzer-chosen sizes. Whatever comes
// in, the loop must end with a documented exit code (0, 2, 3) and write only
// well-formed frames: each within the cap, each an ADPP Response with a
// defined status, never more responses than frames it was sent (+1 for the
// over-cap answer).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <google/protobuf/stubs/logging.h>

#include "dot/adpp/frame.h"
#include "dot/adpp/provider.h"
#include "dot/adpp/sim_provider.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

class ChunkedInput final : public dot::ByteSource {
 public:
  ChunkedInput(std::string_view bytes, unsigned seed) : bytes_(bytes), seed_(seed) {}
  dot::Result<std::size_t> read(char* buf, std::size_t n) override {
    std::size_t step = 1 + (seed_ % 61);
    seed_ = seed_ * 1103515245u + 12345u;
    std::size_t k = std::min({n, step * step, bytes_.size()});
    std::copy(bytes_.begin(), bytes_.begin() + static_cast<std::ptrdiff_t>(k), buf);
    bytes_.remove_prefix(k);
    return k;
  }

 private:
  std::string_view bytes_;
  unsigned seed_;
};

class StringOutput final : public dot::ByteSink {
 public:
  dot::Status write(std::string_view bytes) override {
    out.append(bytes);
    return {};
  }
  std::string out;
};

const dot::adpp::simpb::SimConfig& fuzz_config() {
  // Parsed once: the text-format parse would dominate every run otherwise.
  static const dot::adpp::simpb::SimConfig config = [] {
    auto c = dot::adpp::default_sim_config();
    // No waiting in WaitReady: the fuzzer must not sleep.
    c.set_init_time_ms(0);
    return c;
  }();
  return config;
}

dot::adpp::SimProvider make_sim() {
  auto sim = dot::adpp::SimProvider::create(fuzz_config(), "fuzz");
  check(sim.ok());
  return std::move(sim).value();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // libprotobuf logs every invalid UTF-8 string it meets; the fuzzer meets many.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  unsigned seed = data[0];
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto sim = make_sim();
  ChunkedInput in(bytes, seed);
  StringOutput out;
  dot::adpp::ProviderLoopOptions options;
  // Small reads: a fresh 64 KiB buffer per run would make page faults, not
  // the loop, the cost of every execution under ASan.
  options.read_chunk = 512;
  int code = dot::adpp::run_provider(sim, in, out, options);
  check(code == 0 || code == 2 || code == 3);

  std::size_t responses = 0;
  std::uint64_t at = 0;
  std::string_view produced = out.out;
  for (;;) {
    auto f = dot::adpp::decode_frame(produced.substr(at), at);
    check(f.ok());
    if (!f->has_value()) break;
    dot::adpp::pb::Response r;
    check(dot::adpp::parse_payload((*f)->payload, r, 0, "response").ok());
    check(r.has_status() && r.status().code() != dot::adpp::pb::Status::CODE_UNSPECIFIED);
    check(dot::adpp::pb::Status::Code_IsValid(r.status().code()));
    check((r.status().code() == dot::adpp::pb::Status::CODE_OK) ==
          (r.payload_case() != dot::adpp::pb::Response::PAYLOAD_NOT_SET));
    ++responses;
    at += dot::adpp::kPrefixBytes + (*f)->payload.size();
  }
  // At most one response per 4 input bytes (the smallest frame is a prefix).
  check(responses <= bytes.size() / 4 + 1);
  return 0;
}
