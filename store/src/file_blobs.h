#pragma once
// The streamed files of version-2 plans (schema version 4): artifacts and
// backups of up to kMaxFileBlobBytes each, kMaxPlanFileBytes per plan, each
// a row of file_artifact / file_backup keyed by (txn, operation index). The
// bytes go through SQLite's incremental blob I/O (a zeroblob of the claimed
// size is inserted, then filled) in chunks of at most kFileChunkBytes, so a
// plan's bytes are never in memory: peak memory is one chunk, whatever the
// plan holds. SHA-256 is computed while the bytes stream, both ways.
// Not a public header.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/byte_stream.h"
#include "dot/base/result.h"
#include "dot/store/records.h"
#include "sqlite.h"

namespace dot::store::detail {

inline constexpr std::size_t kFileChunkBytes = std::size_t{1} << 20;

// "file_artifact" or "file_backup".
const char* file_table(FileKind kind) noexcept;
std::string_view file_kind_name(FileKind kind) noexcept;  // "artifact" | "backup"

// The shape rules of a plan's streamed files before anything is written:
// each index below `operations`, strictly ascending; exists with a 64-hex
// digest (or, a backup of an absent target, size 0 and no digest); each at
// most kMaxFileBlobBytes; together at most kMaxPlanFileBytes.
// Code::ArtifactMismatch naming `who` and the index. FileShapes judges the
// files one at a time in list order (a list made as it is read is never
// held); check_file_shapes is it over a list.
class FileShapes {
 public:
  FileShapes(std::size_t operations, FileKind kind, std::string_view who)
      : operations_(operations), kind_(kind), who_(who) {}
  Status next(const FileBlob& f);

 private:
  std::size_t operations_;
  FileKind kind_;
  std::string_view who_;
  std::optional<std::uint32_t> last_;  // the index of the file before
  std::uint64_t total_ = 0;
};
Status check_file_shapes(const std::vector<FileBlob>& files, std::size_t operations, FileKind kind,
                         std::string_view who);

// Inserts the row of `blob` for transaction `id` and fills it from the
// descriptor `open` gives: exactly blob.size bytes hashing to blob.sha256,
// else Code::ArtifactMismatch (a file that is shorter, grew past its claim
// while read, or differs). Inside the caller's write transaction: a failure
// leaves it to roll back.
Status insert_file(Db& db, TxnId id, FileKind kind, const FileBlob& blob, const FileOpener& open, std::string_view who);

// What streaming one stored blob found.
struct StreamedBlob {
  std::uint64_t length = 0;  // the blob's length in the row
  std::string sha256;        // the digest of those bytes
};
// Streams the blob column `bytes` of row `rowid` of `table` to `out` (null:
// only hash it) in bounded chunks.
Result<StreamedBlob> stream_blob(Db& db, const char* table, std::int64_t rowid, ByteSink* out);

// The stored files of one transaction (metadata, ascending index) with
// their rowids.
struct StoredFile {
  FileBlob blob;
  std::int64_t rowid = 0;
};
Result<std::vector<StoredFile>> stored_files(Db& db, TxnId id, FileKind kind);
// The stored file of operation `index`, if there is one.
Result<std::optional<StoredFile>> stored_file(Db& db, TxnId id, FileKind kind, std::uint32_t index);

}  // namespace dot::store::detail
