// dot-core frames decode --format adpp: one JSON line per uint32_le-framed
// ADPP Request or Response in a captured stream.
#include <string>
#include <type_traits>

#include <google/protobuf/util/json_util.h>

#include "commands.h"
#include "dot/adpp/error_kinds.h"
#include "dot/adpp/frame.h"
#include "dot/adpp/messages.h"
#include "dot/base/fd.h"
#include "frames_capture.h"
#include "json_writer.h"
#include "output.h"

namespace dot::cli {
namespace {

constexpr std::size_t kMaxCapture = 256u * 1024 * 1024;

// The payload sub-message as proto3 JSON (field names as in the .proto).
template <typename M>
std::string payload_json(const M& message) {
  const auto* descriptor = message.GetDescriptor();
  const auto* reflection = message.GetReflection();
  const auto* oneof = descriptor->FindOneofByName("payload");
  const auto* field = oneof != nullptr ? reflection->GetOneofFieldDescriptor(message, oneof) : nullptr;
  if (field == nullptr) return {};
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(reflection->GetMessage(message, field), &json, options).ok())
    return {};
  return json;
}

// One decoded frame as a JSON line: its number, offset, request id and
// kind, a response's status, then the payload.
template <typename M>
std::string message_line(std::size_t n, std::uint64_t offset, const M& m) {
  JsonWriter w;
  w.begin_object();
  w.key("frame").number(n).key("offset").number(offset);
  w.key("request_id").string(std::to_string(m.request_id())).key("kind").string(adpp::payload_kind(m));
  if constexpr (std::is_same_v<M, adpp::pb::Response>) {
    w.key("status").string(adpp::status_code_name(m.status().code()));
    if (!m.status().message().empty()) w.key("message").string(m.status().message());
  }
  if (std::string p = payload_json(m); !p.empty()) w.key("payload").raw(p);
  w.end_object();
  return std::move(w).line();
}

std::string frame_line(const FramesOptions& o, std::size_t n, std::uint64_t offset, std::string_view payload,
                       Result<void>& parse_status) {
  if (o.direction == "response") {
    adpp::pb::Response r;
    parse_status = adpp::parse_payload(payload, r, offset, "ADPP Response");
    return parse_status.ok() ? message_line(n, offset, r) : std::string();
  }
  adpp::pb::Request r;
  parse_status = adpp::parse_payload(payload, r, offset, "ADPP Request");
  return parse_status.ok() ? message_line(n, offset, r) : std::string();
}

// The error line of docs/spec/cli.md, with the numbers that explain it.
std::string error_line(const Error& e, std::string_view bytes) {
  std::uint64_t at = e.offset.value_or(0);
  std::string_view rest = at <= bytes.size() ? bytes.substr(at) : std::string_view{};
  JsonWriter w;
  w.begin_object();
  w.key("error").string(e.kind).key("offset").number(at);
  if (e.is(adpp::ErrorKind::Length) && rest.size() >= adpp::kPrefixBytes) {
    w.key("length").number(adpp::read_prefix(rest.data())).key("limit").number(adpp::kMaxFrameBytes);
  } else if (e.is(adpp::ErrorKind::EarlyEof)) {
    std::uint64_t needed =
        rest.size() >= adpp::kPrefixBytes ? adpp::kPrefixBytes + adpp::read_prefix(rest.data()) : adpp::kPrefixBytes;
    w.key("needed").number(needed).key("received").number(rest.size());
  }
  w.key("detail").string(e.detail);
  w.end_object();
  return std::move(w).line();
}

}  // namespace

int decode_frames_adpp(const FramesOptions& options) {
  auto input = read_file(options.input, kMaxCapture);
  if (!input.ok()) return report(input.error());
  std::string_view bytes = *input;
  std::string out;
  std::size_t n = 0;
  std::uint64_t offset = 0;
  for (;;) {
    auto frame = adpp::decode_frame(bytes.substr(offset), offset);
    Result<void> parsed;
    std::string line;
    if (frame.ok() && frame->has_value()) {
      const auto& f = **frame;
      line = frame_line(options, n + 1, f.offset, f.payload, parsed);
      if (parsed.ok()) {
        ++n;
        if (!options.count_only) out += line;
        offset += adpp::kPrefixBytes + f.payload.size();
        // Keep memory flat on long captures.
        if (out.size() > (1u << 20)) {
          if (!write_stdout(out)) return kExitError;
          out.clear();
        }
        continue;
      }
    }
    if (frame.ok() && !frame->has_value()) {
      out += frames_end_line(n);
      return write_stdout(out) ? kExitOk : kExitError;
    }
    const Error& e = frame.ok() ? parsed.error() : frame.error();
    out += error_line(e, bytes);
    (void)write_stdout(out);
    return report(e);
  }
}

}  // namespace dot::cli
