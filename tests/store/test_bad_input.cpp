// Databases we must refuse: not ours, newer, truncated, a garbage page, not
// SQLite, read-only, locked past the busy timeout. Each is DOT_E_STORE naming
// the file and the cause, exit 1 from the CLI, and the file is left as it was.
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fstream>

#include "dot/store/root.h"
#include "helpers.h"
#include "run_cli.h"

namespace dot::store {
namespace {

using testing::TempDir;

void sql(const std::string& path, const std::string& text) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

std::string file_digest(const std::string& path) { return sha256_hex(testing::slurp(path)); }

class StoreBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = init_root(t / "r");
    ASSERT_TRUE(r.ok()) << r.error().line();
    layout = r->layout;
    // A few transactions so the tables span several pages.
    auto s = Store::open(layout.database);
    ASSERT_TRUE(s.ok());
    for (int i = 0; i < 40; ++i) {
      auto id = s->begin_proposal({"org.dot.hello", testing::hex64('d'), 0});
      ASSERT_TRUE(id.ok());
      auto st = s->seal(*id, testing::make_seal(i));
      ASSERT_TRUE(st.ok()) << st.error().line();
    }
  }

  // Runs `inspect list`, `store check` and (unless the damage is only found
  // by reading the damaged page) `store prune` on the damaged root; each must
  // fail with DOT_E_STORE naming the database and `cause`, and leave it
  // unchanged.
  void expect_refused(const std::string& cause, bool at_open = true) {
    std::string before = file_digest(layout.database);
    std::vector<std::vector<std::string>> commands = {{"inspect", "list", "--root", layout.root},
                                                      {"store", "check", "--root", layout.root}};
    if (at_open) commands.push_back({"store", "prune", "--root", layout.root, "--keep", "0"});
    for (std::vector<std::string> args : commands) {
      args.insert(args.begin(), testing::dot_core());
      auto r = testing::run_program(args, t.path());
      EXPECT_EQ(r.exit_code, 1) << args[1] << ": " << r.err << r.out;
      EXPECT_EQ(r.err.rfind("DOT_E_STORE: ", 0), 0u) << args[1] << ": " << r.err;
      EXPECT_NE(r.err.find(layout.database), std::string::npos) << r.err;
      EXPECT_NE(r.err.find(cause), std::string::npos) << args[1] << ": " << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
    EXPECT_EQ(file_digest(layout.database), before) << "the database was modified";
  }

  TempDir t;
  RootLayout layout;
};

TEST_F(StoreBadInput, NotOurs) {
  ::unlink(layout.database.c_str());
  sql(layout.database, "CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('mine');");
  expect_refused("not a dot-core store");
  auto s = Store::open(layout.database);
  ASSERT_ERR(s, Code::Store);
  EXPECT_EQ(s.error().kind, "not_ours");
}

TEST_F(StoreBadInput, EmptyFileIsNotOurs) {
  ::truncate(layout.database.c_str(), 0);
  expect_refused("empty file");
}

TEST_F(StoreBadInput, NewerSchemaVersion) {
  sql(layout.database, "PRAGMA user_version = 99;");
  expect_refused("schema version 99 is newer");
  auto s = Store::open(layout.database);
  ASSERT_ERR(s, Code::Store);
  EXPECT_EQ(s.error().kind, "newer_schema");
}

TEST_F(StoreBadInput, Truncated) {
  struct stat st{};
  ASSERT_EQ(::stat(layout.database.c_str(), &st), 0);
  ASSERT_GT(st.st_size, 8192);
  ASSERT_EQ(::truncate(layout.database.c_str(), st.st_size / 2), 0);
  expect_refused("truncated");
}

TEST_F(StoreBadInput, TruncatedInsideTheHeader) {
  ASSERT_EQ(::truncate(layout.database.c_str(), 50), 0);
  expect_refused("truncated");
}

TEST_F(StoreBadInput, GarbagePage) {
  std::int64_t page = 0;
  {
    auto s = Store::open(layout.database);
    ASSERT_OK(s);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(layout.database.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT rootpage FROM sqlite_schema WHERE name = 'txn'", -1, &q, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  page = sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  sqlite3_close(db);
  ASSERT_GT(page, 1);
  std::fstream f(layout.database, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp((page - 1) * 4096);
  std::string garbage(4096, '\0');
  for (std::size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 7919 + 13) & 0xff);
  f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  f.close();
  // SQLite finds a bad page when it reads it, not at open: list and check
  // read this one (prune, with nothing finished to prune, does not).
  expect_refused("corrupt", /*at_open=*/false);
}

TEST_F(StoreBadInput, NotSqliteAtAll) {
  { std::ofstream(layout.database, std::ios::trunc) << "{\"this\":\"is json, not a database\"}\n"; }
  expect_refused("not a SQLite database");
}

TEST_F(StoreBadInput, MissingDatabase) {
  ::unlink(layout.database.c_str());
  auto r = testing::run_program({testing::dot_core(), "inspect", "list", "--root", layout.root}, t.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("DOT_E_STORE: ", 0), 0u) << r.err;
  auto s = Store::open(layout.database);
  ASSERT_ERR(s, Code::Store);
  EXPECT_EQ(s.error().kind, "missing");
}

TEST_F(StoreBadInput, ReadOnlyForThisUserIsReadButNeverWritten) {
  // Root ignores permission bits, so run as nobody against a root-owned
  // database that nobody may read but not write: the read-only commands
  // read it; a command that writes is refused, naming the database.
  ASSERT_EQ(::chmod(layout.root.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(layout.state_dir.c_str(), 0755), 0);
  for (const char* suffix : {"", "-wal", "-shm"})
    ASSERT_EQ(::chmod((layout.database + suffix).c_str(), 0644), 0) << suffix;
  ASSERT_EQ(::chmod(layout.lock_file.c_str(), 0644), 0);
  ASSERT_EQ(::chmod(t.path().c_str(), 0777), 0);
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch to another user";
  std::string before = file_digest(layout.database);
  auto as_nobody = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                               testing::dot_core()});
    args.insert(args.end(), {"--root", layout.root});
    return testing::run_program(args, t.path());
  };
  for (std::vector<std::string> reader : {std::vector<std::string>{"inspect", "list"},
                                          std::vector<std::string>{"inspect", "show", "txn-1"}}) {
    auto r = as_nobody(reader);
    EXPECT_EQ(r.exit_code, 0) << reader[0] << " " << reader[1] << ": " << r.err << r.out;
    EXPECT_EQ(r.err, "") << reader[0];
  }
  auto r = as_nobody({"store", "prune", "--keep", "0"});
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_EQ(r.err.rfind("DOT_E_STORE: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(layout.lock_file), std::string::npos) << r.err;
  EXPECT_EQ(file_digest(layout.database), before);
}

// A second process holding SQLite's exclusive lock; the child waits on a
// pipe so the test controls when it lets go.
struct LockHolder {
  pid_t pid = -1;
  int release_fd = -1;

  explicit LockHolder(const std::string& path) {
    int ready[2], release[2];
    EXPECT_EQ(::pipe(ready), 0);
    EXPECT_EQ(::pipe(release), 0);
    pid = ::fork();
    if (pid == 0) {
      // Only the parent may hold the release pipe's write end, or the child
      // would never see it close.
      ::close(ready[0]);
      ::close(release[1]);
      sqlite3* db = nullptr;
      if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) ::_exit(2);
      if (sqlite3_exec(db, "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; "
                           "UPDATE root SET created_at_ms = created_at_ms;",
                       nullptr, nullptr, nullptr) != SQLITE_OK)
        ::_exit(3);
      char c = 1;
      (void)!::write(ready[1], &c, 1);
      (void)!::read(release[0], &c, 1);
      sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      sqlite3_close(db);
      ::_exit(0);
    }
    ::close(ready[1]);
    ::close(release[0]);
    char c = 0;
    EXPECT_EQ(::read(ready[0], &c, 1), 1) << "the lock holder did not start";
    ::close(ready[0]);
    release_fd = release[1];
  }
  ~LockHolder() {
    ::close(release_fd);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
};

TEST_F(StoreBadInput, LockedPastTheBusyTimeout) {
  std::string before = file_digest(layout.database);
  {
    LockHolder holder(layout.database);
    OpenOptions o;
    o.busy_timeout = std::chrono::milliseconds(100);
    auto s = Store::open(layout.database, o);
    ASSERT_ERR(s, Code::Store);
    EXPECT_EQ(s.error().kind, "locked");
    EXPECT_NE(s.error().detail.find("busy timeout (100 ms)"), std::string::npos) << s.error().detail;
    EXPECT_NE(s.error().detail.find(layout.database), std::string::npos);
    // The command line waits its default busy timeout, then gives up cleanly.
    auto r = testing::run_program({testing::dot_core(), "inspect", "list", "--root", layout.root}, t.path());
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.err.rfind("DOT_E_STORE: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("locked by another process past the busy timeout"), std::string::npos) << r.err;
  }
  EXPECT_EQ(file_digest(layout.database), before);
  ASSERT_OK(Store::open(layout.database));
}

TEST_F(StoreBadInput, WriterBlockedPastTheBusyTimeoutChangesNothing) {
  OpenOptions o;
  o.busy_timeout = std::chrono::milliseconds(100);
  auto s = Store::open(layout.database, o);
  ASSERT_OK(s);
  auto before = s->count();
  ASSERT_OK(before);
  {
    sqlite3* other = nullptr;
    ASSERT_EQ(sqlite3_open(layout.database.c_str(), &other), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
    auto id = s->begin_proposal({"org.dot.hello", testing::hex64('d'), 0});
    ASSERT_ERR(id, Code::Store);
    EXPECT_EQ(id.error().kind, "locked");
    sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(other);
  }
  auto after = s->count();
  ASSERT_OK(after);
  EXPECT_EQ(*after, *before);
}

TEST_F(StoreBadInput, SymlinkedDatabaseIsRefused) {
  ASSERT_EQ(::rename(layout.database.c_str(), (layout.state_dir + "/real.db").c_str()), 0);
  ASSERT_EQ(::symlink("real.db", layout.database.c_str()), 0);
  auto s = Store::open(layout.database);
  ASSERT_ERR(s, Code::Store);
}

}  // namespace
}  // namespace dot::store
