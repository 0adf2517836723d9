#pragma once
// A thin RAII layer over the SQLite C API for the store: a connection that
// turns every failure into DOT_E_STORE naming the file and the cause, cached
// prepared statements, and an IMMEDIATE transaction guard.

#include <sqlite3.h>

#include <concepts>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "dot/base/result.h"

namespace dot::store::detail {

class Db;

// Parameter values for Stmt::bind_all and Db::run whose SQL type is not the
// one their C++ type binds as: bytes as a BLOB, text that is NULL when empty.
struct AsBlob {
  std::string_view bytes;
};
struct NullIfEmpty {
  std::string_view text;
};

// A prepared statement borrowed from the connection's cache; reset and
// unbound when the handle goes away.
class Stmt {
 public:
  Stmt(Db& db, sqlite3_stmt* s) : db_(&db), s_(s) {}
  ~Stmt();
  Stmt(Stmt&& o) noexcept : db_(o.db_), s_(o.s_) { o.s_ = nullptr; }
  Stmt& operator=(Stmt&&) = delete;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, std::int64_t v);
  Stmt& bind(int i, std::string_view text);  // TEXT
  Stmt& bind_blob(int i, std::string_view bytes);
  // A blob SQLite reads in place instead of copying (SQLITE_STATIC): for
  // the large ones (a plan of 100,000 paths is about 23 MB of canonical
  // JSON). `bytes` must outlive this Stmt, whose destructor clears it.
  Stmt& bind_blob_borrowed(int i, std::string_view bytes);
  Stmt& bind_null(int i);
  Stmt& bind_opt(int i, std::string_view text);  // NULL when empty
  // `args...` to ?1, ?2, ... in that order (an integer of any width as
  // INTEGER, a string as TEXT, AsBlob, NullIfEmpty), so that no statement
  // writes its parameter numbers out by hand.
  template <typename... Args>
  Stmt& bind_all(const Args&... args) {
    int i = 1;
    (bind_one(i++, args), ...);
    return *this;
  }

  // true: a row is ready; false: done.
  Result<bool> step();
  // Runs to completion (for statements without rows).
  Status run();

  bool is_null(int col) const;
  std::int64_t i64(int col) const;
  std::string text(int col) const;            // "" for NULL
  std::string_view text_view(int col) const;  // the same in place, valid until the next step
  std::string blob(int col) const;            // "" for NULL
  // The same bytes in place, valid until the next step (a packed plan text
  // of megabytes is read without a copy).
  std::string_view blob_view(int col) const;
  // Columns first, first + 1, ... into `out...` in that order (an integer
  // by i64, a string by text), so that a row is read in the order its
  // SELECT names the columns, with no index written twice.
  template <typename... Out>
  void columns(int first, Out&... out) const {
    int col = first;
    (column(col++, out), ...);
  }

 private:
  template <std::integral T>
  void bind_one(int i, T v) {
    bind(i, static_cast<std::int64_t>(v));
  }
  void bind_one(int i, std::string_view text) { bind(i, text); }
  void bind_one(int i, AsBlob b) { bind_blob(i, b.bytes); }
  void bind_one(int i, NullIfEmpty t) { bind_opt(i, t.text); }
  void column(int col, std::int64_t& out) const { out = i64(col); }
  void column(int col, std::string& out) const { out = text(col); }

  Db* db_;
  sqlite3_stmt* s_;
};

class Db {
 public:
  Db() = default;
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Opens an existing file read-write (never creates it) or, with `create`,
  // a new one that must not exist.
  Status open(const std::string& path, bool create, int busy_timeout_ms);
  void close();

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }
  int busy_timeout_ms() const { return busy_timeout_ms_; }

  // DOT_E_STORE naming the file and the cause of `rc`, with `what` saying
  // which step failed.
  Error error(int rc, std::string_view what) const;

  Status exec(const char* sql, std::string_view what);
  Result<Stmt> prepare(const char* sql);
  // Prepares `sql` with `args...` bound to ?1, ?2, ... (Stmt::bind_all),
  // ready to step through its rows.
  template <typename... Args>
  Result<Stmt> query(const char* sql, const Args&... args) {
    DOT_ASSIGN_OR_RETURN(auto s, prepare(sql));
    s.bind_all(args...);
    return s;
  }
  // The same, run to completion: the one way a statement without rows is
  // written.
  template <typename... Args>
  Status run(const char* sql, const Args&... args) {
    DOT_ASSIGN_OR_RETURN(auto s, query(sql, args...));
    return s.run();
  }
  // First column of the first row as an integer (PRAGMAs).
  Result<std::int64_t> query_int(const char* sql, std::string_view what);
  Result<std::string> query_text(const char* sql, std::string_view what);

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
  int busy_timeout_ms_ = 0;
  // Keyed by the SQL literal's address: every statement is a string literal.
  std::map<const char*, sqlite3_stmt*> cache_;
};

// BEGIN IMMEDIATE ... COMMIT; rolls back on destruction unless committed.
class WriteTxn {
 public:
  static Result<WriteTxn> begin(Db& db);
  WriteTxn(WriteTxn&& o) noexcept : db_(o.db_), open_(o.open_) { o.open_ = false; }
  WriteTxn& operator=(WriteTxn&&) = delete;
  ~WriteTxn();
  Status commit();

 private:
  explicit WriteTxn(Db& db) : db_(&db), open_(true) {}
  Db* db_;
  bool open_;
};

// Read transaction so a multi-statement read sees one snapshot.
class ReadTxn {
 public:
  static Result<ReadTxn> begin(Db& db);
  ReadTxn(ReadTxn&& o) noexcept : db_(o.db_), open_(o.open_) { o.open_ = false; }
  ReadTxn& operator=(ReadTxn&&) = delete;
  ~ReadTxn();

 private:
  explicit ReadTxn(Db& db) : db_(&db), open_(true) {}
  Db* db_;
  bool open_;
};

}  // namespace dot::store::detail
