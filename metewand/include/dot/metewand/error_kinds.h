#pragma once
// The error kinds of Metewand (docs/spec/metewand.md): frames, correlation, messages, the hello handshake, the worker
// session, the worker's failure codes. Each row: the kind printed and stored (never renamed), its code, what it means,
// the rule it enforces. docs/errors.md is generated from this table.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "dot/base/error.h"
#include "dot/base/error_kinds.h"

namespace dot::metewand {

enum class ErrorKind : std::uint8_t {
  Case,
  Worker,
  Mkdtemp,
  WorkerId,
  RequestStreamEnded,
  RequestId,
  Io,
  LineTooLong,
  EarlyEof,
  ByteOrderMark,
  InvalidUtf8,
  DuplicateKey,
  MalformedJson,
  InvalidRequestId,
  ExtraResponse,
  MismatchedRequestId,
  RequestAlreadyPending,
  RequestIdExhausted,
  InvalidMessage,
  Serialization,
  HelloMismatchedRequestId,
  NoCommonProtocol,
  ProtocolMismatch,
  WorkerIdentityMismatch,
  CapabilityForRole,
  ReservedCapability,
  MissingCapability,
  Frame,
  Correlation,
  Handshake,
  WorkerFailure,
  Spawn,
  SessionTimeout,
  ProtocolClosed,
  UnsuccessfulExit,
  SessionUnusable,
  InvalidRole,
  CapabilityNotSelected,
  NotNegotiated,
  FailureInvalidRequest,
  FailureUnsupportedOperation,
  FailureOperationFailed,
  FailureInternalError,
  InvalidJson,
};

inline constexpr auto kErrorKinds = std::to_array<KindRow>({
    {"case", Code::Validation, "no case … for the … role", "Metewand (docs/spec/metewand.md)"},            // Case
    {"worker", Code::Internal, "no worker command given", "Metewand (docs/spec/metewand.md)"},             // Worker
    {"mkdtemp", Code::Io, "cannot make a private directory under …", "Metewand (docs/spec/metewand.md)"},  // Mkdtemp
    {"worker_id", Code::Validation, "--worker-id … is not mw1-resolved-worker- and 64 lowercase hex digits",
     "Metewand (docs/spec/metewand.md)"},  // WorkerId
    {"request_stream_ended", Code::Protocol, "the request stream ended before shutdown",
     "Metewand (docs/spec/metewand.md)"},  // RequestStreamEnded
    {"request_id", Code::Protocol, "a request without a non-empty string id cannot be answered",
     "Metewand (docs/spec/metewand.md)"},  // RequestId
    {"Io", Code::Protocol,
     "the protocol stream could not be read or written (a read past the deadline is DOT_E_TIMEOUT)",
     "Metewand (docs/spec/metewand.md)"},  // Io
    {"LineTooLong", Code::Protocol, "a line, read or about to be sent, is longer than the line limit",
     "Metewand (docs/spec/metewand.md)"},  // LineTooLong
    {"EarlyEof", Code::Protocol, "the stream ended inside a line, before its line feed",
     "Metewand (docs/spec/metewand.md)"},  // EarlyEof
    {"ByteOrderMark", Code::Protocol, "a line begins with a UTF-8 byte-order mark",
     "Metewand (docs/spec/metewand.md)"},                                                              // ByteOrderMark
    {"InvalidUtf8", Code::Protocol, "a line is not valid UTF-8", "Metewand (docs/spec/metewand.md)"},  // InvalidUtf8
    {"DuplicateKey", Code::Protocol, "an object key appears twice in a line",
     "Metewand (docs/spec/metewand.md)"},  // DuplicateKey
    {"MalformedJson", Code::Protocol, "a line is not one JSON value",
     "Metewand (docs/spec/metewand.md)"},  // MalformedJson
    {"InvalidRequestId", Code::Protocol, "a response that is not an object with a string id",
     "Metewand (docs/spec/metewand.md)"},  // InvalidRequestId
    {"ExtraResponse", Code::Protocol, "a response to a request already answered, or when none is pending",
     "Metewand (docs/spec/metewand.md)"},  // ExtraResponse
    {"MismatchedRequestId", Code::Protocol, "a response whose id is not the pending request's",
     "Metewand (docs/spec/metewand.md)"},  // MismatchedRequestId
    {"RequestAlreadyPending", Code::Protocol, "a request sent while another one is pending (a bug of the host)",
     "Metewand (docs/spec/metewand.md)"},  // RequestAlreadyPending
    {"RequestIdExhausted", Code::Protocol, "the session ran out of request ids",
     "Metewand (docs/spec/metewand.md)"},  // RequestIdExhausted
    {"InvalidMessage", Code::Protocol, "a message that is not its method's shape",
     "Metewand (docs/spec/metewand.md)"},  // InvalidMessage
    {"Serialization", Code::Protocol, "a message that cannot be encoded in the Metewand canonical form",
     "Metewand (docs/spec/metewand.md)"},  // Serialization
    {"MismatchedRequestId", Code::PluginIdentity, "the hello response's id is not the hello request's",
     "Metewand (docs/spec/metewand.md)"},  // HelloMismatchedRequestId
    {"NoCommonProtocol", Code::PluginIdentity, "the worker offers no protocol version this host supports",
     "Metewand (docs/spec/metewand.md)"},  // NoCommonProtocol
    {"ProtocolMismatch", Code::PluginIdentity, "the worker reports another protocol than the one selected",
     "Metewand (docs/spec/metewand.md)"},  // ProtocolMismatch
    {"WorkerIdentityMismatch", Code::PluginIdentity, "the worker's identity is not the expected one",
     "Metewand (docs/spec/metewand.md)"},  // WorkerIdentityMismatch
    {"CapabilityForRole", Code::PluginIdentity, "a capability selected for a role that takes none",
     "Metewand (docs/spec/metewand.md)"},  // CapabilityForRole
    {"ReservedCapability", Code::PluginIdentity, "a capability reserved in version 1 was selected",
     "Metewand (docs/spec/metewand.md)"},  // ReservedCapability
    {"MissingCapability", Code::PluginIdentity, "the worker did not report a selected capability",
     "Metewand (docs/spec/metewand.md)"},  // MissingCapability
    {"Frame", Code::Protocol, "a framing error (without its detail)", "Metewand (docs/spec/metewand.md)"},  // Frame
    {"Correlation", Code::Protocol, "a correlation error (without its detail)",
     "Metewand (docs/spec/metewand.md)"},  // Correlation
    {"Handshake", Code::PluginIdentity, "a handshake error (without its detail)",
     "Metewand (docs/spec/metewand.md)"},  // Handshake
    {"WorkerFailure", Code::Protocol, "the worker answered with a failure response (without its code)",
     "Metewand (docs/spec/metewand.md)"},  // WorkerFailure
    {"Spawn", Code::Io, "the worker process could not be started", "Metewand (docs/spec/metewand.md)"},  // Spawn
    {"Timeout", Code::Timeout, "the worker did not finish a phase within its deadline",
     "Metewand (docs/spec/metewand.md)"},  // SessionTimeout
    {"ProtocolClosed", Code::Protocol, "the worker closed its protocol stream before answering",
     "Metewand (docs/spec/metewand.md)"},  // ProtocolClosed
    {"UnsuccessfulExit", Code::Protocol, "the worker did not exit with status 0 after shutdown",
     "Metewand (docs/spec/metewand.md)"},  // UnsuccessfulExit
    {"SessionUnusable", Code::Protocol, "an earlier error discarded the worker",
     "Metewand (docs/spec/metewand.md)"},  // SessionUnusable
    {"InvalidRole", Code::Validation, "a method the negotiated role does not take (nothing sent)",
     "Metewand (docs/spec/metewand.md)"},  // InvalidRole
    {"CapabilityNotSelected", Code::Validation, "execute without one_shot selected at hello (nothing sent)",
     "Metewand (docs/spec/metewand.md)"},  // CapabilityNotSelected
    {"NotNegotiated", Code::Validation, "an operation before a successful hello (nothing sent)",
     "Metewand (docs/spec/metewand.md)"},  // NotNegotiated
    {"invalid_request", Code::Protocol, "the worker's failure response: it found the request invalid",
     "Metewand (docs/spec/metewand.md)"},  // FailureInvalidRequest
    {"unsupported_operation", Code::Protocol, "the worker's failure response: it does not support the operation",
     "Metewand (docs/spec/metewand.md)"},  // FailureUnsupportedOperation
    {"operation_failed", Code::Protocol, "the worker's failure response: the operation failed",
     "Metewand (docs/spec/metewand.md)"},  // FailureOperationFailed
    {"internal_error", Code::Protocol, "the worker's failure response: an internal error of the worker",
     "Metewand (docs/spec/metewand.md)"},  // FailureInternalError
    {"invalid_json", Code::Validation,
     "the metewand profile's name for text that is not one JSON value (a BOM, nesting too deep, grammar, trailing "
     "data)",
     "Metewand (docs/spec/metewand.md)"},  // InvalidJson
});

DOT_KIND_TABLE(ErrorKind, kErrorKinds, InvalidJson);

// The row of a failure code a worker sent (one of kFailureCodes: a name
// read from the wire is data, mapped to its row here); nullopt when unknown.
std::optional<ErrorKind> failure_kind(std::string_view code) noexcept;

}  // namespace dot::metewand
