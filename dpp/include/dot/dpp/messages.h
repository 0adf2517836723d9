#pragma once
// The hello-profile message types of docs/spec/dpp-hello.md ("Methods"), with a
// strict decoder (exact, case-sensitive names; unknown and missing fields
// rejected; exact JSON types) and a canonical encoder for each. Decode errors
// are Code::Protocol (kinds missing_field, unknown_field, wrong_type, not_object)
// with the offset of the offending value.

#include <cstdint>
#include <string>
#include <vector>

#include "dot/base/jcs.h"
#include "dot/base/json.h"
#include "dot/base/result.h"

namespace dot::dpp {

// dot.initialize params (host -> plugin).
struct InitializeParams {
  std::uint64_t protocol = 1;
  std::string profile;
  std::string required_assurance;  // "audit" | "process"
  std::vector<std::string> capabilities;
  std::string nonce;  // 64 lowercase hex
  bool operator==(const InitializeParams&) const = default;
};

// dot.initialize result (plugin -> host): the identity echo.
struct InitializeResult {
  std::uint64_t protocol = 0;
  std::string profile;
  std::string assurance;
  std::vector<std::string> capabilities;
  std::string nonce;
  std::string id;  // the plugin id, e.g. "org.dot.hello"
  bool operator==(const InitializeResult&) const = default;
};

struct EffectRequest {
  std::string kind;            // "sync"
  std::string target;          // "managed-root"
  std::string failure_policy;  // "required"
  bool operator==(const EffectRequest&) const = default;
};

// dot.plan result.
struct PlanResult {
  std::vector<std::string> names;
  std::vector<EffectRequest> effects;
  bool operator==(const PlanResult&) const = default;
};

// dot.materialize params.
struct MaterializeParams {
  std::string stage;  // absolute path of the stage directory
  bool operator==(const MaterializeParams&) const = default;
};

struct Artifact {
  std::string name;
  std::string sha256;  // lowercase hex of the staged bytes
  std::uint64_t size = 0;
  bool operator==(const Artifact&) const = default;
};

// dot.materialize result.
struct MaterializeResult {
  std::vector<Artifact> artifacts;
  bool operator==(const MaterializeResult&) const = default;
};

// dot.validate and dot.shutdown result.
struct ValidatedResult {
  bool valid = false;
  bool operator==(const ValidatedResult&) const = default;
};

jcs::Node to_node(const InitializeParams& m);
jcs::Node to_node(const InitializeResult& m);
jcs::Node to_node(const EffectRequest& m);
jcs::Node to_node(const PlanResult& m);
jcs::Node to_node(const MaterializeParams& m);
jcs::Node to_node(const Artifact& m);
jcs::Node to_node(const MaterializeResult& m);
jcs::Node to_node(const ValidatedResult& m);

Result<InitializeParams> decode_initialize_params(json::Value v);
Result<InitializeResult> decode_initialize_result(json::Value v);
Result<PlanResult> decode_plan_result(json::Value v);
Result<MaterializeParams> decode_materialize_params(json::Value v);
Result<MaterializeResult> decode_materialize_result(json::Value v);
Result<ValidatedResult> decode_validated_result(json::Value v);
// dot.plan, dot.validate and dot.shutdown take exactly {}.
Status decode_empty_params(json::Value v);

}  // namespace dot::dpp
