// Owner-only write access with the user-private-group exception (write_access.h).
#include "dot/base/write_access.h"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

namespace dot {

namespace {

// The buffer sysconf suggests for the *_r lookups, grown on ERANGE.
template <typename Lookup>
bool lookup_with_buffer(long hint, Lookup&& lookup) {
  std::vector<char> buffer(static_cast<std::size_t>(hint > 0 ? hint : 4096));
  for (;;) {
    int err = lookup(buffer.data(), buffer.size());
    if (err != ERANGE) return err == 0;
    if (buffer.size() > (std::size_t{1} << 24)) return false;
    buffer.resize(buffer.size() * 2);
  }
}

std::optional<std::string> account_name(uid_t uid) {
  std::optional<std::string> name;
  lookup_with_buffer(::sysconf(_SC_GETPW_R_SIZE_MAX), [&](char* buf, std::size_t size) {
    passwd entry{};
    passwd* found = nullptr;
    int err = ::getpwuid_r(uid, &entry, buf, size, &found);
    if (err == 0 && found != nullptr) name = found->pw_name;
    return err;
  });
  return name;
}

// Every account whose primary group is `gid` (the account database has no
// index by group, so this walks it once).
void add_primary_members(gid_t gid, std::vector<std::string>& members) {
  ::setpwent();
  std::vector<char> buffer(16384);
  for (;;) {
    passwd entry{};
    passwd* found = nullptr;
    int err = ::getpwent_r(&entry, buffer.data(), buffer.size(), &found);
    if (err == ERANGE && buffer.size() < (std::size_t{1} << 24)) {
      buffer.resize(buffer.size() * 2);
      continue;
    }
    if (err != 0 || found == nullptr) break;
    if (found->pw_gid == gid) members.emplace_back(found->pw_name);
  }
  ::endpwent();
}

std::string octal_mode(mode_t mode) { return fmt::format("{:04o}", mode & 07777); }

}  // namespace

GroupMembership group_membership(gid_t gid) {
  GroupMembership out;
  lookup_with_buffer(::sysconf(_SC_GETGR_R_SIZE_MAX), [&](char* buf, std::size_t size) {
    group entry{};
    group* found = nullptr;
    int err = ::getgrgid_r(gid, &entry, buf, size, &found);
    if (err == 0 && found != nullptr) {
      out.found = true;
      out.name = found->gr_name;
      for (char** member = found->gr_mem; member != nullptr && *member != nullptr; ++member)
        out.members.emplace_back(*member);
    }
    return err;
  });
  if (!out.found) return out;
  add_primary_members(gid, out.members);
  std::sort(out.members.begin(), out.members.end());
  out.members.erase(std::unique(out.members.begin(), out.members.end()), out.members.end());
  return out;
}

bool is_user_private_group(const GroupMembership& group, std::string_view owner) {
  return group.found && group.members.size() == 1 && group.members.front() == owner;
}

std::optional<std::string> WriteAccessJudge::refusal(mode_t mode, uid_t owner, gid_t gid) {
  if ((mode & S_IWOTH) != 0) return fmt::format("mode {}: every user can write it", octal_mode(mode));
  if ((mode & S_IWGRP) == 0) return std::nullopt;
  auto [it, inserted] = group_verdicts_.try_emplace({owner, gid});
  if (inserted) {
    GroupMembership group = group_membership(gid);
    std::optional<std::string> name = account_name(owner);
    if (!group.found) {
      it->second = fmt::format("group {} has no entry in the account database", gid);
    } else if (!name || !is_user_private_group(group, *name)) {
      std::string members;
      for (const std::string& member : group.members) members += (members.empty() ? "" : ", ") + member;
      it->second = fmt::format("group {} ({}) can write it and is not the owner's private group", group.name,
                               members.empty() ? std::string("no members") : members);
    }
  }
  if (!it->second) return std::nullopt;
  return fmt::format("mode {}: {}", octal_mode(mode), *it->second);
}

}  // namespace dot
