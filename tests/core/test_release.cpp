// Releasing ownership (issue 32): `dot-core forget PATH` and `dot-core
// unregister ID [--forget]` change records only, never a file; a forgotten
// path is no longer judged by `status` or offered to the plugin as managed;
// `store check` agrees with what was released. And the day-to-day shape
// around them: two dot-mirror registrations in one root (each under its own
// id), a git dotfiles repository as a source, the plugin's warnings counted
// under the plan.
#include <sys/stat.h>

#include <string>
#include <vector>

#include "dot/core/planner.h"
#include "engine_harness.h"
#include "raw_sql.h"

namespace dot::core::testing {
namespace {

class ReleaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/dot-release-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    home_ = base_ / "home";
    dotfiles_ = base_ / "dotfiles";
    work_ = base_ / "work";
    fs::create_directories(home_);
    fs::create_directories(dotfiles_ / ".git" / "objects");
    fs::create_directories(work_);
    ASSERT_EQ(::chmod(home_.c_str(), 0755), 0);
    spit(dotfiles_ / ".git" / "HEAD", "ref: refs/heads/main\n", 0644);
    spit(dotfiles_ / ".dotignore", "README.md\n*.swp\n", 0644);
    spit(dotfiles_ / "README.md", "my dotfiles\n", 0644);
    spit(dotfiles_ / ".profile", "export EDITOR=vi\n", 0644);
    spit(dotfiles_ / ".vimrc", "set nocompatible\n", 0640);
    spit(work_ / ".gitconfig-work", "[user]\n\temail = me@work.example\n", 0644);
    spit(home_ / "notes.txt", "mine\n", 0644);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(base_, ec);
  }
  CmdResult run(std::vector<std::string> args, int want = 0) {
    const std::string what = args.front();
    args.push_back("--root");
    args.push_back(home_.string());
    CmdResult r = dot_core(args);
    EXPECT_EQ(r.code, want) << what << ": " << r.out << r.err;
    return r;
  }
  void register_mirror(const std::string& id, const fs::path& src) {
    run({"register", "--plugin", bin("dot-mirror"), "--id", id, "--profile", "org.dot.dpp/v1", "--assurance", "audit",
         "--allow-audit-plugin", "--input", src.string()});
  }
  void plan_and_apply(const std::string& id) {
    run({"plan", "--plugin", id, "--quiet"});
    run({"apply", "--quiet"});
  }

  fs::path base_, home_, dotfiles_, work_;
};

TEST_F(ReleaseTest, TwoMirrorsOfOneRootEachOwnTheirPathsAndAGitSourceLeavesItsRepositoryOut) {
  run({"init"});
  register_mirror("org.example.dotfiles", dotfiles_);
  register_mirror("org.example.work", work_);
  plan_and_apply("org.example.dotfiles");
  plan_and_apply("org.example.work");
  EXPECT_EQ(slurp(home_ / ".profile"), "export EDITOR=vi\n");
  EXPECT_EQ(slurp(home_ / ".gitconfig-work"), "[user]\n\temail = me@work.example\n");
  EXPECT_FALSE(fs::exists(fs::symlink_status(home_ / ".git")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(home_ / "README.md")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(home_ / ".dotignore")));
  EXPECT_EQ(slurp(home_ / "notes.txt"), "mine\n");
  // Each plugin owns its own: the work mirror may not take .profile.
  spit(work_ / ".profile", "export EDITOR=emacs\n", 0644);
  CmdResult r = run({"plan", "--plugin", "org.example.work"}, 1);
  EXPECT_NE(r.err.find("\".profile\" is owned by plugin org.example.dotfiles"), std::string::npos) << r.err;
}

TEST_F(ReleaseTest, ThePluginsWarningsAreCountedUnderThePlan) {
  spit(dotfiles_ / "big", "", 0644);
  ASSERT_EQ(::truncate((dotfiles_ / "big").c_str(), (16 << 20) + 1), 0);
  ASSERT_EQ(::mkfifo((dotfiles_ / "pipe").c_str(), 0644), 0);
  run({"init"});
  register_mirror("org.dot.mirror", dotfiles_);
  CmdResult r = run({"plan"});
  EXPECT_NE(r.out.find("the plugin sent 2 warning(s), about entries it skipped and the like: `dot-core plan "
                       "--verbose"),
            std::string::npos)
      << r.out;
  CmdResult verbose = run({"plan", "--verbose"});
  EXPECT_EQ(verbose.out.find("warning(s)"), std::string::npos) << verbose.out;
  EXPECT_NE(verbose.err.find("skipped \"big\": 16777217 bytes"), std::string::npos) << verbose.err;
}

TEST_F(ReleaseTest, ForgetReleasesAPathAndLeavesItsFileAsItIs) {
  run({"init"});
  register_mirror("org.dot.mirror", dotfiles_);
  plan_and_apply("org.dot.mirror");
  struct stat before {};
  ASSERT_EQ(::lstat((home_ / ".vimrc").c_str(), &before), 0);
  // A path nobody manages, or outside the root: nothing is forgotten.
  CmdResult none = run({"forget", (home_ / "notes.txt").string(), (home_ / ".vimrc").string()}, 1);
  EXPECT_NE(none.err.find("DOT_E_VALIDATION"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("no plugin manages \"notes.txt\""), std::string::npos) << none.err;
  CmdResult outside = run({"forget", (dotfiles_ / ".vimrc").string()}, 1);
  EXPECT_NE(outside.err.find("is not below the managed root"), std::string::npos) << outside.err;
  CmdResult f = run({"forget", (home_ / ".vimrc").string(), "--json"});
  EXPECT_NE(f.out.find("\"path\":\".vimrc\",\"plugin_id\":\"org.dot.mirror\""), std::string::npos) << f.out;
  struct stat after {};
  ASSERT_EQ(::lstat((home_ / ".vimrc").c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
  EXPECT_EQ(slurp(home_ / ".vimrc"), "set nocompatible\n");
  // An edit of a forgotten file is no drift; of a managed one it is.
  spit(home_ / ".vimrc", "my own now\n", 0640);
  run({"status", "--exit-code"});
  spit(home_ / ".profile", "edited\n", 0644);
  run({"status", "--exit-code"}, 1);
  run({"store", "check"});
  run({"forget", (home_ / ".vimrc").string()}, 1);  // once only
  // The plugin still proposes it: its next plan takes it over again.
  CmdResult again = run({"plan"});
  EXPECT_NE(again.out.find("take over .vimrc (exists, not managed yet)"), std::string::npos) << again.out;
}

TEST_F(ReleaseTest, UnregisterIsRefusedWhileThePluginManagesPathsOrHasASealedPlan) {
  run({"init"});
  register_mirror("org.dot.mirror", dotfiles_);
  CmdResult unknown = run({"unregister", "org.example.nothing"}, 1);
  EXPECT_NE(unknown.err.find("DOT_E_VALIDATION: no plugin is registered as org.example.nothing"), std::string::npos)
      << unknown.err;
  run({"plan", "--quiet"});
  CmdResult busy = run({"unregister", "org.dot.mirror"}, 1);
  EXPECT_NE(busy.err.find("DOT_E_CONFLICT"), std::string::npos) << busy.err;
  run({"apply", "--quiet"});
  CmdResult owns = run({"unregister", "org.dot.mirror"}, 1);
  EXPECT_NE(owns.err.find("DOT_E_POLICY: plugin org.dot.mirror manages 2 path(s)"), std::string::npos) << owns.err;
  const auto files = tree(home_);
  CmdResult done = run({"unregister", "--forget", "org.dot.mirror"});
  EXPECT_NE(done.out.find("unregistered org.dot.mirror"), std::string::npos) << done.out;
  EXPECT_NE(done.out.find("stopped managing .profile (owned by org.dot.mirror"), std::string::npos) << done.out;
  EXPECT_EQ(tree(home_), files);
  EXPECT_FALSE(fs::exists(home_ / ".dot" / "plugin-org.dot.mirror"));
  CmdResult status = run({"status", "--exit-code"});
  EXPECT_EQ(status.out.find("org.dot.mirror ("), std::string::npos) << status.out;
  run({"store", "check"});
  // Registered again, it takes over its old files as anyone's (a file that
  // already holds what it proposes is no change: it is taken over when its
  // source changes).
  register_mirror("org.dot.mirror", dotfiles_);
  CmdResult same = run({"plan"});
  EXPECT_NE(same.out.find("no changes"), std::string::npos) << same.out;
  spit(dotfiles_ / ".profile", "export EDITOR=nvim\n", 0644);
  CmdResult again = run({"plan"});
  EXPECT_NE(again.out.find("take over .profile (exists, not managed yet)"), std::string::npos) << again.out;
}

// The plugin's cache (docs/spec/dpp-general.md, "The plugin's cache"): made
// for the plugin and kept between its plans, emptied when it is replaced,
// removed with it, and never reached through a symlink.
TEST_F(ReleaseTest, APluginsCacheFolderIsKeptBetweenPlansEmptiedByReplaceAndRemovedByUnregister) {
  run({"init"});
  register_mirror("org.dot.mirror", dotfiles_);
  const fs::path cache = home_ / ".dot" / "cache-org.dot.mirror";
  plan_and_apply("org.dot.mirror");
  EXPECT_TRUE(fs::is_regular_file(cache / "digests"));
  struct stat st {};
  ASSERT_EQ(::lstat(cache.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  spit(cache / "mine", "the plugin's own\n", 0600);
  run({"plan", "--quiet"});
  EXPECT_TRUE(fs::exists(cache / "mine"));
  run({"register", "--plugin", bin("dot-mirror"), "--id", "org.dot.mirror", "--profile", "org.dot.dpp/v1",
       "--assurance", "audit", "--allow-audit-plugin", "--input", dotfiles_.string(), "--replace"});
  EXPECT_FALSE(fs::exists(cache)) << "a replaced plugin's files are not the new one's";
  // A symlink where the folder belongs: refused, nothing written through it.
  const fs::path elsewhere = base_ / "elsewhere";
  fs::create_directories(elsewhere);
  fs::create_directory_symlink(elsewhere, cache);
  CmdResult refused = run({"plan"}, 1);
  EXPECT_EQ(refused.err.rfind("DOT_E_PATH_ESCAPE:", 0), 0u) << refused.err;
  EXPECT_NE(refused.err.find("cache-org.dot.mirror"), std::string::npos) << refused.err;
  EXPECT_TRUE(fs::is_empty(elsewhere));
  fs::remove(cache);
  run({"plan", "--quiet"});
  EXPECT_TRUE(fs::is_regular_file(cache / "digests"));
  run({"unregister", "--forget", "org.dot.mirror"});
  EXPECT_FALSE(fs::exists(cache));
  EXPECT_TRUE(fs::is_empty(elsewhere));
}

// Through core with declared digests (dot-mirror declares them): a symlink
// of the source over an existing one nobody manages is taken over, a
// managed one replaced, and rollback puts back each link text exactly.
TEST_F(ReleaseTest, LinksAreTakenOverReplacedAndRolledBackThroughCore) {
  fs::create_directories(dotfiles_ / ".vim");
  spit(dotfiles_ / ".vim" / "vimrc", "set number\n", 0644);
  fs::remove(dotfiles_ / ".vimrc");
  ASSERT_EQ(::symlink(".vim/vimrc", (dotfiles_ / ".vimrc").c_str()), 0);
  ASSERT_EQ(::symlink("/usr/share/vim/vimrc", (home_ / ".vimrc").c_str()), 0);
  run({"init"});
  register_mirror("org.dot.mirror", dotfiles_);
  CmdResult first = run({"plan"});
  EXPECT_NE(first.out.find("take over .vimrc (exists, not managed yet): link -> \"/usr/share/vim/vimrc\" by link -> "
                           "\".vim/vimrc\"\n"),
            std::string::npos)
      << first.out;
  const auto sealed_at = first.out.find("sealed plan ");
  ASSERT_NE(sealed_at, std::string::npos) << first.out;
  const std::string first_id = first.out.substr(sealed_at + 12, 64);
  run({"apply", "--quiet"});
  EXPECT_EQ(fs::read_symlink(home_ / ".vimrc"), ".vim/vimrc");
  ASSERT_EQ(::unlink((dotfiles_ / ".vimrc").c_str()), 0);
  ASSERT_EQ(::symlink(".vim/other", (dotfiles_ / ".vimrc").c_str()), 0);
  CmdResult second = run({"plan"});
  EXPECT_NE(second.out.find("replace link .vimrc -> \".vim/vimrc\" by -> \".vim/other\"\n"), std::string::npos)
      << second.out;
  const std::string second_id = json_field(run({"plan", "--json"}).out, "plan_id");
  run({"apply", second_id.substr(0, 8), "--quiet"});
  EXPECT_EQ(fs::read_symlink(home_ / ".vimrc"), ".vim/other");
  run({"rollback", second_id});
  EXPECT_EQ(fs::read_symlink(home_ / ".vimrc"), ".vim/vimrc");
  run({"rollback", first_id});
  EXPECT_EQ(fs::read_symlink(home_ / ".vimrc"), "/usr/share/vim/vimrc");
  run({"store", "check"});
}

// The same as root on an /etc-like tree: folders other users must read are
// created with the source's 0755, files keep 0644, 0640 and 0600, an
// existing file is taken over and given back by rollback, and a service's
// folder nobody proposes is left alone.
TEST_F(ReleaseTest, AsRootAnEtcLikeTreeKeepsModesOthersNeedAndRollsBackExactly) {
  if (::geteuid() != 0) GTEST_SKIP() << "an /etc-like tree is root's (the CI machine runs as root)";
  const fs::path etc = base_ / "etc", src = base_ / "etc-src";
  fs::create_directories(etc / "ssh");
  ASSERT_EQ(::chmod(etc.c_str(), 0755), 0);
  ASSERT_EQ(::chmod((etc / "ssh").c_str(), 0755), 0);
  spit(etc / "hostname", "old-name\n", 0644);
  spit(etc / "ssh" / "ssh_config", "Host *\n", 0644);
  fs::create_directories(src / "nginx" / "conf.d");
  fs::create_directories(src / "default");
  for (const char* d : {"", "/nginx", "/nginx/conf.d", "/default"})
    ASSERT_EQ(::chmod((src.string() + d).c_str(), 0755), 0);
  spit(src / "hostname", "box\n", 0644);
  spit(src / "nginx" / "nginx.conf", "events {}\n", 0644);
  spit(src / "nginx" / "conf.d" / "site.conf", "server {}\n", 0640);
  spit(src / "default" / "app", "TOKEN=x\n", 0600);
  auto in_etc = [&](std::vector<std::string> args, int want = 0) {
    args.push_back("--root");
    args.push_back(etc.string());
    CmdResult r = dot_core(args);
    EXPECT_EQ(r.code, want) << args.front() << ": " << r.out << r.err;
    return r;
  };
  auto mode = [](const fs::path& p) {
    struct stat st {};
    EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
    return st.st_mode & 07777;
  };
  in_etc({"init"});
  in_etc({"register", "--plugin", bin("dot-mirror"), "--id", "org.example.etc", "--profile", "org.dot.dpp/v1",
          "--assurance", "audit", "--allow-audit-plugin", "--input", src.string()});
  CmdResult plan = in_etc({"plan"});
  EXPECT_NE(plan.out.find("take over hostname (exists, not managed yet)"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("create folder nginx/conf.d/ (mode 0755)"), std::string::npos) << plan.out;
  const auto sealed_at = plan.out.find("sealed plan ");
  ASSERT_NE(sealed_at, std::string::npos) << plan.out;
  const std::string id = plan.out.substr(sealed_at + 12, 64);
  in_etc({"apply", "--quiet"});
  EXPECT_EQ(mode(etc / "nginx"), 0755u);
  EXPECT_EQ(mode(etc / "nginx" / "conf.d"), 0755u);
  EXPECT_EQ(mode(etc / "default"), 0755u);
  EXPECT_EQ(mode(etc / "nginx" / "nginx.conf"), 0644u);
  EXPECT_EQ(mode(etc / "nginx" / "conf.d" / "site.conf"), 0640u);
  EXPECT_EQ(mode(etc / "default" / "app"), 0600u);
  EXPECT_EQ(slurp(etc / "hostname"), "box\n");
  EXPECT_EQ(slurp(etc / "ssh" / "ssh_config"), "Host *\n");
  in_etc({"rollback", id});
  EXPECT_EQ(slurp(etc / "hostname"), "old-name\n");
  EXPECT_EQ(mode(etc / "hostname"), 0644u);
  EXPECT_FALSE(fs::exists(etc / "nginx"));
  EXPECT_FALSE(fs::exists(etc / "default"));
  EXPECT_EQ(slurp(etc / "ssh" / "ssh_config"), "Host *\n");
  in_etc({"store", "check"});
}

// The everyday layout: the root is the home folder and the dotfiles live
// inside it. The input may be inside the root (never the root, its state
// folder or above it), and a plan may not write inside its own input.
TEST_F(ReleaseTest, TheDotfilesMayLiveInsideTheRootButAPlanNeverWritesThere) {
  const fs::path inside = home_ / "dotfiles";
  fs::create_directories(inside);
  spit(inside / ".profile", "export EDITOR=vim\n", 0644);
  run({"init"});
  register_mirror("org.dot.mirror", inside);
  run({"plan", "--quiet"});
  run({"apply", "--quiet"});
  EXPECT_EQ(slurp(home_ / ".profile"), "export EDITOR=vim\n");
  // A source folder named like the input would write inside it: refused.
  fs::create_directories(inside / "dotfiles");
  spit(inside / "dotfiles" / "x", "x\n", 0644);
  CmdResult r = run({"plan"}, 1);
  EXPECT_NE(r.err.find("target \"dotfiles/x\" is inside the plugin's own input \"dotfiles\""), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(inside / "dotfiles" / "dotfiles"));
  CmdResult state = run({"register", "--plugin", bin("dot-mirror"), "--id", "org.example.two", "--profile",
                         "org.dot.dpp/v1", "--assurance", "audit", "--input", (home_ / ".dot").string()},
                        1);
  EXPECT_NE(state.err.find("its state folder"), std::string::npos) << state.err;
}

// A plan already known to change nothing once its targets are observed
// (dot-mirror declares every digest, and each matches) does not write its
// large proposal document only to delete it when it ends NO_CHANGES: killed
// right after its proposal id is recorded, the row holds the id and no
// document. A plan that changes something keeps its document at that point.
TEST_F(ReleaseTest, ANoChangePlanNeverWritesItsLargeProposalDocument) {
  for (int i = 0; i < 40; ++i) spit(dotfiles_ / ("conf" + std::to_string(i)), "line " + std::to_string(i) + "\n", 0644);
  run({"init"});
  register_mirror("org.example.dotfiles", dotfiles_);
  plan_and_apply("org.example.dotfiles");
  const fs::path db = home_ / ".dot" / "store.db";
  auto kill_at_proposal_id = [&] {
    CmdResult crashed =
        run_core(kHookedCore, {"plan", "--root", home_.string(), "--quiet"}, {"DOT_TEST_CRASH_AT=store.proposal.id"});
    EXPECT_EQ(crashed.signal, SIGKILL) << crashed.out << crashed.err;
    Sql q(db);
    const auto rows = q.run(
        "SELECT (proposal_id IS NOT NULL) || ',' || coalesce(length(proposal), 'null') FROM txn ORDER BY id DESC "
        "LIMIT 1");
    run({"recover"});
    return rows.empty() ? std::string() : rows.front();
  };
  EXPECT_EQ(kill_at_proposal_id(), "1,null");
  spit(dotfiles_ / "conf7", "changed\n", 0644);
  const std::string changing = kill_at_proposal_id();
  ASSERT_EQ(changing.rfind("1,", 0), 0u) << changing;
  EXPECT_GT(std::stoul(changing.substr(2)), kKeptNoChangeProposalBytes) << changing;
}

}  // namespace
}  // namespace dot::core::testing
