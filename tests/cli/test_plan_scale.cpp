// Plans at scale through the real dot-core and dot-mirror (docs/user-guide.md,
// "Large trees"): the stat cache seen from outside (plan and status trust a
// matching stat, re-read a racy one), the store growth of no-change plans and
// what prune gives back, the diff budget spent on changed paths only, --stat,
// --name-status, the bounded default output, and the progress line. Nothing
// depends on elapsed time: entries' times are planted, progress is forced.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dot/base/fd.h"
#include "dot/base/sha256.h"
#include "dot/store/store.h"
#include "helpers.h"
#include "raw_sql.h"
#include "run_cli.h"

namespace dot::cli {
namespace {

namespace fs = std::filesystem;
using store::testing::RunResult;
using store::testing::TempDir;

constexpr std::int64_t kSecond = 1'000'000'000;

class PlanScale : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(src());
    ASSERT_EQ(run({"init", "--root", root()}).exit_code, 0);
  }
  std::string root() const { return t_ / "root"; }
  std::string src() const { return t_ / "src"; }
  std::string db() const { return t_ / "root/.dot/store.db"; }
  void put(const std::string& rel, const std::string& bytes) {
    fs::create_directories(fs::path(src() + "/" + rel).parent_path());
    std::ofstream(src() + "/" + rel, std::ios::binary | std::ios::trunc) << bytes;
  }
  RunResult run(std::vector<std::string> args) {
    args.insert(args.begin(), store::testing::dot_core());
    return store::testing::run_program(args, t_.path());
  }
  void register_mirror() {
    RunResult r = run({"register", "--root", root(), "--plugin", std::string(DOT_BIN_DIR) + "/dot-mirror", "--id",
                       "org.dot.mirror", "--profile", "org.dot.dpp/v1", "--assurance", "audit", "--input", src()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  RunResult plan(std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"plan", "--root", root(), "--allow-audit-plugin"};
    args.insert(args.end(), more.begin(), more.end());
    return run(args);
  }
  // Plans and applies what the source holds now; the plan's id.
  std::string plan_and_apply() {
    RunResult p = plan({"--json"});
    EXPECT_EQ(p.exit_code, 0) << p.err;
    const auto at = p.out.find("\"plan_id\":\"");
    if (at == std::string::npos) {
      ADD_FAILURE() << p.out;
      return {};
    }
    std::string id = p.out.substr(at + 11, 64);
    RunResult a = run({"apply", "--root", root(), id});
    EXPECT_EQ(a.exit_code, 0) << a.err;
    return id;
  }
  // The store's file and its WAL, in bytes.
  std::uintmax_t store_bytes() const {
    std::error_code ec;
    std::uintmax_t wal = fs::file_size(db() + "-wal", ec);
    return fs::file_size(db()) + (ec ? 0 : wal);
  }
  // Plants, as the stat cache's entry for root-relative `rel` as the file is
  // now, `digest`, taken `after_ns` after its last change.
  void plant(const std::string& rel, const std::string& digest, std::int64_t after_ns) {
    struct stat st {};
    ASSERT_EQ(::stat((root() + "/" + rel).c_str(), &st), 0);
    store::StatEntry e;
    e.path = rel;
    e.dev = static_cast<std::int64_t>(st.st_dev);
    e.ino = static_cast<std::int64_t>(st.st_ino);
    e.size = st.st_size;
    e.mtime_ns = st.st_mtim.tv_sec * kSecond + st.st_mtim.tv_nsec;
    e.ctime_ns = st.st_ctim.tv_sec * kSecond + st.st_ctim.tv_nsec;
    e.mode = st.st_mode & 07777;
    e.uid = st.st_uid;
    e.gid = st.st_gid;
    e.sha256 = digest;
    e.recorded_ns = std::max(e.mtime_ns, e.ctime_ns) + after_ns;
    auto opened = store::Store::open(db());
    ASSERT_TRUE(opened.ok()) << opened.error().line();
    ASSERT_TRUE(opened->remember_stats({e}).ok());
  }

  TempDir t_;
};

TEST_F(PlanScale, PlanAndStatusTrustAMatchingStatAndRereadARacyOne) {
  put("etc/a.conf", "a = 1\n");
  put("etc/b.conf", "b = 2\n");
  register_mirror();
  plan_and_apply();
  ASSERT_EQ(plan({"--name-status"}).out.rfind("no changes", 0), 0u);
  // A false digest for an unchanged target, with a stat that matches: plan
  // and status take it without reading the file.
  const std::string false_digest(64, '0');
  plant("etc/a.conf", false_digest, 10 * kSecond);
  RunResult p = plan({"--name-status"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(p.out, "M\tetc/a.conf\n");
  RunResult s = run({"status", "--root", root()});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.out.find("etc/a.conf  other content"), std::string::npos) << s.out;
  // The same entry taken in the granule of the file's change is racy: read.
  plant("etc/a.conf", false_digest, 0);
  EXPECT_EQ(plan({"--name-status"}).out.rfind("no changes", 0), 0u);
  RunResult calm = run({"status", "--root", root()});
  EXPECT_EQ(calm.out.find("other content"), std::string::npos) << calm.out;
}

// The first plan after apply reads every target and keeps what it saw in
// the stat cache chunk by chunk (4,096 paths each): every chunk's entries
// are there, the last path's too.
TEST_F(PlanScale, EveryTargetReadIsKeptInTheStatCacheWhateverTheChunk) {
  constexpr int kFiles = 4200;
  for (int i = 0; i < kFiles; ++i) put(fmt::format("d{:02}/f{:04}", i % 50, i), fmt::format("{}\n", i));
  register_mirror();
  plan_and_apply();
  ASSERT_EQ(plan({"--name-status"}).out.rfind("no changes", 0), 0u);
  auto opened = store::Store::open(db());
  ASSERT_TRUE(opened.ok()) << opened.error().line();
  for (int i : {0, 4095, 4096, kFiles - 1}) {
    auto entry = opened->stat_entry(fmt::format("d{:02}/f{:04}", i % 50, i));
    ASSERT_TRUE(entry.ok()) << entry.error().line();
    EXPECT_TRUE(entry->has_value()) << "no stat-cache entry for file " << i;
  }
}

TEST_F(PlanScale, NoChangePlansGrowTheStoreByAtMostFourKiBAndPruneShrinksIt) {
  for (int i = 0; i < 400; ++i) put(fmt::format("d{:02}/file{:04}.txt", i % 20, i), fmt::format("line {}\n", i));
  register_mirror();
  plan_and_apply();
  // The proposal of 400 paths is far over 4 KiB; none of it stays.
  RunResult first = plan();
  ASSERT_EQ(first.out.rfind("no changes", 0), 0u) << first.out;
  // SQLite grows its file a page or two at a time as its free pages run
  // out, so one plan may add 8 KiB and the next nothing: the bound is on the
  // growth per plan over ten of them.
  const std::uintmax_t start = store_bytes();
  constexpr int kPlans = 10;
  for (int i = 0; i < kPlans; ++i) {
    RunResult again = plan();
    ASSERT_EQ(again.out.rfind("no changes", 0), 0u) << again.out;
  }
  const std::uintmax_t size = store_bytes();
  EXPECT_LE(size, start + kPlans * 4096) << kPlans << " no-change plans grew the store from " << start << " to "
                                         << size;
  RunResult pruned = run({"store", "prune", "--root", root(), "--keep", "0"});
  ASSERT_EQ(pruned.exit_code, 0) << pruned.err;
  EXPECT_LT(store_bytes(), size);
  RunResult check = run({"store", "check", "--root", root()});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

// A changing plan keeps its proposal document (every proposed path, the
// unchanged ones too: about 300 bytes each); prune gives that space back and
// the pruned plans stay verifiable by their plan bytes.
TEST_F(PlanScale, PruneGivesBackTheProposalDocumentsOfChangingPlans) {
  constexpr int kFiles = 400;
  for (int i = 0; i < kFiles; ++i) put(fmt::format("d{:02}/file{:04}.txt", i % 20, i), fmt::format("line {}\n", i));
  register_mirror();
  std::vector<std::string> ids{plan_and_apply()};
  const std::uintmax_t start = store_bytes();
  constexpr int kPlans = 5;
  for (int i = 0; i < kPlans; ++i) {
    put("d00/file0000.txt", fmt::format("edit {}\n", i));
    ids.push_back(plan_and_apply());
  }
  ASSERT_FALSE(HasFailure());
  RunResult shown = run({"inspect", "show", "--root", root(), "--json", ids.back()});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("\"proposal_verified\":true"), std::string::npos);
  // Each document names every one of the 400 paths, kept packed (zstd).
  const std::uintmax_t grown = store_bytes();
  EXPECT_GT(grown, start) << "from " << start << " to " << grown;
  core::testing::Sql sql(db());
  EXPECT_EQ(sql.run("SELECT count(*) FROM txn WHERE hex(substr(proposal, 1, 4)) = '28B52FFD'"),
            std::vector<std::string>{std::to_string(kPlans + 1)});
  const std::string packed_bytes = sql.run("SELECT sum(length(proposal)) FROM txn").at(0);

  // A row pruned by a release whose prune kept the document: the next prune drops it.
  core::testing::sql(db(), "UPDATE txn SET pruned = 1 WHERE plan_id = '" + ids[2] + "'");
  RunResult pruned = run({"store", "prune", "--root", root(), "--keep", "1"});
  ASSERT_EQ(pruned.exit_code, 0) << pruned.err;
  EXPECT_LT(store_bytes(), grown);
  EXPECT_EQ(sql.run("SELECT count(*) FROM txn WHERE proposal IS NOT NULL"), std::vector<std::string>{"1"});
  EXPECT_LT(std::stoull(sql.run("SELECT sum(length(proposal)) FROM txn").at(0)) * 3, std::stoull(packed_bytes));
  RunResult check = run({"store", "check", "--root", root()});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  // A pruned plan: still shown, its proposal id kept, its document gone;
  // export needs the document and says so. The newest keeps everything.
  RunResult old_one = run({"inspect", "show", "--root", root(), "--json", ids[1]});
  ASSERT_EQ(old_one.exit_code, 0) << old_one.err;
  EXPECT_NE(old_one.out.find("\"proposal\":null"), std::string::npos) << old_one.out.substr(0, 2000);
  EXPECT_NE(old_one.out.find("\"pruned\":true"), std::string::npos);
  RunResult exported = run({"export", "--root", root(), ids[1]});
  EXPECT_NE(exported.exit_code, 0);
  EXPECT_NE(exported.out.find("DOT_E_NOT_FOUND"), std::string::npos) << exported.out << exported.err;
  EXPECT_NE(exported.out.find("pruned"), std::string::npos) << exported.out << exported.err;
  RunResult newest = run({"export", "--root", root(), ids.back()});
  EXPECT_EQ(newest.exit_code, 0) << newest.out << newest.err;
  // And the root still plans from there: nothing left to do.
  EXPECT_EQ(plan().out.rfind("no changes", 0), 0u);
}

TEST_F(PlanScale, TheDiffBudgetIsSpentOnlyOnPathsThatChange) {
  // 9 MiB of unchanged text before the one changed file: more than the
  // whole budget (8 MiB), were it spent on what does not change.
  const std::string block = std::string(63, 'x') + "\n";
  std::string big;
  while (big.size() + block.size() <= 64 * 1024) big += block;
  for (int i = 0; i < 144; ++i) put(fmt::format("a/big{:03}.txt", i), big);
  put("z.txt", "old line\n");
  register_mirror();
  plan_and_apply();
  put("z.txt", "new line\n");
  RunResult p = plan();
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("-old line\n+new line\n"), std::string::npos) << p.out.substr(0, 2000);
  EXPECT_EQ(p.out.find("binary or large"), std::string::npos);
}

TEST_F(PlanScale, StatAndNameStatusShowEachPathOnce) {
  put("keep.txt", "same\n");
  put("edit.txt", "one\ntwo\nthree\n");
  put("gone.txt", "bye\n");
  register_mirror();
  plan_and_apply();
  put("edit.txt", "one\nTWO\nthree\nfour\n");
  fs::remove(src() + "/gone.txt");
  put("new.txt", "hello\nworld\n");
  RunResult names = plan({"--name-status"});
  ASSERT_EQ(names.exit_code, 0) << names.err;
  EXPECT_EQ(names.out, "M\tedit.txt\nD\tgone.txt\nA\tnew.txt\n");
  RunResult stat = plan({"--stat"});
  ASSERT_EQ(stat.exit_code, 0) << stat.err;
  EXPECT_EQ(stat.out,
            " edit.txt | 3 ++-\n"
            " gone.txt | removed (4 bytes)\n"
            " new.txt  | 2 ++\n"
            " 3 path(s) changed, 4 insertion(s)(+), 1 deletion(s)(-)\n");
  RunResult both = plan({"--stat", "--name-status"});
  EXPECT_EQ(both.exit_code, 2) << both.out;
}

TEST_F(PlanScale, ALargePlanShowsItsDiffsUpToABoundAndSaysHowToSeeTheRest) {
  for (int i = 0; i < 400; ++i) put(fmt::format("f{:04}.txt", i), fmt::format("line {}\n", i));
  register_mirror();
  RunResult p = plan();
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const auto lines = static_cast<std::size_t>(std::count(p.out.begin(), p.out.end(), '\n'));
  EXPECT_LT(lines, 1100u);
  EXPECT_NE(p.out.find("more folder(s) and operation(s) not shown"), std::string::npos);
  EXPECT_NE(p.out.find("inspect show --root"), std::string::npos);
  EXPECT_NE(p.out.find("plan --full --root"), std::string::npos);
  EXPECT_EQ(p.out.find("create f0399.txt"), std::string::npos);
  RunResult full = plan({"--full"});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_NE(full.out.find("create f0399.txt (mode"), std::string::npos);
  EXPECT_NE(full.out.find("+line 399\n"), std::string::npos);
  EXPECT_EQ(full.out.find("not shown"), std::string::npos);
}

TEST_F(PlanScale, ProgressIsOnStderrWhenAskedAndNeverWithJsonOrQuiet) {
  put("a.txt", "a\n");
  put("b/c.txt", "cc\n");
  register_mirror();
  // Piped, auto shows nothing.
  RunResult quiet_auto = plan();
  ASSERT_EQ(quiet_auto.exit_code, 0) << quiet_auto.err;
  EXPECT_EQ(quiet_auto.err, "");
  RunResult p = plan({"--progress", "always", "--json"});
  EXPECT_EQ(p.err, "");
  RunResult q = plan({"--progress", "always", "--quiet"});
  EXPECT_EQ(q.err, "");
  RunResult shown = plan({"--progress", "always"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(shown.err, "plan: 1/2 targets observed, 0 B\nplan: 2/2 targets observed, 0 B\n");
  const auto at = shown.out.find("apply it with: ");
  ASSERT_NE(at, std::string::npos);
  const std::string id = shown.out.substr(shown.out.find(' ', shown.out.find("--root", at) + 7) + 1, 12);
  RunResult a = run({"apply", "--root", root(), "--progress", "always", id});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.err, "apply: 1/2 files written, 2 B\napply: 2/2 files written, 5 B\n");
  EXPECT_EQ(run({"plan", "--root", root(), "--allow-audit-plugin", "--progress", "sometimes"}).exit_code, 2);
}

// A plan whose dot.plan answer and dot.materialize answer are each larger
// than one frame (16 MiB): 4,200 writes with paths of 3,971 bytes, about
// 4 KiB per operation on the wire, 17 MB in all (docs/spec/dpp-general.md,
// "Batches"). dot-mirror sends them as batches; dot-core assembles, seals
// and applies the whole plan, and the next plan (whose `managed` list of
// 16.7 MB still fits one frame) changes nothing.
TEST_F(PlanScale, APlanLargerThanOneFrameComesInBatches) {
  constexpr int kFiles = 4200;
  // Made through descriptors: the paths are longer than PATH_MAX allows
  // from the test's folder.
  UniqueFd dir(::open(src().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(dir);
  for (int level = 0; level < 15; ++level) {
    const std::string name = fmt::format("d{:02}{}", level, std::string(247, 'x'));
    ASSERT_EQ(::mkdirat(dir.get(), name.c_str(), 0755), 0);
    UniqueFd sub(::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(sub);
    dir = std::move(sub);
  }
  for (int i = 0; i < kFiles; ++i) {
    const std::string name = fmt::format("f{:05}{}", i, std::string(200, 'y'));
    UniqueFd f(::openat(dir.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    ASSERT_TRUE(f);
    const std::string bytes = fmt::format("line {}\n", i);
    ASSERT_EQ(::write(f.get(), bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  register_mirror();
  RunResult p = plan({"--json"});
  ASSERT_EQ(p.exit_code, 0) << p.err.substr(0, 2000);
  EXPECT_NE(p.out.find("\"state\":\"SEALED\""), std::string::npos);
  std::size_t writes = 0;
  for (auto at = p.out.find("\"take_over\":"); at != std::string::npos; at = p.out.find("\"take_over\":", at + 1))
    ++writes;
  EXPECT_EQ(writes, static_cast<std::size_t>(kFiles));
  const auto at = p.out.find("\"plan_id\":\"");
  ASSERT_NE(at, std::string::npos);
  RunResult a = run({"apply", "--root", root(), p.out.substr(at + 11, 64)});
  ASSERT_EQ(a.exit_code, 0) << a.err.substr(0, 2000);
  RunResult again = plan();
  ASSERT_EQ(again.exit_code, 0) << again.err.substr(0, 2000);
  EXPECT_EQ(again.out.rfind("no changes", 0), 0u) << again.out.substr(0, 2000);
}

}  // namespace
}  // namespace dot::cli
