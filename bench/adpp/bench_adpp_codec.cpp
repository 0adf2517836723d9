// The uint32_le codec on 1 MiB frames, against memcpy of the same bytes.
// A frame carries one Call request whose single bytes argument fills it to
// just under the 1 MiB cap.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "dot/adpp/frame.h"
#include "dot/adpp/messages.h"

namespace {

using namespace dot::adpp;

pb::Request big_request() {
  pb::Request r;
  r.set_request_id(42);
  auto* call = r.mutable_call();
  call->set_device_id("psu0");
  call->set_function_id(1);
  pb::Value v;
  v.set_type(pb::VALUE_TYPE_BYTES);
  v.set_bytes_value(std::string(kMaxFrameBytes - 64, '\x5a'));
  (*call->mutable_args())["blob"] = v;
  return r;
}

void BM_Memcpy1MiB(benchmark::State& state) {
  std::vector<char> src(kMaxFrameBytes, 'a'), dst(kMaxFrameBytes);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * kMaxFrameBytes);
}
BENCHMARK(BM_Memcpy1MiB);

void BM_EncodeFrame1MiB(benchmark::State& state) {
  auto r = big_request();
  std::string out;
  for (auto _ : state) {
    out.clear();  // keeps the capacity, as a sender reusing its buffer does
    if (!append_frame(out, r).ok()) state.SkipWithError("encode failed");
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(out.size()));
}
BENCHMARK(BM_EncodeFrame1MiB);

void BM_DecodeFrame1MiB(benchmark::State& state) {
  std::string frame = *encode_frame(big_request());
  pb::Request r;
  for (auto _ : state) {
    auto f = decode_frame(frame);
    if (!f.ok() || !f->has_value() || !parse_payload((*f)->payload, r, 0, "Request").ok())
      state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(&r);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(frame.size()));
}
BENCHMARK(BM_DecodeFrame1MiB);

// The streaming path of the provider loop and the client: bytes land in the
// reader's buffer (a memcpy standing in for read()), then frame + parse.
void BM_FrameReaderDecode1MiB(benchmark::State& state) {
  std::string frame = *encode_frame(big_request());
  FrameReader reader;
  pb::Request r;
  for (auto _ : state) {
    std::memcpy(reader.prepare(frame.size()), frame.data(), frame.size());
    reader.commit(frame.size());
    auto f = reader.next();
    if (!f.ok() || !f->has_value() || !parse_payload((*f)->payload, r, 0, "Request").ok())
      state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(&r);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(frame.size()));
}
BENCHMARK(BM_FrameReaderDecode1MiB);

}  // namespace
