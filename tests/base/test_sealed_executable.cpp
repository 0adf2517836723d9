// dot::seal_executable: the bytes hashed are the bytes executed, whatever
// happens to the source file afterwards, and nobody can change the copy.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "dot/base/process.h"
#include "dot/base/sealed_executable.h"
#include "dot/base/sha256.h"

namespace dot {
namespace {

std::string slurp(const std::string& path) {
  auto r = read_file(path, 64 << 20);
  return r.ok() ? *r : std::string();
}

// A private copy of `from` that the test may rewrite.
class TempExecutable {
 public:
  explicit TempExecutable(const std::string& from) {
    char tmpl[] = "/tmp/dot-sealed-XXXXXX";
    int fd = ::mkstemp(tmpl);
    path_ = tmpl;
    if (fd >= 0) {
      (void)write_all(fd, slurp(from), path_);
      ::fchmod(fd, 0700);
      ::close(fd);
    }
  }
  ~TempExecutable() { ::unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Same inode, other bytes: no O_TRUNC, no rename.
void rewrite_in_place(const std::string& path, const std::string& bytes) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  ASSERT_TRUE(fd);
  ASSERT_EQ(::pwrite(fd.get(), bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  ASSERT_EQ(::ftruncate(fd.get(), static_cast<off_t>(bytes.size())), 0);
}

ExitStatus run(int exec_fd) {
  SpawnOptions o;
  o.exec_fd = exec_fd;
  o.argv = {"sealed"};
  o.stdin_mode = o.stdout_mode = o.stderr_mode = StdioMode::DevNull;
  auto child = spawn(o);
  if (!child.ok()) {
    ADD_FAILURE() << child.error().line();
    return {};
  }
  auto st = child->wait_until(Clock::now() + std::chrono::seconds(20));
  return st ? *st : child->kill_and_reap();
}

// A private copy of /bin/true, opened, and its sealed copy.
class SealedTrue : public ::testing::Test {
 protected:
  void SetUp() override {
    src_.reset(::open(exe_.path().c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(src_);
    auto sealed = seal_executable(src_.get(), exe_.path(), 64 << 20);
    ASSERT_TRUE(sealed.ok()) << sealed.error().line();
    sealed_ = std::move(sealed).value();
  }
  TempExecutable exe_{"/bin/true"};
  UniqueFd src_;
  SealedExecutable sealed_;
};

TEST_F(SealedTrue, TheDigestNamesTheSealedBytesAndTheyRun) {
  const std::string bytes = slurp("/bin/true");
  EXPECT_EQ(sealed_.sha256, sha256_hex(bytes));
  EXPECT_EQ(sealed_.size, bytes.size());
  EXPECT_TRUE(is_sealed_memfd(sealed_.fd.get()));
  EXPECT_FALSE(is_sealed_memfd(src_.get()));
  EXPECT_NE(::fcntl(sealed_.fd.get(), F_GETFD) & FD_CLOEXEC, 0);
  EXPECT_TRUE(run(sealed_.fd.get()).success());
}

TEST_F(SealedTrue, ASourceRewrittenInPlaceAfterwardsChangesNothingThatRuns) {
  // The file now holds /bin/false: the descriptor dot-core opened, executed
  // directly, would run it (that is the attack)...
  rewrite_in_place(exe_.path(), slurp("/bin/false"));
  EXPECT_EQ(run(src_.get()).code, 1);
  // ...the sealed copy still holds and runs /bin/true, under the same digest.
  EXPECT_EQ(run(sealed_.fd.get()).code, 0);
  auto again = sha256_fd_hex(sealed_.fd.get());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, sealed_.sha256);
}

TEST_F(SealedTrue, NobodyCanChangeTheCopy) {
  const int fd = sealed_.fd.get();
  ssize_t wrote = ::pwrite(fd, "x", 1, 0);
  int err = errno;
  EXPECT_EQ(wrote, -1);
  EXPECT_EQ(err, EPERM);
  EXPECT_EQ(::ftruncate(fd, 1), -1);
  EXPECT_EQ(::ftruncate(fd, static_cast<off_t>(sealed_.size) + 1), -1);
  EXPECT_EQ(::fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), -1);  // F_SEAL_SEAL: the set is final
  // A second descriptor, opened through /proc as anyone allowed to reach our
  // descriptors could, cannot write either.
  std::string proc = "/proc/self/fd/" + std::to_string(fd);
  UniqueFd again(::open(proc.c_str(), O_RDWR | O_CLOEXEC));
  if (again) {
    EXPECT_EQ(::pwrite(again.get(), "x", 1, 0), -1);
  }
  auto digest = sha256_fd_hex(fd);
  ASSERT_TRUE(digest.ok());
  EXPECT_EQ(*digest, sealed_.sha256);
}

TEST(SealedExecutable, ASourceAboveTheCapIsRefused) {
  TempExecutable exe("/bin/true");
  UniqueFd src(::open(exe.path().c_str(), O_RDONLY | O_CLOEXEC));
  auto sealed = seal_executable(src.get(), exe.path(), 1024);
  ASSERT_FALSE(sealed.ok());
  EXPECT_EQ(sealed.error().code, Code::Io);
  EXPECT_EQ(sealed.error().kind, "too_large");
  EXPECT_NE(sealed.error().detail.find(exe.path()), std::string::npos) << sealed.error().line();
}

// The kernel refuses F_SEAL_WRITE (EBUSY) while a writable shared mapping
// exists, and for a moment while page references are in flight; the second
// is retried, the first must end in an error, not in a hang or a half seal.
TEST(SealedExecutable, AWritableMappingIsRefusedAfterTheRetriesAndSealingWorksOnceItIsGone) {
  UniqueFd mem(::memfd_create("dot-test-seal", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  ASSERT_TRUE(mem) << std::strerror(errno);
  ASSERT_EQ(::pwrite(mem.get(), "abcd", 4, 0), 4);
  void* map = ::mmap(nullptr, 4, PROT_READ | PROT_WRITE, MAP_SHARED, mem.get(), 0);
  ASSERT_NE(map, MAP_FAILED) << std::strerror(errno);

  auto busy = seal_memfd_contents(mem.get(), "the test copy");
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.error().code, Code::Io);
  EXPECT_NE(busy.error().detail.find("writable shared mapping"), std::string::npos) << busy.error().line();
  EXPECT_NE(busy.error().detail.find("the test copy"), std::string::npos) << busy.error().line();
  EXPECT_EQ(::fcntl(mem.get(), F_GET_SEALS) & F_SEAL_WRITE, 0) << "no seal was added";

  ASSERT_EQ(::munmap(map, 4), 0);
  auto sealed = seal_memfd_contents(mem.get(), "the test copy");
  ASSERT_TRUE(sealed.ok()) << sealed.error().line();
  EXPECT_TRUE(is_sealed_memfd(mem.get()));
  EXPECT_EQ(::pwrite(mem.get(), "x", 1, 0), -1);
}

}  // namespace
}  // namespace dot
