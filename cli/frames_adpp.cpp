// dot-core frames decode --format adpp: one JSON line per uint32_le-framed
// ADPP Request or Response in a captured stream.
#include <string>

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include "commands.h"
#include "dot/adpp/frame.h"
#include "dot/adpp/messages.h"
#include "dot/base/fd.h"
#include "output.h"

namespace dot::cli {
namespace {

constexpr std::size_t kMaxCapture = 256u * 1024 * 1024;

std::string json_escape(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c < 0x20) out += fmt::format("\\u{:04x}", c);
    else out += static_cast<char>(c);
  }
  return out + "\"";
}

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

std::string frame_line(const FramesOptions& o, std::size_t n, std::uint64_t offset, std::string_view payload,
                       Result<void>& parse_status) {
  if (o.direction == "response") {
    adpp::pb::Response r;
    parse_status = adpp::parse_payload(payload, r, offset, "ADPP Response");
    if (!parse_status.ok()) return {};
    std::string line = fmt::format("{{\"frame\":{},\"offset\":{},\"request_id\":\"{}\",\"kind\":\"{}\",\"status\":\"{}\"",
                                   n, offset, r.request_id(), adpp::payload_kind(r),
                                   adpp::status_code_name(r.status().code()));
    if (!r.status().message().empty()) line += ",\"message\":" + json_escape(r.status().message());
    if (std::string p = payload_json(r); !p.empty()) line += ",\"payload\":" + p;
    return line + "}\n";
  }
  adpp::pb::Request r;
  parse_status = adpp::parse_payload(payload, r, offset, "ADPP Request");
  if (!parse_status.ok()) return {};
  std::string line = fmt::format("{{\"frame\":{},\"offset\":{},\"request_id\":\"{}\",\"kind\":\"{}\"", n, offset,
                                 r.request_id(), adpp::payload_kind(r));
  if (std::string p = payload_json(r); !p.empty()) line += ",\"payload\":" + p;
  return line + "}\n";
}

// The error line of spec/cli.md, with the numbers that explain it.
std::string error_line(const Error& e, std::string_view bytes) {
  std::uint64_t at = e.offset.value_or(0);
  std::string extra;
  std::string_view rest = at <= bytes.size() ? bytes.substr(at) : std::string_view{};
  if (e.kind == "length" && rest.size() >= adpp::kPrefixBytes) {
    extra = fmt::format(",\"length\":{},\"limit\":{}", adpp::read_prefix(rest.data()), adpp::kMaxFrameBytes);
  } else if (e.kind == "early_eof") {
    std::uint64_t needed = rest.size() >= adpp::kPrefixBytes ? adpp::kPrefixBytes + adpp::read_prefix(rest.data())
                                                             : adpp::kPrefixBytes;
    extra = fmt::format(",\"needed\":{},\"received\":{}", needed, rest.size());
  }
  return fmt::format("{{\"error\":\"{}\",\"offset\":{}{},\"detail\":{}}}\n", e.kind, at, extra, json_escape(e.detail));
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
      out += fmt::format("{{\"end\":\"eof\",\"frames\":{}}}\n", n);
      return write_stdout(out) ? kExitOk : kExitError;
    }
    const Error& e = frame.ok() ? parsed.error() : frame.error();
    out += error_line(e, bytes);
    (void)write_stdout(out);
    return report(e);
  }
}

}  // namespace dot::cli
