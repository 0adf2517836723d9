// The owner-only write rule and Debian's user-private-group exception (write_access.h).
#include "dot/base/write_access.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace dot {
namespace {

TEST(UserPrivateGroup, OnlyMemberIsTheOwner) {
  EXPECT_TRUE(is_user_private_group({.found = true, .name = "alice", .members = {"alice"}}, "alice"));
}

TEST(UserPrivateGroup, AnotherMemberBreaksTheRule) {
  EXPECT_FALSE(is_user_private_group({.found = true, .name = "alice", .members = {"alice", "bob"}}, "alice"));
  EXPECT_FALSE(is_user_private_group({.found = true, .name = "bob", .members = {"bob"}}, "alice"));
}

TEST(UserPrivateGroup, NoMemberOrNoEntryIsNotPrivate) {
  // A group nobody belongs to is typically a setgid program's: not a private group.
  EXPECT_FALSE(is_user_private_group({.found = true, .name = "games", .members = {}}, "alice"));
  EXPECT_FALSE(is_user_private_group({.found = false, .name = "", .members = {"alice"}}, "alice"));
}

// The effective user's own primary group, looked up for real; the test skips
// only on an account database where it is shared (not the case on Debian's
// default set-up or in CI, where it is root's group 0 with root alone).
TEST(WriteAccessJudge, OwnPrivateGroupMayWrite) {
  const uid_t uid = ::geteuid();
  const passwd* me = ::getpwuid(uid);
  ASSERT_NE(me, nullptr);
  GroupMembership group = group_membership(me->pw_gid);
  ASSERT_TRUE(group.found);
  if (!is_user_private_group(group, me->pw_name)) GTEST_SKIP() << "the primary group is shared here";
  WriteAccessJudge judge;
  EXPECT_EQ(judge.refusal(0664, uid, me->pw_gid), std::nullopt);
  EXPECT_EQ(judge.refusal(0775, uid, me->pw_gid), std::nullopt);
  EXPECT_EQ(judge.refusal(0644, uid, me->pw_gid), std::nullopt);
}

TEST(WriteAccessJudge, OtherWriteIsAlwaysRefused) {
  WriteAccessJudge judge;
  auto why = judge.refusal(0666, ::geteuid(), ::getegid());
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "mode 0666: every user can write it");
}

TEST(WriteAccessJudge, SharedGroupIsRefusedNamingGroupAndMembers) {
  // Find a group the owner is not the sole member of: one with no member at
  // all (staff, users on Debian) is refused as "no members".
  WriteAccessJudge judge;
  for (gid_t gid : {gid_t{50}, gid_t{100}, gid_t{4}}) {
    GroupMembership group = group_membership(gid);
    if (!group.found || !group.members.empty()) continue;
    auto why = judge.refusal(0664, ::geteuid(), gid);
    ASSERT_TRUE(why.has_value());
    EXPECT_EQ(*why,
              "mode 0664: group " + group.name + " (no members) can write it and is not the owner's private group");
    return;
  }
  GTEST_SKIP() << "no member-less group among staff, users, adm";
}

TEST(WriteAccessJudge, UnknownGroupIsRefused) {
  WriteAccessJudge judge;
  const gid_t unknown = 4000000123u;
  ASSERT_EQ(::getgrgid(unknown), nullptr);
  auto why = judge.refusal(0660, ::geteuid(), unknown);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "mode 0660: group 4000000123 has no entry in the account database");
}

}  // namespace
}  // namespace dot
