// Ignore files in gitignore syntax (ignore_rules.h) and PathGlob::matches.
#include "dot/base/ignore_rules.h"

#include <gtest/gtest.h>

#include <string>

#include "dot/base/error_kinds.h"

namespace dot {
namespace {

IgnoreRules rules(std::string_view text) {
  auto r = IgnoreRules::parse(text);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? std::move(r).value() : IgnoreRules{};
}

TEST(PathGlobMatches, TheEntryItselfNotItsParents) {
  auto g = PathGlob::parse(".cache/");
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(g->matches(".cache", true));
  EXPECT_FALSE(g->matches(".cache", false));    // folders only
  EXPECT_FALSE(g->matches(".cache/x", false));  // below: covers(), not matches()
  EXPECT_TRUE(g->covers(".cache/x"));
  auto star = PathGlob::parse("*.swp");
  ASSERT_TRUE(star.ok());
  EXPECT_TRUE(star->matches("a/b/.x.swp", false));
  EXPECT_TRUE(star->matches("dir.swp", true));
}

TEST(IgnoreRules, CommentsBlankLinesAndTrailingSpacesAreNotRules) {
  IgnoreRules r = rules("# editor files\n\n   \n*.swp   \r\n");
  EXPECT_EQ(r.size(), 1u);
  EXPECT_TRUE(r.ignored("notes.swp", false));
  EXPECT_FALSE(r.ignored("# editor files", false));
}

TEST(IgnoreRules, TheLastMatchingRuleDecides) {
  IgnoreRules r = rules("*.swp\n!keep.swp\n");
  EXPECT_TRUE(r.ignored("a.swp", false));
  EXPECT_FALSE(r.ignored("keep.swp", false));
  EXPECT_FALSE(r.ignored("sub/keep.swp", false));
  IgnoreRules again = rules("!keep.swp\n*.swp\n");
  EXPECT_TRUE(again.ignored("keep.swp", false));
}

TEST(IgnoreRules, EscapesKeepALiteralHashBangAndTrailingSpace) {
  IgnoreRules r = rules("\\#notes\n\\!important\nspaced\\ \n");
  EXPECT_TRUE(r.ignored("#notes", false));
  EXPECT_TRUE(r.ignored("!important", false));
  EXPECT_TRUE(r.ignored("spaced ", false));
  EXPECT_FALSE(r.ignored("spaced", false));
}

TEST(IgnoreRules, FolderPatternsAndAnchors) {
  IgnoreRules r = rules("/README.md\nbuild/\n");
  EXPECT_TRUE(r.ignored("README.md", false));
  EXPECT_FALSE(r.ignored("docs/README.md", false));
  EXPECT_TRUE(r.ignored("build", true));
  EXPECT_TRUE(r.ignored("x/build", true));
  EXPECT_FALSE(r.ignored("build", false));
}

TEST(IgnoreRules, ABadLineIsRefusedByItsNumber) {
  for (auto [text, line] : {std::pair{"ok\n\n!\n", "line 3:"}, std::pair{"a//b\n", "line 1:"},
                            std::pair{"x\ny\\\n", "line 2:"}, std::pair{"good\nbad\x01\n", "line 2:"}}) {
    auto r = IgnoreRules::parse(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_TRUE(r.error().is(base::ErrorKind::IgnoreFile)) << r.error().message();
    EXPECT_EQ(r.error().code, Code::Validation);
    EXPECT_NE(r.error().detail.find(line), std::string::npos) << r.error().detail;
  }
}

TEST(IgnoreRules, LimitsOnSizeAndRules) {
  EXPECT_FALSE(IgnoreRules::parse(std::string(kMaxIgnoreFileBytes + 1, '#')).ok());
  std::string many;
  for (std::size_t i = 0; i <= kMaxIgnoreRules; ++i) many += "a\n";
  auto r = IgnoreRules::parse(many);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().detail.find("more than 10000 rules"), std::string::npos);
  many.resize(many.size() - 2);
  EXPECT_TRUE(IgnoreRules::parse(many).ok());
}

}  // namespace
}  // namespace dot
