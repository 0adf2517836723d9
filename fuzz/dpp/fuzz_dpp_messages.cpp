// The message layer over arbitrary frame bodies: the response envelope for
// each method, the typed result decoders, the request decoder and the params
// decoders. Whatever decodes must re-encode canonically and decode to the
// same value; the hello checks must not crash on anything decoded.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "dot/dpp/body.h"
#include "dot/dpp/hello.h"
#include "dot/dpp/jsonrpc.h"
#include "dot/dpp/messages.h"

namespace {

template <typename T, typename Decode>
void round_trip(const T& value, Decode decode) {
  auto bytes = dot::jcs::encode(dot::dpp::to_node(value), dot::jcs::Profile::Rfc8785);
  if (!bytes.ok()) return;  // e.g. integers the canonical form cannot carry
  auto doc = dot::dpp::parse_body(*bytes, 0);
  if (!doc.ok()) std::abort();
  auto again = decode(doc->root());
  if (!again.ok() || !(*again == value)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  auto doc = dot::dpp::parse_body(body, 0);
  if (!doc.ok()) return 0;
  using dot::dpp::Method;
  for (Method m : {Method::Initialize, Method::Plan, Method::Materialize, Method::Validate, Method::Shutdown}) {
    auto result = dot::dpp::decode_response(*doc, dot::dpp::method_id(m), m);
    if (!result.ok()) {
      if (result.error().code != dot::Code::Protocol) std::abort();
      continue;
    }
    switch (m) {
      case Method::Initialize: {
        auto r = dot::dpp::decode_initialize_result(*result);
        if (r.ok()) {
          round_trip(*r, dot::dpp::decode_initialize_result);
          auto sent = dot::dpp::hello::initialize_params("audit", std::string(64, 'a'));
          (void)dot::dpp::hello::check_identity(sent, *r, dot::dpp::hello::kPluginId);
        }
        break;
      }
      case Method::Plan: {
        auto r = dot::dpp::decode_plan_result(*result);
        if (r.ok()) {
          round_trip(*r, dot::dpp::decode_plan_result);
          (void)dot::dpp::hello::check_hello_allowlists(*r);
        }
        break;
      }
      case Method::Materialize: {
        auto r = dot::dpp::decode_materialize_result(*result);
        if (r.ok()) {
          round_trip(*r, dot::dpp::decode_materialize_result);
          (void)dot::dpp::hello::check_artifacts(dot::dpp::hello::allowed_names(), *r);
        }
        break;
      }
      default: {
        auto r = dot::dpp::decode_validated_result(*result);
        if (r.ok()) round_trip(*r, dot::dpp::decode_validated_result);
      }
    }
  }
  auto req = dot::dpp::decode_request(*doc);
  if (req.ok()) {
    switch (req->method) {
      case Method::Initialize: {
        auto p = dot::dpp::decode_initialize_params(req->params);
        if (p.ok()) round_trip(*p, dot::dpp::decode_initialize_params);
        break;
      }
      case Method::Materialize: {
        auto p = dot::dpp::decode_materialize_params(req->params);
        if (p.ok()) round_trip(*p, dot::dpp::decode_materialize_params);
        break;
      }
      default: (void)dot::dpp::decode_empty_params(req->params);
    }
  }
  return 0;
}
