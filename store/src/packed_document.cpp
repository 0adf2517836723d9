// A large canonical document kept as one zstd frame (packed_document.h).
#include "packed_document.h"

#include <zstd.h>

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "dot/base/sha256.h"
#include "dot/store/error_kinds.h"

namespace dot::store::detail {
namespace {

// Fast and still about 8:1 on proposal documents; higher levels cost a plan
// more time than the bytes they save.
constexpr int kLevel = 1;
// 2^23 bytes: the largest window unpack_document_to allocates.
constexpr int kMaxWindowLog = 23;
// ZSTD_MAGICNUMBER as it begins a frame on disk (little-endian).
constexpr std::string_view kFrameMagic("\x28\xB5\x2F\xFD", 4);

Error packed_error(std::string detail) { return make_error(store::ErrorKind::PackedDocument, std::move(detail)); }

}  // namespace

struct DocumentPacker::State {
  ZSTD_CCtx* cctx = nullptr;
  std::uint64_t promised = 0;
  std::uint64_t written = 0;
  Sha256 hash;
  std::string frame;
  std::unique_ptr<char[]> out;  // one ZSTD_CStreamOutSize() buffer, refilled
  std::size_t out_size = 0;
  ~State() { ZSTD_freeCCtx(cctx); }
};

Result<DocumentPacker> DocumentPacker::start(std::uint64_t bytes) {
  DocumentPacker p;
  p.state_ = std::make_unique<State>();
  State& st = *p.state_;
  st.cctx = ZSTD_createCCtx();
  if (st.cctx == nullptr) return packed_error("zstd could not start packing a document (out of memory)");
  // The size goes in the frame header: unpack_document requires it.
  if (ZSTD_isError(ZSTD_CCtx_setParameter(st.cctx, ZSTD_c_compressionLevel, kLevel)) != 0U ||
      ZSTD_isError(ZSTD_CCtx_setParameter(st.cctx, ZSTD_c_contentSizeFlag, 1)) != 0U ||
      ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(st.cctx, bytes)) != 0U)
    return packed_error("zstd refused the packing parameters");
  st.promised = bytes;
  // Room for the largest frame up front: a frame grown by doubling held its
  // old and its new copy at each step (12 MB at once for the 6 MB frame of
  // a plan over 100,000 changed files), while room reserved and not yet
  // written is address space, not memory (a block this large is mapped on
  // its own, and only the pages written are ever touched). Capped: a frame
  // past it grows as before.
  constexpr std::size_t kMaxReserved = std::size_t{256} << 20;
  st.frame.reserve(std::min(ZSTD_compressBound(static_cast<std::size_t>(std::min<std::uint64_t>(bytes, kMaxReserved))),
                            kMaxReserved));
  st.out_size = ZSTD_CStreamOutSize();
  st.out = std::make_unique_for_overwrite<char[]>(st.out_size);
  return p;
}

DocumentPacker::DocumentPacker(DocumentPacker&& other) noexcept = default;
DocumentPacker::~DocumentPacker() = default;

Status DocumentPacker::pump(std::string_view piece, bool last) {
  State& st = *state_;
  ZSTD_inBuffer in{piece.data(), piece.size(), 0};
  for (;;) {
    ZSTD_outBuffer out{st.out.get(), st.out_size, 0};
    const std::size_t left = ZSTD_compressStream2(st.cctx, &out, &in, last ? ZSTD_e_end : ZSTD_e_continue);
    if (ZSTD_isError(left) != 0U)
      return packed_error(fmt::format("zstd could not pack a document: {}", ZSTD_getErrorName(left)));
    st.frame.append(st.out.get(), out.pos);
    if (last ? left == 0 : in.pos == in.size) return {};
  }
}

Status DocumentPacker::write(std::string_view piece) {
  State& st = *state_;
  const bool over = st.written > st.promised || piece.size() > st.promised - st.written;
  st.written += piece.size();  // a document longer than promised is only counted: finish() refuses it
  if (over) return {};
  st.hash.update(piece);
  return pump(piece, false);
}

std::uint64_t DocumentPacker::written() const noexcept { return state_->written; }

Result<DocumentPacker::Packed> DocumentPacker::finish() {
  State& st = *state_;
  if (st.written != st.promised)
    return packed_error(fmt::format("a document promised as {} bytes has {}", st.promised, st.written));
  DOT_TRY(pump({}, true));
  return Packed{std::move(st.frame), to_hex(st.hash.finish())};
}

Result<Written> take_written(std::uint64_t bytes, bool pack, const std::function<Status(ByteSink&)>& write,
                             store::ErrorKind kind, std::string_view what) {
  auto longer_or_shorter = [&](std::uint64_t written) {
    return make_error(kind, fmt::format("{} has {} bytes, not the {} promised", what, written, bytes));
  };
  if (!pack) {
    StringSink kept;
    DOT_TRY(write(kept));
    if (kept.out.size() != bytes) return longer_or_shorter(kept.out.size());
    std::string digest = sha256_hex(kept.out);
    return Written{std::move(kept.out), std::move(digest)};
  }
  DOT_ASSIGN_OR_RETURN(DocumentPacker packer, DocumentPacker::start(bytes));
  DOT_TRY(write(packer));
  if (packer.written() != bytes) return longer_or_shorter(packer.written());
  DOT_ASSIGN_OR_RETURN(DocumentPacker::Packed done, packer.finish());
  return Written{std::move(done.frame), std::move(done.sha256)};
}

Result<std::string> pack_document(std::string_view document) {
  DOT_ASSIGN_OR_RETURN(DocumentPacker packer, DocumentPacker::start(document.size()));
  DOT_TRY(packer.write(document));
  DOT_ASSIGN_OR_RETURN(DocumentPacker::Packed packed, packer.finish());
  return std::move(packed.frame);
}

Status unpack_document_to(std::string_view stored, std::size_t max_bytes, ByteSink& out) {
  if (!stored.starts_with(kFrameMagic)) return out.write(stored);
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
  std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> dctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  // The window a frame may ask for is bounded too: the packer's level
  // writes frames with windows of 512 KiB; a forged one asking for more
  // than 8 MiB is refused instead of allocated.
  if (!dctx || ZSTD_isError(ZSTD_DCtx_setParameter(dctx.get(), ZSTD_d_windowLogMax, kMaxWindowLog)) != 0U)
    return packed_error("zstd could not start unpacking a document (out of memory)");
  const std::size_t chunk = ZSTD_DStreamOutSize();
  std::unique_ptr<char[]> buffer(new char[chunk]);
  ZSTD_inBuffer in{stored.data(), stored.size(), 0};
  std::uint64_t total = 0;
  for (;;) {
    ZSTD_outBuffer piece{buffer.get(), chunk, 0};
    const std::size_t left = ZSTD_decompressStream(dctx.get(), &piece, &in);
    if (ZSTD_isError(left) != 0U)
      return packed_error(fmt::format("the stored document's zstd frame is corrupt: {}", ZSTD_getErrorName(left)));
    total += piece.pos;
    if (total > declared)
      return packed_error(
          fmt::format("the stored document's zstd frame expands to more than the {} bytes it declares", declared));
    if (piece.pos > 0) DOT_TRY(out.write(std::string_view(buffer.get(), piece.pos)));
    if (left == 0) break;  // the frame is whole
    if (in.pos == in.size && piece.pos < piece.size)
      return packed_error("the stored document's zstd frame ends before its last block");
  }
  if (total != declared)
    return packed_error(
        fmt::format("the stored document's zstd frame expands to {} bytes, not the {} it declares", total, declared));
  return {};
}

Result<std::string> unpack_document(std::string_view stored, std::size_t max_bytes) {
  // Its declared size (or the document itself) up front: the text is never
  // copied as it grows.
  StringSink sink;
  if (stored.starts_with(kFrameMagic)) {
    const unsigned long long declared = ZSTD_getFrameContentSize(stored.data(), stored.size());
    if (declared != ZSTD_CONTENTSIZE_ERROR && declared != ZSTD_CONTENTSIZE_UNKNOWN && declared <= max_bytes)
      sink.out.reserve(static_cast<std::size_t>(declared));
  }
  DOT_TRY(unpack_document_to(stored, max_bytes, sink));
  return std::move(sink.out);
}

}  // namespace dot::store::detail
