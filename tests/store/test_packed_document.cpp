// The store's packed documents (store/src/packed_document.h): one zstd frame
// of a declared size, read back as exactly the document; a plain value (a row
// written before schema 10) is the document itself; every other frame is
// refused before anything beyond the bound is allocated.
#include <gtest/gtest.h>
#include <zstd.h>

#include <algorithm>
#include <string>

#include "dot/base/sha256.h"
#include "dot/store/error_kinds.h"
#include "packed_document.h"

namespace dot::store::detail {
namespace {

std::string document(std::size_t paths) {
  std::string out = R"({"operations":[)";
  for (std::size_t i = 0; i < paths; ++i)
    out += (i ? "," : "") + std::string(R"({"action":"write","path":"d/f)") + std::to_string(i) + R"("})";
  return out + "]}";
}

// One zstd frame of `doc` made by zstd itself, with the parameters
// `configure` sets (what the store's own packer never writes).
template <class Configure>
std::string zstd_frame(std::string_view doc, Configure configure) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  EXPECT_NE(cctx, nullptr);
  if (!cctx) return {};
  configure(cctx);
  std::string frame(ZSTD_compressBound(doc.size()), '\0');
  ZSTD_outBuffer out{frame.data(), frame.size(), 0};
  ZSTD_inBuffer in{doc.data(), doc.size(), 0};
  EXPECT_EQ(ZSTD_compressStream2(cctx, &out, &in, ZSTD_e_end), 0U);
  ZSTD_freeCCtx(cctx);
  frame.resize(out.pos);
  return frame;
}

void expect_refused(std::string_view stored, std::size_t max, std::string_view says) {
  auto r = unpack_document(stored, max);
  ASSERT_FALSE(r.ok()) << says;
  EXPECT_TRUE(r.error().is(ErrorKind::PackedDocument)) << r.error().line();
  EXPECT_NE(r.error().detail.find(says), std::string::npos) << r.error().line();
}

TEST(PackedDocument, ARoundTripGivesTheSameBytesInFewer) {
  const std::string doc = document(2000);
  auto packed = pack_document(doc);
  ASSERT_TRUE(packed.ok()) << packed.error().line();
  EXPECT_LT(packed->size() * 4, doc.size());
  EXPECT_EQ(packed->substr(0, 4), std::string("\x28\xB5\x2F\xFD", 4));
  auto back = unpack_document(*packed, doc.size());
  ASSERT_TRUE(back.ok()) << back.error().line();
  EXPECT_EQ(*back, doc);
}

// Packed as it is written, in pieces of any size: the frame declares the
// whole size and unpacks to the document; the digest is the document's.
TEST(PackedDocument, PiecesPackToTheDocumentAndItsDigest) {
  const std::string doc = document(3000);
  for (std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, doc.size()}) {
    SCOPED_TRACE(piece);
    auto packer = DocumentPacker::start(doc.size());
    ASSERT_TRUE(packer.ok());
    for (std::size_t at = 0; at < doc.size(); at += piece)
      ASSERT_TRUE(packer->write(std::string_view(doc).substr(at, piece)).ok());
    auto packed = packer->finish();
    ASSERT_TRUE(packed.ok()) << packed.error().line();
    EXPECT_EQ(packed->sha256, sha256_hex(doc));
    EXPECT_LT(packed->frame.size() * 4, doc.size());
    auto back = unpack_document(packed->frame, doc.size());
    ASSERT_TRUE(back.ok()) << back.error().line();
    EXPECT_EQ(*back, doc);
  }
}

// Fewer or more bytes than promised: no frame.
TEST(PackedDocument, AnotherLengthThanPromisedIsRefused) {
  const std::string doc = document(50);
  for (std::uint64_t promised : {std::uint64_t{doc.size() - 1}, std::uint64_t{doc.size() + 1}}) {
    auto packer = DocumentPacker::start(promised);
    ASSERT_TRUE(packer.ok());
    ASSERT_TRUE(packer->write(doc).ok());
    EXPECT_EQ(packer->written(), doc.size());
    auto packed = packer->finish();
    ASSERT_FALSE(packed.ok());
    EXPECT_TRUE(packed.error().is(ErrorKind::PackedDocument)) << packed.error().line();
  }
}

TEST(PackedDocument, APlainValueIsTheDocumentItself) {
  const std::string doc = document(3);
  auto back = unpack_document(doc, 1);  // the bound is the packed form's
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, doc);
}

TEST(PackedDocument, EveryOtherFrameIsRefused) {
  const std::string doc = document(500);
  const std::string packed = *pack_document(doc);
  expect_refused(packed, doc.size() - 1, "more than");
  expect_refused(packed + packed, doc.size(), "after its zstd frame");
  expect_refused(packed + "x", doc.size(), "after its zstd frame");
  expect_refused(packed.substr(0, packed.size() - 3), doc.size(), "cut short");
  expect_refused(packed.substr(0, 5), doc.size(), "");
  expect_refused(*pack_document(""), doc.size(), "empty");
  // A byte changed inside the compressed block: corrupt, or another
  // document (which its hash then refuses); never more than declared.
  std::string flipped = packed;
  flipped[packed.size() / 2] = static_cast<char>(flipped[packed.size() / 2] ^ 0x5A);
  if (auto r = unpack_document(flipped, doc.size()); r.ok()) {
    EXPECT_EQ(r->size(), doc.size());
  }
  // A frame without a declared size (as a streaming writer makes them).
  const std::string unsized = zstd_frame(doc, [](ZSTD_CCtx* cctx) {
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
  });
  expect_refused(unsized, doc.size(), "declares no size");
}

// Unpacked as it streams: the document in pieces of at most
// ZSTD_DStreamOutSize(), whatever its size; a plain value in one piece; the
// sink's own error as it is, and nothing more after it.
TEST(PackedDocument, UnpackedInPiecesAsItStreams) {
  struct Pieces final : ByteSink {
    Status write(std::string_view piece) override {
      ++count;
      bytes += piece;
      largest = std::max(largest, piece.size());
      if (count == fail_at) return make_error(Code::Io, "full");
      return {};
    }
    std::string bytes;
    std::size_t count = 0, largest = 0, fail_at = 0;
  };
  const std::string doc = document(40000);
  ASSERT_GT(doc.size(), 4 * ZSTD_DStreamOutSize());
  const std::string packed = *pack_document(doc);
  Pieces all;
  ASSERT_TRUE(unpack_document_to(packed, doc.size(), all).ok());
  EXPECT_EQ(all.bytes, doc);
  EXPECT_LE(all.largest, ZSTD_DStreamOutSize());
  EXPECT_GT(all.count, 4u);
  Pieces plain;
  ASSERT_TRUE(unpack_document_to(doc, 1, plain).ok());
  EXPECT_EQ(plain.count, 1u);
  Pieces stopped;
  stopped.fail_at = 2;
  auto r = unpack_document_to(packed, doc.size(), stopped);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Io);
  EXPECT_EQ(stopped.count, 2u);
}

// A frame whose header asks for a window over 8 MiB is refused, not
// allocated (the packer's frames ask for 512 KiB).
TEST(PackedDocument, AFrameAskingForALargeWindowIsRefused) {
  const std::string doc(std::size_t{9} << 20, 'a');
  const std::string frame = zstd_frame(doc, [&doc](ZSTD_CCtx* cctx) {
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 24);
    ZSTD_CCtx_setPledgedSrcSize(cctx, doc.size());
  });
  expect_refused(frame, doc.size(), "corrupt");
  // Its own packing of the same bytes unpacks.
  auto own = unpack_document(*pack_document(doc), doc.size());
  ASSERT_TRUE(own.ok()) << own.error().line();
  EXPECT_EQ(*own, doc);
}

}  // namespace
}  // namespace dot::store::detail
