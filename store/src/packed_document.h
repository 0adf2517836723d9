#pragma once
// How the store keeps a large canonical document (a proposal document: every
// path a plugin proposed, about 300 bytes each, tens of megabytes at 100,000
// paths): as one zstd frame. The documents repeat their keys and, for the
// paths that do not change, each digest twice, so a fast level keeps about an
// eighth of the bytes, and writing them (WAL, fsync, checkpoint) was most of
// what storing cost (docs/spec/store-schema.md, schema version 10).
//
// A stored value that does not begin with zstd's frame magic is the document
// itself, as every row before schema version 10 holds it: a canonical JSON
// document begins with `{`, never with the magic, so the two cannot be
// confused.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "dot/base/byte_stream.h"
#include "dot/base/result.h"
#include "dot/store/error_kinds.h"

namespace dot::store::detail {

// A document packed as it is written, piece by piece, into one zstd frame
// whose header declares the size promised up front (so that it unpacks
// like pack_document's), hashed on the way: the document itself is never
// held whole (a proposal document of 100,000 paths is 30 MB; its frame
// about 4). Errors (Code::Store kind "packed_document"): zstd failing (out
// of memory), or finish() after other than exactly `bytes` were written.
class DocumentPacker final : public ByteSink {
 public:
  static Result<DocumentPacker> start(std::uint64_t bytes);
  DocumentPacker(DocumentPacker&& other) noexcept;
  DocumentPacker& operator=(DocumentPacker&&) = delete;
  ~DocumentPacker() override;
  Status write(std::string_view piece) override;
  std::uint64_t written() const noexcept;  // the bytes given so far
  struct Packed {
    std::string frame;
    std::string sha256;  // lowercase hex of the document
  };
  Result<Packed> finish();

 private:
  DocumentPacker() = default;
  Status pump(std::string_view piece, bool last);
  struct State;
  std::unique_ptr<State> state_;
};

// One zstd frame of `document`, its size written in the frame header (a
// DocumentPacker given the document in one piece). Errors as DocumentPacker's.
Result<std::string> pack_document(std::string_view document);

// What `write` hands over, promised as `bytes` bytes, as the store keeps
// it: packed as it comes when `pack`, else as it is; with its SHA-256. The
// one check of a document a caller writes in pieces: the writer's own error
// is returned as it is, another length refused as `kind` ("`what` has N
// bytes, not the M promised"); the caller compares the digest with its id.
struct Written {
  std::string stored;  // the frame, or the document
  std::string sha256;  // lowercase hex of the document
};
Result<Written> take_written(std::uint64_t bytes, bool pack, const std::function<Status(ByteSink&)>& write,
                             store::ErrorKind kind, std::string_view what);

// The document a stored value holds: the value itself when it is not a zstd
// frame; otherwise exactly one frame whose header declares its size, at most
// `max_bytes` and not zero, expanded to exactly that size. Errors: Code::Store
// kind "packed_document" naming what is wrong (several frames, no declared
// size, a size over `max_bytes`, a corrupt or truncated frame); nothing is
// allocated beyond `max_bytes`.
Result<std::string> unpack_document(std::string_view stored, std::size_t max_bytes);
// The same document handed to `out` in pieces of at most 128 KiB as it
// unpacks (a plan of 100,000 operations is read without its 30 MB of
// text): the same checks and errors, found before or as the pieces go out,
// and `out`'s own error as it is. What `out` got before an error is to be
// discarded.
Status unpack_document_to(std::string_view stored, std::size_t max_bytes, ByteSink& out);

}  // namespace dot::store::detail
