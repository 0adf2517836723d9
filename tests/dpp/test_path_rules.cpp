// The general profile's path rules (dpp/path_rules.h, docs/spec/dpp-general.md
// "Plan"): every rule with a path it accepts and one it refuses, and the
// exact code and kind of each refusal.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/ranges.h>

#include "dot/dpp/path_rules.h"

namespace dot::dpp {
namespace {

struct PathCase {
  const char* rule;
  std::string good;
  std::string bad;
  Code code;
  const char* kind;
};

std::vector<PathCase> path_cases() {
  const std::string c255(255, 'c');
  std::string long_ok;  // 4095 bytes: 16 components of 255 and 15 slashes
  for (int i = 0; i < 16; ++i) long_ok += (i ? "/" : "") + c255;
  return {
      {"relative", "etc/hosts", "/etc/hosts", Code::PathEscape, "absolute"},
      {"root alone", "a", "/", Code::PathEscape, "absolute"},
      {"no .. first", "..a/b", "../b", Code::PathEscape, "dot_dot"},
      {"no .. inside", "a/..b", "a/../b", Code::PathEscape, "dot_dot"},
      {"no .. last", "a/b..", "a/..", Code::PathEscape, "dot_dot"},
      {"escape wins", "a/b", std::string("../\x01\xff"), Code::PathEscape, "dot_dot"},
      {"utf-8", "caf\xc3\xa9/\xf0\x9f\x98\x80", "caf\xc3", Code::Policy, "not_utf8"},
      {"no overlong", "a\xc3\xa9", "a\xc0\xaf", Code::Policy, "not_utf8"},
      {"no surrogate", "\xed\x9f\xbf", "\xed\xa0\x80", Code::Policy, "not_utf8"},
      {"not empty", "x", "", Code::Policy, "empty"},
      {"at most 4095 bytes", long_ok, long_ok + "c", Code::Policy, "too_long"},
      {"single slash", "a/b", "a//b", Code::Policy, "empty_component"},
      {"component <= 255", c255 + "/x", c255 + "c/x", Code::Policy, "component_too_long"},
      {"no . component", "a/.b", "a/./b", Code::Policy, "dot_component"},
      {"no . alone", ".a", ".", Code::Policy, "dot_component"},
      {"no byte below 0x20", "a b", std::string("a\x1f" "b"), Code::Policy, "control_byte"},
      {"no NUL", "ab", std::string("a\0b", 3), Code::Policy, "control_byte"},
      {"no newline", "a-b", "a\nb", Code::Policy, "control_byte"},
      {"no 0x7f", "a~b", "a\x7f" "b", Code::Policy, "control_byte"},
      {"no trailing slash", "a/b", "a/b/", Code::Policy, "trailing_slash"},
      {"not the state folder", "x/.dot/y", ".dot/store.db", Code::PathEscape, "state_folder"},
      {"not the state folder alone", ".dotfiles", ".dot", Code::PathEscape, "state_folder"},
      // Names core reserves beside targets (its temp files anywhere; every
      // ".dot-" name at the top, the Go reference's and adopt's).
      {"no temp name", "a/dot-tmp-" + std::string(32, 'a'), ".dot-tmp-" + std::string(32, 'a'), Code::PathEscape,
       "reserved"},
      {"no temp name nested", "a/b/.dot-tmpx", "a/b/.dot-tmp-" + std::string(32, '0'), Code::PathEscape, "reserved"},
      {"no temp prefix at all", "x.dot-tmp-a", ".dot-tmp-notes.txt", Code::PathEscape, "reserved"},
      {"no temp folder", "a/.dot-tm/b", "a/.dot-tmp-/b", Code::PathEscape, "reserved"},
      {"no reference name", "a/.dot-txn/x", ".dot-txn/x", Code::PathEscape, "reserved"},
      {"no adopt folder", "a/.dot-adopting", ".dot-adopting", Code::PathEscape, "reserved"},
      {"no .dot- name at the top", ".dot_x", ".dot-plugin.json", Code::PathEscape, "reserved"},
      {"reserved is an escape", "a", ".dot-tmp-\x01", Code::PathEscape, "reserved"},
  };
}

TEST(PathRules, EveryRuleAcceptsItsGoodAndRefusesItsBadExample) {
  for (const auto& c : path_cases()) {
    SCOPED_TRACE(c.rule);
    auto good = check_path(c.good);
    EXPECT_TRUE(good.ok()) << good.error().line();
    auto bad = check_path(c.bad);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code, c.code) << bad.error().line();
    EXPECT_EQ(bad.error().kind, c.kind) << bad.error().line();
    EXPECT_NE(bad.error().detail.find("path \""), std::string::npos) << bad.error().line();
  }
}

// The refusal of a reserved name names the component, not only the path.
TEST(PathRules, AReservedNameIsNamedInTheRefusal) {
  const std::string temp = ".dot-tmp-" + std::string(32, 'f');
  for (const std::string& path : {temp, "etc/app/" + temp, "etc/" + temp + "/x", std::string(".dot-history/1")}) {
    SCOPED_TRACE(path);
    auto e = check_path(path);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().code, Code::PathEscape);
    const std::string component = path.rfind(".dot-history", 0) == 0 ? ".dot-history" : temp;
    EXPECT_NE(e.error().detail.find("has the component \"" + component + "\""), std::string::npos)
        << e.error().detail;
  }
}

TEST(PathRules, DetailsEscapeControlBytesAndStayShort) {
  auto e = check_path("a\x1b[2Jb\n");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().detail.find('\x1b'), std::string::npos) << e.error().detail;
  EXPECT_EQ(e.error().detail.find('\n'), std::string::npos) << e.error().detail;
  auto big = check_path(std::string(1 << 20, 'a'));
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().kind, "too_long");
  EXPECT_LT(big.error().detail.size(), 512u);
}

struct ListCase {
  const char* rule;
  std::vector<std::string_view> good;
  std::vector<std::string_view> bad;
  Code code;
  const char* kind;
};

TEST(PathRules, PlanPathListRules) {
  const std::vector<ListCase> cases = {
      {"ascending bytes", {"B", "a", "a-b", "a.b", "b"}, {"a", "B"}, Code::Policy, "unsorted"},
      // UTF-8 byte order, not UTF-16: U+FF5E (ef bd 9e) sorts before U+1F600 (f0 9f 98 80).
      {"utf-8 byte order", {"\xef\xbd\x9e", "\xf0\x9f\x98\x80"}, {"\xf0\x9f\x98\x80", "\xef\xbd\x9e"}, Code::Policy,
       "unsorted"},
      {"no duplicate", {"a/b", "a/c"}, {"a/b", "a/b"}, Code::Policy, "duplicate"},
      {"no parent next to child", {"a/b", "a/c/d"}, {"a", "a/b"}, Code::Policy, "parent_of"},
      // A sibling sorts between the parent and its child.
      {"no parent far from child", {"a-b", "a.c", "ab/c"}, {"a", "a-b", "a/c"}, Code::Policy, "parent_of"},
      {"no grandparent", {"a/b/c", "a/bc"}, {"a", "a/b/c"}, Code::Policy, "parent_of"},
      {"each path checked", {"a", "b"}, {"a", "b/../c"}, Code::PathEscape, "dot_dot"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.rule);
    auto good = check_plan_paths(c.good);
    EXPECT_TRUE(good.ok()) << good.error().line();
    auto bad = check_plan_paths(c.bad);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code, c.code) << bad.error().line();
    EXPECT_EQ(bad.error().kind, c.kind) << bad.error().line();
  }
  EXPECT_TRUE(check_plan_paths({}).ok());
}

// Paths given one at a time (PlanPathOrder, which keeps one path and the
// lengths of its prefixes, never the list) get the verdict a look at every
// pair gives: every ascending list of these names, folders, siblings that
// sort between a folder and its files, and a name that begins another.
TEST(PathRules, PathsOneAtATimeJudgeParentsLikeEveryPair) {
  const std::vector<std::string_view> names = {"a", "a-b", "a.c", "a/b", "a/b-c", "a/b/c", "a/bc", "ab", "ab/c", "b"};
  ASSERT_TRUE(std::is_sorted(names.begin(), names.end()));
  std::size_t refused = 0;
  for (std::uint32_t set = 0; set < (1u << names.size()); ++set) {
    std::vector<std::string_view> list;
    for (std::size_t i = 0; i < names.size(); ++i)
      if (set & (1u << i)) list.push_back(names[i]);
    bool parent = false;
    for (std::string_view p : list)
      for (std::string_view q : list)
        parent = parent || (q.size() > p.size() && q.starts_with(p) && q[p.size()] == '/');
    PlanPathOrder order;
    Status verdict;
    for (std::string_view path : list)
      if (verdict.ok()) verdict = order.add(path);
    ASSERT_EQ(verdict.ok(), !parent) << fmt::format("{}", fmt::join(list, " "));
    if (!parent) continue;
    ++refused;
    EXPECT_EQ(verdict.error().kind, "parent_of");
  }
  EXPECT_GT(refused, 500u);
}

TEST(PathRules, MaxOperationsIsAProtocolLimit) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i <= kMaxPlanOperations; ++i) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "f%05zu", i);  // zero-padded: ascending
    names.emplace_back(buf);
  }
  std::vector<ProposedOperation> ops;
  for (const auto& n : names) ops.push_back({"write", 0644, n});
  auto over = check_proposed_operations(ops);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, Code::Protocol);
  EXPECT_EQ(over.error().kind, "operation_count");
  ops.pop_back();
  auto at = check_proposed_operations(ops);
  EXPECT_TRUE(at.ok()) << at.error().line();
}

TEST(PathRules, ActionAndMode) {
  struct Case {
    std::string_view action;
    std::uint64_t mode;
    const char* kind;  // nullptr: accepted
  };
  const std::vector<Case> cases = {
      {"write", 384, nullptr},  {"write", 420, nullptr},   {"write", 448, nullptr},    {"write", 493, nullptr},
      {"remove", 0, nullptr},   {"write", 0, "mode"},      {"write", 0777, "mode"},    {"write", 04755, "mode"},
      {"write", 0640, nullptr}, {"remove", 420, "mode"},   {"delete", 0, "action"},    {"Write", 420, "action"},
      {"", 0, "action"},
      // Any permission bits with the owner's read bit and no write for
      // others; group write is core's to judge (the user-private-group rule).
      {"write", 0400, nullptr}, {"write", 0750, nullptr},  {"write", 0664, nullptr},   {"write", 0775, nullptr},
      {"write", 0602, "mode"},  {"write", 0244, "mode"},   {"write", 01644, "mode"},   {"write", 02750, "mode"},
      {"write", 0666, "mode"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.action) + " " + std::to_string(c.mode));
    const ProposedOperation op{c.action, c.mode, "dir/file"};
    auto s = check_proposed_operations(std::span<const ProposedOperation>(&op, 1));
    if (!c.kind) {
      EXPECT_TRUE(s.ok()) << s.error().line();
      continue;
    }
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, Code::Policy);
    EXPECT_EQ(s.error().kind, c.kind);
    EXPECT_NE(s.error().detail.find("dir/file"), std::string::npos);
  }
}

// A link's text (check_link_text, and through check_proposed_operations):
// 1 to 4095 bytes of UTF-8 without NUL, absolute text and ".." included
// (data, never followed); present exactly on a link.
TEST(PathRules, LinkText) {
  EXPECT_TRUE(check_link_text("a", "/etc/hostname").ok());
  EXPECT_TRUE(check_link_text("a", "../../x y").ok());
  EXPECT_TRUE(check_link_text("a", "\x1b[31m").ok());  // control bytes are data; output escapes them
  EXPECT_TRUE(check_link_text("a", std::string(4095, 't')).ok());
  for (const std::string& bad : {std::string(), std::string(4096, 't'), std::string("a\0b", 3), std::string("\xff")}) {
    SCOPED_TRACE(bad.size());
    auto s = check_link_text("dir/ln", bad);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, Code::Policy);
    EXPECT_EQ(s.error().kind, "link_text");
    EXPECT_NE(s.error().detail.find("dir/ln"), std::string::npos);
  }
  const std::string text = "target";
  struct Case {
    ProposedOperation op;
    const char* kind;  // nullptr: accepted
  };
  const std::vector<Case> cases = {
      {{"link", 0, "ln", &text}, nullptr},
      {{"link", 0, "ln", nullptr}, "link_text"},
      {{"link", 420, "ln", &text}, "mode"},
      {{"write", 420, "ln", &text}, "link_text"},
      {{"remove", 0, "ln", &text}, "link_text"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.op.action) + (c.op.link_text ? " with text" : ""));
    auto s = check_proposed_operations(std::span<const ProposedOperation>(&c.op, 1));
    if (!c.kind) {
      EXPECT_TRUE(s.ok()) << s.error().line();
      continue;
    }
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().kind, c.kind) << s.error().line();
  }
}

TEST(PathRules, FolderModes) {
  for (std::uint64_t mode : {0700u, 0750u, 0755u, 0711u, 0770u, 0775u}) EXPECT_TRUE(is_folder_mode(mode)) << mode;
  for (std::uint64_t mode : {0600u, 0500u, 0644u, 0777u, 0757u, 01777u, 02750u, 0u})
    EXPECT_FALSE(is_folder_mode(mode)) << mode;
}

TEST(PathRules, ProposedFoldersAreAscendingParentsOfWritesWithFolderModes) {
  const std::vector<ProposedOperation> ops = {{"write", 0644, "a/b/c"}, {"remove", 0, "r/x"}, {"write", 0644, "z"}};
  auto check = [&](std::vector<ProposedFolder> folders) { return check_proposed_folders(folders, ops); };
  EXPECT_TRUE(check({}).ok());
  EXPECT_TRUE(check({{0750, "a"}, {0755, "a/b"}}).ok());
  struct Case {
    std::vector<ProposedFolder> folders;
    const char* kind;
    Code code;
  };
  const std::vector<Case> cases = {
      {{{0750, "a/b"}, {0750, "a"}}, "folder", Code::Policy},   // not ascending
      {{{0750, "a"}, {0750, "a"}}, "folder", Code::Policy},     // twice
      {{{0750, "r"}}, "folder", Code::Policy},                  // parent of a remove only
      {{{0750, "a/b/c"}}, "folder", Code::Policy},              // the write itself
      {{{0777, "a"}}, "mode", Code::Policy},                    // write for others
      {{{0600, "a"}}, "mode", Code::Policy},                    // no search bit for the owner
      {{{0750, "../a"}}, "dot_dot", Code::PathEscape},          // a path rule
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.kind);
    auto s = check(c.folders);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, c.code);
    EXPECT_EQ(s.error().kind, c.kind) << s.error().line();
  }
}

}  // namespace
}  // namespace dot::dpp
