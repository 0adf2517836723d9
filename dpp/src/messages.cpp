// The hello profile's messages: strict decoders and canonical encoders (messages.h).
#include "dot/dpp/messages.h"

// g++ 12 at -O1 with sanitizers reports a false -Wmaybe-uninitialized inside
// std::variant's move of jcs::Node (the vector alternatives of a Node that
// holds a bool or an integer). The code only builds nodes by value.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <fmt/format.h>

#include "dot/dpp/jsonrpc.h"
#include "fields.h"

namespace dot::dpp {
using namespace fields;

namespace {
// The hello profile names a staged file by "name".
constexpr ArtifactKey<Artifact> kArtifactKey{"name", &Artifact::name};
}  // namespace

jcs::Node to_node(const InitializeParams& m) {
  auto n = jcs::Node::object();
  n.set("capabilities", string_array(m.capabilities))
      .set("nonce", jcs::Node::string(m.nonce))
      .set("profile", jcs::Node::string(m.profile))
      .set("protocol", uint_node(m.protocol))
      .set("required_assurance", jcs::Node::string(m.required_assurance));
  return n;
}

jcs::Node to_node(const InitializeResult& m) {
  auto n = jcs::Node::object();
  n.set("assurance", jcs::Node::string(m.assurance))
      .set("capabilities", string_array(m.capabilities))
      .set("id", jcs::Node::string(m.id))
      .set("nonce", jcs::Node::string(m.nonce))
      .set("profile", jcs::Node::string(m.profile))
      .set("protocol", uint_node(m.protocol));
  return n;
}

jcs::Node to_node(const EffectRequest& m) {
  auto n = jcs::Node::object();
  n.set("failure_policy", jcs::Node::string(m.failure_policy))
      .set("kind", jcs::Node::string(m.kind))
      .set("target", jcs::Node::string(m.target));
  return n;
}

jcs::Node to_node(const PlanResult& m) {
  auto effects = jcs::Node::array();
  for (const auto& e : m.effects) effects.push(to_node(e));
  auto n = jcs::Node::object();
  n.set("effects", std::move(effects)).set("names", string_array(m.names));
  return n;
}

jcs::Node to_node(const MaterializeParams& m) {
  auto n = jcs::Node::object();
  n.set("stage", jcs::Node::string(m.stage));
  return n;
}

jcs::Node to_node(const Artifact& m) { return artifact_node(m, kArtifactKey); }

jcs::Node to_node(const MaterializeResult& m) { return artifacts_node(m.artifacts, kArtifactKey); }

jcs::Node to_node(const ValidatedResult& m) {
  auto n = jcs::Node::object();
  n.set("valid", jcs::Node::boolean(m.valid));
  return n;
}

namespace fields {
Status read_initialize_params(json::ObjectReader& r, std::string_view what, InitializeParams& m) {
  DOT_ASSIGN_OR_RETURN(m.capabilities, string_array_field(r, "capabilities", what));
  DOT_ASSIGN_OR_RETURN(m.nonce, string_field(r, "nonce", what));
  DOT_ASSIGN_OR_RETURN(m.profile, string_field(r, "profile", what));
  DOT_ASSIGN_OR_RETURN(m.protocol, uint_field(r, "protocol", what, kMaxSafe));
  DOT_ASSIGN_OR_RETURN(m.required_assurance, string_field(r, "required_assurance", what));
  return {};
}
}  // namespace fields

Result<InitializeParams> decode_initialize_params(json::Value v) {
  return decode_object<InitializeParams>(v, "dot.initialize params", read_initialize_params);
}

Result<InitializeResult> decode_initialize_result(json::Value v) {
  return decode_object<InitializeResult>(v, "dot.initialize result", [](auto& r, auto what, InitializeResult& m) {
    return read_initialize_result(r, what, m, [](auto read, ErrorKind) { return read; });
  });
}

Result<PlanResult> decode_plan_result(json::Value v) {
  return decode_object<PlanResult>(v, "dot.plan result", [](auto& r, auto what, PlanResult& m) -> Status {
    DOT_ASSIGN_OR_RETURN(m.effects, effects_field(r, what));
    DOT_ASSIGN_OR_RETURN(m.names, string_array_field(r, "names", what));
    return {};
  });
}

Result<MaterializeParams> decode_materialize_params(json::Value v) {
  auto read = [](auto& r, auto what, MaterializeParams& m) -> Status {
    DOT_ASSIGN_OR_RETURN(m.stage, string_field(r, "stage", what));
    return {};
  };
  return decode_object<MaterializeParams>(v, "dot.materialize params", read);
}

Result<MaterializeResult> decode_materialize_result(json::Value v) {
  MaterializeResult m;
  DOT_ASSIGN_OR_RETURN(m.artifacts, decode_artifacts(v, kArtifactKey));
  return m;
}

Result<ValidatedResult> decode_validated_result(json::Value v) {
  return decode_object<ValidatedResult>(v, "result", [](auto& r, auto what, ValidatedResult& m) -> Status {
    DOT_ASSIGN_OR_RETURN(m.valid, bool_field(r, "valid", what));
    return {};
  });
}

Status decode_empty_params(json::Value v) {
  DOT_ASSIGN_OR_RETURN(auto r, object(v, "params"));
  return finish(r);
}

}  // namespace dot::dpp
