// A large canonical document kept as one zstd frame (packed_document.h).
#include "packed_document.h"

#include <zstd.h>

#include <memory>

#include <fmt/format.h>

#include "dot/store/error_kinds.h"

namespace dot::store::detail {
namespace {

// Fast and still about 8:1 on proposal documents; higher levels cost a plan
// more time than the bytes they save.
constexpr int kLevel = 1;
// ZSTD_MAGICNUMBER as it begins a frame on disk (little-endian).
constexpr std::string_view kFrameMagic("\x28\xB5\x2F\xFD", 4);

Error packed_error(std::string detail) { return make_error(store::ErrorKind::PackedDocument, std::move(detail)); }

}  // namespace

Result<std::string> pack_document(std::string_view document) {
  // Room for the worst case, left uninitialised: zstd touches only what it
  // writes (an eighth of it), where a zero-filled string would make every
  // page of the document's size resident once more.
  const std::size_t bound = ZSTD_compressBound(document.size());
  auto room = std::make_unique_for_overwrite<char[]>(bound);
  const std::size_t n = ZSTD_compress(room.get(), bound, document.data(), document.size(), kLevel);
  if (ZSTD_isError(n) != 0U)
    return packed_error(fmt::format("zstd could not pack a document: {}", ZSTD_getErrorName(n)));
  return std::string(room.get(), n);
}

Result<std::string> unpack_document(std::string_view stored, std::size_t max_bytes) {
  if (!stored.starts_with(kFrameMagic)) return std::string(stored);
  // The frame's own header says how large it expands: checked before a byte
  // is allocated, so a forged header cannot make us allocate without bound.
  const unsigned long long declared = ZSTD_getFrameContentSize(stored.data(), stored.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR) return packed_error("the stored document's zstd frame header is corrupt");
  if (declared == ZSTD_CONTENTSIZE_UNKNOWN) return packed_error("the stored document's zstd frame declares no size");
  if (declared == 0) return packed_error("the stored document's zstd frame is empty");
  if (declared > max_bytes)
    return packed_error(
        fmt::format("the stored document's zstd frame declares {} bytes, more than {}", declared, max_bytes));
  const std::size_t frame = ZSTD_findFrameCompressedSize(stored.data(), stored.size());
  if (ZSTD_isError(frame) != 0U)
    return packed_error(fmt::format("the stored document's zstd frame is cut short: {}", ZSTD_getErrorName(frame)));
  if (frame != stored.size())
    return packed_error(fmt::format("the stored document has {} bytes after its zstd frame", stored.size() - frame));
  std::string out(static_cast<std::size_t>(declared), '\0');
  const std::size_t n = ZSTD_decompress(out.data(), out.size(), stored.data(), stored.size());
  if (ZSTD_isError(n) != 0U)
    return packed_error(fmt::format("the stored document's zstd frame is corrupt: {}", ZSTD_getErrorName(n)));
  if (n != out.size())
    return packed_error(
        fmt::format("the stored document's zstd frame expands to {} bytes, not the {} it declares", n, out.size()));
  return out;
}

}  // namespace dot::store::detail
