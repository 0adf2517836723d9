#include <gtest/gtest.h>

#include <cstdio>
#include <set>

#include <unistd.h>

#include "dot/base/fd.h"
#include "dot/base/sha256.h"

namespace dot {
namespace {

TEST(Sha256, KnownAnswers) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, StreamingEqualsOneShotAndResets) {
  Sha256 h;
  h.update("a");
  h.update("bc");
  EXPECT_EQ(to_hex(h.finish()), sha256_hex("abc"));
  h.update("");
  EXPECT_EQ(to_hex(h.finish()), sha256_hex(""));
}

TEST(Sha256, OverADescriptorLeavesThePositionAlone) {
  char name[] = "/tmp/dot-sha-XXXXXX";
  UniqueFd fd(::mkstemp(name));
  ASSERT_TRUE(fd);
  ::unlink(name);
  std::string big(200000, 'x');
  ASSERT_TRUE(write_all(fd.get(), big).ok());
  ::lseek(fd.get(), 5, SEEK_SET);
  auto r = sha256_fd_hex(fd.get());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, sha256_hex(big));
  EXPECT_EQ(::lseek(fd.get(), 0, SEEK_CUR), 5);
}

TEST(Sha256, HexShape) {
  EXPECT_TRUE(is_sha256_hex(sha256_hex("x")));
  EXPECT_FALSE(is_sha256_hex(std::string(64, 'A')));
  EXPECT_FALSE(is_sha256_hex(std::string(63, 'a')));
}

// A plan's snapshot digest: its 32 bytes, or none; spelled as hex only
// where it is written, and read back from exactly the hex it writes.
TEST(Sha256Digest, HoldsTheBytesOfExactlyTheHexItSpells) {
  const std::string hex = sha256_hex("x");
  const auto d = Sha256Digest::from_hex(hex);
  ASSERT_TRUE(d.has_value());
  EXPECT_FALSE(d->empty());
  EXPECT_EQ(d->hex(), hex);
  EXPECT_EQ(d->bytes(), sha256("x"));
  EXPECT_EQ(*d, Sha256Digest::of("x"));
  EXPECT_TRUE(*d == hex);
  EXPECT_FALSE(*d == sha256_hex("y"));
  EXPECT_FALSE(*d == "");
  // Anything but 64 lowercase hex digits is no digest.
  for (const std::string& bad : {std::string(), std::string(63, 'a'), std::string(65, 'a'), std::string(64, 'A'),
                                 std::string(63, 'a') + "g", hex.substr(1) + " "})
    EXPECT_FALSE(Sha256Digest::from_hex(bad).has_value()) << bad;
  // None: "" in text, equal only to "", and a digest of nothing else.
  const Sha256Digest none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.hex(), "");
  EXPECT_TRUE(none == "");
  EXPECT_FALSE(none == hex);
  EXPECT_EQ(Sha256Digest::from_hex_or_none(""), none);
  EXPECT_NE(none, Sha256Digest(Digest{}));  // the all-zero digest is a digest
}

TEST(Random, NoncesAreFreshAndWellFormed) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    auto r = random_hex32();
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(is_sha256_hex(*r));
    seen.insert(*r);
  }
  EXPECT_EQ(seen.size(), 100u);
}

}  // namespace
}  // namespace dot
