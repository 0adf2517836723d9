// dot-mirror's cache file (plugins/dot-mirror/digest_cache.h) over arbitrary
// bytes: the file sits in a folder the plugin writes and, under audit
// assurance, anything running as the user can too. Deterministic oracles:
//   - a refusal is Code::Validation kind digest_cache;
//   - what decodes is canonical: encoding the records gives the same bytes;
//   - the records are in strictly ascending path order, each a regular
//     file's with a size of at least 0;
//   - the same bytes for another source folder are refused.
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "digest_cache.h"
#include "error_kinds.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

constexpr dot::mirror::SourceId kSource{2049, 77};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto records = dot::mirror::decode_digest_cache(bytes, kSource);
  if (!records.ok()) {
    check(records.error().is(dot::mirror::ErrorKind::DigestCache));
    return 0;
  }
  check(dot::mirror::encode_digest_cache(*records, kSource) == bytes);
  for (std::size_t i = 0; i < records->size(); ++i) {
    const auto& r = (*records)[i];
    check(S_ISREG(r.seen.mode) && r.seen.size >= 0);
    if (i > 0) check((*records)[i - 1].path < r.path);
  }
  check(!dot::mirror::decode_digest_cache(bytes, dot::mirror::SourceId{2049, 78}).ok());
  return 0;
}
