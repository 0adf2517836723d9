// A stored plugin manifest (dot/core/registry.h, decode_manifest) over
// arbitrary bytes, aimed at its `interpreter` member (seeds in
// fuzz/corpus/manifest): what every plan decodes before it decides what to
// execute. Deterministic oracles:
//   - a refusal is DOT_E_PLUGIN_IDENTITY (the stored manifest is not one);
//   - a manifest that decodes has a plugin id register accepts;
//   - an interpreter that decodes has an absolute path, a lowercase-hex
//     SHA-256 and only absolute runtime folders;
//   - a manifest that decodes encodes, and what it encodes to decodes to the
//     same manifest and encodes to the same bytes (one canonical form).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "dot/base/sha256.h"
#include "dot/core/registry.h"
#include "dot/dpp/general.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto m = dot::core::decode_manifest(bytes);
  if (!m.ok()) {
    check(m.error().code == dot::Code::PluginIdentity);
    return 0;
  }
  check(dot::dpp::general::check_plugin_id(m->id).ok());
  if (m->interpreter) {
    const auto& in = *m->interpreter;
    check(!in.path.empty() && in.path.front() == '/' && dot::is_sha256_hex(in.sha256));
    for (const auto& dir : in.runtime) check(!dir.empty() && dir.front() == '/');
  }
  auto encoded = dot::core::encode_manifest(*m);
  check(encoded.ok());
  auto again = dot::core::decode_manifest(*encoded);
  check(again.ok() && *again == *m);
  auto twice = dot::core::encode_manifest(*again);
  check(twice.ok() && *twice == *encoded);
  return 0;
}
