#pragma once
// Who besides its owner may write a file or folder: the one place for the rule
// that a managed root, a target and a folder are writable by their owner only,
// with Debian's user-private-group exception (the exception Debian's OpenSSH
// makes for ~/.ssh): group write is harmless when the group's only member is
// the owner. Facts come from the system's account database (NSS).

#include <sys/types.h>
#include <unistd.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dot {

// A group as the account database describes it: its name and every member,
// whether listed in the group entry or holding it as their primary group
// (sorted, each name once). `found` is false for a gid with no entry.
struct GroupMembership {
  bool found = false;
  std::string name;
  std::vector<std::string> members;
};

// The membership of `gid` now (getgrgid_r, then every passwd entry through
// getpwent_r for primary-group members).
GroupMembership group_membership(gid_t gid);

// Debian's rule: the group exists, has at least one member, and its only
// member is the account named `owner`.
bool is_user_private_group(const GroupMembership& group, std::string_view owner);

// Judges entries for one command: nullopt when only the owner can write an
// entry with these mode bits, owner and group; otherwise a phrase saying why
// not, naming the mode, the group and its members ("mode 0664: group staff
// (alice, bob) can write it"). Group verdicts are remembered per (owner, gid)
// for the judge's lifetime, so a tree of 0664 files costs one lookup.
class WriteAccessJudge {
 public:
  std::optional<std::string> refusal(mode_t mode, uid_t owner, gid_t gid);
  // Who this process writes as, read once per judge (one system call each
  // per target of a 100,000-path plan otherwise).
  uid_t euid() const noexcept { return euid_; }
  gid_t egid() const noexcept { return egid_; }

 private:
  uid_t euid_ = ::geteuid();
  gid_t egid_ = ::getegid();
  std::map<std::pair<uid_t, gid_t>, std::optional<std::string>> group_verdicts_;
};

}  // namespace dot
