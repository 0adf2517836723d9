// The RAII layer over the SQLite C API: DOT_E_STORE errors, cached statements, transactions (sqlite.h).
#include "sqlite.h"
#include "dot/store/error_kinds.h"

#include <fmt/format.h>

namespace dot::store::detail {

Stmt::~Stmt() {
  if (s_) {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
}

Stmt& Stmt::bind(int i, std::int64_t v) {
  sqlite3_bind_int64(s_, i, v);
  return *this;
}
Stmt& Stmt::bind(int i, std::string_view text) {
  sqlite3_bind_text64(s_, i, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return *this;
}
Stmt& Stmt::bind_blob(int i, std::string_view bytes) {
  // A zero-length blob must stay a blob, not NULL: bind an explicit empty one.
  if (bytes.empty())
    sqlite3_bind_zeroblob(s_, i, 0);
  else
    sqlite3_bind_blob64(s_, i, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::bind_blob_borrowed(int i, std::string_view bytes) {
  if (bytes.empty()) return bind_blob(i, bytes);
  sqlite3_bind_blob64(s_, i, bytes.data(), bytes.size(), SQLITE_STATIC);
  return *this;
}
Stmt& Stmt::bind_null(int i) {
  sqlite3_bind_null(s_, i);
  return *this;
}
Stmt& Stmt::bind_opt(int i, std::string_view text) { return text.empty() ? bind_null(i) : bind(i, text); }

Result<bool> Stmt::step() {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->error(rc, "query");
}

Status Stmt::run() {
  for (;;) {
    DOT_ASSIGN_OR_RETURN(bool row, step());
    if (!row) return {};
  }
}

bool Stmt::is_null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
std::int64_t Stmt::i64(int col) const { return sqlite3_column_int64(s_, col); }
std::string Stmt::text(int col) const { return std::string(text_view(col)); }

std::string_view Stmt::text_view(int col) const {
  const unsigned char* p = sqlite3_column_text(s_, col);
  if (!p) return {};
  return {reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(s_, col))};
}
std::string Stmt::blob(int col) const { return std::string(blob_view(col)); }

std::string_view Stmt::blob_view(int col) const {
  const void* p = sqlite3_column_blob(s_, col);
  if (!p) return {};
  return {static_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(s_, col))};
}

Db::~Db() { close(); }

void Db::close() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  cache_.clear();
  if (db_) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
  }
}

Status Db::open(const std::string& path, bool create, int busy_timeout_ms) {
  path_ = path;
  busy_timeout_ms_ = busy_timeout_ms;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_NOFOLLOW;
  if (create) flags |= SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    Error e = error(rc, "open");
    close();
    return e;
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, busy_timeout_ms);
  // The file is data an attacker may have edited, never code: SQL stored in
  // its schema (views, triggers, defaults, CHECKs) may not call functions or
  // virtual tables with side effects (trusted_schema off), and no statement
  // can corrupt the file behind SQLite's back (defensive: no writable_schema,
  // no writes to sqlite_dbpage or shadow tables). Refuse to go on without them.
  int defensive = 0;
  int trusted = 1;
  if (sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, &defensive) != SQLITE_OK || defensive != 1 ||
      sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, &trusted) != SQLITE_OK || trusted != 0) {
    close();
    return make_error(store::ErrorKind::Defensive,
                      fmt::format("{}: SQLite refused defensive mode or trusted_schema=OFF", path));
  }
  return {};
}

namespace {
// What a primary result code means to the user, and its kind; a code not
// listed is a plain SQLite error. SQLITE_BUSY and SQLITE_LOCKED are not
// here: their cause names the busy timeout (Db::error).
struct PrimaryCause {
  int primary;
  ErrorKind kind;
  std::string_view cause;
};
constexpr PrimaryCause kPrimaryCauses[] = {
    {SQLITE_CORRUPT, ErrorKind::Corrupt, "the database is corrupt"},
    {SQLITE_NOTADB, ErrorKind::NotSqlite, "not a SQLite database"},
    {SQLITE_READONLY, ErrorKind::ReadOnly, "the database is read-only"},
    {SQLITE_CANTOPEN, ErrorKind::CannotOpen, "the database cannot be opened"},
    {SQLITE_FULL, ErrorKind::Full, "the disk is full"},
    {SQLITE_IOERR, ErrorKind::IoStore, "an I/O error"},
    {SQLITE_CONSTRAINT, ErrorKind::Constraint, "a constraint failed"},
};
}  // namespace

Error Db::error(int rc, std::string_view what) const {
  const int primary = rc & 0xff;
  ErrorKind kind = ErrorKind::Sqlite;
  std::string cause = "a SQLite error";
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) {
    kind = ErrorKind::LockedDb;
    cause = fmt::format("locked by another process past the busy timeout ({} ms)", busy_timeout_ms_);
  }
  for (const PrimaryCause& c : kPrimaryCauses) {
    if (c.primary != primary) continue;
    kind = c.kind;
    cause = c.cause;
  }
  const char* msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  return make_error(kind, fmt::format("{}: {} during {} (SQLite {}: {})", path_, cause, what, rc, msg ? msg : "?"));
}

Status Db::exec(const char* sql, std::string_view what) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK) return error(rc, what);
  return {};
}

Result<Stmt> Db::prepare(const char* sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) return Stmt(*this, it->second);
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr);
  if (rc != SQLITE_OK) return error(rc, "prepare");
  cache_.emplace(sql, s);
  return Stmt(*this, s);
}

Result<std::int64_t> Db::query_int(const char* sql, std::string_view what) {
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql, -1, &s, nullptr);
  if (rc != SQLITE_OK) return error(rc, what);
  rc = sqlite3_step(s);
  std::int64_t v = 0;
  if (rc == SQLITE_ROW) v = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return error(rc, what);
  return v;
}

Result<std::string> Db::query_text(const char* sql, std::string_view what) {
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql, -1, &s, nullptr);
  if (rc != SQLITE_OK) return error(rc, what);
  rc = sqlite3_step(s);
  std::string v;
  if (rc == SQLITE_ROW) {
    const unsigned char* p = sqlite3_column_text(s, 0);
    if (p) v = reinterpret_cast<const char*>(p);
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return error(rc, what);
  return v;
}

Result<WriteTxn> WriteTxn::begin(Db& db) {
  DOT_TRY(db.exec("BEGIN IMMEDIATE", "begin write transaction"));
  return WriteTxn(db);
}

WriteTxn::~WriteTxn() {
  if (open_) sqlite3_exec(db_->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

Status WriteTxn::commit() {
  Status st = db_->exec("COMMIT", "commit");
  if (!st.ok()) return st;  // the destructor rolls back what is left
  open_ = false;
  return {};
}

Result<ReadTxn> ReadTxn::begin(Db& db) {
  DOT_TRY(db.exec("BEGIN DEFERRED", "begin read transaction"));
  return ReadTxn(db);
}

ReadTxn::~ReadTxn() {
  if (open_) sqlite3_exec(db_->handle(), "COMMIT", nullptr, nullptr, nullptr);
}

}  // namespace dot::store::detail
