// Hello negotiation: dot.initialize, the identity echo and the hello allowlists (hello.h).
#include "dot/dpp/hello.h"
#include "dot/dpp/error_kinds.h"

#include <set>

#include <fmt/format.h>

#include "dot/base/sha256.h"
#include "fields.h"

namespace dot::dpp::hello {
namespace {

using fields::excerpt;

using fields::list;

}  // namespace

std::vector<std::string> capabilities() { return {"materialize", "plan", "post-commit-effects", "validate"}; }
std::vector<std::string> allowed_names() { return {"hello.txt", "welcome.txt"}; }
EffectRequest root_sync_effect() { return EffectRequest{"sync", "managed-root", "required"}; }

InitializeParams initialize_params(std::string_view assurance, std::string nonce) {
  InitializeParams p;
  p.protocol = kProtocol;
  p.profile = std::string(kProfile);
  p.required_assurance = std::string(assurance);
  p.capabilities = capabilities();
  p.nonce = std::move(nonce);
  return p;
}

Status check_identity(const InitializeParams& sent, const InitializeResult& echo, std::string_view manifest_id) {
  DOT_TRY(fields::check_echo({sent.protocol, sent.profile, sent.required_assurance, sent.nonce},
                             {echo.id, echo.protocol, echo.profile, echo.assurance, echo.nonce}, manifest_id));
  return fields::check_capabilities(echo.capabilities, sent.capabilities, sent.capabilities);
}

bool is_slot_name(std::string_view name) noexcept {
  // ^[a-z][a-z0-9-]{0,30}\.txt$
  if (name.size() < 5 || name.size() > 35) return false;
  if (name.substr(name.size() - 4) != ".txt") return false;
  std::string_view stem = name.substr(0, name.size() - 4);
  if (stem[0] < 'a' || stem[0] > 'z') return false;
  for (char c : stem)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

Status check_plan_names(const std::vector<std::string>& names) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (!is_slot_name(names[i]))
      return make_error(
          dpp::ErrorKind::SlotName,
          fmt::format("slot {} name \"{}\" does not match ^[a-z][a-z0-9-]{{0,30}}\\.txt$", i, excerpt(names[i])));
  if (names.empty() || names.size() > kMaxNames)
    return make_error(dpp::ErrorKind::Names,
                      fmt::format("a plan names 1 to {} files, this one {}", kMaxNames, names.size()));
  std::set<std::string_view> seen;
  for (const auto& n : names)
    if (!seen.insert(n).second)
      return make_error(dpp::ErrorKind::DuplicateName, fmt::format("slot name \"{}\" appears twice", n));
  return {};
}

Status check_hello_names(const std::vector<std::string>& names) {
  DOT_TRY(check_plan_names(names));
  if (names != allowed_names())
    return make_error(dpp::ErrorKind::Names, fmt::format("the hello profile allows exactly {}, the plan names {}",
                                                         list(allowed_names()), list(names)));
  return {};
}

Status check_hello_effects(const std::vector<EffectRequest>& effects) {
  if (effects.size() > kMaxEffects)
    return make_error(dpp::ErrorKind::Effects,
                      fmt::format("at most {} effects, the plan asks for {}", kMaxEffects, effects.size()));
  const EffectRequest want = root_sync_effect();
  if (effects.size() != 1)
    return make_error(
        dpp::ErrorKind::Effects,
        fmt::format("the hello profile requires exactly one root-sync effect, the plan asks for {}", effects.size()));
  const EffectRequest& e = effects[0];
  if (!(e == want))
    return make_error(dpp::ErrorKind::Effects,
                      fmt::format("effect {{kind:\"{}\", target:\"{}\", failure_policy:\"{}\"}} is not the allowed "
                                  "root-sync request {{kind:\"sync\", target:\"managed-root\", "
                                  "failure_policy:\"required\"}}",
                                  excerpt(e.kind), excerpt(e.target), excerpt(e.failure_policy)));
  return {};
}

Status check_hello_allowlists(const PlanResult& plan) {
  DOT_TRY(check_hello_names(plan.names));
  return check_hello_effects(plan.effects);
}

Status check_artifacts(const std::vector<std::string>& names, const MaterializeResult& result) {
  const auto& arts = result.artifacts;
  if (arts.size() != names.size())
    return make_error(dpp::ErrorKind::Count,
                      fmt::format("{} artifacts for {} planned names", arts.size(), names.size()));
  for (std::size_t i = 0; i < arts.size(); ++i) {
    if (arts[i].name != names[i])
      return make_error(dpp::ErrorKind::Name,
                        fmt::format("artifact {} is \"{}\", slot {} is \"{}\"", i, excerpt(arts[i].name), i, names[i]));
    if (!is_sha256_hex(arts[i].sha256))
      return make_error(dpp::ErrorKind::Sha256, fmt::format("artifact \"{}\" has no lowercase hex SHA-256", names[i]));
    if (arts[i].size < 1 || arts[i].size > kMaxArtifactSize)
      return make_error(dpp::ErrorKind::Size, fmt::format("artifact \"{}\" claims {} bytes; 1 to {} allowed", names[i],
                                                          arts[i].size, kMaxArtifactSize));
  }
  return {};
}

}  // namespace dot::dpp::hello
