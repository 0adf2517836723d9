// The stat cache (core/include/dot/core/stat_cache.h): a target whose stat
// matches its entry is not read (the entry's digest, even a planted false
// one, is what observe answers); a racy entry or any changed stat field
// makes it read again. Nothing here depends on elapsed time: the entries'
// times are planted, or the cache's clock is given.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "dot/base/fd.h"
#include "dot/base/sha256.h"
#include "dot/core/stat_cache.h"
#include "dot/core/target.h"
#include "dot/store/store.h"
#include "helpers.h"

namespace dot::core {
namespace {

using store::testing::TempDir;

constexpr std::int64_t kSecond = 1'000'000'000;
const std::string kFalseDigest(64, '0');

class StatCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_ / "root/sub");
    auto made = store::Store::create(dir_ / "store.db", std::string(64, 'a'));
    ASSERT_TRUE(made.ok()) << made.error().line();
    store_.emplace(std::move(*made));
    root_fd_.reset(::open((dir_ / "root").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(root_fd_);
    write("sub/a.conf", "key = value\n");
  }
  void write(const std::string& rel, const std::string& bytes) {
    std::ofstream(dir_ / ("root/" + rel), std::ios::binary | std::ios::trunc) << bytes;
  }
  // The entry a cache would keep for `rel` as it is now, with `digest`,
  // taken `after_ns` after the file's last change.
  store::StatEntry entry_now(const std::string& rel, const std::string& digest, std::int64_t after_ns) {
    struct stat st {};
    EXPECT_EQ(::stat((dir_ / ("root/" + rel)).c_str(), &st), 0);
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
    return e;
  }
  void plant(const store::StatEntry& e) { ASSERT_TRUE(store_->remember_stats({e}).ok()); }
  std::string observed(StatCache& cache, const std::string& rel) {
    auto o = cache.observe(root_fd_.get(), rel, 1 << 20);
    EXPECT_TRUE(o.ok()) << o.error().line();
    return o.ok() ? o->sha256 : std::string();
  }

  TempDir dir_;
  std::optional<store::Store> store_;
  UniqueFd root_fd_;
  WriteAccessJudge judge_;
};

TEST_F(StatCacheTest, AMatchingStatIsAnsweredFromTheCacheWithoutReading) {
  plant(entry_now("sub/a.conf", kFalseDigest, 10 * kSecond));
  StatCache cache(*store_);
  // Had the file been read, its real digest would be the answer.
  EXPECT_EQ(observed(cache, "sub/a.conf"), kFalseDigest);
  EXPECT_EQ(cache.hit_count(), 1u);
  EXPECT_EQ(cache.read_count(), 0u);
  // The general profile's observe goes through the same lookup.
  ParentFolders parents;
  auto t = observe_path_target(root_fd_.get(), "sub/a.conf", 1 << 20, 0, parents, judge_, &cache);
  ASSERT_TRUE(t.ok()) << t.error().line();
  EXPECT_EQ(t->snapshot.sha256, kFalseDigest);
  EXPECT_FALSE(t->content.has_value());
}

TEST_F(StatCacheTest, AnEntryTakenInTheGranuleOfTheFilesChangeIsRacyAndReread) {
  for (std::int64_t after : {std::int64_t{0}, kRacyGranuleNs - 1, kRacyGranuleNs}) {
    plant(entry_now("sub/a.conf", kFalseDigest, after));
    StatCache cache(*store_);
    EXPECT_EQ(observed(cache, "sub/a.conf"), sha256_hex("key = value\n")) << after;
    EXPECT_EQ(cache.read_count(), 1u);
  }
  // Just past the granule, the same entry is trusted.
  plant(entry_now("sub/a.conf", kFalseDigest, kRacyGranuleNs + 1));
  StatCache cache(*store_);
  EXPECT_EQ(observed(cache, "sub/a.conf"), kFalseDigest);
}

TEST_F(StatCacheTest, AnyChangedStatFieldMakesTheTargetReadAgain) {
  const store::StatEntry base = entry_now("sub/a.conf", kFalseDigest, 10 * kSecond);
  std::vector<std::pair<const char*, std::int64_t store::StatEntry::*>> fields = {
      {"dev", &store::StatEntry::dev},        {"ino", &store::StatEntry::ino},        {"size", &store::StatEntry::size},
      {"mtime", &store::StatEntry::mtime_ns}, {"ctime", &store::StatEntry::ctime_ns}, {"mode", &store::StatEntry::mode},
      {"uid", &store::StatEntry::uid},        {"gid", &store::StatEntry::gid}};
  for (const auto& field : fields) {
    store::StatEntry e = base;
    e.*(field.second) -= 1;
    plant(e);
    StatCache cache(*store_);
    EXPECT_EQ(observed(cache, "sub/a.conf"), sha256_hex("key = value\n")) << field.first;
    EXPECT_EQ(cache.hit_count(), 0u) << field.first;
  }
}

TEST_F(StatCacheTest, WhatWasReadIsRememberedAndTrustedUntilTheFileChanges) {
  // The clock says the digest was taken well after the file's last change.
  auto later = [] { return realtime_ns() + 10 * kSecond; };
  {
    StatCache cache(*store_, later);
    EXPECT_EQ(observed(cache, "sub/a.conf"), sha256_hex("key = value\n"));
    EXPECT_EQ(cache.read_count(), 1u);
    ASSERT_TRUE(cache.save().ok());
  }
  auto kept = store_->stat_entry("sub/a.conf");
  ASSERT_TRUE(kept.ok() && kept->has_value());
  const store::StatEntry now = entry_now("sub/a.conf", sha256_hex("key = value\n"), 0);
  EXPECT_EQ((*kept)->sha256, now.sha256);
  EXPECT_EQ((*kept)->ino, now.ino);
  EXPECT_EQ((*kept)->mtime_ns, now.mtime_ns);
  EXPECT_EQ((*kept)->ctime_ns, now.ctime_ns);
  EXPECT_GT((*kept)->recorded_ns, now.recorded_ns + kRacyGranuleNs);
  {
    StatCache cache(*store_, later);
    EXPECT_EQ(observed(cache, "sub/a.conf"), sha256_hex("key = value\n"));
    EXPECT_EQ(cache.read_count(), 0u);
    EXPECT_EQ(cache.hit_count(), 1u);
  }
  // Same size, its mtime put back: the ctime still moved, so it is read.
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "root/sub/a.conf").c_str(), &st), 0);
  write("sub/a.conf", "key = VALUE\n");
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, (dir_ / "root/sub/a.conf").c_str(), times, 0), 0);
  StatCache cache(*store_, later);
  EXPECT_EQ(observed(cache, "sub/a.conf"), sha256_hex("key = VALUE\n"));
  EXPECT_EQ(cache.read_count(), 1u);
}

TEST_F(StatCacheTest, AnEntryWithABadDigestIsRefusedAndNothingIsStored) {
  store::StatEntry good = entry_now("sub/a.conf", std::string(64, 'b'), 10 * kSecond);
  store::StatEntry bad = good;
  bad.path = "other";
  bad.sha256 = "not hex";
  auto st = store_->remember_stats({good, bad});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Code::Validation);
  EXPECT_EQ(st.error().kind, "stat_entry");
  auto kept = store_->stat_entry("sub/a.conf");
  ASSERT_TRUE(kept.ok());
  EXPECT_FALSE(kept->has_value());
}

}  // namespace
}  // namespace dot::core
