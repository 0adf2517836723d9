// json::PaddedText: a file or stream read whole into one buffer followed by
// json::kPadding zero bytes (what jcs canonicalize hands the parser).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "dot/base/fd.h"
#include "dot/base/json.h"
#include "dot/base/padded_text.h"

namespace dot::json {
namespace {

// A file of `content` in the test's temporary folder, open for reading.
UniqueFd file_with(const std::string& content) {
  std::string path = testing::TempDir() + "dot-padded-XXXXXX";
  int fd = ::mkstemp(path.data());
  EXPECT_GE(fd, 0);
  ::unlink(path.c_str());
  EXPECT_TRUE(write_all(fd, content).ok());
  ::lseek(fd, 0, SEEK_SET);
  return UniqueFd(fd);
}

void expect_padded(const PaddedText& text, const std::string& content) {
  ASSERT_EQ(text.bytes(), content);
  for (std::size_t i = 0; i < kPadding; ++i) ASSERT_EQ(text.bytes().data()[content.size() + i], 0) << i;
}

std::string pattern(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + i % 23);
  return s;
}

TEST(PaddedText, ReadsAFileWholeWithZeroPaddingAfterIt) {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4096}, std::size_t{5} << 20}) {
    std::string content = pattern(n);
    UniqueFd fd = file_with(content);
    auto text = PaddedText::read(fd.get(), std::size_t{64} << 20, n, "the file");
    ASSERT_TRUE(text.ok()) << n;
    expect_padded(*text, content);
  }
}

// The expected size is only where the buffer starts: a file that grew since
// it was measured, or a stream of unknown length, is read to its end.
TEST(PaddedText, GrowsPastTheExpectedSize) {
  std::string content = pattern(300 * 1024 + 7);
  UniqueFd fd = file_with(content);
  auto text = PaddedText::read(fd.get(), std::size_t{64} << 20, 10, "the file");
  ASSERT_TRUE(text.ok());
  expect_padded(*text, content);
}

TEST(PaddedText, ReadsAPipeToItsEnd) {
  auto pipe = make_pipe();
  ASSERT_TRUE(pipe.ok());
  std::string content = pattern(1 << 20);
  std::thread writer([&] {
    EXPECT_TRUE(write_all(pipe->write.get(), content).ok());
    pipe->write.reset();
  });
  auto text = PaddedText::read(pipe->read.get(), std::size_t{64} << 20, 0, "standard input");
  writer.join();
  ASSERT_TRUE(text.ok());
  expect_padded(*text, content);
}

TEST(PaddedText, MoreThanTheLimitIsTooLargeAndTheLimitItselfIsNot) {
  UniqueFd exact = file_with(pattern(100));
  auto fits = PaddedText::read(exact.get(), 100, 100, "the file");
  ASSERT_TRUE(fits.ok());
  expect_padded(*fits, pattern(100));

  UniqueFd over = file_with(pattern(101));
  auto refused = PaddedText::read(over.get(), 100, 0, "big.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Code::Io);
  EXPECT_EQ(refused.error().kind, "too_large");
  EXPECT_NE(refused.error().detail.find("big.json"), std::string::npos);
  EXPECT_NE(refused.error().detail.find("100 bytes"), std::string::npos);

  // A limit no input can reach does not wrap the buffer's size.
  UniqueFd small = file_with("[1]");
  auto unlimited = PaddedText::read(small.get(), static_cast<std::size_t>(-1), 3, "the file");
  ASSERT_TRUE(unlimited.ok());
  expect_padded(*unlimited, "[1]");
}

TEST(PaddedText, AReadErrorNamesTheInput) {
  UniqueFd dir(::open(testing::TempDir().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(dir);
  auto text = PaddedText::read(dir.get(), 1000, 0, "some/dir");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code, Code::Io);
  EXPECT_EQ(text.error().kind, "read");
  EXPECT_NE(text.error().detail.find("cannot read some/dir"), std::string::npos);
}

TEST(PaddedText, MovesItsBuffer) {
  UniqueFd fd = file_with("[true]");
  auto text = PaddedText::read(fd.get(), 1000, 6, "the file");
  ASSERT_TRUE(text.ok());
  PaddedText moved = std::move(*text);
  expect_padded(moved, "[true]");
  EXPECT_TRUE(text->bytes().empty());
  PaddedText assigned;
  assigned = std::move(moved);
  expect_padded(assigned, "[true]");
}

}  // namespace
}  // namespace dot::json
