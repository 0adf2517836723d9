#pragma once
// Hello negotiation (docs/spec/dpp-hello.md): what core sends in dot.initialize,
// the identity check on the echo, and the hello allowlists on the plan. Each
// failure has its own code, kind and detail (docs/spec/cli.md):
//
//   check_identity       DOT_E_PLUGIN_IDENTITY, kinds: id, protocol, profile,
//                        assurance, nonce, capabilities
//   check_plan_names     DOT_E_PATH_ESCAPE (kind slot_name) for a name outside
//                        ^[a-z][a-z0-9-]{0,30}\.txt$; DOT_E_POLICY for 0 or more
//                        than 16 names (names) or a repeated name (duplicate_name)
//   check_hello_allowlists  check_hello_names, then check_hello_effects:
//     check_hello_names    check_plan_names, then DOT_E_POLICY (names) unless the
//                        names are exactly ["hello.txt","welcome.txt"]
//     check_hello_effects  DOT_E_POLICY (effects): more than 4 effects or not
//                        exactly the one root-sync request
//                        (core re-checks every stored plan with these two:
//                        core/plan.h check_plan_invariants)
//   check_artifacts      DOT_E_ARTIFACT_MISMATCH: count, name/order, digest form,
//                        size outside 1..65536 (what the plugin claims; core then
//                        compares the staged files with these claims)

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/result.h"
#include "dot/dpp/messages.h"

namespace dot::dpp::hello {

inline constexpr std::uint64_t kProtocol = 1;
inline constexpr std::string_view kProfile = "org.dot.hello/v1";
inline constexpr std::string_view kPluginId = "org.dot.hello";
inline constexpr std::string_view kAssuranceAudit = "audit";
inline constexpr std::string_view kAssuranceProcess = "process";
inline constexpr std::size_t kMaxNames = 16;
inline constexpr std::size_t kMaxEffects = 4;
inline constexpr std::uint64_t kMaxArtifactSize = 65536;
// The mode of every staged artifact (and of every file core seals from one).
inline constexpr std::uint64_t kArtifactMode = 0600;

// ["materialize","plan","post-commit-effects","validate"], in that order.
std::vector<std::string> capabilities();
// ["hello.txt","welcome.txt"]
std::vector<std::string> allowed_names();
// {kind:"sync", target:"managed-root", failure_policy:"required"}
EffectRequest root_sync_effect();

// The dot.initialize params core sends. `assurance` is what core enforces
// ("audit" or "process"); `nonce` 64 lowercase hex from a CSPRNG.
InitializeParams initialize_params(std::string_view assurance, std::string nonce);

// The echo must equal what was sent, element by element, and `id` must equal
// the manifest's plugin id.
Status check_identity(const InitializeParams& sent, const InitializeResult& echo, std::string_view manifest_id);

bool is_slot_name(std::string_view name) noexcept;
Status check_plan_names(const std::vector<std::string>& names);
Status check_hello_names(const std::vector<std::string>& names);
Status check_hello_effects(const std::vector<EffectRequest>& effects);
Status check_hello_allowlists(const PlanResult& plan);
Status check_artifacts(const std::vector<std::string>& names, const MaterializeResult& result);

}  // namespace dot::dpp::hello
