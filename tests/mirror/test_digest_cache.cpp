// dot-mirror's cache of source digests (plugins/dot-mirror/digest_cache.h):
// the file's format both ways, every refusal, the racy rule of a lookup, and
// a save that writes only what changed.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "digest_cache.h"
#include "dot/base/racy_time.h"
#include "dot/base/sha256.h"
#include "error_kinds.h"

namespace dot::mirror {
namespace {

namespace fs = std::filesystem;

constexpr SourceId kSource{2049, 77};
// The profile's max_file_bytes: what the plugin may write in one file.
constexpr std::uint64_t kFileLimit = std::uint64_t{16} << 20;
constexpr std::int64_t kSecond = 1'000'000'000;

CachedDigest record(std::string path, std::string_view bytes, std::int64_t changed_ns, std::int64_t recorded_ns) {
  CachedDigest r;
  r.path = std::move(path);
  r.seen.dev = 2049;
  r.seen.ino = 1000 + r.path.size();
  r.seen.mode = S_IFREG | 0644;
  r.seen.size = static_cast<std::int64_t>(bytes.size());
  r.seen.mtime_ns = changed_ns;
  r.seen.ctime_ns = changed_ns;
  r.recorded_ns = recorded_ns;
  r.sha256 = sha256(bytes);
  return r;
}

std::vector<CachedDigest> two() {
  return {record("a b/c.txt", "c\n", -5 * kSecond, 100 * kSecond), record("z", "", 7, 3 * kSecond)};
}

std::string header() { return "dot-mirror digests 1 2049 77\n"; }

// The one record line of `r` as the cache writes it.
std::string line_of(const CachedDigest& r) {
  const std::string all = encode_digest_cache({r}, kSource);
  return all.substr(header().size(), all.size() - header().size() - std::string("end 1\n").size());
}

TEST(DigestCache, ItsFileDecodesToWhatWasEncodedAndEncodesToTheSameBytes) {
  const std::string bytes = encode_digest_cache(two(), kSource);
  EXPECT_EQ(bytes.substr(0, header().size()), header());
  EXPECT_NE(bytes.find(" 33188 -5000000000 -5000000000 100000000000 a b/c.txt\n"), std::string::npos) << bytes;
  EXPECT_TRUE(bytes.ends_with("\nend 2\n"));
  auto back = decode_digest_cache(bytes, kSource);
  ASSERT_TRUE(back.ok()) << back.error().line();
  EXPECT_EQ(*back, two());
  auto empty = decode_digest_cache(encode_digest_cache({}, kSource), kSource);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(DigestCache, WhatItDidNotWriteIsRefusedNamingTheLine) {
  const std::string good = encode_digest_cache(two(), kSource);
  const std::string line2 = good.substr(header().size(), good.find('\n', header().size()) + 1 - header().size());
  auto with_record = [&](std::string line) { return header() + line + "end 1\n"; };
  struct Case {
    std::string bytes;
    std::string says;
  };
  const Case cases[] = {
      {"", "line 1: it is empty"},
      {good.substr(0, good.size() - 1), "does not end with a newline"},
      {good.substr(0, good.rfind("end ")), "no end line"},
      {"dot-mirror digests 2 2049 77\nend 0\n", "line 1: not"},
      {"dot-mirror digests 1 2049 78\nend 0\n", "another source folder's"},
      {"dot-mirror digests 1 2049\nend 0\n", "line 1: the source folder"},
      {"dot-mirror digests 1 2049 77 \nend 0\n", "line 1: the source folder"},
      {"dot-mirror digests 1 2049 77\nend 0 \n", "line 2: the end line"},
      {"dot-mirror digests 1 2049 77\nend  0\n", "line 2: the end line"},
      {header() + "end 1\n", "line 2: the end line does not count the 0 records"},
      {header() + "end 0\nend 0\n", "line 3: a line after the end line"},
      {with_record(line2.substr(1)), "line 2: no SHA-256"},
      {with_record(std::string(64, 'A') + line2.substr(64)), "line 2: no SHA-256"},
      {with_record(line2.substr(0, 65) + "02" + line2.substr(66)), "line 2: a number"},
      {with_record(line2.substr(0, 65) + "+2" + line2.substr(66)), "line 2: a number"},
      {with_record(line2.substr(0, 65) + "-2" + line2.substr(66)), "line 2: a number"},
      {with_record(line2.substr(0, 65) + "99999999999999999999" + line2.substr(66)), "line 2: a number"},
      {with_record(line2.substr(0, line2.find(" 33188 ")) + " 16877 " + line2.substr(line2.find(" 33188 ") + 7)),
       "line 2: the mode is not a regular file's"},
      {with_record(line_of(record("a/../x", "", 0, 0))), "line 2:"},
      {with_record(line_of(record("", "", 0, 0))), "line 2:"},
      {with_record(line_of(record("/etc/passwd", "", 0, 0))), "line 2:"},
      {header() + line2 + line2 + "end 2\n", "line 3: the paths are not in strictly ascending byte order"},
  };
  for (const auto& c : cases) {
    auto r = decode_digest_cache(c.bytes, kSource);
    ASSERT_FALSE(r.ok()) << c.bytes;
    EXPECT_TRUE(r.error().is(ErrorKind::DigestCache)) << r.error().line();
    EXPECT_NE(r.error().detail.find(c.says), std::string::npos) << r.error().detail << "\n for: " << c.bytes;
  }
}

// A folder of its own, removed at the end.
class CacheFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "dot-digest-cache-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file() const { return dir_ + "/digests"; }
  void write(const std::string& bytes) const { std::ofstream(file(), std::ios::binary) << bytes; }
  ino_t inode() const {
    struct stat st {};
    EXPECT_EQ(::lstat(file().c_str(), &st), 0);
    return st.st_ino;
  }
  std::string dir_;
};

TEST_F(CacheFolder, ALookupHoldsOnlyForTheSameStatWithTimesSettledAGranuleBeforeTheRead) {
  const std::int64_t read_at = 1000 * kSecond;
  auto at = [&](std::int64_t changed) { return record("f", "x", changed, read_at); };
  write(encode_digest_cache({at(read_at - kRacyGranuleNs - 1)}, kSource));
  auto cache = DigestCache::load(dir_, kSource, nullptr);
  const Seen settled = at(read_at - kRacyGranuleNs - 1).seen;
  ASSERT_TRUE(cache.lookup("f", settled).has_value());
  EXPECT_EQ(*cache.lookup("f", settled), sha256("x"));
  EXPECT_FALSE(cache.lookup("g", settled));
  for (auto differ : {&Seen::dev, &Seen::ino}) {
    Seen other = settled;
    ++(other.*differ);
    EXPECT_FALSE(cache.lookup("f", other));
  }
  for (auto differ : {&Seen::size, &Seen::mtime_ns, &Seen::ctime_ns}) {
    Seen other = settled;
    ++(other.*differ);
    EXPECT_FALSE(cache.lookup("f", other));
  }
  Seen chmodded = settled;
  chmodded.mode = S_IFREG | 0600;
  EXPECT_FALSE(cache.lookup("f", chmodded));
  EXPECT_EQ(cache.hits(), 2u);
  // Changed within the granule before the read (or at it, or after it):
  // the times prove nothing, the file is read again.
  for (std::int64_t changed : {read_at - kRacyGranuleNs, read_at - 1, read_at, read_at + kSecond}) {
    write(encode_digest_cache({at(changed)}, kSource));
    auto racy = DigestCache::load(dir_, kSource, nullptr);
    EXPECT_FALSE(racy.lookup("f", at(changed).seen)) << changed;
  }
}

TEST_F(CacheFolder, ACacheOfAnotherSourceOrNotOneItWroteIsEmptySayingWhy) {
  write(encode_digest_cache(two(), SourceId{1, 2}));
  std::string why;
  auto other = DigestCache::load(dir_, kSource, &why);
  EXPECT_NE(why.find("another source folder's"), std::string::npos) << why;
  EXPECT_FALSE(other.lookup("z", two()[1].seen));
  write("garbage");
  why.clear();
  (void)DigestCache::load(dir_, kSource, &why);
  EXPECT_NE(why.find("line 1"), std::string::npos) << why;
  ASSERT_EQ(::unlink(file().c_str()), 0);
  why.clear();
  (void)DigestCache::load(dir_, kSource, &why);
  EXPECT_EQ(why, "") << "a missing cache is an empty one, nothing to say";
  ASSERT_EQ(::symlink("/etc/passwd", file().c_str()), 0);
  (void)DigestCache::load(dir_, kSource, &why);
  EXPECT_NE(why, "") << "a symlink is never followed";
}

// A path seen twice in one plan (a source changing under the walk) keeps
// the record seen last, whether that is the one loaded or one read again.
TEST_F(CacheFolder, APathSeenTwiceKeepsItsLastRecord) {
  const std::int64_t now = realtime_ns();
  auto a = record("a", "1", now - 10 * kSecond, now);
  auto b = record("b", "2", now - 10 * kSecond, now);
  auto a_again = record("a", "one", now - 5 * kSecond, now);
  write(encode_digest_cache({a, b}, kSource));
  {
    auto cache = DigestCache::load(dir_, kSource, nullptr);
    ASSERT_TRUE(cache.lookup("a", a.seen));
    cache.record(a_again);
    ASSERT_TRUE(cache.lookup("b", b.seen));
    ASSERT_TRUE(cache.save(dir_, kFileLimit).ok());
  }
  auto read_back = [&] {
    std::ifstream in(file(), std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(read_back(), encode_digest_cache({a_again, b}, kSource));
  auto cache = DigestCache::load(dir_, kSource, nullptr);
  cache.record(a);
  ASSERT_TRUE(cache.lookup("a", a_again.seen));  // the loaded record, seen last
  ASSERT_TRUE(cache.save(dir_, kFileLimit).ok());
  EXPECT_EQ(read_back(), encode_digest_cache({a_again}, kSource));
}

TEST_F(CacheFolder, SaveWritesWhatThisPlanSawAndNothingWhenThatIsWhatWasLoaded) {
  const std::int64_t now = realtime_ns();
  auto a = record("a", "1", now - 10 * kSecond, now);
  auto b = record("b", "2", now - 10 * kSecond, now);
  write(encode_digest_cache({a, b}, kSource));
  const ino_t before = inode();
  {
    auto same = DigestCache::load(dir_, kSource, nullptr);
    ASSERT_TRUE(same.lookup("b", b.seen));
    ASSERT_TRUE(same.lookup("a", a.seen));
    ASSERT_TRUE(same.save(dir_, kFileLimit).ok());
    EXPECT_EQ(inode(), before) << "an unchanged cache is not written again";
  }
  // b gone from the source, c read: the new cache holds a and c.
  auto c = record("c", "3", now - 10 * kSecond, now);
  auto next = DigestCache::load(dir_, kSource, nullptr);
  ASSERT_TRUE(next.lookup("a", a.seen));
  next.record(c);
  EXPECT_EQ(next.hits(), 1u);
  EXPECT_EQ(next.misses(), 1u);
  ASSERT_TRUE(next.save(dir_, kFileLimit).ok());
  EXPECT_NE(inode(), before);
  EXPECT_FALSE(fs::exists(dir_ + "/digests.new"));
  std::ifstream in(file(), std::ios::binary);
  const std::string saved((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(saved, encode_digest_cache({a, c}, kSource));
  // A symlink planted where the new file is written is never written through.
  const std::string victim = dir_ + "-victim";
  std::ofstream(victim) << "untouched\n";
  ASSERT_EQ(::symlink(victim.c_str(), (dir_ + "/digests.new").c_str()), 0);
  auto planted = DigestCache::load(dir_, kSource, nullptr);
  planted.record(b);
  EXPECT_FALSE(planted.save(dir_, kFileLimit).ok());
  std::ifstream v(victim);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(v)), std::istreambuf_iterator<char>()), "untouched\n");
  fs::remove(victim);
}

// Under process assurance a file over max_file_bytes is killed by
// RLIMIT_FSIZE, and 100,000 records of 64-byte paths are 21 MB: the cache
// goes on in digests.1, digests.2... each a whole cache within the limit.
TEST_F(CacheFolder, ACacheOverTheFileLimitSpansFilesEachWithinIt) {
  const std::int64_t now = realtime_ns();
  std::vector<CachedDigest> ten;
  for (int i = 0; i < 10; ++i) ten.push_back(record("p0" + std::to_string(i), std::to_string(i), now - 10 * kSecond, now));
  // Exactly three records to a file.
  const std::uint64_t limit = encode_digest_cache({ten[0], ten[1], ten[2]}, kSource).size();
  {
    auto cache = DigestCache::load(dir_, kSource, nullptr);
    for (const auto& r : ten) cache.record(r);
    ASSERT_TRUE(cache.save(dir_, limit).ok());
  }
  auto bytes_of = [&](const std::string& name) {
    std::ifstream in(dir_ + "/" + name, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(bytes_of("digests"), encode_digest_cache({ten[0], ten[1], ten[2]}, kSource));
  EXPECT_EQ(bytes_of("digests.1"), encode_digest_cache({ten[3], ten[4], ten[5]}, kSource));
  EXPECT_EQ(bytes_of("digests.2"), encode_digest_cache({ten[6], ten[7], ten[8]}, kSource));
  EXPECT_EQ(bytes_of("digests.3"), encode_digest_cache({ten[9]}, kSource));
  EXPECT_FALSE(fs::exists(dir_ + "/digests.4"));
  {
    std::string why;
    auto cache = DigestCache::load(dir_, kSource, &why);
    EXPECT_EQ(why, "");
    for (const auto& r : ten) EXPECT_TRUE(cache.lookup(r.path, r.seen)) << r.path;
    EXPECT_EQ(cache.hits(), 10U);
    // Unchanged: nothing written, whatever the limit.
    ASSERT_TRUE(cache.save(dir_, 1).ok());
  }
  // Smaller again: the files it no longer needs are removed.
  {
    auto cache = DigestCache::load(dir_, kSource, nullptr);
    ASSERT_TRUE(cache.lookup(ten[4].path, ten[4].seen));
    ASSERT_TRUE(cache.save(dir_, limit).ok());
  }
  EXPECT_EQ(bytes_of("digests"), encode_digest_cache({ten[4]}, kSource));
  for (const char* gone : {"digests.1", "digests.2", "digests.3"}) EXPECT_FALSE(fs::exists(dir_ + "/" + gone)) << gone;
  // A record that fits no file alone: an error, and nothing written.
  {
    auto cache = DigestCache::load(dir_, kSource, nullptr);
    cache.record(ten[0]);
    auto saved = cache.save(dir_, limit / 3);
    ASSERT_FALSE(saved.ok());
    EXPECT_TRUE(saved.error().is(ErrorKind::DigestCache)) << saved.error().line();
    EXPECT_NE(saved.error().detail.find("the record of p00 alone is over the"), std::string::npos);
  }
  EXPECT_EQ(bytes_of("digests"), encode_digest_cache({ten[4]}, kSource));
}

TEST_F(CacheFolder, FilesWhosePathsDoNotAscendFromOneToTheNextAreAnEmptyCache) {
  const std::int64_t now = realtime_ns();
  auto a = record("a", "1", now - 10 * kSecond, now);
  auto b = record("b", "2", now - 10 * kSecond, now);
  write(encode_digest_cache({b}, kSource));
  std::ofstream(dir_ + "/digests.1", std::ios::binary) << encode_digest_cache({a}, kSource);
  std::string why;
  auto cache = DigestCache::load(dir_, kSource, &why);
  EXPECT_NE(why.find("digests.1: its first path does not come after the last of digests"), std::string::npos) << why;
  EXPECT_FALSE(cache.lookup("b", b.seen));
  // The same two in order are one cache; an empty file between is allowed.
  write(encode_digest_cache({a}, kSource));
  std::ofstream(dir_ + "/digests.1", std::ios::binary) << encode_digest_cache({}, kSource);
  std::ofstream(dir_ + "/digests.2", std::ios::binary) << encode_digest_cache({b}, kSource);
  why.clear();
  auto both = DigestCache::load(dir_, kSource, &why);
  EXPECT_EQ(why, "");
  EXPECT_TRUE(both.lookup("a", a.seen));
  EXPECT_TRUE(both.lookup("b", b.seen));
  // A later file that is not one this code wrote sets the whole cache aside.
  std::ofstream(dir_ + "/digests.3", std::ios::binary) << "garbage\n";
  auto spoilt = DigestCache::load(dir_, kSource, &why);
  EXPECT_NE(why.find("digests.3: line 1"), std::string::npos) << why;
  EXPECT_FALSE(spoilt.lookup("a", a.seen));
}

}  // namespace
}  // namespace dot::mirror
