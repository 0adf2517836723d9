// Naming what an ADPP message carries, and the Hello metadata of framed-stdio v1 (messages.h).
#include "dot/adpp/messages.h"

#include <fmt/format.h>

namespace dot::adpp {
namespace {

template <typename Case>
std::string_view kind_of(Case c, Case none, Case hello, Case list, Case describe, Case read, Case call, Case health,
                         Case wait) noexcept {
  if (c == none) return "none";
  if (c == hello) return "hello";
  if (c == list) return "list_devices";
  if (c == describe) return "describe_device";
  if (c == read) return "read_signals";
  if (c == call) return "call";
  if (c == health) return "get_health";
  if (c == wait) return "wait_ready";
  return "unknown";
}

}  // namespace

std::string_view payload_kind(const pb::Request& r) noexcept {
  using R = pb::Request;
  return kind_of(r.payload_case(), R::PAYLOAD_NOT_SET, R::kHello, R::kListDevices, R::kDescribeDevice, R::kReadSignals,
                 R::kCall, R::kGetHealth, R::kWaitReady);
}

std::string_view payload_kind(const pb::Response& r) noexcept {
  using R = pb::Response;
  return kind_of(r.payload_case(), R::PAYLOAD_NOT_SET, R::kHello, R::kListDevices, R::kDescribeDevice, R::kReadSignals,
                 R::kCall, R::kGetHealth, R::kWaitReady);
}

std::string status_code_name(int code) {
  if (pb::Status::Code_IsValid(code)) return pb::Status::Code_Name(static_cast<pb::Status::Code>(code));
  return fmt::format("CODE_{}", code);
}

bool is_defined_error(int code) noexcept {
  return pb::Status::Code_IsValid(code) && code != pb::Status::CODE_OK && code != pb::Status::CODE_UNSPECIFIED;
}

pb::Response error_response(std::uint64_t request_id, pb::Status::Code code, std::string message) {
  pb::Response r;
  r.set_request_id(request_id);
  r.mutable_status()->set_code(code);
  r.mutable_status()->set_message(std::move(message));
  return r;
}

}  // namespace dot::adpp
