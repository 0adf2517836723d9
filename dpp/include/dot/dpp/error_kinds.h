#pragma once
// The error kinds of the DPP layer: framing, JSON-RPC, the hello and general profiles, the path rules, the host session
// and the conformance runner. Each row: the kind printed and stored (never renamed), its code, what it means, the rule
// it enforces. docs/errors.md is generated from this table.

#include <array>
#include <cstddef>
#include <cstdint>

#include "dot/base/error.h"
#include "dot/base/error_kinds.h"

namespace dot::dpp {

enum class ErrorKind : std::uint8_t {
  Tmpdir,
  OutsideStage,
  StageReplaced,
  EchoedId,
  ErrorResponseExpected,
  Usage,
  Case,
  NotObject,
  EchoedProtocol,
  EchoedProfile,
  EchoedAssurance,
  EchoedNonce,
  EchoedCapabilities,
  Length,
  EarlyEof,
  Header,
  ExtraHeader,
  PluginId,
  LogLevel,
  LogMessage,
  ErrorDataEncoding,
  MaxFileBytes,
  MaxTotalBytes,
  ErrorMessage,
  ErrorData,
  Batch,
  MethodInResponse,
  Inputs,
  EchoedLimits,
  Echo,
  SlotName,
  Names,
  DuplicateName,
  Effects,
  Count,
  Name,
  Sha256,
  Size,
  ProfileMisuse,
  OrderMisuse,
  ErrorResponse,
  TrailingOutput,
  Options,
  LimitsMisuse,
  Aborted,
  StderrLimit,
  StdoutLimit,
  Unsolicited,
  NotificationMethod,
  LogNotNegotiated,
  LogLimit,
  BatchNotNegotiated,
  Eof,
  NotValid,
  ExitStatus,
  Survivor,
  Id,
  JsonrpcVersion,
  IdMismatch,
  Notification,
  Method,
  OperationCount,
  Absolute,
  DotDot,
  StateFolder,
  Reserved,
  NotUtf8,
  Empty,
  TooLong,
  ControlByte,
  TrailingSlash,
  EmptyComponent,
  ComponentTooLong,
  DotComponent,
  Duplicate,
  Unsorted,
  ParentOf,
  Mode,
  Action,
  Order,
  StageOpen,
  Protocol,
  Profile,
  Assurance,
  Capabilities,
  Nonce,
  Stage,
  Log,
  InvalidRequest,
  Params,
  Symlink,
  TooLarge,
  Artifact,
  StagedSymlink,
  MaxOperations,
  InvalidParams,
  LinkText,
  Folder,
  DeclaredDigest,
  NoPlan,
  NoMaterialize,
};

inline constexpr auto kErrorKinds = std::to_array<KindRow>({
    {"tmpdir", Code::Io, "no temporary folder: …", "docs/dpp.md, conformance"},  // Tmpdir
    {"outside_stage", Code::PathEscape, "the plugin wrote \"…\" beside its stage (in the stage's parent folder)",
     "docs/dpp.md, conformance"},  // OutsideStage
    {"stage_replaced", Code::PathEscape, "the stage folder was removed or replaced",
     "docs/dpp.md, conformance"},  // StageReplaced
    {"id", Code::PluginIdentity, "the plugin says it is \"……\", which is not a plugin id: it …",
     "docs/dpp.md, conformance"},  // EchoedId
    {"error_response", Code::Protocol, "expected error … with id …, got …",
     "docs/dpp.md, conformance"},                                                              // ErrorResponseExpected
    {"usage", Code::Internal, "no plugin command given", "docs/dpp.md, conformance"},          // Usage
    {"case", Code::NotFound, "no conformance case of that name", "docs/dpp.md, conformance"},  // Case
    {"not_object", Code::Protocol, "a member that must be an object is not one",
     "docs/spec/dpp-general.md, Negotiation"},  // NotObject
    {"protocol", Code::PluginIdentity, "the plugin echoed protocol …, core sent …",
     "docs/spec/dpp-general.md, Negotiation"},  // EchoedProtocol
    {"profile", Code::PluginIdentity, "the plugin echoed profile \"…\", core sent \"…\"",
     "docs/spec/dpp-general.md, Negotiation"},  // EchoedProfile
    {"assurance", Code::PluginIdentity, "the plugin echoed assurance \"…\", core requires \"…\"",
     "docs/spec/dpp-general.md, Negotiation"},  // EchoedAssurance
    {"nonce", Code::PluginIdentity, "the plugin echoed a different nonce",
     "docs/spec/dpp-general.md, Negotiation"},  // EchoedNonce
    {"capabilities", Code::PluginIdentity, "the plugin dropped capability \"…\" (position …); core sent …",
     "docs/spec/dpp-general.md, Negotiation"},  // EchoedCapabilities
    {"length", Code::Protocol, "a frame body must be 1 to … bytes, not …",
     "docs/spec/dpp-hello.md, Framing"},  // Length
    {"early_eof", Code::Protocol, "stream ended after … header bytes of a frame",
     "docs/spec/dpp-hello.md, Framing"},  // EarlyEof
    {"header", Code::Protocol, "a byte where the Content-Length header expects another",
     "docs/spec/dpp-hello.md, Framing"},  // Header
    {"extra_header", Code::Protocol, "a second header line starting with …; only Content-Length is allowed",
     "docs/spec/dpp-hello.md, Framing"},  // ExtraHeader
    {"plugin_id", Code::Policy, "plugin id \"…\" …: an id is like org.example.tool (lowercase letters, digits ",
     "the DPP general profile (docs/spec/dpp-general.md)"},  // PluginId
    {"log_level", Code::Protocol, "dot.log level \"…\" is not debug, info, warning or error",
     "the DPP general profile (docs/spec/dpp-general.md)"},  // LogLevel
    {"log_message", Code::Protocol, "a dot.log message of … bytes; at most … are allowed",
     "the DPP general profile (docs/spec/dpp-general.md)"},  // LogMessage
    {"error_data", Code::Internal, "the error data is not one JSON value",
     "the DPP general profile (docs/spec/dpp-general.md)"},  // ErrorDataEncoding
    {"max_file_bytes", Code::Protocol, "claims … bytes; the negotiated limit is … per file",
     "the DPP general profile (docs/spec/dpp-general.md)"},  // MaxFileBytes
    {"max_total_bytes", Code::Protocol, "the claims reach … bytes at …; the negotiated limit is … in all",
     "the DPP general profile (docs/spec/dpp-general.md)"},  // MaxTotalBytes
    {"error_message", Code::Protocol, "the error message has … bytes; at most … are allowed",
     "the DPP general profile (docs/spec/dpp-general.md)"},  // ErrorMessage
    {"error_data", Code::Protocol, "the error data cannot be canonical: …",
     "the DPP general profile (docs/spec/dpp-general.md)"},  // ErrorData
    {"batch", Code::Protocol, "the … is a batch; batches are not allowed",
     "the DPP general profile (docs/spec/dpp-general.md)"},  // Batch
    {"method_in_response", Code::Protocol, "the … carries \"method\" or \"params\"",
     "the DPP general profile (docs/spec/dpp-general.md)"},  // MethodInResponse
    {"inputs", Code::PluginIdentity, "the plugin echoed … inputs that differ from the … core sent",
     "the DPP general profile (docs/spec/dpp-general.md)"},  // Inputs
    {"limits", Code::PluginIdentity, "the plugin echoed limits.… …, core sent …",
     "the DPP general profile (docs/spec/dpp-general.md)"},  // EchoedLimits
    {"echo", Code::PluginIdentity, "the echo of dot.initialize adds a member core did not send",
     "the DPP general profile (docs/spec/dpp-general.md)"},  // Echo
    {"slot_name", Code::PathEscape, "slot … name \"…\" does not match ^[a-z][a-z0-9-]…}\\.txt$",
     "docs/spec/dpp-hello.md, Allowlists"},                                                                  // SlotName
    {"names", Code::Policy, "a plan names 1 to … files, this one …", "docs/spec/dpp-hello.md, Allowlists"},  // Names
    {"duplicate_name", Code::Policy, "slot name \"…\" appears twice",
     "docs/spec/dpp-hello.md, Allowlists"},  // DuplicateName
    {"effects", Code::Policy, "at most … effects, the plan asks for …",
     "docs/spec/dpp-hello.md, Allowlists"},  // Effects
    {"count", Code::ArtifactMismatch, "a materialize result with another number of artifacts than planned names",
     "docs/spec/dpp-hello.md, Allowlists"},  // Count
    {"name", Code::ArtifactMismatch, "artifact … is \"…\", slot … is \"…\"",
     "docs/spec/dpp-hello.md, Allowlists"},  // Name
    {"sha256", Code::ArtifactMismatch, "artifact \"…\" has no lowercase hex SHA-256",
     "docs/spec/dpp-hello.md, Allowlists"},  // Sha256
    {"size", Code::ArtifactMismatch, "artifact \"…\" claims … bytes; 1 to … allowed",
     "docs/spec/dpp-hello.md, Allowlists"},  // Size
    {"profile", Code::Internal, "dpp session: … called with the other profile's types",
     "docs/spec/dpp-hello.md, Session limits"},  // ProfileMisuse
    {"order", Code::Internal, "dpp session: … called out of order",
     "docs/spec/dpp-hello.md, Session limits"},  // OrderMisuse
    {"error_response", Code::PluginError, "plugin … answered … with error …: …",
     "docs/spec/dpp-hello.md, Session limits"},  // ErrorResponse
    {"trailing_output", Code::Protocol, "the plugin wrote bytes on stdout after its last answer",
     "docs/spec/dpp-hello.md, Session limits"},  // TrailingOutput
    {"options", Code::Internal, "dpp session: no executable descriptor",
     "docs/spec/dpp-hello.md, Session limits"},  // Options
    {"limits", Code::Internal, "dpp session: dot.initialize must send the session's limits",
     "docs/spec/dpp-hello.md, Session limits"},  // LimitsMisuse
    {"aborted", Code::Internal, "dpp session: aborted by the host",
     "docs/spec/dpp-hello.md, Session limits"},  // Aborted
    {"stderr_limit", Code::Protocol, "the plugin wrote more than … bytes on stderr",
     "docs/spec/dpp-hello.md, Session limits"},  // StderrLimit
    {"stdout_limit", Code::Protocol, "the plugin wrote more than … bytes on stdout",
     "docs/spec/dpp-hello.md, Session limits"},  // StdoutLimit
    {"unsolicited", Code::Protocol, "the plugin wrote output before it was sent …",
     "docs/spec/dpp-hello.md, Session limits"},  // Unsolicited
    {"notification_method", Code::Protocol, "the plugin sent a \"…\" notification during …; only dot.log is allowed",
     "docs/spec/dpp-hello.md, Session limits"},  // NotificationMethod
    {"log_not_negotiated", Code::Protocol, "the plugin sent dot.log during … without negotiating log",
     "docs/spec/dpp-hello.md, Session limits"},  // LogNotNegotiated
    {"log_limit", Code::Protocol, "the plugin sent more than … dot.log messages (the negotiated ",
     "docs/spec/dpp-hello.md, Session limits"},  // LogLimit
    {"batch_not_negotiated", Code::Protocol, "the plugin sent dot.operations during … without negotiating batches",
     "docs/spec/dpp-general.md, Batches"},  // BatchNotNegotiated
    {"eof", Code::Protocol, "the plugin closed stdout without answering …",
     "docs/spec/dpp-hello.md, Session limits"},  // Eof
    {"not_valid", Code::Protocol, "the plugin answered … with valid:false",
     "docs/spec/dpp-hello.md, Session limits"},  // NotValid
    {"exit_status", Code::Protocol, "the plugin ended with … after a clean session; exit 0 is required",
     "docs/spec/dpp-hello.md, Session limits"},  // ExitStatus
    {"survivor", Code::Protocol, "the plugin left … process… running after it exited",
     "docs/spec/dpp-hello.md, Session limits"},                                                         // Survivor
    {"id", Code::Protocol, "the … id must be a positive integer", "docs/spec/dpp-hello.md, Envelope"},  // Id
    {"jsonrpc_version", Code::Protocol, "\"jsonrpc\" must be the string \"2.0\"",
     "docs/spec/dpp-hello.md, Envelope"},  // JsonrpcVersion
    {"id_mismatch", Code::Protocol, "the … has id …, expected …", "docs/spec/dpp-hello.md, Envelope"},  // IdMismatch
    {"notification", Code::Protocol, "a notification instead of the …; notifications are not allowed",
     "docs/spec/dpp-hello.md, Envelope"},  // Notification
    {"method", Code::Protocol, "a request for a method the plugin does not know",
     "docs/spec/dpp-hello.md, Envelope"},  // Method
    {"operation_count", Code::Protocol, "the plan has … operations, more than max_operations …",
     "docs/spec/dpp-general.md, Path rules"},  // OperationCount
    {"absolute", Code::PathEscape, "a plan path is absolute", "docs/spec/dpp-general.md, Path rules"},  // Absolute
    {"dot_dot", Code::PathEscape, "a plan path has a \"..\" component",
     "docs/spec/dpp-general.md, Path rules"},  // DotDot
    {"state_folder", Code::PathEscape, "a plan path inside core's state folder",
     "docs/spec/dpp-general.md, Path rules"},  // StateFolder
    {"reserved", Code::PathEscape, "a plan path with a reserved component",
     "docs/spec/dpp-general.md, Path rules"},                                                              // Reserved
    {"not_utf8", Code::Policy, "a plan path is not valid UTF-8", "docs/spec/dpp-general.md, Path rules"},  // NotUtf8
    {"empty", Code::Policy, "a plan path is empty", "docs/spec/dpp-general.md, Path rules"},               // Empty
    {"too_long", Code::Policy, "a plan path is longer than the limit",
     "docs/spec/dpp-general.md, Path rules"},  // TooLong
    {"control_byte", Code::Policy, "a plan path holds a control byte",
     "docs/spec/dpp-general.md, Path rules"},  // ControlByte
    {"trailing_slash", Code::Policy, "a plan path ends with \"/\"",
     "docs/spec/dpp-general.md, Path rules"},  // TrailingSlash
    {"empty_component", Code::Policy, "a plan path has an empty component (\"//\")",
     "docs/spec/dpp-general.md, Path rules"},  // EmptyComponent
    {"component_too_long", Code::Policy, "a plan path has a component longer than the limit",
     "docs/spec/dpp-general.md, Path rules"},  // ComponentTooLong
    {"dot_component", Code::Policy, "a plan path has a \".\" component",
     "docs/spec/dpp-general.md, Path rules"},                                                          // DotComponent
    {"duplicate", Code::Policy, "a plan path appears twice", "docs/spec/dpp-general.md, Path rules"},  // Duplicate
    {"unsorted", Code::Policy, "plan paths not in ascending UTF-8 byte order",
     "docs/spec/dpp-general.md, Path rules"},  // Unsorted
    {"parent_of", Code::Policy, "a plan path is a parent folder of another path of the same plan",
     "docs/spec/dpp-general.md, Path rules"},  // ParentOf
    {"mode", Code::Policy,
     "a write or folder mode outside 0400-0775 (set-id, sticky, other write), or a remove with a mode",
     "docs/spec/dpp-general.md, Path rules"},  // Mode
    {"action", Code::Policy, "an operation action other than write or remove",
     "docs/spec/dpp-general.md, Path rules"},                                                               // Action
    {"order", Code::Protocol, "got … with id …, expected …", "docs/spec/dpp-hello.md, dot.initialize"},     // Order
    {"stage", Code::Io, "cannot open the stage …: …", "docs/spec/dpp-hello.md, dot.initialize"},            // StageOpen
    {"protocol", Code::Protocol, "unsupported protocol …", "docs/spec/dpp-hello.md, dot.initialize"},       // Protocol
    {"profile", Code::Protocol, "unsupported profile \"…\"", "docs/spec/dpp-hello.md, dot.initialize"},     // Profile
    {"assurance", Code::Protocol, "unknown required_assurance", "docs/spec/dpp-hello.md, dot.initialize"},  // Assurance
    {"capabilities", Code::Protocol, "capabilities differ from the hello profile's",
     "docs/spec/dpp-hello.md, dot.initialize"},  // Capabilities
    {"nonce", Code::Protocol, "the nonce is not 64 lowercase hex", "docs/spec/dpp-hello.md, dot.initialize"},   // Nonce
    {"stage", Code::Protocol, "the stage must be an absolute path", "docs/spec/dpp-hello.md, dot.initialize"},  // Stage
    {"log", Code::Internal, "dot.log is allowed only while a request is handled", "docs/writing-plugins.md"},   // Log
    {"invalid_request", Code::Protocol, "a request that is not a JSON-RPC request object (answered -32600)",
     "docs/writing-plugins.md"},                                                      // InvalidRequest
    {"params", Code::Protocol, "unsupported protocol …", "docs/writing-plugins.md"},  // Params
    {"symlink", Code::PathEscape, "a file in the stage is a symlink; staged files are never written through one",
     "docs/writing-plugins.md"},                                                                  // Symlink
    {"too_large", Code::Io, "the source of … has more than … bytes", "docs/writing-plugins.md"},  // TooLarge
    {"artifact", Code::ArtifactMismatch, "a staged file that is not the artifact the plugin claimed",
     "docs/spec/dpp-general.md, Materialize and validate"},  // Artifact
    {"staged_symlink", Code::PathEscape, "staged … is or passes through a symlink (never followed)",
     "docs/spec/dpp-general.md, Materialize and validate"},  // StagedSymlink
    {"max_operations", Code::Protocol, "an array holds more entries than the negotiated max_operations",
     "the DPP general profile (docs/spec/dpp-general.md)"},  // MaxOperations
    {"invalid_params", Code::Protocol, "a request's params are not what the plugin's handler reads (answered -32602)",
     "docs/writing-plugins.md"},  // InvalidParams
    {"link_text", Code::Policy,
     "a link without link_text, one whose text is empty, over 4095 bytes or holds NUL, or link_text on another action",
     "docs/spec/dpp-general.md, Path rules"},  // LinkText
    {"folder", Code::Policy,
     "a folder of dot.plan's directories is out of order, twice, or not the parent folder of a write",
     "docs/spec/dpp-general.md, Targets and ownership"},  // Folder
    {"declared_digest", Code::Protocol, "operation … declares sha256 \"…\", not 64 lowercase hex digits",
     "docs/spec/dpp-general.md, Declared digests"},  // DeclaredDigest
    {"no_plan", Code::Internal, "the plugin implements neither plan nor plan_each (answered -32000)",
     "docs/writing-plugins.md"},  // NoPlan
    {"no_materialize", Code::Internal,
     "the plugin implements neither materialize nor materialize_each (answered -32000)",
     "docs/writing-plugins.md"},  // NoMaterialize
});

DOT_KIND_TABLE(ErrorKind, kErrorKinds, NoMaterialize);

}  // namespace dot::dpp
