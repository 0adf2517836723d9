// A stored proposal document (store/src/packed_document.h) over arbitrary
// bytes: the txn.proposal column is data anyone with write access to the
// file can change. Deterministic oracles:
//   - a value without the frame magic is returned unchanged;
//   - a refusal is Code::Store kind packed_document;
//   - unpacked as it streams, the same bytes in pieces of at most 128 KiB,
//     or the same refusal;
//   - what unpacks is not empty, within the bound, and packs and unpacks
//     again to the same bytes;
//   - the input itself, taken as a document, packs and unpacks to itself,
//     whole and in pieces (their sizes taken from the input: the streaming
//     packer must give a frame that unpacks to it and its SHA-256), and a
//     packer promised one byte more refuses to finish.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "dot/base/sha256.h"
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
  using dot::store::detail::DocumentPacker;
  using dot::store::detail::pack_document;
  using dot::store::detail::unpack_document;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto unpacked = unpack_document(bytes, kMax);
  {
    // Unpacked as it streams: the same bytes in pieces of at most 128 KiB,
    // or the same refusal.
    struct Pieces final : dot::ByteSink {
      dot::Status write(std::string_view piece) override {
        check(piece.size() <= (std::size_t{128} << 10));
        out += piece;
        return {};
      }
      std::string out;
    } pieces;
    auto streamed = dot::store::detail::unpack_document_to(bytes, kMax, pieces);
    check(streamed.ok() == unpacked.ok());
    if (unpacked.ok())
      check(pieces.out == *unpacked);
    else
      check(streamed.error().line() == unpacked.error().line());
  }
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
    auto packer = DocumentPacker::start(bytes.size());
    check(packer.ok());
    // Piece sizes 1..16 from the bytes themselves, cycling.
    for (std::size_t at = 0, i = 0; at < bytes.size(); ++i) {
      const std::size_t n =
          std::min<std::size_t>(1 + (static_cast<unsigned char>(bytes[i % bytes.size()]) & 15), bytes.size() - at);
      check(packer->write(bytes.substr(at, n)).ok());
      at += n;
    }
    auto pieces = packer->finish();
    check(pieces.ok() && pieces->sha256 == dot::sha256_hex(bytes));
    auto from_pieces = unpack_document(pieces->frame, kMax);
    check(from_pieces.ok() && *from_pieces == bytes);
    auto longer = DocumentPacker::start(bytes.size() + 1);
    check(longer.ok() && longer->write(bytes).ok());
    check(!longer->finish().ok());
  }
  return 0;
}
