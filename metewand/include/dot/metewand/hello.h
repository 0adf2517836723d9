#pragma once
// The Metewand v1 hello handshake, the first typed layer above framing:
// request and response types, strict decoding (unknown and missing fields
// refused), worker failure responses, and validation of a response against
// its request in the order of docs/spec/metewand.md.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "dot/base/error.h"
#include "dot/base/jcs.h"
#include "dot/base/json.h"
#include "dot/metewand/error_kinds.h"
#include "dot/metewand/expected.h"
#include "dot/metewand/message.h"

namespace dot::metewand {

inline constexpr std::uint32_t kWireProtocolVersion = 1;
inline constexpr std::string_view kResolvedWorkerPrefix = "mw1-resolved-worker-";

enum class WorkerRole : std::uint8_t { DatasetMaterializer, Implementation, ProblemEvaluator };
std::string_view role_name(WorkerRole role) noexcept;
std::optional<WorkerRole> role_from_name(std::string_view name) noexcept;

// In protocol order (the order capabilities are reported in).
enum class Capability : std::uint8_t { OneShot, Applicability, FreshSequence, StreamingProfile };
std::string_view capability_name(Capability capability) noexcept;
std::optional<Capability> capability_from_name(std::string_view name) noexcept;

// `mw1-resolved-worker-` followed by exactly 64 lowercase hex digits.
bool is_worker_identity(std::string_view text) noexcept;
// The identity of a worker executable from the SHA-256 hex of its bytes.
std::string worker_identity_from_digest(std::string_view sha256_hex);

struct SdkMetadata {
  std::string name;     // non-empty
  std::string version;  // non-empty
  bool operator==(const SdkMetadata&) const = default;
};

struct HelloRequest {
  std::string id;
  std::vector<std::uint32_t> protocols{kWireProtocolVersion};
  WorkerRole role = WorkerRole::Implementation;
  std::string worker_id;

  jcs::Node to_node() const;
};
// Exactly {id, method:"hello", protocols, role, worker_id}: id non-empty,
// protocols a non-empty array of unique u32, role known, worker_id an identity.
Expected<HelloRequest, MessageError> decode_hello_request(json::Value value);

struct HelloResponse {
  std::string id;
  std::uint32_t protocol = kWireProtocolVersion;
  std::string worker_id;
  std::optional<SdkMetadata> sdk;        // null for a direct protocol worker
  std::vector<Capability> capabilities;  // unique

  jcs::Node to_node() const;
};

inline constexpr std::string_view kFailureCodes[] = {"invalid_request", "unsupported_operation", "operation_failed",
                                                     "internal_error"};

// {"error":{"code":C,"message":M[,"details":{...}]},"id":I,"ok":false}
struct WorkerFailure {
  std::string id;
  std::string code;                  // one of kFailureCodes
  std::string message;               // non-empty
  std::optional<jcs::Node> details;  // an object when present

  jcs::Node to_node() const;
};

// A hello reply is either the success shape or a failure: decided by `ok`.
using HelloReply = std::variant<HelloResponse, WorkerFailure>;
Expected<HelloReply, MessageError> decode_hello_reply(json::Value value);
// The failure shape alone (any operation may answer with it).
Expected<WorkerFailure, MessageError> decode_worker_failure(json::Value value);

struct HandshakeError {
  enum class Kind : std::uint8_t {
    MismatchedRequestId,     // expected, actual
    NoCommonProtocol,        // the offer has no version we support
    ProtocolMismatch,        // expected (selected), actual (reported)
    WorkerIdentityMismatch,  // expected, actual
    CapabilityForRole,       // capability, role: only implementation workers get capabilities
    ReservedCapability,      // capability: anything but one_shot cannot be selected in v1
    MissingCapability,       // capability: selected, not reported
  };
  // Every member has a default: each mismatch is one designated initializer
  // naming only what it reports.
  Kind kind = Kind::MismatchedRequestId;
  std::string expected{};
  std::string actual{};
  std::optional<Capability> capability{};
  WorkerRole role = WorkerRole::Implementation;

  // This error's row of metewand/error_kinds.h; name() is its name.
  ErrorKind error_kind() const noexcept;
  std::string_view name() const noexcept;
  std::string message() const;
  Error to_error() const;  // Code::PluginIdentity, kind = name()
};

struct NegotiatedSession {
  WorkerRole role = WorkerRole::Implementation;
  std::uint32_t protocol = kWireProtocolVersion;
  std::string worker_id;
  std::optional<SdkMetadata> sdk;
  std::vector<Capability> selected;  // protocol order
  std::vector<Capability> reported;  // protocol order

  // {"capabilities":[reported],"protocol":1,"role":R,"sdk":...,"selected":[...],"worker_id":W}
  jcs::Node to_node() const;
};

// Picks version 1 when offered.
Expected<std::uint32_t, HandshakeError> negotiate_protocol(std::span<const std::uint32_t> offered);

Expected<NegotiatedSession, HandshakeError> validate_hello_response(const HelloRequest& request,
                                                                    const HelloResponse& response,
                                                                    std::span<const Capability> selected);

}  // namespace dot::metewand
