#pragma once
// The ADPP v1 message types (generated from adpp/proto/anolis/deviceprovider/
// v1/protocol.proto) and small helpers for naming what a message carries.

#include <cstdint>
#include <string>
#include <string_view>

#include "anolis/deviceprovider/v1/protocol.pb.h"

namespace dot::adpp {

namespace pb = ::anolis::deviceprovider::v1;

inline constexpr std::string_view kProtocolVersion = "v1";

// The Hello metadata of the framed-stdio profile (section 3).
inline constexpr std::string_view kMetaTransport = "transport";
inline constexpr std::string_view kMetaMaxFrameBytes = "max_frame_bytes";
inline constexpr std::string_view kMetaSupportsWaitReady = "supports_wait_ready";
inline constexpr std::string_view kTransportStdio = "stdio+uint32_le";

// "hello", "list_devices", ... or "none" when the oneof is unset.
std::string_view payload_kind(const pb::Request& request) noexcept;
std::string_view payload_kind(const pb::Response& response) noexcept;
// "CODE_OK", ... or "CODE_<number>" for a value outside the enum.
std::string status_code_name(int code);
// True for the codes the profile counts as a defined error: a named code
// other than OK and UNSPECIFIED.
bool is_defined_error(int code) noexcept;

// A Response carrying only an error status.
pb::Response error_response(std::uint64_t request_id, pb::Status::Code code, std::string message);

}  // namespace dot::adpp
