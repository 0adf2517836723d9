#include <gtest/gtest.h>

#include "dot/adpp/frame.h"
#include "dot/adpp/messages.h"

namespace dot::adpp {
namespace {

pb::Request hello(std::uint64_t id) {
  pb::Request r;
  r.set_request_id(id);
  r.mutable_hello()->set_protocol_version("v1");
  return r;
}

TEST(AdppFrame, PrefixIsLittleEndian) {
  char b[4];
  write_prefix(b, 0x01020304u);
  EXPECT_EQ(std::string(b, 4), std::string("\x04\x03\x02\x01", 4));
  EXPECT_EQ(read_prefix("\x00\x00\x20\x00"), 2097152u);
  EXPECT_EQ(read_prefix("\xff\xff\xff\xff"), 0xFFFFFFFFu);
}

TEST(AdppFrame, EncodeDecodeRoundTrip) {
  auto f = encode_frame(hello(7));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(read_prefix(f->data()), f->size() - 4);
  auto d = decode_frame(*f);
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE(d->has_value());
  pb::Request back;
  ASSERT_TRUE(parse_payload((*d)->payload, back, 0, "Request").ok());
  EXPECT_EQ(back.request_id(), 7u);
  EXPECT_EQ(back.hello().protocol_version(), "v1");
}

TEST(AdppFrame, OverCapMessageIsRefusedAndOutputUntouched) {
  pb::Response r;
  (*r.mutable_hello()->mutable_metadata())["pad"] = std::string(kMaxFrameBytes, 'x');
  std::string out = "keep";
  Status s = append_frame(out, r);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Code::Protocol);
  EXPECT_EQ(s.error().kind, "length");
  EXPECT_EQ(out, "keep");
}

TEST(AdppFrame, ExactlyTheCapIsAccepted) {
  std::string bytes(4, '\0');
  write_prefix(bytes.data(), kMaxFrameBytes);
  bytes.append(kMaxFrameBytes, 'a');
  auto d = decode_frame(bytes);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)->payload.size(), kMaxFrameBytes);
  write_prefix(bytes.data(), kMaxFrameBytes + 1);
  bytes.push_back('a');
  auto over = decode_frame(bytes);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().kind, "length");
}

TEST(AdppFrameReader, OverCapPrefixRejectedFromFourBytesAlone) {
  FrameReader r;
  r.feed(std::string_view("\x00\x00\x20\x00", 4));
  // Nothing more is wanted: the reader does not ask for the 2 MiB payload.
  EXPECT_EQ(r.missing(), 0u);
  auto f = r.next();
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().kind, "length");
  EXPECT_EQ(f.error().offset, 0u);
  EXPECT_TRUE(r.broken());
  EXPECT_LE(r.buffered(), 4u);
  EXPECT_FALSE(r.next().ok());  // stays broken
}

TEST(AdppFrameReader, ZeroLengthIsAnErrorButTheStreamStaysInStep) {
  FrameReader r;
  std::string bytes("\x00\x00\x00\x00", 4);
  bytes += *encode_frame(hello(3));
  r.feed(bytes);
  auto first = r.next();
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.error().kind, "length");
  EXPECT_FALSE(r.broken());
  auto second = r.next();
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(second->has_value());
  EXPECT_EQ((*second)->offset, 4u);
}

TEST(AdppFrameReader, FragmentedByteByByte) {
  std::string bytes = *encode_frame(hello(1)) + *encode_frame(hello(2));
  FrameReader r;
  std::vector<std::uint64_t> ids;
  for (char c : bytes) {
    r.feed(std::string_view(&c, 1));
    for (;;) {
      auto f = r.next();
      ASSERT_TRUE(f.ok());
      if (!f->has_value()) break;
      pb::Request req;
      ASSERT_TRUE(parse_payload((*f)->payload, req, (*f)->offset, "Request").ok());
      ids.push_back(req.request_id());
    }
  }
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{1, 2}));
  EXPECT_TRUE(r.finish().ok());
}

TEST(AdppFrameReader, CoalescedFramesInOneFeed) {
  std::string bytes;
  for (std::uint64_t id = 1; id <= 5; ++id) bytes += *encode_frame(hello(id));
  FrameReader r;
  r.feed(bytes);
  std::uint64_t expect = 1;
  for (;;) {
    auto f = r.next();
    ASSERT_TRUE(f.ok());
    if (!f->has_value()) break;
    pb::Request req;
    ASSERT_TRUE(parse_payload((*f)->payload, req, (*f)->offset, "Request").ok());
    EXPECT_EQ(req.request_id(), expect++);
  }
  EXPECT_EQ(expect, 6u);
  EXPECT_EQ(r.consumed(), bytes.size());
}

TEST(AdppFrameReader, TruncatedStreamIsEarlyEof) {
  FrameReader r;
  r.feed(std::string_view("\x40\x00\x00\x00", 4));
  auto f = r.next();
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(f->has_value());
  EXPECT_EQ(r.missing(), 0x40u);
  Status end = r.finish();
  ASSERT_FALSE(end.ok());
  EXPECT_EQ(end.error().kind, "early_eof");

  FrameReader partial_prefix;
  partial_prefix.feed(std::string_view("\x40\x00", 2));
  EXPECT_EQ(partial_prefix.missing(), 2u);
  EXPECT_EQ(partial_prefix.finish().error().kind, "early_eof");
}

TEST(AdppFrame, GarbagePayloadIsAParseError) {
  std::string garbage(28, '\xff');
  pb::Request r;
  Status s = parse_payload(garbage, r, 12, "ADPP Request");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, "parse");
  EXPECT_EQ(s.error().offset, 12u);
}

TEST(AdppMessages, Names) {
  EXPECT_EQ(status_code_name(pb::Status::CODE_NOT_FOUND), "CODE_NOT_FOUND");
  EXPECT_EQ(status_code_name(99), "CODE_99");
  EXPECT_TRUE(is_defined_error(pb::Status::CODE_INVALID_ARGUMENT));
  EXPECT_FALSE(is_defined_error(pb::Status::CODE_OK));
  EXPECT_FALSE(is_defined_error(pb::Status::CODE_UNSPECIFIED));
  EXPECT_FALSE(is_defined_error(99));
  EXPECT_EQ(payload_kind(hello(1)), "hello");
  EXPECT_EQ(payload_kind(pb::Request{}), "none");
}

// The wire contract: field numbers as in docs/spec/adpp.md.
TEST(AdppMessages, FieldNumbersMatchTheSpec) {
  const auto* req = pb::Request::descriptor();
  EXPECT_EQ(req->FindFieldByName("request_id")->number(), 1);
  const char* names[] = {"hello", "list_devices", "describe_device", "read_signals", "call", "get_health", "wait_ready"};
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(req->FindFieldByName(names[i])->number(), 10 + i) << names[i];
    EXPECT_EQ(pb::Response::descriptor()->FindFieldByName(names[i])->number(), 10 + i) << names[i];
  }
  EXPECT_EQ(pb::Response::descriptor()->FindFieldByName("status")->number(), 2);
  EXPECT_EQ(pb::Status::CODE_DATA_LOSS, 31);
  EXPECT_EQ(pb::Status::CODE_RESOURCE_EXHAUSTED, 22);
  EXPECT_EQ(pb::HelloResponse::descriptor()->FindFieldByName("metadata")->number(), 4);
  EXPECT_EQ(pb::CallRequest::descriptor()->FindFieldByName("deadline")->number(), 6);
  EXPECT_EQ(pb::ArgSpec::descriptor()->FindFieldByName("allowed_values")->number(), 12);
  EXPECT_EQ(pb::Value::descriptor()->FindFieldByName("bytes_value")->number(), 7);
  EXPECT_EQ(pb::SignalValue::descriptor()->FindFieldByName("metadata")->number(), 5);
  EXPECT_EQ(pb::DeviceHealth::descriptor()->FindFieldByName("metrics")->number(), 5);
  EXPECT_EQ(pb::Request::descriptor()->file()->package(), "anolis.deviceprovider.v1");
  // A hand-assembled Hello (id 1, hello{protocol_version "v1"}) parses.
  pb::Request parsed;
  std::string wire("\x08\x01\x52\x04\x0a\x02v1", 8);
  ASSERT_TRUE(parsed.ParseFromString(wire));
  EXPECT_EQ(parsed.hello().protocol_version(), "v1");
}

}  // namespace
}  // namespace dot::adpp
