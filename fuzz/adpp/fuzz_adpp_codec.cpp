// The ADPP codec on arbitrary bytes. The first byte picks how the stream is
// split into reads; the streaming FrameReader must then agree exactly with
// decode_frame on the whole buffer (same frames, same first error), and every
// payload that parses must re-encode to a frame that decodes again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>

#include "dot/adpp/error_kinds.h"
#include "dot/adpp/frame.h"
#include "dot/adpp/messages.h"

namespace {

// A small cap so that over-cap prefixes are reachable by the fuzzer too.
constexpr std::uint32_t kCap = 4096;

void check(bool ok) {
  if (!ok) std::abort();
}

struct Event {
  bool error;
  std::string kind;
  std::uint64_t offset;
  std::string payload;
  bool operator==(const Event&) const = default;
};

std::vector<Event> whole(std::string_view bytes) {
  std::vector<Event> events;
  std::uint64_t at = 0;
  for (;;) {
    auto f = dot::adpp::decode_frame(bytes.substr(at), at, kCap);
    if (!f.ok()) {
      events.push_back({true, std::string(f.error().kind.name()), f.error().offset.value_or(~0ull), {}});
      // A zero-length frame leaves the stream in step: go on, like the reader.
      if (f.error().is(dot::adpp::ErrorKind::Length) && dot::adpp::read_prefix(bytes.data() + at) == 0) {
        at += dot::adpp::kPrefixBytes;
        continue;
      }
      return events;
    }
    if (!f->has_value()) return events;
    events.push_back({false, {}, (*f)->offset, std::string((*f)->payload)});
    at += dot::adpp::kPrefixBytes + (*f)->payload.size();
  }
}

std::vector<Event> streamed(std::string_view bytes, unsigned split) {
  std::vector<Event> events;
  dot::adpp::FrameReader reader(kCap);
  std::size_t at = 0;
  std::size_t step = 1 + (split % 17);
  for (;;) {
    for (;;) {
      auto f = reader.next();
      if (!f.ok()) {
        events.push_back({true, std::string(f.error().kind.name()), f.error().offset.value_or(~0ull), {}});
        if (reader.broken()) return events;
        continue;
      }
      if (!f->has_value()) break;
      events.push_back({false, {}, (*f)->offset, std::string((*f)->payload)});
    }
    if (at == bytes.size()) {
      auto end = reader.finish();
      if (!end.ok())
        events.push_back({true, std::string(end.error().kind.name()), end.error().offset.value_or(~0ull), {}});
      return events;
    }
    std::size_t n = std::min(step, bytes.size() - at);
    // Alternate between copying in and writing into prepare()'s area.
    if ((at / step) % 2 == 0) {
      reader.feed(bytes.substr(at, n));
    } else {
      char* area = reader.prepare(n);
      std::copy(bytes.begin() + static_cast<std::ptrdiff_t>(at), bytes.begin() + static_cast<std::ptrdiff_t>(at + n),
                area);
      reader.commit(n);
    }
    at += n;
    step = 1 + ((step * 7 + split) % 4099);
  }
}

// The oracle's view of a message: protobuf promises nothing about the order in
// which SerializeAsString() writes map entries (it follows the hash table,
// whose seed differs per map), so two equal messages may serialize to
// different bytes. Deterministic serialization writes map entries sorted by
// key and keeps unknown fields, so equal messages give equal bytes.
template <typename M>
std::string canonical(const M& m) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    check(m.SerializeToCodedStream(&coded));
  }
  return out;
}

template <typename M>
void roundtrip(std::string_view payload) {
  M m;
  if (!dot::adpp::parse_payload(payload, m, 0, "message").ok()) return;
  auto frame = dot::adpp::encode_frame(m, dot::adpp::kMaxFrameBytes);
  // Unknown fields are kept, so a re-encoding is never larger than the cap;
  // an all-default message must be refused rather than sent as length 0.
  if (m.ByteSizeLong() == 0) {
    check(!frame.ok() && frame.error().is(dot::adpp::ErrorKind::Length));
    return;
  }
  check(frame.ok());
  auto back = dot::adpp::decode_frame(*frame);
  check(back.ok() && back->has_value());
  check((*back)->payload.size() == m.ByteSizeLong());
  M again;
  check(dot::adpp::parse_payload((*back)->payload, again, 0, "message").ok());
  check(canonical(again) == canonical(m));
  (void)dot::adpp::payload_kind(again);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // libprotobuf logs every invalid UTF-8 string it meets; the fuzzer meets many.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  unsigned split = data[0];
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto a = whole(bytes);
  auto b = streamed(bytes, split);
  // The whole-buffer decoder stops at a truncated tail with early_eof; the
  // stream reader reports the same at finish().
  check(a == b);
  for (const auto& e : a) {
    if (e.error) continue;
    check(!e.payload.empty() && e.payload.size() <= kCap);
    roundtrip<dot::adpp::pb::Request>(e.payload);
    roundtrip<dot::adpp::pb::Response>(e.payload);
  }
  return 0;
}
