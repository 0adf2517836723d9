#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <tuple>

#include "dot/base/beneath.h"
#include "dot/base/sha256.h"

namespace fs = std::filesystem;

namespace dot::beneath {
namespace {

class BeneathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/dot-beneath-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    root_ = base_ / "root";
    outside_ = base_ / "outside";
    fs::create_directory(root_);
    fs::create_directory(outside_);
    write(outside_ / "secret.txt", "secret\n");
    auto fd = open_root(root_.string());
    ASSERT_TRUE(fd.ok()) << fd.error().line();
    root_fd_ = std::move(*fd);
  }
  void TearDown() override { fs::remove_all(base_); }

  static void write(const fs::path& p, const std::string& bytes, mode_t mode = 0600) {
    std::ofstream(p, std::ios::binary) << bytes;
    ::chmod(p.c_str(), mode);
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  fs::path base_, root_, outside_;
  UniqueFd root_fd_;
};

// FolderStat answers what one fstatat says, in folders opened beneath the
// root without a symlink, and nothing for whatever it cannot answer alone.
TEST_F(BeneathTest, FolderStatSeesWhatObserveSeesWithoutFollowingAnything) {
  fs::create_directories(root_ / "a" / "b");
  write(root_ / "a" / "b" / "f.txt", "hello\n", 0640);
  write(root_ / "a" / "b" / "g.txt", "more\n");
  write(root_ / "top.txt", "top\n");
  fs::create_symlink("f.txt", root_ / "a" / "b" / "link");
  fs::create_directory_symlink(outside_, root_ / "a" / "out");
  FolderStat folders(root_fd_.get());
  for (const char* path : {"a/b/f.txt", "a/b/g.txt", "top.txt", "a/b/f.txt"}) {
    SCOPED_TRACE(path);
    auto seen = folders.stat(path);
    ASSERT_TRUE(seen.has_value());
    auto observed = observe_beneath(root_fd_.get(), path);
    ASSERT_TRUE(observed.ok()) << observed.error().line();
    EXPECT_EQ(seen->type, FileType::Regular);
    EXPECT_EQ(
        std::tie(seen->dev, seen->ino, seen->size, seen->mode, seen->mtime_ns, seen->ctime_ns, seen->uid, seen->gid),
        std::tie(observed->dev, observed->ino, observed->size, observed->mode, observed->mtime_ns, observed->ctime_ns,
                 observed->uid, observed->gid));
    EXPECT_TRUE(seen->sha256.empty()) << "nothing is read";
  }
  auto link = folders.stat("a/b/link");
  ASSERT_TRUE(link.has_value());
  EXPECT_EQ(link->type, FileType::Symlink) << "the link itself, not what it names";
  EXPECT_EQ(folders.stat("a/out/secret.txt"), std::nullopt) << "a symlink on the way is never followed";
  EXPECT_EQ(folders.stat("a/b/missing"), std::nullopt);
  EXPECT_EQ(folders.stat("missing/x"), std::nullopt);
  EXPECT_EQ(folders.stat("a/../top.txt"), std::nullopt);
  EXPECT_EQ(folders.stat("/etc/passwd"), std::nullopt);
  // A folder replaced by a symlink after it was seen: the next path in
  // another folder opens that one afresh, and refuses it.
  ASSERT_TRUE(folders.stat("top.txt").has_value());
  fs::rename(root_ / "a" / "b", base_ / "moved");
  fs::create_directory_symlink(base_ / "moved", root_ / "a" / "b");
  EXPECT_EQ(folders.stat("a/b/f.txt"), std::nullopt);
}

TEST_F(BeneathTest, RelativePathRules) {
  EXPECT_TRUE(check_relative_path("a.txt").ok());
  EXPECT_TRUE(check_relative_path("dir/a.txt").ok());
  for (std::string bad :
       {std::string(""), std::string("/etc/passwd"), std::string(".."), std::string("a/../b"), std::string("./a"),
        std::string("a//b"), std::string("a\nb"), std::string("a\0b", 3), std::string("a/")}) {
    auto s = check_relative_path(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.error().code, Code::PathEscape) << bad;
  }
  EXPECT_EQ(check_entry_name("dir/a").error().code, Code::PathEscape);
}

TEST_F(BeneathTest, ObservesRegularFileFromItsDescriptor) {
  write(root_ / "hello.txt", "hello\n", 0600);
  auto o = observe_beneath(root_fd_.get(), "hello.txt", {.max_bytes = 65536, .keep_content = true});
  ASSERT_TRUE(o.ok()) << o.error().line();
  EXPECT_EQ(o->type, FileType::Regular);
  EXPECT_EQ(o->mode, 0600u);
  EXPECT_EQ(o->uid, ::geteuid());
  EXPECT_EQ(o->nlink, 1u);
  EXPECT_EQ(o->size, 6u);
  EXPECT_EQ(o->sha256, sha256_hex("hello\n"));
  EXPECT_EQ(o->content, "hello\n");
}

TEST_F(BeneathTest, AbsentIsAnObservationNotAnError) {
  auto o = observe_beneath(root_fd_.get(), "missing.txt");
  ASSERT_TRUE(o.ok());
  EXPECT_FALSE(o->exists());
  EXPECT_TRUE(o->sha256.empty());
}

TEST_F(BeneathTest, FinalSymlinkIsReportedAsSymlinkNeverFollowed) {
  fs::create_symlink(outside_ / "secret.txt", root_ / "link.txt");
  auto o = observe_beneath(root_fd_.get(), "link.txt");
  ASSERT_TRUE(o.ok()) << o.error().line();
  EXPECT_EQ(o->type, FileType::Symlink);
  EXPECT_TRUE(o->sha256.empty());
}

TEST_F(BeneathTest, SymlinkOnTheWayIsPathEscape) {
  fs::create_directory_symlink(outside_, root_ / "sub");
  auto o = observe_beneath(root_fd_.get(), "sub/secret.txt");
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().code, Code::PathEscape);
  auto f = open_beneath(root_fd_.get(), "sub/secret.txt", O_RDONLY);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code, Code::PathEscape);
}

TEST_F(BeneathTest, DotDotCannotClimbOut) {
  auto f = open_beneath(root_fd_.get(), "../outside/secret.txt", O_RDONLY);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code, Code::PathEscape);
}

TEST_F(BeneathTest, FifoAndDirectoryAreReportedWithoutBeingRead) {
  ASSERT_EQ(::mkfifo((root_ / "pipe.txt").c_str(), 0600), 0);
  fs::create_directory(root_ / "dir.txt");
  auto fifo = observe_beneath(root_fd_.get(), "pipe.txt");  // opened non-blocking, never read
  ASSERT_TRUE(fifo.ok());
  EXPECT_EQ(fifo->type, FileType::Fifo);
  auto dir = observe_beneath(root_fd_.get(), "dir.txt");
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(dir->type, FileType::Directory);
}

// The name is resolved once and everything is judged from that descriptor: a
// FIFO exchanged with a regular file under the name is seen as one or the
// other, whole. (Checking with O_PATH and then re-opening by name opened the
// FIFO swapped in between, and failed the observation as "replaced".)
TEST_F(BeneathTest, ObservationOpensTheNameOnceWhateverIsSwappedUnderIt) {
  write(root_ / "t", "regular");
  ASSERT_EQ(::mkfifo((root_ / "t.fifo").c_str(), 0600), 0);
  std::atomic<bool> stop{false};
  std::thread swapper([&] {
    while (!stop) ::renameat2(root_fd_.get(), "t", root_fd_.get(), "t.fifo", RENAME_EXCHANGE);
  });
  int regular = 0, fifo = 0;
  std::string failure;
  for (int i = 0; i < 200000 && failure.empty(); ++i) {
    auto o = observe_beneath(root_fd_.get(), "t");
    if (!o.ok())
      failure = "after " + std::to_string(i) + " observations: " + o.error().line();
    else if (o->type == FileType::Regular && o->sha256 == sha256_hex("regular"))
      ++regular;
    else if (o->type == FileType::Fifo)
      ++fifo;
    else
      failure = "observed a " + std::string(file_type_name(o->type)) + " with sha256 " + o->sha256;
  }
  stop = true;
  swapper.join();
  EXPECT_EQ(failure, "");
  EXPECT_EQ(regular + fifo, 200000);
}

TEST_F(BeneathTest, HardLinkCountIsObserved) {
  write(root_ / "a.txt", "x");
  fs::create_hard_link(root_ / "a.txt", root_ / "b.txt");
  auto o = observe_beneath(root_fd_.get(), "a.txt");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->nlink, 2u);
}

TEST_F(BeneathTest, OversizedFileIsFlaggedNotHashed) {
  write(root_ / "big.txt", std::string(65537, 'x'));
  auto o = observe_beneath(root_fd_.get(), "big.txt", {.max_bytes = 65536});
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->too_large);
  EXPECT_TRUE(o->sha256.empty());
}

// A file's content is read through its descriptor, whatever fstat said of
// its size: /proc files say 0 and have bytes. The buffer grows with what is
// read, and the limit still holds at exactly max_bytes.
TEST_F(BeneathTest, ContentIsReadPastTheSizeFstatGave) {
  const std::string want = read("/proc/self/cmdline");
  ASSERT_GT(want.size(), 2u);
  UniqueFd fd(::open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd);
  struct stat st {};
  ASSERT_EQ(::fstat(fd.get(), &st), 0);
  ASSERT_EQ(st.st_size, 0) << "the case this test is about";
  for (std::size_t limit : {want.size(), std::size_t{65536}}) {
    auto o = observe_fd(fd.get(), {.max_bytes = limit, .keep_content = true});
    ASSERT_TRUE(o.ok()) << o.error().line();
    EXPECT_FALSE(o->too_large) << limit;
    EXPECT_EQ(o->size, want.size()) << limit;
    EXPECT_EQ(o->content, want) << limit;
    EXPECT_EQ(o->sha256, sha256_hex(want)) << limit;
  }
  auto over = observe_fd(fd.get(), {.max_bytes = want.size() - 1, .keep_content = true});
  ASSERT_TRUE(over.ok()) << over.error().line();
  EXPECT_TRUE(over->too_large);
  EXPECT_TRUE(over->content.empty());
}

TEST_F(BeneathTest, RootThatIsASymlinkIsRefused) {
  fs::create_directory_symlink(outside_, base_ / "rootlink");
  auto fd = open_root((base_ / "rootlink").string());
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.error().code, Code::PathEscape);
}

TEST_F(BeneathTest, RootSwappedAfterOpenStillConfinesWrites) {
  // The descriptor pins the original directory: swapping the path for a
  // symlink to elsewhere changes nothing for operations through it.
  fs::rename(root_, base_ / "moved");
  fs::create_directory_symlink(outside_, root_);
  auto tmp = create_temp(root_fd_.get(), ".dot-tmp-", 0600);
  ASSERT_TRUE(tmp.ok()) << tmp.error().line();
  ASSERT_TRUE(rename_entry(root_fd_.get(), tmp->name, "secret.txt").ok());
  EXPECT_EQ(read(outside_ / "secret.txt"), "secret\n");
  EXPECT_TRUE(fs::exists(base_ / "moved" / "secret.txt"));
}

TEST_F(BeneathTest, ExclusiveCreateSetsExactModeAndRefusesExisting) {
  ::umask(077);
  auto f = create_exclusive(root_fd_.get(), "new.txt", 0600);
  ASSERT_TRUE(f.ok());
  struct stat st {};
  ASSERT_EQ(::fstat(f->fd.get(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  auto again = create_exclusive(root_fd_.get(), "new.txt", 0600);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(error_errno(again.error()), EEXIST);
  fs::create_symlink(outside_ / "secret.txt", root_ / "ln.txt");
  EXPECT_FALSE(create_exclusive(root_fd_.get(), "ln.txt", 0600).ok());
  EXPECT_EQ(read(outside_ / "secret.txt"), "secret\n");
}

TEST_F(BeneathTest, RenameNoReplaceRefusesAnExistingTarget) {
  write(root_ / "a.txt", "a");
  write(root_ / "b.txt", "b");
  auto s = rename_entry(root_fd_.get(), "a.txt", "b.txt", /*no_replace=*/true);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(error_errno(s.error()), EEXIST);
  ASSERT_TRUE(rename_entry(root_fd_.get(), "a.txt", "b.txt").ok());
  EXPECT_EQ(read(root_ / "b.txt"), "a");
}

TEST_F(BeneathTest, RenameOverASymlinkReplacesTheLinkNotItsTarget) {
  fs::create_symlink(outside_ / "secret.txt", root_ / "t.txt");
  write(root_ / "new", "mine");
  ASSERT_TRUE(rename_entry(root_fd_.get(), "new", "t.txt").ok());
  EXPECT_EQ(read(outside_ / "secret.txt"), "secret\n");
  EXPECT_FALSE(fs::is_symlink(root_ / "t.txt"));
}

// Recursive removal by descriptor: symlinks inside go as links (their
// targets untouched), nested folders go, nothing outside is reached.
TEST_F(BeneathTest, RemoveTreeNeverFollowsASymlink) {
  fs::create_directories(root_ / "t" / "a" / "b");
  write(root_ / "t" / "a" / "b" / "f.txt", "f");
  write(root_ / "t" / "top.txt", "top");
  fs::create_directory_symlink(outside_, root_ / "t" / "a" / "dir-link");
  fs::create_symlink(outside_ / "secret.txt", root_ / "t" / "file-link");
  ASSERT_EQ(::mkfifo((root_ / "t" / "pipe").c_str(), 0600), 0);
  auto n = remove_tree(root_fd_.get(), "t");
  ASSERT_TRUE(n.ok()) << n.error().line();
  EXPECT_EQ(*n, 8u);
  EXPECT_FALSE(fs::exists(fs::symlink_status(root_ / "t")));
  EXPECT_EQ(read(outside_ / "secret.txt"), "secret\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(outside_), fs::directory_iterator()), 1);
}

TEST_F(BeneathTest, RemoveTreeOfASymlinkRemovesOnlyTheLink) {
  fs::create_directory_symlink(outside_, root_ / "stage");
  auto n = remove_tree(root_fd_.get(), "stage");
  ASSERT_TRUE(n.ok()) << n.error().line();
  EXPECT_EQ(*n, 1u);
  EXPECT_EQ(read(outside_ / "secret.txt"), "secret\n");
  // Absent: nothing to do.
  EXPECT_EQ(*remove_tree(root_fd_.get(), "stage"), 0u);
  // Only an entry name of the directory it is given.
  EXPECT_EQ(remove_tree(root_fd_.get(), "../outside").error().code, Code::PathEscape);
  EXPECT_EQ(remove_tree(root_fd_.get(), "a/b").error().code, Code::PathEscape);
  EXPECT_TRUE(fs::exists(outside_ / "secret.txt"));
}

TEST_F(BeneathTest, RemoveTreeStaysInsideTheFolderItStartedInWhenThatIsMoved) {
  // The descriptor is what counts: the folder renamed away and a symlink to
  // elsewhere put in its place change nothing.
  fs::create_directories(root_ / "s" / "x");
  write(root_ / "s" / "x" / "y.txt", "y");
  fs::rename(root_, base_ / "moved");
  fs::create_directory_symlink(outside_, root_);
  ASSERT_TRUE(remove_tree(root_fd_.get(), "s").ok());
  EXPECT_FALSE(fs::exists(base_ / "moved" / "s"));
  EXPECT_EQ(read(outside_ / "secret.txt"), "secret\n");
}

// Builds `levels` nested folders "n" below root/name by descriptor (deeper
// than PATH_MAX allows by path), a file in each, a symlink to the outside
// folder at the bottom and an empty folder of mode 0000 (which nobody may
// list until it is given u+rwx back).
void nest(int root_fd, const std::string& name, int levels, const fs::path& outside) {
  ASSERT_EQ(::mkdirat(root_fd, name.c_str(), 0700), 0);
  UniqueFd cur(::openat(root_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(cur.valid());
  for (int i = 0; i < levels; ++i) {
    ASSERT_EQ(::mkdirat(cur.get(), "n", 0700), 0) << i;
    UniqueFd f(::openat(cur.get(), "f", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    ASSERT_TRUE(f.valid()) << i;
    UniqueFd next(::openat(cur.get(), "n", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(next.valid()) << i;
    cur = std::move(next);
  }
  ASSERT_EQ(::symlinkat(outside.c_str(), cur.get(), "out"), 0);
  ASSERT_EQ(::mkdirat(cur.get(), "locked", 0), 0);
}

class RemoveTreeDepth : public BeneathTest, public ::testing::WithParamInterface<int> {};

// Complete removal whatever the depth, with one directory descriptor held
// at a time: the walk runs under a descriptor limit far below the depth.
TEST_P(RemoveTreeDepth, RemovesEverythingWithAFewDescriptors) {
  const int levels = GetParam();
  nest(root_fd_.get(), "d", levels, outside_);
  struct rlimit was {};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &was), 0);
  struct rlimit few = was;
  few.rlim_cur = 32;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &few), 0);
  auto n = remove_tree(root_fd_.get(), "d");
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &was), 0);
  ASSERT_TRUE(n.ok()) << n.error().line();
  // Each level: its folder and its file; then the link, the locked folder and "d".
  EXPECT_EQ(*n, static_cast<std::size_t>(2 * levels + 3));
  EXPECT_FALSE(fs::exists(root_ / "d"));
  EXPECT_EQ(read(outside_ / "secret.txt"), "secret\n");
}

INSTANTIATE_TEST_SUITE_P(Levels, RemoveTreeDepth, ::testing::Values(70, 1000, 4000));

TEST_F(BeneathTest, TempNamesAreExactlyWhatCreateTempMakes) {
  auto made = create_temp(root_fd_.get(), ".dot-tmp-", 0600);
  ASSERT_TRUE(made.ok()) << made.error().line();
  EXPECT_TRUE(is_temp_name(made->name, ".dot-tmp-")) << made->name;
  for (const std::string& other :
       std::vector<std::string>{".dot-tmp-x", ".dot-tmp-" + std::string(31, 'a'), ".dot-tmp-" + std::string(33, 'a'),
                                ".dot-tmp-" + std::string(32, 'A'), ".dot-tmp-" + std::string(31, 'a') + "/",
                                "x.dot-tmp-" + std::string(32, 'a')})
    EXPECT_FALSE(is_temp_name(other, ".dot-tmp-")) << other;
}

TEST_F(BeneathTest, ErrnoRoundTrips) {
  Error e = errno_error(ENOSPC, "write", "x");
  EXPECT_EQ(e.code, Code::Io);
  EXPECT_EQ(e.kind, "ENOSPC");
  EXPECT_EQ(error_errno(e), ENOSPC);
  EXPECT_EQ(errno_error(ELOOP, "open", "x").code, Code::PathEscape);
}

}  // namespace
}  // namespace dot::beneath
