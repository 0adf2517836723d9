// gitignore-style exclude patterns over relative paths (path_glob.h).
#include "dot/base/path_glob.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dot {
namespace {

bool covers(std::string_view pattern, std::string_view path) {
  auto glob = PathGlob::parse(pattern);
  EXPECT_TRUE(glob.ok()) << pattern;
  return glob.ok() && glob->covers(path);
}

TEST(PathGlob, StarAndQuestionStayWithinAComponent) {
  EXPECT_TRUE(covers("*.swp", "a.swp"));
  EXPECT_TRUE(covers("*.swp", "deep/er/a.swp"));  // no slash: any depth
  EXPECT_FALSE(covers("*.swp", "a.swp.txt"));
  EXPECT_TRUE(covers("?.txt", "a.txt"));
  EXPECT_FALSE(covers("?.txt", "ab.txt"));
  EXPECT_FALSE(covers("a*b", "a/b"));
  EXPECT_TRUE(covers("a*b", "a-x-b"));
  EXPECT_TRUE(covers("*", "anything/at/all"));
}

TEST(PathGlob, ASlashAnchorsAtTheRoot) {
  EXPECT_TRUE(covers("/notes.txt", "notes.txt"));
  EXPECT_FALSE(covers("/notes.txt", "sub/notes.txt"));
  EXPECT_TRUE(covers("notes.txt", "sub/notes.txt"));
  EXPECT_TRUE(covers("sub/*.txt", "sub/a.txt"));   // a middle slash anchors too
  EXPECT_FALSE(covers("sub/*.txt", "x/sub/a.txt"));
}

TEST(PathGlob, DoubleStarSpansComponents) {
  EXPECT_TRUE(covers("**/b", "b"));
  EXPECT_TRUE(covers("**/b", "x/y/b"));
  EXPECT_TRUE(covers("a/**/b", "a/b"));
  EXPECT_TRUE(covers("a/**/b", "a/x/y/b"));
  EXPECT_FALSE(covers("a/**/b", "c/a/x/b"));
  EXPECT_TRUE(covers("a/**", "a/x/y"));
  EXPECT_TRUE(covers("**/**/**/**/**/**/**/**/z", "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/z"));
  EXPECT_FALSE(covers("**/**/**/**/**/**/**/**/z", "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q"));
}

TEST(PathGlob, AFolderPatternCoversEverythingBelowButNotAFileOfThatName) {
  EXPECT_TRUE(covers(".cache/", ".cache/x/y"));
  EXPECT_TRUE(covers(".cache/", "sub/.cache/z"));
  EXPECT_FALSE(covers(".cache/", ".cache"));  // a file, not a folder
  EXPECT_TRUE(covers("/.cache/", ".cache/x"));
  EXPECT_FALSE(covers("/.cache/", "sub/.cache/x"));
  EXPECT_TRUE(covers(".cache", ".cache/x"));  // without the slash: file or folder
  EXPECT_TRUE(covers(".cache", ".cache"));
}

TEST(PathGlob, BackslashTakesTheNextCharacterLiterally) {
  EXPECT_TRUE(covers("a\\*", "a*"));
  EXPECT_FALSE(covers("a\\*", "ab"));
  EXPECT_TRUE(covers("\\!x", "!x"));
}

TEST(PathGlob, UnusablePatternsAreRefusedWithTheirKind) {
  const std::vector<std::string> bad = {"", "/", "//", "a//b", "!a", "a\\", std::string("a\x01", 2), "\xff",
                                        std::string(kMaxGlobBytes + 1, 'a')};
  for (const auto& pattern : bad) {
    SCOPED_TRACE(pattern);
    auto glob = PathGlob::parse(pattern);
    ASSERT_FALSE(glob.ok());
    EXPECT_EQ(glob.error().code, Code::Validation);
    EXPECT_EQ(glob.error().kind, "glob");
  }
}

}  // namespace
}  // namespace dot
