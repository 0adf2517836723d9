// The Metewand v1 operations after hello, role by role (operations.h).
#include "dot/metewand/operations.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace dot::metewand {
namespace {

constexpr std::array<std::string_view, 7> kMethods = {"hello", "materialize", "prepare", "execute",
                                                      "reset", "evaluate",    "shutdown"};

enum class MemberKind : std::uint8_t { Text, Object, Seed };
struct MemberSpec {
  std::string_view name;
  MemberKind kind;
};

constexpr MemberSpec kMaterialize[] = {{"source_dir", MemberKind::Text},
                                       {"dataset_parameters", MemberKind::Object},
                                       {"dataset_seed", MemberKind::Seed},
                                       {"output_dir", MemberKind::Text}};
constexpr MemberSpec kPrepare[] = {{"dataset_dir", MemberKind::Text},
                                   {"problem_contract_id", MemberKind::Text},
                                   {"problem_parameters", MemberKind::Object},
                                   {"implementation_parameters", MemberKind::Object},
                                   {"implementation_seed", MemberKind::Seed}};
constexpr MemberSpec kExecute[] = {{"result_dir", MemberKind::Text}};
constexpr MemberSpec kEvaluate[] = {{"dataset_dir", MemberKind::Text},
                                    {"problem_contract_id", MemberKind::Text},
                                    {"problem_parameters", MemberKind::Object},
                                    {"result_dir", MemberKind::Text},
                                    {"metrics_path", MemberKind::Text}};

std::span<const MemberSpec> members_of(Method method) {
  switch (method) {
    case Method::Materialize:
      return kMaterialize;
    case Method::Prepare:
      return kPrepare;
    case Method::Execute:
      return kExecute;
    case Method::Evaluate:
      return kEvaluate;
    default:
      return {};
  }
}

constexpr Method kMaterializerMethods[] = {Method::Materialize, Method::Shutdown};
constexpr Method kImplementationMethods[] = {Method::Prepare, Method::Execute, Method::Reset, Method::Shutdown};
constexpr Method kEvaluatorMethods[] = {Method::Evaluate, Method::Shutdown};

template <typename T>
Expected<T, MessageError> checked(Result<T> r) {
  if (!r.ok()) return invalid_message(r.error());
  return std::move(r).value();
}

Expected<std::string, MessageError> nonempty_string(json::ObjectReader& r, std::string_view name) {
  auto v = checked(r.required(name));
  if (!v.ok()) return std::move(v).error();
  if (!v->is_string() || v->as_string().empty())
    return invalid_message(fmt::format("{}: must be a non-empty string", name), v->offset());
  return std::string(v->as_string());
}

// A non-negative integer within the safe range, spelled as digits.
Expected<std::uint64_t, MessageError> safe_uint(json::Value v, std::string_view name) {
  if (!v.is_number() || !v.is_integer_spelling())
    return invalid_message(fmt::format("{}: must be an integer 0..{}", name, kMaxSafeInteger), v.offset());
  auto text = v.number_text();
  if (text.empty() || text[0] == '-' || text.size() > 16)
    return invalid_message(fmt::format("{}: must be an integer 0..{}", name, kMaxSafeInteger), v.offset());
  std::uint64_t n = 0;
  for (char c : text) n = n * 10 + static_cast<std::uint64_t>(c - '0');
  if (n > kMaxSafeInteger)
    return invalid_message(fmt::format("{}: exceeds the safe-integer maximum {}", name, kMaxSafeInteger), v.offset());
  return n;
}

Expected<std::string, MessageError> manifest_reference(json::ObjectReader& r, std::string_view name) {
  auto v = checked(r.required(name));
  if (!v.ok()) return std::move(v).error();
  if (!v->is_object()) return invalid_message(fmt::format("{}: must be an object", name), v->offset());
  json::ObjectReader mr(*v, name);
  auto manifest = nonempty_string(mr, "manifest");
  if (!manifest.ok()) return std::move(manifest).error();
  auto fin = mr.finish();
  if (!fin.ok()) return invalid_message(fin.error());
  return std::move(manifest).value();
}

Expected<std::string, MessageError> id_member(json::ObjectReader& r) { return nonempty_string(r, "id"); }

Expected<Done, MessageError> ok_true(json::ObjectReader& r) {
  auto ok = checked(r.required("ok"));
  if (!ok.ok()) return std::move(ok).error();
  if (!ok->is_bool() || !ok->as_bool())
    return invalid_message("ok: a successful response requires ok: true", ok->offset());
  return Done{};
}

Expected<OperationSuccess, MessageError> decode_success(Method method, json::Value value) {
  json::ObjectReader r(value, fmt::format("{} response", method_name(method)));
  OperationSuccess out;
  out.method = method;
  if (method == Method::Materialize) {
    auto m = manifest_reference(r, "dataset");
    if (!m.ok()) return std::move(m).error();
    out.manifest = std::move(m).value();
  }
  auto id = id_member(r);
  if (!id.ok()) return std::move(id).error();
  out.id = std::move(id).value();
  if (method == Method::Execute) {
    auto t = checked(r.required("implementation_time_ns"));
    if (!t.ok()) return std::move(t).error();
    if (!t->is_null()) {
      auto n = safe_uint(*t, "implementation_time_ns");
      if (!n.ok()) return std::move(n).error();
      out.implementation_time_ns = *n;
    }
  }
  auto ok = ok_true(r);
  if (!ok.ok()) return std::move(ok).error();
  if (method == Method::Execute) {
    auto m = manifest_reference(r, "result");
    if (!m.ok()) return std::move(m).error();
    out.manifest = std::move(m).value();
    auto s = checked(r.required("statistics"));
    if (!s.ok()) return std::move(s).error();
    if (!s->is_object()) return invalid_message("statistics: must be an object", s->offset());
    out.statistics = jcs::Node::from(*s);
  }
  auto fin = r.finish();
  if (!fin.ok()) return invalid_message(fin.error());
  return out;
}

}  // namespace

std::string_view method_name(Method method) noexcept { return kMethods[static_cast<std::size_t>(method)]; }

std::optional<Method> method_from_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kMethods.size(); ++i)
    if (kMethods[i] == name) return static_cast<Method>(i);
  return std::nullopt;
}

std::span<const Method> role_methods(WorkerRole role) noexcept {
  switch (role) {
    case WorkerRole::DatasetMaterializer:
      return kMaterializerMethods;
    case WorkerRole::Implementation:
      return kImplementationMethods;
    case WorkerRole::ProblemEvaluator:
      return kEvaluatorMethods;
  }
  return {};
}

bool role_accepts(WorkerRole role, Method method) noexcept {
  if (method == Method::Hello) return true;
  auto methods = role_methods(role);
  return std::find(methods.begin(), methods.end(), method) != methods.end();
}

jcs::Node OperationRequest::to_node() const {
  jcs::Node o = params;
  o.set("id", jcs::Node::string(id));
  o.set("method", jcs::Node::string(std::string(method_name(method))));
  return o;
}

std::optional<Method> request_method(json::Value value) noexcept {
  if (!value.is_object()) return std::nullopt;
  auto m = value.find("method");
  if (!m || !m->is_string()) return std::nullopt;
  return method_from_name(m->as_string());
}

Expected<OperationRequest, MessageError> decode_operation_request(json::Value value) {
  if (!value.is_object()) return invalid_message("a request must be an object", value.offset());
  json::ObjectReader r(value, "request");
  OperationRequest out;
  auto id = id_member(r);
  if (!id.ok()) return std::move(id).error();
  out.id = std::move(id).value();
  auto method = checked(r.required("method"));
  if (!method.ok()) return std::move(method).error();
  auto parsed = method->is_string() ? method_from_name(method->as_string()) : std::nullopt;
  if (!parsed || *parsed == Method::Hello)
    return invalid_message("method: not an operation of version 1", method->offset());
  out.method = *parsed;
  for (const MemberSpec& m : members_of(out.method)) {
    auto v = checked(r.required(m.name));
    if (!v.ok()) return std::move(v).error();
    switch (m.kind) {
      case MemberKind::Text:
        if (!v->is_string() || v->as_string().empty())
          return invalid_message(fmt::format("{}: must be a non-empty string", m.name), v->offset());
        break;
      case MemberKind::Object:
        if (!v->is_object()) return invalid_message(fmt::format("{}: must be an object", m.name), v->offset());
        break;
      case MemberKind::Seed: {
        auto n = safe_uint(*v, m.name);
        if (!n.ok()) return std::move(n).error();
        break;
      }
    }
    out.params.set(std::string(m.name), jcs::Node::from(*v));
  }
  auto fin = r.finish();
  if (!fin.ok()) return invalid_message(fin.error());
  return out;
}

jcs::Node OperationSuccess::to_node() const {
  jcs::Node o = jcs::Node::object();
  o.set("id", jcs::Node::string(id));
  o.set("ok", jcs::Node::boolean(true));
  auto reference = [&] {
    jcs::Node m = jcs::Node::object();
    m.set("manifest", jcs::Node::string(manifest));
    return m;
  };
  if (method == Method::Materialize) o.set("dataset", reference());
  if (method == Method::Execute) {
    o.set("implementation_time_ns", implementation_time_ns
                                        ? jcs::Node::integer(static_cast<std::int64_t>(*implementation_time_ns))
                                        : jcs::Node::null());
    o.set("result", reference());
    o.set("statistics", statistics);
  }
  return o;
}

Expected<OperationReply, MessageError> decode_operation_reply(Method method, json::Value value) {
  if (!value.is_object()) return invalid_message("a response must be an object", value.offset());
  auto ok = value.find("ok");
  if (ok && ok->is_bool() && !ok->as_bool()) {
    auto f = decode_worker_failure(value);
    if (!f.ok()) return std::move(f).error();
    return OperationReply(std::move(f).value());
  }
  auto s = decode_success(method, value);
  if (!s.ok()) return std::move(s).error();
  return OperationReply(std::move(s).value());
}

}  // namespace dot::metewand
