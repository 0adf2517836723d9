// A root made in place in a folder that already holds the user's files: no
// command reads, writes, moves or lists an entry no plugin proposes
// (issue 32). Without tracing: an unmanaged file whose access time is older
// than its modification time gets a new one from any read (relatime), a
// FIFO would block any reader (the command would hang and be killed), and
// every command's output is searched for the names.
#include <fcntl.h>
#include <sys/stat.h>

#include <array>
#include <string>
#include <vector>

#include "engine_harness.h"

namespace dot::core::testing {
namespace {

// What must not change about an entry, taken with lstat (never opened):
// type and mode, owner, size, inode, both times to the nanosecond.
std::string facts(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return "absent";
  return fmt::format("{:o} {}:{} {} {} a{}.{} m{}.{}", st.st_mode, st.st_uid, st.st_gid, st.st_size, st.st_ino,
                     st.st_atim.tv_sec, st.st_atim.tv_nsec, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

// Access time 1000 s, modification time 2000 s after the epoch: relatime
// updates the access time of such a file on its next read.
void set_old_times(const fs::path& p) {
  const std::array<timespec, 2> times{timespec{1000, 0}, timespec{2000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), times.data(), AT_SYMLINK_NOFOLLOW), 0) << p;
}

class UnmanagedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/dot-unmanaged-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    home_ = base_ / "home";
    src_ = base_ / "dotfiles";
    fs::create_directories(src_ / ".config" / "app");
    spit(src_ / ".profile", "export EDITOR=vi\n", 0644);
    spit(src_ / ".config" / "app" / "conf", "colour = 1\n", 0644);
    fs::create_directories(home_ / ".config" / "other-unmanaged");
    fs::create_directories(base_ / "elsewhere");
    ASSERT_EQ(::chmod(home_.c_str(), 0755), 0);
    spit(base_ / "elsewhere" / "vimrc", "set nocompatible\n", 0644);
    const std::vector<std::pair<std::string, mode_t>> files{{"notes-unmanaged.txt", 0644},
                                                            {".secret-unmanaged", 0000},
                                                            {".dot-tmp-" + std::string(32, 'a'), 0600},
                                                            {".config/unmanaged.ini", 0640},
                                                            {".config/other-unmanaged/settings-unmanaged", 0600}};
    for (const auto& [name, mode] : files) {
      spit(home_ / name, "the user's own " + name + "\n", mode);
      unmanaged_.push_back(name);
    }
    for (const char* fifo : {"fifo-unmanaged", ".config/fifo-unmanaged"}) {
      ASSERT_EQ(::mkfifo((home_ / fifo).c_str(), 0600), 0);
      unmanaged_.push_back(fifo);
    }
    ASSERT_EQ(::symlink((base_ / "elsewhere" / "vimrc").c_str(), (home_ / ".vimrc-unmanaged").c_str()), 0);
    unmanaged_.push_back(".vimrc-unmanaged");
    unmanaged_.push_back(".config/other-unmanaged");
    for (const auto& name : unmanaged_) set_old_times(home_ / name);
    set_old_times(base_ / "elsewhere" / "vimrc");
    for (const auto& name : unmanaged_) before_[name] = facts(home_ / name);
    link_target_ = facts(base_ / "elsewhere" / "vimrc");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(base_, ec);
  }

  // Runs dot-core on the root and checks, after the command, that every
  // unmanaged entry is exactly as it was and that no output names one.
  CmdResult run(std::vector<std::string> args, int want = 0) {
    const std::string what = args.front();
    args.push_back("--root");
    args.push_back(home_.string());
    CmdResult r = dot_core(args);
    EXPECT_EQ(r.signal, 0) << what << " was killed (blocked on a FIFO?)";
    EXPECT_EQ(r.code, want) << what << ": " << r.out << r.err;
    for (const auto& name : unmanaged_) {
      EXPECT_EQ(facts(home_ / name), before_[name]) << what << " touched " << name;
      const std::string leaf = fs::path(name).filename().string();
      EXPECT_EQ(r.out.find(leaf), std::string::npos) << what << " listed " << name << ": " << r.out;
      EXPECT_EQ(r.err.find(leaf), std::string::npos) << what << " listed " << name << ": " << r.err;
    }
    EXPECT_EQ(facts(base_ / "elsewhere" / "vimrc"), link_target_) << what << " went through the symlink";
    return r;
  }

  fs::path base_, home_, src_;
  std::vector<std::string> unmanaged_;
  std::map<std::string, std::string> before_;
  std::string link_target_;
};

TEST_F(UnmanagedTest, NoCommandReadsWritesMovesOrListsAnEntryNoPluginProposes) {
  run({"init"});
  run({"register", "--plugin", bin("dot-mirror"), "--id", "org.dot.mirror", "--profile", "org.dot.dpp/v1",
       "--assurance", "audit", "--allow-audit-plugin", "--input", src_.string()});
  const std::string first = json_field(run({"plan", "--json"}).out, "plan_id");
  run({"apply"});
  EXPECT_EQ(slurp(home_ / ".profile"), "export EDITOR=vi\n");
  EXPECT_EQ(slurp(home_ / ".config" / "app" / "conf"), "colour = 1\n");
  run({"status", "--exit-code"});
  // A hand edit is drift; the next plan reverts it.
  spit(home_ / ".profile", "edited by hand\n", 0644);
  run({"status", "--exit-code"}, 1);
  spit(src_ / ".profile", "export EDITOR=nvim\n", 0644);
  const std::string second = json_field(run({"plan", "--json"}).out, "plan_id");
  run({"apply", second.substr(0, 8)});
  EXPECT_EQ(slurp(home_ / ".profile"), "export EDITOR=nvim\n");
  run({"rollback", second});
  EXPECT_EQ(slurp(home_ / ".profile"), "edited by hand\n");
  run({"recover"});
  run({"store", "prune", "--keep", "1"});
  run({"store", "check"});
  run({"inspect", "list"});
  run({"inspect", "show", first});
  run({"status"});
  // Last, since reading changes access times: every byte is the user's.
  for (const auto& name : unmanaged_) {
    if (fs::is_regular_file(fs::symlink_status(home_ / name))) {
      EXPECT_EQ(slurp(home_ / name), "the user's own " + name + "\n") << name;
    }
  }
  EXPECT_EQ(slurp(base_ / "elsewhere" / "vimrc"), "set nocompatible\n");
}

}  // namespace
}  // namespace dot::core::testing
