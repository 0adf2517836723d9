// The streamed artifact and backup files of version-2 plans (file_blobs.h).
#include "file_blobs.h"
#include "dot/store/error_kinds.h"

#include <cerrno>
#include <cstring>
#include <memory>

#include <unistd.h>

#include <fmt/format.h>

#include "dot/base/sha256.h"

namespace dot::store::detail {
namespace {

// An open incremental-blob handle, closed on every path.
class BlobHandle {
 public:
  static Result<BlobHandle> open(Db& db, const char* table, std::int64_t rowid, bool write) {
    BlobHandle h;
    int rc = sqlite3_blob_open(db.handle(), "main", table, "bytes", rowid, write ? 1 : 0, &h.blob_);
    if (rc != SQLITE_OK) return db.error(rc, fmt::format("opening {} row {} for blob I/O", table, rowid));
    return h;
  }
  BlobHandle() = default;
  BlobHandle(BlobHandle&& o) noexcept : blob_(std::exchange(o.blob_, nullptr)) {}
  BlobHandle& operator=(BlobHandle&&) = delete;
  ~BlobHandle() {
    if (blob_) sqlite3_blob_close(blob_);
  }
  sqlite3_blob* get() const { return blob_; }

 private:
  sqlite3_blob* blob_ = nullptr;
};

Error mismatch(std::string detail) { return make_error(store::ErrorKind::File, std::move(detail)); }

}  // namespace

const char* file_table(FileKind kind) noexcept { return kind == FileKind::Artifact ? "file_artifact" : "file_backup"; }

std::string_view file_kind_name(FileKind kind) noexcept { return kind == FileKind::Artifact ? "artifact" : "backup"; }

Status FileShapes::next(const FileBlob& f) {
  const std::string_view what = file_kind_name(kind_);
  if (f.index >= operations_)
    return mismatch(
        fmt::format("{}: {} for operation {} of a plan with {} operations", who_, what, f.index, operations_));
  if (last_ && f.index <= *last_)
    return mismatch(
        fmt::format("{}: {} for operation {} after one for operation {}: not ascending", who_, what, f.index, *last_));
  last_ = f.index;
  if (!f.exists && (kind_ == FileKind::Artifact || f.size != 0 || !f.sha256.empty()))
    return mismatch(fmt::format("{}: {} {} is absent but has a size or digest", who_, what, f.index));
  if (f.exists && !is_sha256_hex(f.sha256))
    return mismatch(fmt::format("{}: {} {} has no 64-hex digest", who_, what, f.index));
  if (f.size > kMaxFileBlobBytes)
    return mismatch(
        fmt::format("{}: {} {} has {} bytes, more than {}", who_, what, f.index, f.size, kMaxFileBlobBytes));
  total_ += f.size;  // at most 10^5 * 2^24: no wrap
  if (total_ > kMaxPlanFileBytes)
    return mismatch(
        fmt::format("{}: the {}s together pass {} bytes at operation {}", who_, what, kMaxPlanFileBytes, f.index));
  return {};
}

Status check_file_shapes(const std::vector<FileBlob>& files, std::size_t operations, FileKind kind,
                         std::string_view who) {
  FileShapes shapes(operations, kind, who);
  for (const FileBlob& f : files) DOT_TRY(shapes.next(f));
  return {};
}

Status insert_file(Db& db, TxnId id, FileKind kind, const FileBlob& blob, const FileOpener& open,
                   std::string_view who) {
  const std::string_view what = file_kind_name(kind);
  {
    // zeroblob(size): the row is allocated at its final length, then filled
    // in place; the bytes never pass through one buffer.
    DOT_ASSIGN_OR_RETURN(auto s, kind == FileKind::Artifact
                                     ? db.prepare("INSERT INTO file_artifact (txn_id, idx, size, sha256, bytes) "
                                                  "VALUES (?1, ?2, ?3, ?4, zeroblob(?3))")
                                     : db.prepare("INSERT INTO file_backup (txn_id, idx, present, size, sha256, "
                                                  "bytes) VALUES (?1, ?2, ?5, ?3, ?4, zeroblob(?3))"));
    s.bind(1, id).bind(2, static_cast<std::int64_t>(blob.index)).bind(3, static_cast<std::int64_t>(blob.size));
    s.bind(4, blob.sha256);
    if (kind == FileKind::Backup) s.bind(5, std::int64_t{blob.exists ? 1 : 0});
    DOT_TRY(s.run());
  }
  if (!blob.exists) return {};
  const std::int64_t rowid = sqlite3_last_insert_rowid(db.handle());
  DOT_ASSIGN_OR_RETURN(UniqueFd fd, open(blob));
  DOT_ASSIGN_OR_RETURN(BlobHandle handle, BlobHandle::open(db, file_table(kind), rowid, true));
  // One byte more than claimed is read, so a file that grew is seen as such.
  const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(kFileChunkBytes, blob.size + 1));
  auto buf = std::make_unique<char[]>(chunk);
  Sha256 hash;
  std::uint64_t done = 0;
  for (;;) {
    ssize_t n = ::read(fd.get(), buf.get(), chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return make_error(store::ErrorKind::Read,
                        fmt::format("{}: reading {} {}: {}", who, what, blob.index, std::strerror(errno)));
    if (n == 0) break;
    const auto got = static_cast<std::uint64_t>(n);
    if (got > blob.size - done)
      return mismatch(fmt::format("{}: {} {} holds more than its {} bytes", who, what, blob.index, blob.size));
    int rc = sqlite3_blob_write(handle.get(), buf.get(), static_cast<int>(n), static_cast<int>(done));
    if (rc != SQLITE_OK) return db.error(rc, fmt::format("writing {} {}", what, blob.index));
    hash.update(std::string_view(buf.get(), got));
    done += got;
  }
  if (done != blob.size)
    return mismatch(fmt::format("{}: {} {} has {} bytes, not its {}", who, what, blob.index, done, blob.size));
  const std::string digest = to_hex(hash.finish());
  if (digest != blob.sha256)
    return mismatch(fmt::format("{}: {} {} hashes to {}, not its {}", who, what, blob.index, digest, blob.sha256));
  return {};
}

Result<StreamedBlob> stream_blob(Db& db, const char* table, std::int64_t rowid, ByteSink* out) {
  DOT_ASSIGN_OR_RETURN(BlobHandle handle, BlobHandle::open(db, table, rowid, false));
  StreamedBlob r;
  r.length = static_cast<std::uint64_t>(sqlite3_blob_bytes(handle.get()));
  const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(kFileChunkBytes, r.length));
  auto buf = std::make_unique<char[]>(std::max<std::size_t>(chunk, 1));
  Sha256 hash;
  for (std::uint64_t done = 0; done < r.length;) {
    const auto n = static_cast<int>(std::min<std::uint64_t>(chunk, r.length - done));
    int rc = sqlite3_blob_read(handle.get(), buf.get(), n, static_cast<int>(done));
    if (rc != SQLITE_OK) return db.error(rc, fmt::format("reading {} row {}", table, rowid));
    std::string_view bytes(buf.get(), static_cast<std::size_t>(n));
    hash.update(bytes);
    if (out) DOT_TRY(out->write(bytes));
    done += static_cast<std::uint64_t>(n);
  }
  r.sha256 = to_hex(hash.finish());
  return r;
}

namespace {

StoredFile read_stored_file(Stmt& s) {
  StoredFile f;
  f.blob.index = static_cast<std::uint32_t>(s.i64(0));
  f.blob.exists = s.i64(1) != 0;
  f.blob.size = static_cast<std::uint64_t>(s.i64(2));
  f.blob.sha256 = s.text(3);
  f.rowid = s.i64(4);
  return f;
}

}  // namespace

Result<std::vector<StoredFile>> stored_files(Db& db, TxnId id, FileKind kind) {
  DOT_ASSIGN_OR_RETURN(auto s, kind == FileKind::Artifact
                                   ? db.prepare("SELECT idx, 1, size, sha256, rowid FROM file_artifact "
                                                "WHERE txn_id = ?1 ORDER BY idx")
                                   : db.prepare("SELECT idx, present, size, sha256, rowid FROM file_backup "
                                                "WHERE txn_id = ?1 ORDER BY idx"));
  s.bind(1, id);
  std::vector<StoredFile> out;
  for (;;) {
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    out.push_back(read_stored_file(s));
  }
  return out;
}

Result<std::optional<StoredFile>> stored_file(Db& db, TxnId id, FileKind kind, std::uint32_t index) {
  // One primary-key lookup: apply reads thousands of files one by one.
  DOT_ASSIGN_OR_RETURN(auto s, kind == FileKind::Artifact
                                   ? db.prepare("SELECT idx, 1, size, sha256, rowid FROM file_artifact "
                                                "WHERE txn_id = ?1 AND idx = ?2")
                                   : db.prepare("SELECT idx, present, size, sha256, rowid FROM file_backup "
                                                "WHERE txn_id = ?1 AND idx = ?2"));
  s.bind(1, id).bind(2, static_cast<std::int64_t>(index));
  DOT_ASSIGN_OR_RETURN(bool row, s.step());
  if (!row) return std::optional<StoredFile>();
  return std::optional<StoredFile>(read_stored_file(s));
}

}  // namespace dot::store::detail
