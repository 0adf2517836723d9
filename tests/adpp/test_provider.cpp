// The provider runtime in-process: memory in, memory out.
#include <gtest/gtest.h>

#include <stdexcept>

#include "dot/adpp/frame.h"
#include "dot/base/error_kinds.h"
#include "dot/adpp/provider.h"
#include "dot/adpp/sim_provider.h"

namespace dot::adpp {
namespace {

// Hands out its bytes in reads of at most `step`, counting reads; reading
// past a `stop` mark fails the test (the loop must not ask for it).
class ScriptedInput final : public ByteSource {
 public:
  explicit ScriptedInput(std::string bytes, std::size_t step = 1 << 20) : bytes_(std::move(bytes)), step_(step) {}
  Result<std::size_t> read(char* buf, std::size_t n) override {
    ++reads;
    if (fail_reads) return make_error(base::ErrorKind::Read, "injected read error");
    std::size_t k = std::min({n, step_, bytes_.size() - at_});
    if (k == 0 && hang_at_end) {
      ADD_FAILURE() << "the loop read again after a fatal frame error";
      return std::size_t{0};
    }
    std::copy(bytes_.data() + at_, bytes_.data() + at_ + k, buf);
    at_ += k;
    return k;
  }
  int reads = 0;
  bool fail_reads = false;
  bool hang_at_end = false;  // stdin "left open": a further read would block forever

 private:
  std::string bytes_;
  std::size_t step_;
  std::size_t at_ = 0;
};

class CollectingOutput final : public ByteSink {
 public:
  Status write(std::string_view bytes) override {
    ++writes;
    if (fail) return make_error(base::ErrorKind::Write, "EPIPE");
    out.append(bytes);
    return {};
  }
  std::vector<pb::Response> responses() const {
    std::vector<pb::Response> all;
    std::uint64_t at = 0;
    std::string_view s = out;
    for (;;) {
      auto f = decode_frame(s.substr(at), at);
      EXPECT_TRUE(f.ok());
      if (!f.ok() || !f->has_value()) return all;
      pb::Response r;
      EXPECT_TRUE(parse_payload((*f)->payload, r, 0, "Response").ok());
      all.push_back(r);
      at += kPrefixBytes + (*f)->payload.size();
    }
  }
  std::string out;
  int writes = 0;
  bool fail = false;
};

std::string frame(const pb::Request& r) { return *encode_frame(r); }
pb::Request hello(std::uint64_t id, std::string version = "v1") {
  pb::Request r;
  r.set_request_id(id);
  r.mutable_hello()->set_protocol_version(version);
  return r;
}

SimProvider sim() {
  auto c = default_sim_config();
  c.set_init_time_ms(0);
  return std::move(SimProvider::create(c, "test")).value();
}

struct Run {
  int code;
  std::vector<pb::Response> responses;
};
Run run(ProviderHandler& h, std::string bytes, std::size_t step = 1 << 20) {
  ScriptedInput in(std::move(bytes), step);
  CollectingOutput out;
  int code = run_provider(h, in, out);
  return {code, out.responses()};
}

TEST(AdppProvider, HelloAdvertisesTheProfileMetadata) {
  auto s = sim();
  auto r = run(s, frame(hello(1)));
  EXPECT_EQ(r.code, kExitClean);
  ASSERT_EQ(r.responses.size(), 1u);
  const auto& h = r.responses[0];
  EXPECT_EQ(h.request_id(), 1u);
  EXPECT_EQ(h.status().code(), pb::Status::CODE_OK);
  EXPECT_EQ(h.hello().protocol_version(), "v1");
  EXPECT_EQ(h.hello().metadata().at("transport"), "stdio+uint32_le");
  EXPECT_EQ(h.hello().metadata().at("max_frame_bytes"), "1048576");
  EXPECT_EQ(h.hello().metadata().at("supports_wait_ready"), "true");
}

TEST(AdppProvider, RepeatedHelloSucceedsAndUnsupportedVersionIsFailedPrecondition) {
  auto s = sim();
  auto r = run(s, frame(hello(1)) + frame(hello(2, "v2")) + frame(hello(3)));
  ASSERT_EQ(r.responses.size(), 3u);
  EXPECT_EQ(r.responses[0].status().code(), pb::Status::CODE_OK);
  EXPECT_EQ(r.responses[1].status().code(), pb::Status::CODE_FAILED_PRECONDITION);
  EXPECT_FALSE(r.responses[1].has_hello());
  EXPECT_EQ(r.responses[2].status().code(), pb::Status::CODE_OK);
  EXPECT_EQ(r.responses[2].request_id(), 3u);
}

TEST(AdppProvider, ByteByByteInputIsAnsweredInOrder) {
  auto s = sim();
  std::string bytes;
  for (std::uint64_t id = 1; id <= 4; ++id) bytes += frame(hello(id));
  auto r = run(s, bytes, 1);
  ASSERT_EQ(r.responses.size(), 4u);
  for (std::uint64_t id = 1; id <= 4; ++id) EXPECT_EQ(r.responses[id - 1].request_id(), id);
}

TEST(AdppProvider, SixtyFourBitRequestIdIsEchoed) {
  auto s = sim();
  auto r = run(s, frame(hello(0xFFFFFFFFFFFFFFFFull)));
  ASSERT_EQ(r.responses.size(), 1u);
  EXPECT_EQ(r.responses[0].request_id(), 0xFFFFFFFFFFFFFFFFull);
}

TEST(AdppProvider, ZeroLengthFrameIsAnsweredAndReadingGoesOn) {
  auto s = sim();
  auto r = run(s, std::string(4, '\0') + frame(hello(5)));
  EXPECT_EQ(r.code, kExitClean);
  ASSERT_EQ(r.responses.size(), 2u);
  EXPECT_EQ(r.responses[0].status().code(), pb::Status::CODE_INVALID_ARGUMENT);
  EXPECT_EQ(r.responses[0].request_id(), 0u);
  EXPECT_EQ(r.responses[1].request_id(), 5u);
}

TEST(AdppProvider, GarbagePayloadIsInvalidArgument) {
  auto s = sim();
  std::string bytes("\x1c\x00\x00\x00", 4);
  bytes.append(28, '\xff');
  auto r = run(s, bytes + frame(hello(2)));
  ASSERT_EQ(r.responses.size(), 2u);
  EXPECT_EQ(r.responses[0].status().code(), pb::Status::CODE_INVALID_ARGUMENT);
  EXPECT_EQ(r.responses[1].status().code(), pb::Status::CODE_OK);
}

TEST(AdppProvider, RequestWithoutPayloadIsInvalidArgumentWithItsId) {
  auto s = sim();
  pb::Request empty;
  empty.set_request_id(9);
  auto r = run(s, frame(empty));
  ASSERT_EQ(r.responses.size(), 1u);
  EXPECT_EQ(r.responses[0].request_id(), 9u);
  EXPECT_EQ(r.responses[0].status().code(), pb::Status::CODE_INVALID_ARGUMENT);
}

TEST(AdppProvider, UnknownRequestTypeIsUnimplemented) {
  auto s = sim();
  // request_id 4 and field 17 (a request type v1 does not have), empty message.
  std::string payload("\x08\x04\x8a\x01\x00", 5);
  std::string bytes(4, '\0');
  write_prefix(bytes.data(), static_cast<std::uint32_t>(payload.size()));
  auto r = run(s, bytes + payload);
  ASSERT_EQ(r.responses.size(), 1u);
  EXPECT_EQ(r.responses[0].request_id(), 4u);
  EXPECT_EQ(r.responses[0].status().code(), pb::Status::CODE_UNIMPLEMENTED);
}

TEST(AdppProvider, OverCapPrefixAnswersOnceAndExits2WithoutReadingOn) {
  auto s = sim();
  ScriptedInput in(std::string("\x00\x00\x20\x00", 4));
  in.hang_at_end = true;
  CollectingOutput out;
  EXPECT_EQ(run_provider(s, in, out), kExitFrameError);
  EXPECT_EQ(in.reads, 1);
  auto responses = out.responses();
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].status().code(), pb::Status::CODE_RESOURCE_EXHAUSTED);
}

TEST(AdppProvider, TruncatedFrameAtEofExits2) {
  auto s = sim();
  auto r = run(s, std::string("\x40\x00\x00\x00", 4));
  EXPECT_EQ(r.code, kExitFrameError);
  EXPECT_TRUE(r.responses.empty());
}

TEST(AdppProvider, ReadAndWriteErrorsExit2) {
  auto s = sim();
  ScriptedInput in(frame(hello(1)));
  in.fail_reads = true;
  CollectingOutput out;
  EXPECT_EQ(run_provider(s, in, out), kExitFrameError);

  ScriptedInput in2(frame(hello(1)) + frame(hello(2)));
  CollectingOutput gone;
  gone.fail = true;
  EXPECT_EQ(run_provider(s, in2, gone), kExitFrameError);
  EXPECT_EQ(gone.writes, 1);  // stopped at the first failed write
}

TEST(AdppProvider, EmptyInputExitsClean) {
  auto s = sim();
  auto r = run(s, "");
  EXPECT_EQ(r.code, kExitClean);
  EXPECT_TRUE(r.responses.empty());
}

class HugeHandler final : public ProviderHandler {
 public:
  ProviderInfo info() const override { return {"huge", "1", false, {}}; }
  Reply list_devices(const pb::ListDevicesRequest&, pb::ListDevicesResponse& out) override {
    for (int i = 0; i < 2000; ++i) out.add_devices()->set_label(std::string(1000, 'x'));
    return Reply::ok();
  }
  Reply get_health(const pb::GetHealthRequest&, pb::GetHealthResponse&) override {
    throw std::runtime_error("sensor bus on fire");
  }
  Reply describe_device(const pb::DescribeDeviceRequest&, pb::DescribeDeviceResponse&) override { return {}; }
  Reply read_signals(const pb::ReadSignalsRequest&, pb::ReadSignalsResponse&) override {
    return Reply::error(pb::Status::CODE_UNSPECIFIED, "oops");
  }
};

TEST(AdppProvider, OverCapResponseBecomesResourceExhausted) {
  HugeHandler h;
  pb::Request req;
  req.set_request_id(77);
  req.mutable_list_devices();
  auto r = run(h, frame(req) + frame(hello(78)));
  EXPECT_EQ(r.code, kExitClean);
  ASSERT_EQ(r.responses.size(), 2u);
  EXPECT_EQ(r.responses[0].request_id(), 77u);
  EXPECT_EQ(r.responses[0].status().code(), pb::Status::CODE_RESOURCE_EXHAUSTED);
  EXPECT_FALSE(r.responses[0].has_list_devices());
  EXPECT_EQ(r.responses[1].status().code(), pb::Status::CODE_OK);
}

TEST(AdppProvider, HandlerFailuresNeverReachTheWireAsOkOrUnspecified) {
  HugeHandler h;
  pb::Request health;
  health.set_request_id(1);
  health.mutable_get_health();
  pb::Request read;
  read.set_request_id(2);
  read.mutable_read_signals();
  pb::Request wait;
  wait.set_request_id(3);
  wait.mutable_wait_ready();
  pb::Request call;
  call.set_request_id(4);
  call.mutable_call();
  auto r = run(h, frame(health) + frame(read) + frame(wait) + frame(call));
  ASSERT_EQ(r.responses.size(), 4u);
  EXPECT_EQ(r.responses[0].status().code(), pb::Status::CODE_INTERNAL);
  EXPECT_NE(r.responses[0].status().message().find("sensor bus on fire"), std::string::npos);
  EXPECT_EQ(r.responses[1].status().code(), pb::Status::CODE_INTERNAL);
  // supports_wait_ready=false: the loop answers for the handler.
  EXPECT_EQ(r.responses[2].status().code(), pb::Status::CODE_UNIMPLEMENTED);
  EXPECT_EQ(r.responses[3].status().code(), pb::Status::CODE_UNIMPLEMENTED);
}

}  // namespace
}  // namespace dot::adpp
