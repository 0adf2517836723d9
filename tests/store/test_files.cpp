// Version-2 plans' streamed files (schema version 4): sealed from
// descriptors with SQLite blob I/O, read back streaming with their digest
// checked, verified by `check`, dropped by `prune`; dot.log messages kept in
// order with the proposal.
#include <sqlite3.h>
#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "helpers.h"
#include "dot/base/error_kinds.h"
#include "../common/test_error_kinds.h"

namespace dot::store {
namespace {

using testing::TempDir;

// A file's bytes behind a fresh descriptor per open (a memfd), as the stage
// reader gives them.
class Files {
 public:
  void put(std::uint32_t index, std::string bytes) { bytes_[index] = std::move(bytes); }
  FileOpener opener() {
    return [this](const FileBlob& b) -> Result<UniqueFd> {
      ++opened;
      UniqueFd fd(::memfd_create("file", MFD_CLOEXEC));
      if (!fd) return make_error(test::ErrorKind::Memfd, "memfd_create");
      const std::string& s = bytes_.at(b.index);
      for (std::size_t done = 0; done < s.size();) {
        ssize_t n = ::write(fd.get(), s.data() + done, s.size() - done);
        if (n <= 0) return make_error(base::ErrorKind::Write, "memfd write");
        done += static_cast<std::size_t>(n);
      }
      ::lseek(fd.get(), 0, SEEK_SET);
      return fd;
    };
  }
  int opened = 0;

 private:
  std::map<std::uint32_t, std::string> bytes_;
};

// Not text: every byte value, long enough to span several 1 MiB chunks.
std::string big_bytes(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 2654435761u) >> 13);
  return s;
}

class StoreFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Store::create(dir / "store.db", testing::hex64('a'));
    ASSERT_TRUE(s.ok()) << s.error().line();
    store.emplace(std::move(s).value());
  }

  // write a (0 bytes), remove b, write c/d (big): the files are 0 and 2.
  SealInput streamed_seal(const std::string& big) {
    SealInput in;
    in.proposal_id = sha256_hex("proposal v2");
    in.streamed = true;
    in.operations = {{"a", "", sha256_hex("")}, {"b", sha256_hex("old"), ""}, {"c/d", "", sha256_hex(big)}};
    in.files = {FileBlob{0, true, 0, sha256_hex("")}, FileBlob{2, true, big.size(), sha256_hex(big)}};
    files.put(0, "");
    files.put(2, big);
    in.open_file = files.opener();
    in.canonical_plan = "{\"plan\":\"v2\",\"version\":2}";
    in.plan_id = sha256_hex(in.canonical_plan);
    in.effect_count = 1;
    in.logs = {{"info", "first", "dot.plan"}, {"warning", "second \x1b[31m", "dot.materialize"}};
    return in;
  }

  // The same files made one at a time as the store reads them
  // (SealInput::file_at), the list form left empty.
  static void as_made(SealInput& in) {
    auto made = std::make_shared<std::vector<FileBlob>>(std::move(in.files));
    in.files.clear();
    in.file_count = made->size();
    in.file_at = [made](std::size_t k) { return (*made)[k]; };
  }

  // The file of operation `index` reads back as `bytes`, and the store checks clean.
  void expect_file_and_a_clean_store(TxnId id, FileKind kind, std::uint32_t index, const std::string& bytes) {
    StringSink out;
    ASSERT_OK(store->read_file(id, kind, index, out));
    EXPECT_TRUE(out.out == bytes);
    auto report = store->check();
    ASSERT_OK(report);
    EXPECT_TRUE(report->problems.empty()) << report->problems.front();
  }

  Result<TxnId> propose() {
    DOT_ASSIGN_OR_RETURN(TxnId id, store->begin_proposal({"org.example.files", testing::hex64('d'), 0}));
    DOT_TRY(store->set_proposal_id(id, sha256_hex("proposal v2")));
    return id;
  }

  void raw(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(store->path().c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }

  std::int64_t count(const std::string& table) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(store->path().c_str(), &db), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    std::string sql = "SELECT count(*) FROM " + table;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK);
    EXPECT_EQ(sqlite3_step(s), SQLITE_ROW);
    std::int64_t n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return n;
  }

  TempDir dir;
  std::optional<Store> store;
  Files files;
};

TEST_F(StoreFiles, SealsStreamsChecksAndPrunesFiles) {
  const std::string big = big_bytes((std::size_t{5} << 20) + 12345);
  auto id = propose();
  ASSERT_OK(id);
  SealInput in = streamed_seal(big);
  ASSERT_OK(store->seal(*id, in));
  EXPECT_EQ(files.opened, 2);

  auto loaded = store->load_sealed(*id);
  ASSERT_OK(loaded);
  EXPECT_TRUE(loaded->streamed);
  EXPECT_TRUE(loaded->artifacts.empty());
  EXPECT_EQ(loaded->files, in.files);

  StringSink out;
  ASSERT_OK(store->read_file(*id, FileKind::Artifact, 2, out));
  EXPECT_TRUE(out.out == big);
  StringSink empty;
  ASSERT_OK(store->read_file(*id, FileKind::Artifact, 0, empty));
  EXPECT_EQ(empty.out, "");
  StringSink none;
  ASSERT_ERR(store->read_file(*id, FileKind::Artifact, 1, none), Code::NotFound);

  auto detail = store->detail(*id);
  ASSERT_OK(detail);
  EXPECT_EQ(detail->logs, in.logs);

  auto clean = store->check();
  ASSERT_OK(clean);
  EXPECT_TRUE(clean->problems.empty()) << clean->problems.front();
  EXPECT_EQ(clean->blobs, 2u);

  // Pruned with the transaction's other bulk data.
  ASSERT_OK(store->transition(*id, State::Discarded));
  auto pruned = store->prune(0);
  ASSERT_OK(pruned);
  EXPECT_EQ(pruned->pruned, 1u);
  EXPECT_EQ(count("file_artifact"), 0);
  EXPECT_EQ(count("proposal_log"), 0);
  StringSink gone;
  ASSERT_ERR(store->read_file(*id, FileKind::Artifact, 2, gone), Code::NotFound);
  auto after = store->check();
  ASSERT_OK(after);
  EXPECT_TRUE(after->problems.empty()) << after->problems.front();
}

// Files made one at a time as the store reads them (how a plan of 100,000
// files is sealed) are stored exactly as the same files given as a list.
TEST_F(StoreFiles, FilesMadeAsTheyAreReadAreStoredAsAList) {
  const std::string big = big_bytes(std::size_t{3} << 20);
  auto id = propose();
  ASSERT_OK(id);
  SealInput in = streamed_seal(big);
  const std::vector<FileBlob> listed = in.files;
  as_made(in);
  ASSERT_OK(store->seal(*id, in));
  EXPECT_EQ(files.opened, 2);
  auto loaded = store->load_sealed(*id);
  ASSERT_OK(loaded);
  EXPECT_EQ(loaded->files, listed);
  expect_file_and_a_clean_store(*id, FileKind::Artifact, 2, big);
}

// Every difference between a file and its claim fails the seal as a whole:
// nothing of the plan is stored and the proposal is still PROPOSING.
TEST_F(StoreFiles, AFileThatDiffersFromItsClaimStoresNothing) {
  const std::string big = big_bytes(3 << 20);
  struct Case {
    const char* name;
    std::function<void(SealInput&)> change;
  };
  std::vector<Case> cases = {
      {"grew", [&](SealInput&) { files.put(2, big + "x"); }},
      {"shrank", [&](SealInput&) { files.put(2, big.substr(1)); }},
      {"changed", [&](SealInput&) { std::string b = big; b[b.size() / 2] ^= 1; files.put(2, b); }},
      {"digest is not the operation's", [&](SealInput& in) { in.files[1].sha256 = testing::hex64('e'); }},
      {"file for a remove", [&](SealInput& in) { in.files[1].index = 1; }},
      {"missing file", [&](SealInput& in) { in.files.pop_back(); }},
      {"over max_file_bytes", [&](SealInput& in) { in.files[1].size = kMaxFileBlobBytes + 1; }},
  };
  for (const auto& c : cases) {
    for (const bool made : {false, true}) {
      SCOPED_TRACE(fmt::format("{}{}", c.name, made ? ", files made as read" : ""));
      auto id = propose();
      ASSERT_OK(id);
      SealInput in = streamed_seal(big);
      c.change(in);
      if (made) as_made(in);
      ASSERT_ERR(store->seal(*id, in), Code::ArtifactMismatch);
      EXPECT_EQ(count("file_artifact"), 0);
      EXPECT_EQ(count("plan"), 0);
      EXPECT_EQ(count("proposal_log"), 0);
      auto s = store->summary(*id);
      ASSERT_OK(s);
      EXPECT_EQ(s->state, State::Proposing);
      ASSERT_OK(store->abandon(*id, Abandonment{"DOT_E_ARTIFACT_MISMATCH", c.name, ""}));
    }
  }
}

// A plan's files together at most max_total_bytes (checked before a byte is read).
TEST_F(StoreFiles, FilesOverThePlanTotalAreRefusedBeforeReading) {
  auto id = propose();
  ASSERT_OK(id);
  SealInput in;
  in.proposal_id = sha256_hex("proposal v2");
  in.streamed = true;
  for (std::uint32_t i = 0; i < 65; ++i) {
    std::string digest = sha256_hex(std::to_string(i));
    in.operations.push_back({fmt::format("f{:02}", i), "", digest});
    in.files.push_back(FileBlob{i, true, kMaxFileBlobBytes, digest});
  }
  in.open_file = files.opener();
  in.canonical_plan = "{}";
  in.plan_id = sha256_hex(in.canonical_plan);
  auto sealed = store->seal(*id, in);
  ASSERT_ERR(sealed, Code::ArtifactMismatch);
  EXPECT_NE(sealed.error().detail.find("together"), std::string::npos) << sealed.error().detail;
  EXPECT_EQ(files.opened, 0);
}

// A file changed behind the store's back: `check` names it, read_file refuses.
TEST_F(StoreFiles, TamperedFilesAreFoundByCheckAndRead) {
  const std::string big = big_bytes(2 << 20);
  auto id = propose();
  ASSERT_OK(id);
  ASSERT_OK(store->seal(*id, streamed_seal(big)));
  raw("UPDATE file_artifact SET bytes = CAST('other' AS BLOB) WHERE idx = 2");
  auto c = store->check();
  ASSERT_OK(c);
  ASSERT_FALSE(c->problems.empty());
  EXPECT_NE(c->problems[0].find("artifact 2"), std::string::npos) << c->problems[0];
  StringSink out;
  ASSERT_ERR(store->read_file(*id, FileKind::Artifact, 2, out), Code::RecoveryRequired);

  // Same length, one byte different.
  raw(fmt::format("UPDATE file_artifact SET bytes = zeroblob({}) WHERE idx = 2", big.size()));
  auto c2 = store->check();
  ASSERT_OK(c2);
  ASSERT_FALSE(c2->problems.empty());
  EXPECT_NE(c2->problems[0].find("does not match its digest"), std::string::npos) << c2->problems[0];

  // A row removed: the writing operation has no artifact.
  raw("DELETE FROM file_artifact WHERE idx = 2");
  auto c3 = store->check();
  ASSERT_OK(c3);
  ASSERT_FALSE(c3->problems.empty());
  EXPECT_NE(c3->problems[0].find("operation 2 and its artifact disagree"), std::string::npos) << c3->problems[0];
  ASSERT_ERR(store->load_sealed(*id), Code::RecoveryRequired);
}

// dot.log messages of an abandoned proposal are kept in order, exactly.
// apply's backups of a version-2 plan: one per operation, streamed into
// file_backup with PREPARED in one SQLite transaction, read back verified;
// a backup that is not what the caller observed stores nothing and leaves
// the transaction SEALED; the version-1 call is refused for such a plan.
TEST_F(StoreFiles, PrepareFilesStreamsOneBackupPerOperation) {
  const std::string big = big_bytes((std::size_t{3} << 20) + 7);
  auto id = propose();
  ASSERT_OK(id);
  ASSERT_OK(store->seal(*id, streamed_seal(big)));
  Files backups;
  backups.put(1, big);  // b existed (bytes of any size); a and c/d did not
  std::vector<FileBlob> wrong = {FileBlob{0, false, 0, ""}, FileBlob{1, true, big.size(), sha256_hex("old")},
                                 FileBlob{2, false, 0, ""}};
  auto refused = store->prepare_files(*id, wrong, backups.opener());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Code::ArtifactMismatch) << refused.error().line();
  EXPECT_EQ(store->summary(*id)->state, State::Sealed);
  EXPECT_EQ(count("file_backup"), 0);
  auto v1 = store->prepare(*id, {Blob{0, false, "", ""}, Blob{1, false, "", ""}, Blob{2, false, "", ""}});
  ASSERT_FALSE(v1.ok());
  EXPECT_EQ(store->summary(*id)->state, State::Sealed);
  EXPECT_FALSE(store->prepare_files(*id, {FileBlob{0, false, 0, ""}}, backups.opener()).ok()) << "one per operation";

  std::vector<FileBlob> right = {FileBlob{0, false, 0, ""}, FileBlob{1, true, big.size(), sha256_hex(big)},
                                 FileBlob{2, false, 0, ""}};
  ASSERT_OK(store->prepare_files(*id, right, backups.opener()));
  EXPECT_EQ(store->summary(*id)->state, State::Prepared);
  auto loaded = store->load_sealed(*id);
  ASSERT_OK(loaded);
  EXPECT_EQ(loaded->file_backups, right);
  expect_file_and_a_clean_store(*id, FileKind::Backup, 1, big);
}

TEST_F(StoreFiles, LogsAreKeptWithAnAbandonedProposal) {
  auto id = propose();
  ASSERT_OK(id);
  std::vector<LogRecord> logs = {{"debug", std::string("nul\0byte", 8), "dot.initialize"},
                                 {"error", "last", "dot.plan"}};
  ASSERT_OK(store->abandon(*id, Abandonment{"DOT_E_PLUGIN_ERROR", "why", ""}, logs));
  auto d = store->detail(*id);
  ASSERT_OK(d);
  EXPECT_EQ(d->logs, logs);
  auto bad = store->begin_proposal({"org.example.files", testing::hex64('d'), 0});
  ASSERT_OK(bad);
  ASSERT_ERR(store->abandon(*bad, Abandonment{"DOT_E_PROTOCOL", "x", ""}, {{"trace", "m", "dot.plan"}}),
             Code::Validation);
}

}  // namespace
}  // namespace dot::store
