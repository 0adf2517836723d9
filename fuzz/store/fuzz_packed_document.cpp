// A stored proposal document (store/src/packed_document.h) over arbitrary
// bytes: the txn.proposal column is data anyone with write access to the
// file can change. Deterministic oracles:
//   - a value without the frame magic is returned unchanged;
//   - a refusal is Code::Store kind packed_document;
//   - what unpacks is not empty, within the bound, and packs and unpacks
//     again to the same bytes;
//   - the input itself, taken as a document, packs and unpacks to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "dot/store/error_kinds.h"
#include "packed_document.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

constexpr std::size_t kMax = std::size_t{1} << 20;
constexpr std::string_view kMagic("\x28\xB5\x2F\xFD", 4);

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using dot::store::detail::pack_document;
  using dot::store::detail::unpack_document;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto unpacked = unpack_document(bytes, kMax);
  if (!bytes.starts_with(kMagic)) {
    check(unpacked.ok() && *unpacked == bytes);
  } else if (!unpacked.ok()) {
    check(unpacked.error().is(dot::store::ErrorKind::PackedDocument));
  } else {
    check(!unpacked->empty() && unpacked->size() <= kMax);
    auto again = pack_document(*unpacked);
    check(again.ok());
    auto back = unpack_document(*again, kMax);
    check(back.ok() && *back == *unpacked);
  }
  if (!bytes.empty()) {
    auto packed = pack_document(bytes);
    check(packed.ok() && packed->starts_with(kMagic));
    auto back = unpack_document(*packed, kMax);
    check(back.ok() && *back == bytes);
  }
  return 0;
}
