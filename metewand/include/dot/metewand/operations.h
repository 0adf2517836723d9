#pragma once
// The Metewand v1 one-shot operations after hello: which role takes which
// method, the request and success-response shapes of each, and their strict
// decoding (unknown and missing members refused, at every level). The failure
// shape is hello.h's WorkerFailure; any operation may answer with it.
//
//   role                  methods (every role also takes shutdown)
//   dataset_materializer  materialize
//   implementation        prepare, execute, reset
//   problem_evaluator     evaluate
//
// Request members besides id and method (S: non-empty string, O: object,
// N: integer 0..2^53-1 spelled as digits):
//   materialize  source_dir S, dataset_parameters O, dataset_seed N, output_dir S
//   prepare      dataset_dir S, problem_contract_id S, problem_parameters O,
//                implementation_parameters O, implementation_seed N
//   execute      result_dir S
//   reset        (none)
//   evaluate     dataset_dir S, problem_contract_id S, problem_parameters O,
//                result_dir S, metrics_path S
//   shutdown     (none)
// Success responses: materialize {dataset:{manifest:S},id,ok:true}; execute
// {id,implementation_time_ns:null|N,ok:true,result:{manifest:S},statistics:O};
// every other method the acknowledgment {id,ok:true}.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "dot/base/jcs.h"
#include "dot/base/json.h"
#include "dot/metewand/expected.h"
#include "dot/metewand/hello.h"
#include "dot/metewand/message.h"

namespace dot::metewand {

// The largest integer every JSON peer reads exactly (seeds, times).
inline constexpr std::uint64_t kMaxSafeInteger = (std::uint64_t{1} << 53) - 1;

enum class Method : std::uint8_t { Hello, Materialize, Prepare, Execute, Reset, Evaluate, Shutdown };
std::string_view method_name(Method method) noexcept;
std::optional<Method> method_from_name(std::string_view name) noexcept;
// Hello and shutdown: every role; the others: the role of the table above.
bool role_accepts(WorkerRole role, Method method) noexcept;
// The methods a role takes after hello, shutdown last.
std::span<const Method> role_methods(WorkerRole role) noexcept;

// An operation request (any method but hello). `params` holds the members
// besides id and method, as an object node.
struct OperationRequest {
  Method method = Method::Shutdown;
  std::string id;
  jcs::Node params = jcs::Node::object();

  jcs::Node to_node() const;
};

// Exactly {id, method, <the method's members>}: id non-empty, method known and
// not hello, each member of its kind. Errors: MessageError::InvalidMessage.
Expected<OperationRequest, MessageError> decode_operation_request(json::Value value);
// The method of a request object whose `method` is a known name (hello
// included), for answering an ill-formed request with the right failure.
std::optional<Method> request_method(json::Value value) noexcept;

// A successful response to an operation request.
struct OperationSuccess {
  Method method = Method::Shutdown;
  std::string id;
  std::string manifest;                                 // materialize: dataset.manifest; execute: result.manifest
  std::optional<std::uint64_t> implementation_time_ns;  // execute; nullopt is null
  jcs::Node statistics = jcs::Node::object();           // execute

  jcs::Node to_node() const;
};

using OperationReply = std::variant<OperationSuccess, WorkerFailure>;
// The reply to a request of `method`: the failure shape when `ok` is false,
// otherwise the method's success shape. Errors: MessageError::InvalidMessage.
Expected<OperationReply, MessageError> decode_operation_reply(Method method, json::Value value);

}  // namespace dot::metewand
