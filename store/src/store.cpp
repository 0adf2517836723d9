// Opening, creating and changing the store. Queries are in store_query.cpp,
// the integrity check and prune in store_check.cpp.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "dot/base/fd.h"
#include "dot/base/sha256.h"
#include "dot/base/utf8.h"
#include "dot/store/error_kinds.h"
#include "file_blobs.h"
#include "packed_document.h"
#include "schema.h"
#include "store_impl.h"

namespace dot::store {

// Several members take a parameter named `detail` (an error's detail).
using detail::AsBlob;
using detail::NullIfEmpty;

namespace {

Error store_error(const std::string& path, ErrorKind kind, std::string_view cause) {
  return make_error(kind, fmt::format("{}: {}", path, cause));
}

std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

// Looks at the file before SQLite does, so that a file which is not ours is
// refused without SQLite touching it (opening a WAL database, or an empty
// file, would otherwise write to it), and a truncated file is named as such
// instead of surfacing later as a corrupt page.
Status precheck_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) {
    int err = errno;
    if (err == ENOENT)
      return store_error(path, store::ErrorKind::Missing, "no database here (create one with `dot-core init`)");
    if (err == ELOOP) return store_error(path, store::ErrorKind::NotOurs, "the database path is a symlink");
    if (err == EACCES) return store_error(path, store::ErrorKind::ReadOnly, "permission denied");
    return store_error(path, store::ErrorKind::CannotOpen, std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return store_error(path, store::ErrorKind::CannotOpen, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return store_error(path, store::ErrorKind::NotOurs, "not a regular file");
  if (st.st_size == 0) return store_error(path, store::ErrorKind::NotOurs, "an empty file, not a dot-core store");
  unsigned char h[100];
  ssize_t n = ::pread(fd.get(), h, sizeof h, 0);
  if (n < 0) return store_error(path, store::ErrorKind::IoStore, std::strerror(errno));
  static constexpr char kMagic[] = "SQLite format 3";  // 16 bytes with the NUL
  if (n < 16 || std::memcmp(h, kMagic, 16) != 0)
    return store_error(path, store::ErrorKind::NotSqlite, "not a SQLite database (no SQLite header)");
  if (n < 100) return store_error(path, store::ErrorKind::Truncated, "truncated inside the SQLite header");
  std::uint32_t page_size = (std::uint32_t{h[16]} << 8) | h[17];
  if (page_size == 1) page_size = 65536;
  if (page_size < 512 || (page_size & (page_size - 1)) != 0)
    return store_error(path, store::ErrorKind::Corrupt, fmt::format("invalid page size {} in the header", page_size));
  // The in-header size is valid when the change counter equals the
  // version-valid-for number. A WAL with frames may hold pages not yet in the
  // file (a checkpoint interrupted half-way), so only judge without one.
  bool size_valid = std::memcmp(h + 24, h + 92, 4) == 0;
  std::uint64_t pages = be32(h + 28);
  struct stat wal {};
  std::string wal_path = path + "-wal";
  bool wal_has_frames = ::stat(wal_path.c_str(), &wal) == 0 && wal.st_size > 0;
  if (size_valid && !wal_has_frames && pages > 0) {
    auto expected = pages * page_size;
    if (static_cast<std::uint64_t>(st.st_size) < expected)
      return store_error(path, store::ErrorKind::Truncated,
                         fmt::format("truncated: the file has {} bytes, its header says {} pages of {} bytes",
                                     st.st_size, pages, page_size));
  }
  return {};
}

}  // namespace

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string effect_idempotency_key(std::string_view plan_id, std::uint32_t index) {
  return sha256_hex(fmt::format("{}:commit:{}", plan_id, index));
}

bool is_lower_hex(std::string_view s) noexcept {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string row_name(TxnId id, std::string_view plan_id) {
  if (plan_id.empty()) return fmt::format("transaction {}", id);
  return fmt::format("transaction {} (plan {})", id, plan_id);
}

namespace {
constexpr std::string_view kBuildSuffix = ".new";  // create builds the store beside its final name
}  // namespace

Status check_database_path_length(const std::string& db_path) {
  // What SQLite will see: the folder's real path (symlinks resolved, as the
  // VFS resolves them) and the file name, or the path as given while the
  // folder does not exist yet.
  std::string seen = db_path;
  auto slash = db_path.find_last_of('/');
  if (slash != std::string::npos) {
    std::string folder = slash == 0 ? "/" : db_path.substr(0, slash);
    // realpath cannot return a path longer than PATH_MAX.
    char resolved[PATH_MAX];
    if (::realpath(folder.c_str(), resolved) != nullptr) {
      std::string_view base(resolved);
      seen = fmt::format("{}{}{}", base, base == "/" ? "" : "/", db_path.substr(slash + 1));
    }
  }
  sqlite3_vfs* vfs = sqlite3_vfs_find(nullptr);
  constexpr std::size_t kLongestSuffix = std::string_view("-journal").size();
  const std::size_t limit = vfs != nullptr && vfs->mxPathname > static_cast<int>(kLongestSuffix)
                                ? static_cast<std::size_t>(vfs->mxPathname) - kLongestSuffix
                                : 0;
  const std::size_t longest = seen.size() + kBuildSuffix.size();
  if (longest <= limit) return {};
  return make_error(store::ErrorKind::PathTooLong,
                    fmt::format("{}: the database path is {} bytes (with \"{}\"); SQLite opens at most {}: "
                                "choose a shorter root path",
                                seen, longest, kBuildSuffix, limit));
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

const std::string& Store::path() const noexcept { return impl_->db.path(); }
int Store::opened_version() const noexcept { return impl_->opened_version; }
void Store::set_commit_hook(CommitHook hook) { impl_->options.commit_hook = std::move(hook); }

Result<Store> Store::open(const std::string& db_path, const OpenOptions& options) {
  DOT_TRY(check_database_path_length(db_path));
  DOT_TRY(precheck_file(db_path));
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  detail::Db& db = impl->db;
  DOT_TRY(db.open(db_path, false, static_cast<int>(options.busy_timeout.count())));
  // SQLite opens a file this user may not write read-only. That is enough
  // for a reader (`inspect`, `status`, `store check` of someone else's root);
  // a writer, or a reader that would first have to migrate, is refused.
  const bool file_read_only = sqlite3_db_readonly(db.handle(), "main") == 1;
  if (file_read_only && !options.read_only)
    return store_error(db_path, store::ErrorKind::ReadOnly, "the database file is read-only");
  DOT_ASSIGN_OR_RETURN(std::int64_t app_id, db.query_int("PRAGMA application_id", "reading the application id"));
  if (app_id != kApplicationId)
    return store_error(db_path, store::ErrorKind::NotOurs,
                       fmt::format("not a dot-core store (application_id {:#x}, expected {:#x})",
                                   static_cast<std::uint32_t>(app_id), static_cast<std::uint32_t>(kApplicationId)));
  DOT_ASSIGN_OR_RETURN(std::int64_t version, db.query_int("PRAGMA user_version", "reading the schema version"));
  if (version > kSchemaVersion)
    return store_error(
        db_path, store::ErrorKind::NewerSchema,
        fmt::format("schema version {} is newer than this dot-core supports ({})", version, kSchemaVersion));
  if (version < 1)
    return store_error(db_path, store::ErrorKind::NotOurs, fmt::format("invalid schema version {}", version));
  impl->opened_version = static_cast<int>(version);

  // The -wal and -shm files stay when the last connection closes. Otherwise
  // every read-only command on an idle root created both files, sized and
  // mapped the -shm, and deleted them again on close (a measurable share of
  // `inspect show`; docs/startup.md). They hold no state of their own: a
  // writer's close checkpoints and, because journal_size_limit is set,
  // truncates the WAL to zero bytes, so the next opener has nothing to recover.
  int persist = 1;
  sqlite3_file_control(db.handle(), "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
  // A read-only open writes only to migrate an older schema; then it is set
  // up like any writer.
  if (options.read_only && version >= kSchemaVersion) {
    // A reader never checkpoints, so closing it never writes the database
    // file, and it needs none of the write-side settings: it reads whatever
    // journal mode the file is in (a writer puts it in WAL mode).
    sqlite3_db_config(db.handle(), SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  } else {
    if (file_read_only)
      return store_error(db_path, store::ErrorKind::ReadOnly,
                         fmt::format("the database file is read-only and its schema version {} must first be "
                                     "migrated to {} by a user who may write it",
                                     version, kSchemaVersion));
    DOT_ASSIGN_OR_RETURN(std::string mode, db.query_text("PRAGMA journal_mode = WAL", "enabling WAL"));
    if (mode != "wal")
      return store_error(db_path, store::ErrorKind::Journal, fmt::format("cannot enable WAL (journal mode {})", mode));
    // Any limit makes the close truncate a persistent WAL (above); a large one
    // keeps a busy writer reusing the WAL's space instead of re-growing it
    // after every checkpoint.
    DOT_TRY(db.exec("PRAGMA journal_size_limit = 67108864", "limiting the WAL size"));
    DOT_TRY(db.exec("PRAGMA synchronous = FULL", "setting synchronous=FULL"));
    DOT_TRY(db.exec("PRAGMA foreign_keys = ON", "enabling foreign keys"));
  }

  if (version < kSchemaVersion) {
    DOT_ASSIGN_OR_RETURN(auto txn, detail::WriteTxn::begin(db));
    // Another process may have migrated between our read and our lock.
    DOT_ASSIGN_OR_RETURN(std::int64_t now_version, db.query_int("PRAGMA user_version", "reading the schema version"));
    if (now_version < kSchemaVersion) {
      DOT_TRY(detail::migrate(db, static_cast<int>(now_version)));
      DOT_TRY(txn.commit());
      impl->fire(fmt::format("store.migrate.{}", kSchemaVersion));
    }
  }
  if (options.read_only) DOT_TRY(db.exec("PRAGMA query_only = 1", "making the connection read-only"));
  return Store(std::move(impl));
}

Result<Store> Store::create(const std::string& db_path, std::string_view root_id, const OpenOptions& options) {
  if (root_id.size() != 64 || !is_lower_hex(root_id))
    return make_error(store::ErrorKind::RootId, "a root id is 64 lowercase hex characters");
  struct stat st {};
  if (::lstat(db_path.c_str(), &st) == 0)
    return store_error(db_path, store::ErrorKind::DatabaseExists,
                       "a file already exists here; refusing to overwrite it");
  // Build the database beside its final name and rename it into place, so the
  // final name only ever holds a complete store.
  DOT_TRY(check_database_path_length(db_path));
  std::string tmp = db_path + std::string(kBuildSuffix);
  {
    UniqueFd fd(::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd) return store_error(tmp, store::ErrorKind::CannotOpen, std::strerror(errno));
  }
  auto build = [&]() -> Status {
    detail::Db db;
    DOT_TRY(db.open(tmp, false, static_cast<int>(options.busy_timeout.count())));
    DOT_TRY(db.exec("PRAGMA journal_mode = DELETE", "setting the journal mode"));
    DOT_TRY(db.exec("PRAGMA synchronous = FULL", "setting synchronous=FULL"));
    // Before the first table: freed pages can then be given back to the
    // file system (store prune, a dropped no-change proposal).
    DOT_TRY(db.exec("PRAGMA auto_vacuum = INCREMENTAL", "setting incremental auto-vacuum"));
    DOT_ASSIGN_OR_RETURN(auto txn, detail::WriteTxn::begin(db));
    std::string app = fmt::format("PRAGMA application_id = {}", kApplicationId);
    DOT_TRY(db.exec(app.c_str(), "setting the application id"));
    DOT_TRY(db.exec(detail::kSchemaV1, "creating the schema"));
    DOT_TRY(detail::migrate(db, 1));
    DOT_TRY(db.run("INSERT INTO root (id, root_id, created_at_ms) VALUES (1, ?1, ?2)", root_id, now_ms()));
    DOT_TRY(txn.commit());
    return {};
  };
  Status built = build();
  if (!built.ok()) {
    ::unlink(tmp.c_str());
    return std::move(built).error();
  }
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, db_path.c_str(), RENAME_NOREPLACE) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return store_error(db_path, store::ErrorKind::CannotOpen,
                       fmt::format("cannot move the new database into place: {}", std::strerror(err)));
  }
  std::string dir = db_path.substr(0, db_path.find_last_of('/') == std::string::npos ? 0 : db_path.find_last_of('/'));
  if (dir.empty()) dir = ".";
  UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dfd || ::fsync(dfd.get()) != 0)
    return store_error(dir, store::ErrorKind::IoStore,
                       fmt::format("cannot fsync the state folder: {}", std::strerror(errno)));
  DOT_ASSIGN_OR_RETURN(Store store, open(db_path, options));
  store.impl_->fire("store.init");
  return store;
}

Status Store::Impl::writable() const {
  if (options.read_only)
    return make_error(store::ErrorKind::ReadOnlyHandle, fmt::format("{}: opened read-only", db.path()));
  return {};
}

Result<State> Store::Impl::state_of(TxnId id) {
  DOT_ASSIGN_OR_RETURN(auto s, db.query("SELECT state FROM txn WHERE id = ?1", id));
  DOT_ASSIGN_OR_RETURN(bool row, s.step());
  if (!row) return make_error(Code::NotFound, fmt::format("no transaction {}", id));
  std::string name = s.text(0);
  auto st = state_from_name(name);
  if (!st)
    return make_error(store::ErrorKind::State,
                      fmt::format("{}: transaction {} has unknown state \"{}\"", db.path(), id, name));
  return *st;
}

Status Store::Impl::add_event(TxnId id, State state, std::int64_t at_ms, std::string_view code,
                              std::string_view detail) {
  return db.run("INSERT INTO event (txn_id, state, at_ms, code, detail) VALUES (?1, ?2, ?3, ?4, ?5)", id,
                state_name(state), at_ms, NullIfEmpty{code}, NullIfEmpty{detail});
}

Result<std::string> Store::root_id() {
  DOT_ASSIGN_OR_RETURN(auto s, impl_->db.prepare("SELECT root_id FROM root WHERE id = 1"));
  DOT_ASSIGN_OR_RETURN(bool row, s.step());
  if (!row) return store_error(path(), store::ErrorKind::Corrupt, "the root row is missing");
  return s.text(0);
}

namespace {
PluginRecord plugin_row(detail::Stmt& s) {
  PluginRecord r;
  r.plugin_id = s.text(0);
  r.sha256 = s.text(1);
  r.manifest = s.blob(2);
  r.registered_at_ms = s.i64(3);
  return r;
}
}  // namespace

Result<std::optional<PluginRecord>> Store::plugin(std::string_view plugin_id) {
  DOT_ASSIGN_OR_RETURN(
      auto s, impl_->db.query("SELECT plugin_id, sha256, manifest, registered_at_ms FROM plugin WHERE plugin_id = ?1",
                              plugin_id));
  DOT_ASSIGN_OR_RETURN(bool row, s.step());
  if (!row) return std::optional<PluginRecord>{};
  return std::optional<PluginRecord>(plugin_row(s));
}

Result<std::vector<PluginRecord>> Store::plugins() {
  // BINARY collation: byte order of the UTF-8 ids.
  DOT_ASSIGN_OR_RETURN(
      auto s, impl_->db.prepare("SELECT plugin_id, sha256, manifest, registered_at_ms FROM plugin ORDER BY plugin_id"));
  std::vector<PluginRecord> out;
  while (true) {
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    out.push_back(plugin_row(s));
  }
  return out;
}

Status Store::register_plugin(const PluginRecord& record, bool replace) {
  DOT_TRY(impl_->writable());
  if (record.sha256.size() != 64 || !is_lower_hex(record.sha256))
    return make_error(store::ErrorKind::Sha256, "the plugin digest must be 64 lowercase hex characters");
  if (record.plugin_id.empty()) return make_error(store::ErrorKind::PluginId, "the plugin id is empty");
  auto& db = impl_->db;
  DOT_ASSIGN_OR_RETURN(auto txn, detail::WriteTxn::begin(db));
  {
    DOT_ASSIGN_OR_RETURN(auto s, db.query("SELECT plugin_id FROM plugin WHERE plugin_id = ?1", record.plugin_id));
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (row && !replace)
      return make_error(store::ErrorKind::Registered,
                        fmt::format("a plugin {} is already registered; replace it explicitly", s.text(0)));
  }
  DOT_TRY(
      db.run("INSERT OR REPLACE INTO plugin (plugin_id, sha256, manifest, registered_at_ms) VALUES (?1, ?2, ?3, ?4)",
             record.plugin_id, record.sha256, AsBlob{record.manifest}, now_ms()));
  DOT_TRY(txn.commit());
  impl_->fire("store.plugin");
  return {};
}

Result<TxnId> Store::begin_proposal(const ProposalStart& start) {
  DOT_TRY(impl_->writable());
  auto& db = impl_->db;
  std::int64_t at = start.started_at_ms ? start.started_at_ms : now_ms();
  DOT_ASSIGN_OR_RETURN(auto txn, detail::WriteTxn::begin(db));
  TxnId id = 0;
  {
    DOT_TRY(
        db.run("INSERT INTO txn (state, plugin_id, plugin_digest, created_at_ms, updated_at_ms) "
               "VALUES ('PROPOSING', ?1, ?2, ?3, ?3)",
               start.plugin_id, start.plugin_digest, at));
    id = sqlite3_last_insert_rowid(db.handle());
  }
  DOT_TRY(impl_->add_event(id, State::Proposing, at, {}, {}));
  DOT_TRY(txn.commit());
  impl_->fire("store.proposal.begin");
  return id;
}

namespace {

// A proposal's dot.log messages as the session accepted them (its rules,
// again, as a bound on what one row holds).
Status check_logs(const std::vector<LogRecord>& logs) {
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const LogRecord& l = logs[i];
    if (l.message.size() > 4096 || l.method.empty() ||
        !(l.level == "debug" || l.level == "info" || l.level == "warning" || l.level == "error"))
      return make_error(store::ErrorKind::Log, fmt::format("log message {} has a bad level, method or size", i));
  }
  return {};
}

Status insert_logs(detail::Db& db, TxnId id, const std::vector<LogRecord>& logs) {
  for (std::size_t i = 0; i < logs.size(); ++i) {
    DOT_TRY(db.run("INSERT INTO proposal_log (txn_id, seq, level, method, message) VALUES (?1, ?2, ?3, ?4, ?5)", id, i,
                   logs[i].level, logs[i].method, AsBlob{logs[i].message}));
  }
  return {};
}

// A plugin's stderr as its txn row keeps it (plugin_stderr, stderr_truncated):
// the first kMaxStderrBytes as a blob, NULL when it said nothing, bound at
// `i`, and at `i + 1` whether more was cut off.
void bind_plugin_stderr(detail::Stmt& s, int i, std::string_view plugin_stderr) {
  std::string_view kept = plugin_stderr.substr(0, kMaxStderrBytes);
  if (kept.empty())
    s.bind_null(i);
  else
    s.bind_blob(i, kept);
  s.bind(i + 1, plugin_stderr.size() > kMaxStderrBytes ? 1 : 0);
}

// A version-2 plan's files against its operation rows: exactly one per
// operation with an after digest, carrying that digest.
// The files are judged one at a time beside the rows (FileShapes), so that
// a plan whose files are made as they are read never lists them.
Status check_streamed_files(const SealInput& in, const std::string& path) {
  if (!in.artifacts.empty())
    return make_error(store::ErrorKind::Count, "a streamed plan carries its artifacts as files");
  const std::size_t total = in.files_total();
  if (total > 0 && !in.open_file)
    return make_error(store::ErrorKind::OpenFile, "a streamed plan's files need an opener");
  detail::FileShapes shapes(in.row_count(), FileKind::Artifact, path);
  std::size_t next = 0;
  std::optional<FileBlob> file;  // the next file, judged
  auto take_next = [&]() -> Status {
    file.reset();
    if (next == total) return {};
    file = in.file(next);
    return shapes.next(*file);
  };
  DOT_TRY(take_next());
  for (std::size_t i = 0; i < in.row_count(); ++i) {
    const SealRow row = in.row(i);
    const std::string_view after = row.after_sha256;
    const bool has_file = file && file->index == i;
    if (after.empty() != !has_file || (has_file && file->sha256 != after))
      return make_error(store::ErrorKind::Digest,
                        fmt::format("operation {} and its artifact disagree (after digest \"{}\")", i, after));
    if (has_file) {
      ++next;
      DOT_TRY(take_next());
    }
  }
  return {};
}

Status expect_state(const std::string& path, TxnId id, State actual, State wanted, std::string_view step) {
  if (actual == wanted) return {};
  return make_error(store::ErrorKind::IllegalTransition, fmt::format("{}: transaction {} is {}, {} needs {}", path, id,
                                                                     state_name(actual), step, state_name(wanted)));
}

}  // namespace

Status Store::set_proposal_id(TxnId id, std::string_view proposal_id, std::string_view document) {
  if (document.empty()) return set_proposal_id(id, proposal_id, 0, nullptr);
  return set_proposal_id(id, proposal_id, document.size(), [document](ByteSink& out) { return out.write(document); });
}

Status Store::set_proposal_id(TxnId id, std::string_view proposal_id, std::uint64_t bytes,
                              const DocumentWriter& write) {
  DOT_TRY(impl_->writable());
  if (proposal_id.size() != 64 || !is_lower_hex(proposal_id))
    return make_error(store::ErrorKind::ProposalId, "a proposal id is 64 lowercase hex characters");
  if (bytes > kMaxProposalBytes)
    return make_error(store::ErrorKind::ProposalDocument,
                      fmt::format("a proposal document of {} bytes is over {}", bytes, kMaxProposalBytes));
  std::string packed;
  if (write) {
    DOT_ASSIGN_OR_RETURN(
        detail::Written done,
        detail::take_written(bytes, true, write, store::ErrorKind::ProposalDocument, "the proposal document"));
    if (done.sha256 != proposal_id)
      return make_error(
          store::ErrorKind::ProposalDocument,
          fmt::format("the proposal document hashes to {}, not to the proposal id {}", done.sha256, proposal_id));
    packed = std::move(done.stored);
  }
  auto& db = impl_->db;
  DOT_ASSIGN_OR_RETURN(auto txn, detail::WriteTxn::begin(db));
  DOT_ASSIGN_OR_RETURN(State st, impl_->state_of(id));
  DOT_TRY(expect_state(path(), id, st, State::Proposing, "recording a proposal id"));
  DOT_ASSIGN_OR_RETURN(auto s,
                       db.query("UPDATE txn SET proposal_id = ?2, proposal = ?4, updated_at_ms = ?3 WHERE id = ?1", id,
                                proposal_id, now_ms()));
  if (packed.empty())
    s.bind_null(4);
  else
    s.bind_blob_borrowed(4, packed);
  DOT_TRY(s.run());
  DOT_TRY(txn.commit());
  impl_->fire("store.proposal.id");
  return {};
}

Status Store::abandon(TxnId id, const Abandonment& why, const std::vector<LogRecord>& logs) {
  DOT_TRY(impl_->writable());
  auto& db = impl_->db;
  DOT_TRY(check_logs(logs));
  DOT_ASSIGN_OR_RETURN(auto txn, detail::WriteTxn::begin(db));
  DOT_ASSIGN_OR_RETURN(State st, impl_->state_of(id));
  DOT_TRY(expect_state(path(), id, st, State::Proposing, "abandoning"));
  DOT_TRY(insert_logs(db, id, logs));
  std::int64_t at = now_ms();
  {
    DOT_ASSIGN_OR_RETURN(
        auto s,
        db.prepare("UPDATE txn SET state = 'ABANDONED', error_code = ?2, error_detail = ?3, plugin_stderr = ?4, "
                   "stderr_truncated = ?5, updated_at_ms = ?6, finished_at_ms = ?6 WHERE id = ?1"));
    s.bind(1, id).bind_opt(2, why.code).bind_opt(3, why.detail);
    bind_plugin_stderr(s, 4, why.plugin_stderr);
    DOT_TRY(s.bind(6, at).run());
  }
  DOT_TRY(impl_->add_event(id, State::Abandoned, at, why.code, why.detail));
  if (why.drop_proposal) {
    DOT_TRY(db.run("UPDATE txn SET proposal = NULL WHERE id = ?1", id));
    // The document's pages go back to the file system in the same
    // transaction (a no-op unless the store is in incremental mode).
    DOT_TRY(db.exec("PRAGMA incremental_vacuum", "returning the proposal's pages"));
  }
  DOT_TRY(txn.commit());
  impl_->fire("store.proposal.abandon");
  return {};
}

namespace {

Status check_blob(const Blob& b, std::size_t slot, std::string_view what) {
  if (b.slot != slot)
    return make_error(store::ErrorKind::Slot, fmt::format("{} {} is given for slot {}", what, slot, b.slot));
  if (b.bytes.size() > kMaxBlobBytes)
    return make_error(store::ErrorKind::Size,
                      fmt::format("{} {} has {} bytes, more than {}", what, slot, b.bytes.size(), kMaxBlobBytes));
  if (!b.exists) {
    if (!b.bytes.empty() || !b.sha256.empty())
      return make_error(store::ErrorKind::Absent, fmt::format("{} {} is absent but carries bytes", what, slot));
    return {};
  }
  std::string digest = sha256_hex(b.bytes);
  if (digest != b.sha256)
    return make_error(store::ErrorKind::Digest,
                      fmt::format("{} {}: bytes hash to {}, not {}", what, slot, digest, b.sha256));
  return {};
}

}  // namespace

namespace {

// What a seal is given, checked before the database is touched: the ids'
// form, the plan bytes against their id, one artifact per operation (or
// streamed files), the logs.
Status check_seal_input(const SealInput& in, const std::string& db_path) {
  if (in.plan_id.size() != 64 || !is_lower_hex(in.plan_id))
    return make_error(store::ErrorKind::PlanId, "a plan id is 64 lowercase hex characters");
  if (in.proposal_id.size() != 64 || !is_lower_hex(in.proposal_id))
    return make_error(store::ErrorKind::ProposalId, "a proposal id is 64 lowercase hex characters");
  if (in.streamed) {
    DOT_TRY(check_streamed_files(in, db_path));
  } else if (in.artifacts.size() != in.row_count() || in.files_total() != 0) {
    return make_error(store::ErrorKind::Count,
                      fmt::format("{} artifacts for {} operations", in.artifacts.size(), in.row_count()));
  }
  DOT_TRY(check_logs(in.logs));
  for (std::size_t i = 0; i < in.artifacts.size(); ++i) {
    if (!in.artifacts[i].exists)
      return make_error(store::ErrorKind::Absent, fmt::format("artifact {} is marked absent", i));
    DOT_TRY(check_blob(in.artifacts[i], i, "artifact"));
    if (in.artifacts[i].sha256 != in.row(i).after_sha256)
      return make_error(store::ErrorKind::Digest, fmt::format("artifact {} is not operation {}'s after digest", i, i));
  }
  return {};
}

// What plan.canonical holds, checked against plan_id: the plan bytes as
// they are under kPackedPlanBytes, packed from there on (written into the
// packer piece by piece when the caller writes them: never held whole).
Result<std::string> stored_plan_text(const SealInput& in) {
  const std::uint64_t bytes = in.write_canonical ? in.canonical_bytes : in.canonical_plan.size();
  auto whole = [&in](ByteSink& out) { return out.write(in.canonical_plan); };
  DOT_ASSIGN_OR_RETURN(detail::Written text, detail::take_written(bytes, bytes >= kPackedPlanBytes,
                                                                  in.write_canonical ? in.write_canonical : whole,
                                                                  store::ErrorKind::PlanId, "the plan text"));
  if (text.sha256 != in.plan_id)
    return make_error(store::ErrorKind::PlanId,
                      fmt::format("the plan bytes hash to {}, not to plan id {}", text.sha256, in.plan_id));
  return std::move(text.stored);
}

// The plan row (its text as stored_plan_text made it), one operation row
// per operation and (version 1) its artifact row, inside the caller's write
// transaction.
Status insert_plan_rows(detail::Db& db, TxnId id, const SealInput& in, std::string_view stored_text, std::int64_t at) {
  {
    DOT_ASSIGN_OR_RETURN(
        auto s,
        db.prepare(
            "INSERT INTO plan (txn_id, canonical, sealed_at_ms, effect_count, streamed) VALUES (?1, ?2, ?3, ?4, ?5)"));
    s.bind(1, id).bind_blob_borrowed(2, stored_text).bind(3, at);
    if (in.effect_count)
      s.bind(4, static_cast<std::int64_t>(*in.effect_count));
    else
      s.bind_null(4);
    DOT_TRY(s.bind(5, std::int64_t{in.streamed ? 1 : 0}).run());
  }
  for (std::size_t i = 0; i < in.row_count(); ++i) {
    const SealRow op = in.row(i);
    DOT_TRY(
        db.run("INSERT INTO operation (txn_id, slot, name, before_sha256, after_sha256) VALUES (?1, ?2, ?3, ?4, ?5)",
               id, i, op.name, op.before_sha256, op.after_sha256));
    if (in.streamed) continue;
    DOT_TRY(db.run("INSERT INTO artifact (txn_id, slot, bytes, sha256) VALUES (?1, ?2, ?3, ?4)", id, i,
                   AsBlob{in.artifacts[i].bytes}, in.artifacts[i].sha256));
  }
  return {};
}

}  // namespace

Status Store::seal(TxnId id, const SealInput& in) {
  DOT_TRY(impl_->writable());
  DOT_TRY(check_seal_input(in, path()));
  DOT_ASSIGN_OR_RETURN(std::string stored_text, stored_plan_text(in));
  auto& db = impl_->db;
  DOT_ASSIGN_OR_RETURN(auto txn, detail::WriteTxn::begin(db));
  DOT_ASSIGN_OR_RETURN(State st, impl_->state_of(id));
  DOT_TRY(expect_state(path(), id, st, State::Proposing, "sealing"));
  {
    DOT_ASSIGN_OR_RETURN(auto s, db.query("SELECT id FROM txn WHERE plan_id = ?1", in.plan_id));
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (row)
      return make_error(store::ErrorKind::DuplicatePlan,
                        fmt::format("plan {} is already stored as transaction {}", in.plan_id, s.i64(0)));
  }
  std::int64_t at = in.sealed_at_ms ? in.sealed_at_ms : now_ms();
  DOT_TRY(insert_plan_rows(db, id, in, stored_text, at));
  // Stored: its memory is the files' and the commit's (5 MB packed at 100,000 paths).
  std::string().swap(stored_text);
  // Each file streams from its descriptor into its row, checked as it goes;
  // any difference rolls the whole seal back.
  for (std::size_t k = 0; k < in.files_total(); ++k)
    DOT_TRY(detail::insert_file(db, id, FileKind::Artifact, in.file(k), in.open_file, row_name(id, in.plan_id)));
  DOT_TRY(insert_logs(db, id, in.logs));
  {
    DOT_ASSIGN_OR_RETURN(
        auto s,
        db.query("UPDATE txn SET state = 'SEALED', plan_id = ?2, proposal_id = ?3, operation_count = ?4, "
                 "plugin_stderr = ?5, stderr_truncated = ?6, updated_at_ms = ?7, finished_at_ms = ?7 WHERE id = ?1",
                 id, in.plan_id, in.proposal_id, in.row_count()));
    bind_plugin_stderr(s, 5, in.plugin_stderr);
    DOT_TRY(s.bind(7, at).run());
  }
  DOT_TRY(impl_->add_event(id, State::Sealed, at, {}, {}));
  DOT_TRY(txn.commit());
  impl_->fire("store.seal");
  return {};
}

Status Store::Impl::begin_prepare(TxnId id, std::size_t backups, bool streamed) {
  DOT_ASSIGN_OR_RETURN(State st, state_of(id));
  DOT_TRY(expect_state(db.path(), id, st, State::Sealed, "preparing"));
  DOT_ASSIGN_OR_RETURN(
      auto s,
      db.query("SELECT txn.operation_count, plan.streamed FROM txn JOIN plan ON plan.txn_id = txn.id WHERE txn.id = ?1",
               id));
  DOT_ASSIGN_OR_RETURN(bool row, s.step());
  if (!row || s.i64(0) != static_cast<std::int64_t>(backups))
    return make_error(store::ErrorKind::Count,
                      fmt::format("{} backups for transaction {} with {} operations", backups, id, row ? s.i64(0) : 0));
  // Each version keeps its backups where its loads look for them.
  if ((s.i64(1) != 0) != streamed)
    return make_error(store::ErrorKind::BackupKind,
                      fmt::format("transaction {}: {} backups for a {} plan", id, streamed ? "streamed" : "inline",
                                  s.i64(1) != 0 ? "streamed" : "version-1"));
  return {};
}

Status Store::Impl::finish_prepare(TxnId id, detail::WriteTxn& txn) {
  std::int64_t at = now_ms();
  DOT_TRY(db.run("UPDATE txn SET state = 'PREPARED', updated_at_ms = ?2 WHERE id = ?1", id, at));
  DOT_TRY(add_event(id, State::Prepared, at, {}, {}));
  DOT_TRY(txn.commit());
  fire("store.prepare");
  return {};
}

Status Store::prepare(TxnId id, const std::vector<Blob>& backups) {
  DOT_TRY(impl_->writable());
  auto& db = impl_->db;
  for (std::size_t i = 0; i < backups.size(); ++i) DOT_TRY(check_blob(backups[i], i, "backup"));
  DOT_ASSIGN_OR_RETURN(auto txn, detail::WriteTxn::begin(db));
  DOT_TRY(impl_->begin_prepare(id, backups.size(), false));
  for (std::size_t i = 0; i < backups.size(); ++i) {
    DOT_TRY(db.run("INSERT INTO backup (txn_id, slot, present, bytes, sha256) VALUES (?1, ?2, ?3, ?4, ?5)", id, i,
                   backups[i].exists, AsBlob{backups[i].bytes}, backups[i].sha256));
  }
  return impl_->finish_prepare(id, txn);
}

Status Store::prepare_files(TxnId id, const std::vector<FileBlob>& backups, const FileOpener& open) {
  return prepare_files(
      id, backups.size(), [&backups](std::size_t i) { return backups[i]; }, open);
}

Status Store::prepare_files(TxnId id, std::size_t count, const std::function<FileBlob(std::size_t)>& backup_at,
                            const FileOpener& open) {
  DOT_TRY(impl_->writable());
  auto& db = impl_->db;
  const std::string who = fmt::format("{}: transaction {}", path(), id);
  DOT_ASSIGN_OR_RETURN(auto txn, detail::WriteTxn::begin(db));
  DOT_TRY(impl_->begin_prepare(id, count, true));
  // Each backup judged, then streamed from its descriptor into its row,
  // checked as it goes; any fault rolls the whole step back (still SEALED).
  detail::FileShapes shapes(count, FileKind::Backup, who);
  for (std::size_t i = 0; i < count; ++i) {
    const FileBlob b = backup_at(i);
    DOT_TRY(shapes.next(b));
    if (b.index != i)
      return make_error(store::ErrorKind::Slot,
                        fmt::format("{}: backup {} is given for operation {}", who, i, b.index));
    DOT_TRY(detail::insert_file(db, id, FileKind::Backup, b, open, who));
  }
  return impl_->finish_prepare(id, txn);
}

Status Store::transition(TxnId id, State to, std::string_view code, std::string_view detail) {
  DOT_TRY(impl_->writable());
  if (to == State::Sealed || to == State::Prepared || to == State::Proposing)
    return make_error(
        store::ErrorKind::Transition,
        fmt::format("{} is entered through its own call (begin_proposal, seal, prepare)", state_name(to)));
  auto& db = impl_->db;
  DOT_ASSIGN_OR_RETURN(auto txn, detail::WriteTxn::begin(db));
  DOT_ASSIGN_OR_RETURN(State from, impl_->state_of(id));
  if (!is_legal_transition(from, to))
    return make_error(store::ErrorKind::IllegalTransition, fmt::format("{}: transaction {} cannot go from {} to {}",
                                                                       path(), id, state_name(from), state_name(to)));
  if (from == State::Committed && to == State::Done) {
    // DONE means every effect the plan asked for succeeded.
    DOT_ASSIGN_OR_RETURN(
        auto s, db.query("SELECT plan.effect_count, (SELECT count(*) FROM effect WHERE effect.txn_id = plan.txn_id AND "
                         "effect.state = 'SUCCEEDED') FROM plan WHERE plan.txn_id = ?1",
                         id));
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) return make_error(store::ErrorKind::NoPlan, fmt::format("transaction {} has no plan row", id));
    if (!s.is_null(0) && s.i64(1) != s.i64(0))
      return make_error(
          store::ErrorKind::EffectsUnfinished,
          fmt::format("transaction {}: {} of {} effects succeeded; DONE needs all", id, s.i64(1), s.i64(0)));
  }
  std::int64_t at = now_ms();
  DOT_TRY(
      db.run("UPDATE txn SET state = ?2, updated_at_ms = ?3, "
             "error_code = CASE WHEN ?4 IS NULL THEN error_code ELSE ?4 END, "
             "error_detail = CASE WHEN ?4 IS NULL THEN error_detail ELSE ?5 END, "
             "finished_at_ms = CASE WHEN ?2 = 'ABANDONED' THEN ?3 ELSE finished_at_ms END WHERE id = ?1",
             id, state_name(to), at, NullIfEmpty{code}, NullIfEmpty{detail}));
  DOT_TRY(impl_->add_event(id, to, at, code, detail));
  // Entering COMMITTED makes this transaction's writes and removes count
  // for ownership; entering ROLLING_BACK from COMMITTED or DONE stops them
  // counting (PREPARED and COMMITTING never counted). Same SQLite
  // transaction as the state change: path_owner never disagrees with it.
  if (to == State::Committed || (to == State::RollingBack && (from == State::Committed || from == State::Done)))
    DOT_TRY(impl_->refresh_owners(id));
  DOT_TRY(txn.commit());
  impl_->fire(fmt::format("store.transition.{}", state_name(to)));
  return {};
}

Status Store::Impl::refresh_owners(TxnId id) {
  // Re-derives the owner of exactly the paths transaction `id` touches from
  // derived_owner (the schema's one statement of the rule), path by path:
  // `WHERE path = ?` reaches into the view, so each costs its own
  // operation_by_name range (a statement over all of them would not).
  std::vector<std::string> names;
  {
    DOT_ASSIGN_OR_RETURN(auto s, db.query("SELECT name FROM operation WHERE txn_id = ?1", id));
    for (;;) {
      DOT_ASSIGN_OR_RETURN(bool row, s.step());
      if (!row) break;
      names.push_back(s.text(0));
    }
  }
  for (const auto& name : names) {
    DOT_TRY(db.run("DELETE FROM path_owner WHERE path = ?1", name));
    DOT_TRY(
        db.run("INSERT INTO path_owner (path, plugin_id, txn_id) SELECT path, plugin_id, txn_id FROM derived_owner "
               "WHERE path = ?1",
               name));
  }
  return {};
}

Result<std::vector<std::string>> Store::owned_paths(std::string_view plugin_id) {
  // path_owner_by_plugin: one index range, already in BINARY (byte) order.
  DOT_ASSIGN_OR_RETURN(auto s,
                       impl_->db.query("SELECT path FROM path_owner WHERE plugin_id = ?1 ORDER BY path", plugin_id));
  std::vector<std::string> out;
  for (;;) {
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    out.push_back(s.text(0));
  }
  return out;
}

Result<std::vector<PathOwner>> Store::owners_of(std::span<const std::string_view> paths,
                                                std::string_view except_plugin) {
  DOT_ASSIGN_OR_RETURN(auto snapshot, detail::ReadTxn::begin(impl_->db));
  std::vector<PathOwner> out;
  for (const std::string_view p : paths) {
    // The connection's statement cache hands back the same compiled statement.
    DOT_ASSIGN_OR_RETURN(
        auto s, impl_->db.query("SELECT plugin_id, txn_id FROM path_owner WHERE path = ?1 AND plugin_id IS NOT ?2", p,
                                except_plugin));
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (row) out.push_back(PathOwner{std::string(p), s.text(0), s.i64(1)});
  }
  return out;
}

namespace {

// One released path inside the caller's write transaction: path_owner row
// out, path_release row in (replacing an older release of the path), stat
// cache entry out.
Status release_one(detail::Db& db, const PathOwner& owner, std::int64_t at) {
  DOT_TRY(db.run("DELETE FROM path_owner WHERE path = ?1", owner.path));
  DOT_TRY(
      db.run("INSERT OR REPLACE INTO path_release (path, plugin_id, txn_id, released_at_ms) VALUES (?1, ?2, ?3, ?4)",
             owner.path, owner.plugin_id, owner.txn, at));
  return db.run("DELETE FROM stat_cache WHERE path = ?1", owner.path);
}

}  // namespace

Result<std::vector<PathOwner>> Store::release_paths(const std::vector<std::string>& paths) {
  DOT_TRY(impl_->writable());
  auto& db = impl_->db;
  DOT_ASSIGN_OR_RETURN(auto txn, detail::WriteTxn::begin(db));
  std::vector<PathOwner> released;
  const std::int64_t at = now_ms();
  for (const auto& p : paths) {
    DOT_ASSIGN_OR_RETURN(auto s, db.query("SELECT plugin_id, txn_id FROM path_owner WHERE path = ?1", p));
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row)
      return make_error(store::ErrorKind::NotOwned,
                        fmt::format("no plugin manages \"{}\" (`status` lists what is managed)", shown(p)));
    released.push_back(PathOwner{p, s.text(0), s.i64(1)});
  }
  for (const auto& owner : released) DOT_TRY(release_one(db, owner, at));
  DOT_TRY(txn.commit());
  impl_->fire("store.release");
  return released;
}

Result<std::map<std::string, TxnId, std::less<>>> Store::released_paths() {
  DOT_ASSIGN_OR_RETURN(auto s, impl_->db.prepare("SELECT path, txn_id FROM path_release"));
  std::map<std::string, TxnId, std::less<>> out;
  for (;;) {
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    out.emplace(s.text(0), s.i64(1));
  }
  return out;
}

Result<std::vector<PathOwner>> Store::unregister_plugin(std::string_view plugin_id, bool release) {
  DOT_TRY(impl_->writable());
  auto& db = impl_->db;
  DOT_ASSIGN_OR_RETURN(auto txn, detail::WriteTxn::begin(db));
  {
    DOT_ASSIGN_OR_RETURN(auto s, db.query("SELECT 1 FROM plugin WHERE plugin_id = ?1", plugin_id));
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row)
      return make_error(store::ErrorKind::NoSuchPlugin,
                        fmt::format("no plugin is registered as {} (`status` lists the plugins)", shown(plugin_id)));
  }
  {
    // A sealed plan would be applied without its plugin; one in flight is
    // recover's to finish first.
    DOT_ASSIGN_OR_RETURN(auto s, db.query("SELECT id, plan_id, state FROM txn WHERE plugin_id = ?1 AND state IN "
                                          "('PROPOSING','SEALED','PREPARED','COMMITTING','COMMITTED','ROLLING_BACK') "
                                          "ORDER BY id LIMIT 1",
                                          plugin_id));
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (row)
      return make_error(store::ErrorKind::PluginBusy,
                        fmt::format("plugin {} has transaction {} {} ({}): apply or discard a sealed plan, "
                                    "recover one in flight, then unregister",
                                    shown(plugin_id), s.i64(0), s.text(1).substr(0, 12), s.text(2)));
  }
  std::vector<PathOwner> owned;
  {
    DOT_ASSIGN_OR_RETURN(auto s,
                         db.query("SELECT path, txn_id FROM path_owner WHERE plugin_id = ?1 ORDER BY path", plugin_id));
    for (;;) {
      DOT_ASSIGN_OR_RETURN(bool row, s.step());
      if (!row) break;
      owned.push_back(PathOwner{s.text(0), std::string(plugin_id), s.i64(1)});
    }
  }
  if (!owned.empty() && !release)
    return make_error(store::ErrorKind::PluginOwnsPaths,
                      fmt::format("plugin {} manages {} path(s), the first \"{}\": `unregister --forget` stops "
                                  "managing them and leaves the files as they are",
                                  shown(plugin_id), owned.size(), shown(owned.front().path)));
  const std::int64_t at = now_ms();
  for (const auto& owner : owned) DOT_TRY(release_one(db, owner, at));
  DOT_TRY(db.run("DELETE FROM plugin WHERE plugin_id = ?1", plugin_id));
  DOT_TRY(txn.commit());
  impl_->fire("store.unregister");
  return owned;
}

Status Store::note(TxnId id, std::string_view code, std::string_view detail) {
  DOT_TRY(impl_->writable());
  auto& db = impl_->db;
  DOT_ASSIGN_OR_RETURN(auto txn, detail::WriteTxn::begin(db));
  DOT_ASSIGN_OR_RETURN(State st, impl_->state_of(id));
  DOT_TRY(impl_->add_event(id, st, now_ms(), code, detail));
  DOT_TRY(txn.commit());
  impl_->fire("store.event");
  return {};
}

Result<EffectEntry> Store::effect_attempt(TxnId id, std::uint32_t index) {
  DOT_TRY(impl_->writable());
  auto& db = impl_->db;
  DOT_ASSIGN_OR_RETURN(auto txn, detail::WriteTxn::begin(db));
  DOT_ASSIGN_OR_RETURN(State st, impl_->state_of(id));
  DOT_TRY(expect_state(path(), id, st, State::Committed, "running an effect"));
  std::string plan_id;
  {
    DOT_ASSIGN_OR_RETURN(
        auto s,
        db.query(
            "SELECT plan.effect_count, txn.plan_id FROM plan JOIN txn ON txn.id = plan.txn_id WHERE plan.txn_id = ?1",
            id));
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) return make_error(store::ErrorKind::NoPlan, fmt::format("transaction {} has no plan row", id));
    if (s.is_null(0))
      return make_error(store::ErrorKind::PreCapability,
                        fmt::format("{}: a pre-capability plan has no effect ledger", row_name(id, s.text(1))));
    if (index >= s.i64(0))
      return make_error(store::ErrorKind::EffectIndex, fmt::format("{}: effect {} of a plan with {} effects",
                                                                   row_name(id, s.text(1)), index, s.i64(0)));
    plan_id = s.text(1);
  }
  {
    // Effects run in order: every earlier one must have succeeded.
    DOT_ASSIGN_OR_RETURN(
        auto s,
        db.query("SELECT count(*) FROM effect WHERE txn_id = ?1 AND idx < ?2 AND state = 'SUCCEEDED'", id, index));
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row || s.i64(0) != index)
      return make_error(
          store::ErrorKind::EffectOrder,
          fmt::format("{}: effect {} before every earlier effect succeeded", row_name(id, plan_id), index));
  }
  EffectEntry e;
  e.index = index;
  e.state = EffectState::Attempted;
  e.idempotency_key = effect_idempotency_key(plan_id, index);
  e.updated_at_ms = now_ms();
  {
    DOT_ASSIGN_OR_RETURN(auto s,
                         db.query("SELECT state, attempts FROM effect WHERE txn_id = ?1 AND idx = ?2", id, index));
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (row && s.text(0) == "SUCCEEDED")
      return make_error(store::ErrorKind::EffectDone,
                        fmt::format("{}: effect {} already succeeded", row_name(id, plan_id), index));
    e.attempts = row ? static_cast<std::uint32_t>(s.i64(1)) + 1 : 1;
  }
  DOT_TRY(
      db.run("INSERT OR REPLACE INTO effect (txn_id, idx, state, idempotency_key, attempts, updated_at_ms, code, "
             "detail) VALUES (?1, ?2, 'ATTEMPTED', ?3, ?4, ?5, NULL, NULL)",
             id, index, e.idempotency_key, e.attempts, e.updated_at_ms));
  DOT_TRY(txn.commit());
  impl_->fire(fmt::format("store.effect.{}.ATTEMPTED", index));
  return e;
}

Status Store::effect_finish(TxnId id, std::uint32_t index, EffectState outcome, std::string_view code,
                            std::string_view detail) {
  DOT_TRY(impl_->writable());
  if (outcome == EffectState::Attempted)
    return make_error(store::ErrorKind::Effect, "an effect finishes as SUCCEEDED or FAILED");
  auto& db = impl_->db;
  DOT_ASSIGN_OR_RETURN(auto txn, detail::WriteTxn::begin(db));
  DOT_ASSIGN_OR_RETURN(State st, impl_->state_of(id));
  DOT_TRY(expect_state(path(), id, st, State::Committed, "finishing an effect"));
  {
    DOT_ASSIGN_OR_RETURN(auto s, db.query("SELECT state FROM effect WHERE txn_id = ?1 AND idx = ?2", id, index));
    DOT_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row || s.text(0) != "ATTEMPTED")
      return make_error(store::ErrorKind::IllegalTransition,
                        fmt::format("{}: transaction {} effect {} is {}, not ATTEMPTED", path(), id, index,
                                    row ? s.text(0) : std::string("not attempted")));
  }
  DOT_TRY(
      db.run("UPDATE effect SET state = ?3, updated_at_ms = ?4, code = ?5, detail = ?6 WHERE txn_id = ?1 AND idx = ?2",
             id, index, effect_state_name(outcome), now_ms(), NullIfEmpty{code}, NullIfEmpty{detail}));
  DOT_TRY(txn.commit());
  impl_->fire(fmt::format("store.effect.{}.{}", index, effect_state_name(outcome)));
  return {};
}

}  // namespace dot::store
