#pragma once
// `dot-core metewand conform`: checks a worker against Metewand version 1 the
// way dot-core runs it (resolved, sealed and hashed, exact environment, its
// own process group, swept afterwards). Each case runs a fresh worker
// process under the same deadline for every phase:
//
//   hello_identity         hello with the resolved identity: id "0", protocol
//                          1, the identity echoed; then shutdown
//   hello_identity_echo    hello with another identity: that one is echoed
//   serial_ids             the role's requests in order: ids "0", "1", ...
//                          answered one by one, then shutdown
//   <method>_valid         each method of the role with a valid request (the
//                          methods before it first): its success shape, or a
//                          structured operation_failed/internal_error; never
//                          invalid_request or unsupported_operation
//   <method>_invalid       the method with a member the schema lacks: a
//                          structured failure (invalid_request expected; any
//                          code passes, named in the detail); then shutdown
//   other_role_method      a method of another role: a structured failure
//   shutdown               the acknowledgment, then exit 0, within the deadline
//   abuse_<kind>           after hello, a request line with a duplicate key,
//                          invalid UTF-8, a byte-order mark, malformed JSON,
//                          a line over 1 MiB, or a partial line then end of
//                          stream: no success answer, and the worker exits
//
// Valid requests name folders of a fresh private directory (removed after).

#include <chrono>
#include <string>
#include <vector>

#include "dot/base/result.h"
#include "dot/metewand/hello.h"

namespace dot::metewand {

struct ConformanceCaseInfo {
  std::string name;
  std::string checks;
};
std::vector<ConformanceCaseInfo> conformance_cases(WorkerRole role);

struct ConformanceOptions {
  std::vector<std::string> command;  // WORKER [ARGS...]
  WorkerRole role = WorkerRole::Implementation;
  std::chrono::milliseconds deadline{5000};  // every phase of every case
  std::vector<std::string> only;             // case names; empty: all
};

struct ConformanceCase {
  std::string name;
  bool passed = false;
  std::string detail;
  std::chrono::milliseconds elapsed{0};
};

struct ConformanceResult {
  std::string sha256;     // of the worker executable
  std::string worker_id;  // the resolved identity
  std::vector<ConformanceCase> cases;
};

// Errors: resolve_worker's; Code::Validation kind "case" for an unknown
// --case name; Code::Io when the private directory cannot be made.
Result<ConformanceResult> run_conformance(const ConformanceOptions& options);

}  // namespace dot::metewand
