// dot-mirror (plugins/dot-mirror) driven the way core drives a general
// plugin: the built executable under HostSession's general profile, with a
// temporary source folder and stage. Every plan it answers is also put
// through core's own plan-path rules (the plan core would accept).
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "dot/base/beneath.h"
#include "dot/base/fd.h"
#include "dot/base/process.h"
#include "dot/base/racy_time.h"
#include "dot/base/sha256.h"
#include "dot/dpp/path_rules.h"
#include "drive.h"

namespace dot::dpp {
namespace {

namespace fs = std::filesystem;
using testing::bin;
using testing::DriveOptions;
using testing::DriveResult;
using Ops = std::vector<general::Operation>;

// The operation a symlink of SRC becomes: a link holding its text.
general::Operation link_op(std::string path, std::string text) {
  general::Operation op{"link", 0, std::move(path)};
  op.link_text = std::move(text);
  return op;
}
using Files = std::map<std::string, std::string>;

// A fresh 0700 folder, removed by descriptor (paths below it may be longer
// than PATH_MAX, which std::filesystem::remove_all cannot reach).
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "dot-mirror-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    if (path_.empty()) return;
    UniqueFd parent(::open(fs::temp_directory_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    (void)beneath::remove_tree(parent.get(), fs::path(path_).filename().string());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Creates `rel` (its folders too) below `root` through descriptors, whatever
// the length of the whole path, with `bytes` and exactly `mode`.
void put(const std::string& root, std::string_view rel, std::string_view bytes, mode_t mode = 0644) {
  UniqueFd dir(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(dir) << root;
  std::string_view rest = rel;
  for (auto slash = rest.find('/'); slash != std::string_view::npos; slash = rest.find('/')) {
    std::string name(rest.substr(0, slash));
    (void)::mkdirat(dir.get(), name.c_str(), 0755);
    UniqueFd sub(::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    ASSERT_TRUE(sub) << name;
    dir = std::move(sub);
    rest.remove_prefix(slash + 1);
  }
  std::string name(rest);
  UniqueFd f(::openat(dir.get(), name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  ASSERT_TRUE(f) << rel;
  ASSERT_TRUE(write_all(f.get(), bytes, "test file").ok());
  ASSERT_EQ(::fchmod(f.get(), mode), 0);
}

struct Run {
  DriveResult r;
  Ops ops;
  std::map<std::string, std::string> stage_files;   // every regular file in the stage: its bytes
  std::set<std::string> stage_other;                // anything else in the stage but folders
  std::map<std::string, general::Digest> declared;  // each write's, when digests were negotiated
};

// Everything below `dirfd`, through descriptors (the stage may hold paths
// longer than PATH_MAX).
void list_tree(int dirfd, const std::string& prefix, std::map<std::string, std::string>& files,
               std::set<std::string>& other) {
  auto names = beneath::list_entries(dirfd);
  ASSERT_TRUE(names.ok()) << names.error().line();
  for (const auto& name : *names) {
    const std::string rel = prefix + name;
    struct stat st {};
    ASSERT_EQ(::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW), 0) << rel;
    if (S_ISDIR(st.st_mode)) {
      UniqueFd sub(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      ASSERT_TRUE(sub) << rel;
      list_tree(sub.get(), rel + "/", files, other);
    } else if (S_ISREG(st.st_mode)) {
      UniqueFd f(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
      ASSERT_TRUE(f) << rel;
      auto bytes = read_all(f.get(), 1 << 20, rel);
      ASSERT_TRUE(bytes.ok()) << bytes.error().line();
      files[rel] = *bytes;
    } else {
      other.insert(rel);
    }
  }
}

Run mirror(const std::string& src, std::vector<std::string> managed = {}, DriveOptions opt = {}) {
  Run out;
  TempDir stage;
  opt.profile = Profile::General;
  opt.id = "org.dot.mirror";
  opt.inputs = {src};
  opt.managed = std::move(managed);
  out.r = testing::drive(bin("dot-mirror"), stage.path(), opt);
  out.ops = out.r.plan.operations;
  // What the plan declared is checked here once; the cases compare the rest.
  for (auto& op : out.ops) {
    if (op.digest) out.declared[op.path] = *std::exchange(op.digest, std::nullopt);
    EXPECT_EQ(op.action == "write" && out.r.digests, out.declared.count(op.path) == 1) << op.path;
  }
  UniqueFd top(::open(stage.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  list_tree(top.get(), "", out.stage_files, out.stage_other);
  EXPECT_TRUE(list_children().empty());
  // Whatever it answered is a plan core accepts.
  std::vector<dpp::ProposedOperation> proposed;
  for (const auto& op : out.ops)
    proposed.push_back({op.action, op.mode, op.path, op.link_text ? &*op.link_text : nullptr});
  auto st = dpp::check_proposed_operations(proposed);
  EXPECT_TRUE(st.ok()) << st.error().line();
  // Every staged file of a run that succeeded is exactly what dot.plan
  // declared for it (a failed one may leave one that is not: core then
  // removes the stage).
  if (out.r.status.ok())
    for (const auto& [path, bytes] : out.stage_files)
      if (auto d = out.declared.find(path); d != out.declared.end()) {
        EXPECT_EQ(sha256_hex(bytes), d->second.sha256) << path;
        EXPECT_EQ(bytes.size(), d->second.size) << path;
      }
  return out;
}

std::vector<std::string> warnings(const DriveResult& r) {
  std::vector<std::string> w;
  for (const auto& l : r.logs) {
    EXPECT_EQ(l.method, Method::Plan) << l.message;
    if (l.level == "warning") w.push_back(l.message);
  }
  return w;
}

// One of the warnings holds `text`.
void expect_warning(const std::vector<std::string>& warnings, std::string_view text) {
  EXPECT_TRUE(std::any_of(warnings.begin(), warnings.end(),
                          [&](const std::string& w) { return w.find(text) != std::string::npos; }))
      << "no warning holds \"" << text << "\" in " << ::testing::PrintToString(warnings);
}

void expect_plugin_error(const DriveResult& r, Method method, std::int64_t code, std::string_view text) {
  ASSERT_FALSE(r.status.ok()) << "accepted";
  EXPECT_EQ(code_name(r.status.error().code), code_name(Code::PluginError)) << r.status.error().line();
  ASSERT_TRUE(r.plugin_error.has_value()) << r.status.error().line();
  EXPECT_EQ(r.plugin_error->method, method) << r.plugin_error->error.message;
  EXPECT_EQ(r.plugin_error->error.code, code) << r.plugin_error->error.message;
  EXPECT_NE(r.plugin_error->error.message.find(text), std::string::npos)
      << "message lacks \"" << text << "\": " << r.plugin_error->error.message;
}

std::uint64_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST(Mirror, TheSampleTreeIsProposedCopiedAndHashed) {
  const std::string src = std::string(DOT_SOURCE_DIR) + "/examples/mirror-sample";
  auto m = mirror(src);
  ASSERT_TRUE(m.r.status.ok()) << m.r.status.error().line();
  // Git keeps the execute bit and nothing else of a mode: the rest depends
  // on the checkout's umask, so each expected mode follows the mapping from
  // the file as checked out.
  ASSERT_NE(mode_of(src + "/bin/greet.sh") & 0100, 0u) << "the sample script lost its execute bit";
  auto kept = [&](const char* rel) { return (mode_of(src + "/" + rel) & 0755) | 0400; };
  Ops want = {{"write", kept("README.txt"), "README.txt"},
              {"write", kept("bin/greet.sh"), "bin/greet.sh"},
              {"write", kept("config/app.conf"), "config/app.conf"},
              {"write", kept("config/nested/deep/level.conf"), "config/nested/deep/level.conf"},
              {"write", kept("notes/caf\xc3\xa9.txt"), "notes/caf\xc3\xa9.txt"}};
  EXPECT_EQ(m.ops, want);
  ASSERT_EQ(m.r.artifacts.artifacts.size(), want.size());
  std::map<std::string, std::string> expect_stage;
  for (std::size_t i = 0; i < want.size(); ++i) {
    auto bytes = read_file(src + "/" + want[i].path, 1 << 20);
    ASSERT_TRUE(bytes.ok());
    EXPECT_EQ(m.r.artifacts.artifacts[i], (general::Artifact{want[i].path, sha256_hex(*bytes), bytes->size()}));
    expect_stage[want[i].path] = *bytes;
  }
  EXPECT_EQ(m.stage_files, expect_stage);
  EXPECT_TRUE(m.stage_other.empty());
  EXPECT_TRUE(warnings(m.r).empty());
  ASSERT_EQ(m.r.logs.size(), 1u);
  EXPECT_EQ(m.r.logs[0].level, "info");
  EXPECT_NE(m.r.logs[0].message.find("5 files to write, 0 managed paths to remove"), std::string::npos)
      << m.r.logs[0].message;
}

TEST(Mirror, EveryFolderOnTheWayToAFileIsNamedWithItsSourceMode) {
  TempDir src;
  put(src.path(), "top.txt", "x", 0644);
  put(src.path(), "etc/app/main.conf", "x", 0640);
  put(src.path(), "etc/tool", "x", 0750);
  put(src.path(), "private/key", "x", 0600);
  ASSERT_EQ(::chmod((src.path() + "/etc").c_str(), 0750), 0);
  ASSERT_EQ(::chmod((src.path() + "/etc/app").c_str(), 0705), 0);
  ASSERT_EQ(::chmod((src.path() + "/private").c_str(), 0500), 0);
  DriveOptions opt;
  opt.stop_after_plan = true;
  auto m = mirror(src.path(), {}, opt);
  ASSERT_TRUE(m.r.status.ok()) << m.r.status.error().line();
  // The folder's own mode, with the owner's rwx (core writes into it) and
  // never a write bit for the group or others.
  const std::vector<general::FolderRequest> want = {{0750, "etc"}, {0705, "etc/app"}, {0700, "private"}};
  EXPECT_EQ(m.r.plan.directories, want);
  ASSERT_EQ(::chmod((src.path() + "/private").c_str(), 0700), 0);
}

TEST(Mirror, ModesAreKeptNeverGrantingMore) {
  // Permission bits kept; write is the owner's alone (group and other write
  // dropped), set-id and sticky bits dropped, the owner's read bit added.
  TempDir src;
  const std::vector<std::pair<mode_t, std::uint64_t>> cases = {
      {0600, 0600}, {0400, 0400}, {0000, 0400},  {0640, 0640},  {0604, 0604}, {0644, 0644}, {0666, 0644},
      {0664, 0644}, {0620, 0600}, {0700, 0700},  {0100, 0500},  {0710, 0710}, {0701, 0701}, {0750, 0750},
      {0705, 0705}, {0777, 0755}, {04755, 0755}, {02711, 0711}, {01644, 0644}};
  Ops want;
  for (const auto& [from, to] : cases) {
    char name[16];
    std::snprintf(name, sizeof name, "m%05o", static_cast<unsigned>(from));
    put(src.path(), name, "x", from);
    want.push_back({"write", to, name});
  }
  std::sort(want.begin(), want.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  DriveOptions opt;
  opt.stop_after_plan = true;  // mode 0000 is readable by root only
  opt.offer_digests = false;   // and with digests dot.plan reads every file
  auto m = mirror(src.path(), {}, opt);
  ASSERT_TRUE(m.r.status.ok()) << m.r.status.error().line();
  EXPECT_EQ(m.ops, want);
}

TEST(Mirror, ManagedPathsTheSourceNoLongerHasAreRemoved) {
  TempDir src;
  put(src.path(), "keep.txt", "kept\n");
  put(src.path(), "sub/new.txt", "new\n");
  ASSERT_EQ(::symlink("keep.txt", (src.path() + "/was-a-file").c_str()), 0);
  ASSERT_EQ(::mkdir((src.path() + "/was-file-now-empty-folder").c_str(), 0755), 0);
  auto m = mirror(src.path(),
                  {"gone.txt", "keep.txt", "sub/old.txt", "was-a-file", "was-file-now-empty-folder", "zzz/deep/file"});
  ASSERT_TRUE(m.r.status.ok()) << m.r.status.error().line();
  // A managed file that became a symlink in SRC becomes a link (its text).
  Ops want = {{"remove", 0, "gone.txt"},         {"write", 0644, "keep.txt"},
              {"write", 0644, "sub/new.txt"},    {"remove", 0, "sub/old.txt"},
              link_op("was-a-file", "keep.txt"), {"remove", 0, "was-file-now-empty-folder"},
              {"remove", 0, "zzz/deep/file"}};
  EXPECT_EQ(m.ops, want);
  EXPECT_EQ(m.stage_files, (Files{{"keep.txt", "kept\n"}, {"sub/new.txt", "new\n"}}));
  ASSERT_EQ(m.r.artifacts.artifacts.size(), 2u);
  EXPECT_EQ(m.r.artifacts.artifacts[1].path, "sub/new.txt");
  EXPECT_NE(m.r.logs.back().message.find("3 files to write, 4 managed paths to remove"), std::string::npos);
}

TEST(Mirror, AnEmptySourceProposesNothingOrOnlyRemovals) {
  TempDir src;
  auto m = mirror(src.path());
  ASSERT_TRUE(m.r.status.ok()) << m.r.status.error().line();
  EXPECT_TRUE(m.ops.empty());
  EXPECT_TRUE(m.r.artifacts.artifacts.empty());
  EXPECT_TRUE(m.stage_files.empty());
  auto again = mirror(src.path(), {"a", "b/c"});
  ASSERT_TRUE(again.r.status.ok()) << again.r.status.error().line();
  EXPECT_EQ(again.ops, (Ops{{"remove", 0, "a"}, {"remove", 0, "b/c"}}));
  EXPECT_TRUE(again.r.artifacts.artifacts.empty());
}

// Each symlink of SRC is a link holding its text verbatim (relative,
// absolute, dangling or looping: the text is data, never followed); FIFOs
// and sockets are skipped with warnings.
TEST(Mirror, SymlinksAreMirroredAsLinksNeverFollowedFifosAndSocketsSkipped) {
  TempDir src, outside;
  put(outside.path(), "secret.txt", "outside\n");
  put(src.path(), "a.txt", "a\n");
  put(src.path(), "sub/inner.txt", "inner\n");
  ASSERT_EQ(::symlink("a.txt", (src.path() + "/link-to-file").c_str()), 0);
  ASSERT_EQ(::symlink(outside.path().c_str(), (src.path() + "/link-to-folder").c_str()), 0);
  ASSERT_EQ(::symlink("sub", (src.path() + "/sub/loop").c_str()), 0);
  ASSERT_EQ(::mkfifo((src.path() + "/fifo").c_str(), 0644), 0);
  UniqueFd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(sock);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string sock_path = src.path() + "/sock";
  ASSERT_LT(sock_path.size(), sizeof addr.sun_path);
  std::copy(sock_path.begin(), sock_path.end(), addr.sun_path);
  ASSERT_EQ(::bind(sock.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  auto m = mirror(src.path(), {"fifo", "link-to-file"});
  ASSERT_TRUE(m.r.status.ok()) << m.r.status.error().line();
  // A managed "fifo" is kept: the source still has something there.
  EXPECT_EQ(m.ops, (Ops{{"write", 0644, "a.txt"},
                        link_op("link-to-file", "a.txt"),
                        link_op("link-to-folder", outside.path()),
                        {"write", 0644, "sub/inner.txt"},
                        link_op("sub/loop", "sub")}));
  // Nothing is staged for a link, and nothing outside SRC was read.
  EXPECT_EQ(m.stage_files, (Files{{"a.txt", "a\n"}, {"sub/inner.txt", "inner\n"}}));
  ASSERT_EQ(m.r.artifacts.artifacts.size(), 2u);
  auto w = warnings(m.r);
  EXPECT_EQ(w.size(), 3u);
  expect_warning(w, "skipped \"fifo\": a FIFO, not a regular file");
  expect_warning(w, "\"fifo\" is managed and the source holds no regular file there: left as it is");
  expect_warning(w, "skipped \"sock\": a socket, not a regular file");
}

// A folder that holds only symlinks (a dotfiles repository's
// .config/nvim -> elsewhere, say) is no write's parent: it is not named in
// `directories` (core creates it 0700), and the plan is one core accepts.
TEST(Mirror, AFolderHoldingOnlyLinksIsNotNamedAndThePlanStands) {
  TempDir src;
  put(src.path(), "a-b", "top\n");
  put(src.path(), "y/file", "hi\n", 0644);
  ASSERT_EQ(::mkdir((src.path() + "/x").c_str(), 0750), 0);
  ASSERT_EQ(::symlink("../y/file", (src.path() + "/x/link").c_str()), 0);
  ASSERT_EQ(::chmod((src.path() + "/y").c_str(), 0750), 0);
  DriveOptions opt;
  opt.stop_after_plan = true;
  auto m = mirror(src.path(), {}, opt);
  ASSERT_TRUE(m.r.status.ok()) << m.r.status.error().line();
  EXPECT_EQ(m.ops, (Ops{{"write", 0644, "a-b"}, link_op("x/link", "../y/file"), {"write", 0644, "y/file"}}));
  EXPECT_EQ(m.r.plan.directories, (std::vector<general::FolderRequest>{{0750, "y"}}));
}

TEST(Mirror, NamesThePathRulesRefuseAreSkippedWithWarnings) {
  TempDir src;
  put(src.path(), "ok.txt", "ok\n");
  put(src.path(), "ctl\x01name", "x");
  put(src.path(), "new\nline", "x");
  put(src.path(), "bad\xff.txt", "x");
  put(src.path(), "del\x7f/inside.txt", "x");
  put(src.path(), ".dot/state.db", "x");
  put(src.path(), "sub/.dot/allowed.txt", "nested\n");  // only the top-level .dot is core's
  // 20 folders of 200 bytes: 4020 bytes with their slashes. A file of 75
  // bytes there is exactly 4095 bytes long (the last path allowed); the
  // folder beside it is too (4095), and its file "x" (4097) is not.
  std::string deep;
  for (int i = 0; i < 20; ++i) deep += std::string(200, static_cast<char>('a' + i)) + "/";
  ASSERT_EQ(deep.size(), 4020u);
  const std::string longest = deep + std::string(75, 'f');
  put(src.path(), longest, "deepest\n");
  put(src.path(), deep + std::string(75, 'g') + "/x", "too deep\n");
  auto m = mirror(src.path());
  ASSERT_TRUE(m.r.status.ok()) << m.r.status.error().line();
  EXPECT_EQ(m.ops, (Ops{{"write", 0644, longest}, {"write", 0644, "ok.txt"}, {"write", 0644, "sub/.dot/allowed.txt"}}));
  ASSERT_EQ(m.r.artifacts.artifacts.size(), 3u);
  EXPECT_EQ(m.r.artifacts.artifacts[0], (general::Artifact{longest, sha256_hex("deepest\n"), 8}));
  EXPECT_EQ(m.stage_files, (Files{{longest, "deepest\n"}, {"ok.txt", "ok\n"}, {"sub/.dot/allowed.txt", "nested\n"}}));
  auto w = warnings(m.r);
  EXPECT_EQ(w.size(), 6u) << ::testing::PrintToString(w);
  expect_warning(w, "control byte 0x01");
  expect_warning(w, "control byte 0x0a");
  expect_warning(w, "is not valid UTF-8");
  expect_warning(w, "skipped a folder and everything in it: path \"del\\x7f\" holds the control byte 0x7f");
  expect_warning(w, "skipped a folder and everything in it: path \".dot\" is inside core's state folder");
  expect_warning(w, "is longer than 4095 bytes");
  for (const auto& msg : w) EXPECT_LE(msg.size(), general::kMaxLogMessageBytes);
}

TEST(Mirror, AFileAndAFolderOfTheSameNameNeverMakeAnInvalidPlan) {
  // The source has a file where the root has managed files beneath a folder
  // of that name ("a"), and a folder where the root has a managed file
  // ("d"). "a-b" sorts between "a" and "a/c" in byte order.
  TempDir src;
  put(src.path(), "a", "now a file\n");
  put(src.path(), "a-b", "x\n");
  put(src.path(), "d/f", "f\n");
  put(src.path(), "d/g", "g\n");
  put(src.path(), "dz", "z\n");  // kept, and moved over the waiting ones
  put(src.path(), "e", "e\n");
  auto m = mirror(src.path(), {"a/c", "a/d/e", "d"});
  ASSERT_TRUE(m.r.status.ok()) << m.r.status.error().line();
  EXPECT_EQ(m.ops, (Ops{{"write", 0644, "a-b"},
                        {"remove", 0, "a/c"},
                        {"remove", 0, "a/d/e"},
                        {"remove", 0, "d"},
                        {"write", 0644, "dz"},
                        {"write", 0644, "e"}}));
  EXPECT_EQ(m.stage_files, (Files{{"a-b", "x\n"}, {"dz", "z\n"}, {"e", "e\n"}}));
  auto w = warnings(m.r);
  EXPECT_EQ(w.size(), 3u) << ::testing::PrintToString(w);
  expect_warning(w, "\"a\" waits for the next plan");
  expect_warning(w, "\"d/f\" waits for the next plan: the managed file \"d\"");
  expect_warning(w, "\"d/g\" waits for the next plan");
  // Once those removals are applied, the next plan writes what waited.
  auto next = mirror(src.path(), {"a-b", "dz", "e"});
  ASSERT_TRUE(next.r.status.ok()) << next.r.status.error().line();
  EXPECT_EQ(next.ops, (Ops{{"write", 0644, "a"},
                           {"write", 0644, "a-b"},
                           {"write", 0644, "d/f"},
                           {"write", 0644, "d/g"},
                           {"write", 0644, "dz"},
                           {"write", 0644, "e"}}));
}

// A file that is not the one dot.plan saw is refused by name, whatever
// changed: its size, its inode, its mode, its type, its existence.
TEST(Mirror, AFileChangedBetweenPlanAndMaterializeIsAnErrorNamingIt) {
  const std::vector<std::pair<std::string, std::function<void(const std::string&)>>> changes = {
      {"grew", [](const std::string& f) { put(fs::path(f).parent_path(), "file.txt", "original\nand more\n"); }},
      {"replaced",
       [](const std::string& f) {
         put(fs::path(f).parent_path(), "other", "ORIGINAL\n");
         ASSERT_EQ(::rename((fs::path(f).parent_path() / "other").c_str(), f.c_str()), 0);
       }},
      {"chmod", [](const std::string& f) { ASSERT_EQ(::chmod(f.c_str(), 0755), 0); }},
      {"fifo",
       [](const std::string& f) {
         ASSERT_EQ(::unlink(f.c_str()), 0);
         ASSERT_EQ(::mkfifo(f.c_str(), 0644), 0);
       }},
      {"removed", [](const std::string& f) { ASSERT_EQ(::unlink(f.c_str()), 0); }},
      {"symlink",
       [](const std::string& f) {
         ASSERT_EQ(::unlink(f.c_str()), 0);
         ASSERT_EQ(::symlink("/etc/passwd", f.c_str()), 0);
       }},
  };
  for (const auto& [name, change] : changes) {
    SCOPED_TRACE(name);
    TempDir src;
    put(src.path(), "a.txt", "a\n");
    put(src.path(), "dir/file.txt", "original\n");
    DriveOptions opt;
    opt.before_materialize = [&, &change = change] { change(src.path() + "/dir/file.txt"); };
    auto m = mirror(src.path(), {}, opt);
    EXPECT_EQ(m.ops, (Ops{{"write", 0644, "a.txt"}, {"write", 0644, "dir/file.txt"}}));
    expect_plugin_error(m.r, Method::Materialize, -32000,
                        "\"dir/file.txt\" in \"" + src.path() + "\" changed since dot.plan");
  }
}

TEST(Mirror, ItTakesExactlyOneAbsoluteInput) {
  TempDir src;
  for (const auto& inputs : std::vector<std::vector<std::string>>{{}, {src.path(), src.path()}}) {
    auto opt = testing::general_options("org.dot.mirror");
    opt.inputs = inputs;
    TempDir stage;
    auto r = testing::drive(bin("dot-mirror"), stage.path(), opt);
    expect_plugin_error(
        r, Method::Initialize, -32602,
        "dot-mirror takes exactly one input (the folder to mirror), given " + std::to_string(inputs.size()));
    EXPECT_TRUE(list_children().empty());
  }
  auto opt = testing::general_options("org.dot.mirror");
  opt.inputs = {"relative/src"};
  TempDir stage;
  auto r = testing::drive(bin("dot-mirror"), stage.path(), opt);
  expect_plugin_error(r, Method::Initialize, -32602, "the input \"relative/src\" is not an absolute path");
}

TEST(Mirror, ASourceThatIsMissingASymlinkOrAFileIsAnError) {
  TempDir dir;
  put(dir.path(), "real/x", "x");
  put(dir.path(), "file", "x");
  ASSERT_EQ(::symlink("real", (dir.path() + "/link").c_str()), 0);
  for (const char* name : {"missing", "link", "file"}) {
    SCOPED_TRACE(name);
    auto m = mirror(dir.path() + "/" + name);
    expect_plugin_error(m.r, Method::Initialize, -32000, "cannot open the source folder");
  }
}

TEST(Mirror, AManagedListThatIsNotCoresIsInvalidParams) {
  TempDir src;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"b", "a"}, "\"a\" is not after \"b\""},
      {{"a", "a"}, "\"a\" is not after \"a\""},
      {{"a", "a/b"}, "\"a\" is a folder of \"a/b\""},
      {{"../x"}, "has a \"..\" component"},
      {{".dot/x"}, "core's state folder"},
  };
  for (const auto& [managed, text] : cases) {
    SCOPED_TRACE(text);
    auto m = mirror(src.path(), managed);
    expect_plugin_error(m.r, Method::Plan, -32602, text);
  }
}

TEST(Mirror, MoreThanMaxOperationsIsAnErrorAndTheLimitItselfIsFine) {
  TempDir src;
  UniqueFd dir(::open(src.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  const std::uint64_t limit = general::kLimits.max_operations;
  ASSERT_GE(limit, 100000u);  // room for real trees (issue 33)
  // In folders of 1,000 files, as a real tree is.
  for (std::uint64_t i = 0; i < limit; ++i) {
    char name[24];
    std::snprintf(name, sizeof name, "d%03u/f%06u", static_cast<unsigned>(i / 1000), static_cast<unsigned>(i));
    if (i % 1000 == 0) {
      ASSERT_EQ(::mkdirat(dir.get(), std::string(name, 4).c_str(), 0755), 0);
    }
    UniqueFd f(::openat(dir.get(), name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    ASSERT_TRUE(f);
  }
  DriveOptions opt;
  opt.stop_after_plan = true;
  auto at = mirror(src.path(), {}, opt);
  ASSERT_TRUE(at.r.status.ok()) << at.r.status.error().line();
  EXPECT_EQ(at.ops.size(), limit);
  auto plus_removal = mirror(src.path(), {"gone"}, opt);
  const std::string n = std::to_string(limit);
  expect_plugin_error(plus_removal.r, Method::Plan, -32000,
                      "takes " + std::to_string(limit + 1) + " operations (" + n +
                          " writes, 1 removals), more than max_operations " + n);
  UniqueFd f(::openat(dir.get(), "one-more", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  auto over = mirror(src.path(), {}, opt);
  expect_plugin_error(over.r, Method::Plan, -32000, "holds more than max_operations " + n + " regular files");
}

// Digests negotiated: dot.plan reads each file once to declare it, and
// dot.materialize stages exactly the paths core names, nothing else.
TEST(Mirror, WithDigestsItStagesOnlyWhatCoreAsksFor) {
  TempDir src;
  put(src.path(), "a.txt", "a\n");
  put(src.path(), "dir/b.txt", "bee\n");
  put(src.path(), "dir/c.txt", "");
  DriveOptions opt;
  opt.stage_only = std::vector<std::string>{"dir/b.txt"};
  auto m = mirror(src.path(), {}, opt);
  ASSERT_TRUE(m.r.status.ok()) << m.r.status.error().line();
  ASSERT_TRUE(m.r.digests);
  EXPECT_EQ(m.declared.at("a.txt").sha256, sha256_hex("a\n"));
  EXPECT_EQ(m.declared.at("dir/c.txt").size, 0u);
  EXPECT_EQ(m.stage_files, (Files{{"dir/b.txt", "bee\n"}}));
  ASSERT_EQ(m.r.artifacts.artifacts.size(), 1u);
  EXPECT_EQ(m.r.artifacts.artifacts[0].sha256, sha256_hex("bee\n"));
  // Nothing asked: nothing staged.
  opt.stage_only = std::vector<std::string>{};
  auto none = mirror(src.path(), {}, opt);
  ASSERT_TRUE(none.r.status.ok()) << none.r.status.error().line();
  EXPECT_TRUE(none.stage_files.empty());
  // A path the plan does not write is refused.
  opt.stage_only = std::vector<std::string>{"zzz"};
  auto wrong = mirror(src.path(), {}, opt);
  expect_plugin_error(wrong.r, Method::Materialize, -32602, "not a later write of the plan");
}

// The closing info line's count of files read to hash and known from the cache.
std::pair<int, int> hashed_and_cached(const DriveResult& r) {
  EXPECT_FALSE(r.logs.empty());
  if (r.logs.empty()) return {-1, -1};
  const std::string& last = r.logs.back().message;
  int hashed = -1, cached = -1;
  const auto at = last.rfind("; ");
  EXPECT_EQ(std::sscanf(last.c_str() + (at == std::string::npos ? 0 : at),
                        "; %d files read to hash, %d known from the cache", &hashed, &cached),
            2)
      << last;
  return {hashed, cached};
}

TEST(Mirror, WithTheCacheAFileWhoseStatHoldsIsNotReadAgain) {
  TempDir src, cache;
  put(src.path(), "a.txt", "a\n");
  put(src.path(), "dir/b.txt", "bee\n");
  put(src.path(), "dir/c.txt", "sea\n");
  // Past the racy granule: a digest read now stands for these files later
  // (one read in the same granule as a write proves nothing, and is read
  // again; the unit tests hold that rule at its edges).
  ::usleep(static_cast<useconds_t>(kRacyGranuleNs / 1000 + 100'000));
  DriveOptions opt;
  opt.cache = cache.path();
  auto first = mirror(src.path(), {}, opt);
  ASSERT_TRUE(first.r.status.ok()) << first.r.status.error().line();
  ASSERT_TRUE(first.r.cache);
  EXPECT_EQ(hashed_and_cached(first.r), std::make_pair(3, 0));
  EXPECT_TRUE(fs::is_regular_file(cache.path() + "/digests"));
  auto again = mirror(src.path(), {}, opt);
  ASSERT_TRUE(again.r.status.ok()) << again.r.status.error().line();
  EXPECT_EQ(hashed_and_cached(again.r), std::make_pair(0, 3));
  EXPECT_EQ(again.declared, first.declared);
  EXPECT_EQ(again.stage_files, first.stage_files);
  // Same size, new bytes: the ctime moved, so it is read again, and only it.
  put(src.path(), "dir/b.txt", "BEE\n");
  auto edited = mirror(src.path(), {}, opt);
  ASSERT_TRUE(edited.r.status.ok()) << edited.r.status.error().line();
  EXPECT_EQ(hashed_and_cached(edited.r), std::make_pair(1, 2));
  EXPECT_EQ(edited.declared.at("dir/b.txt").sha256, sha256_hex("BEE\n"));
  EXPECT_EQ(edited.stage_files.at("dir/b.txt"), "BEE\n");
  // Without the offer nothing is kept or read.
  opt.cache.reset();
  auto without = mirror(src.path(), {}, opt);
  ASSERT_TRUE(without.r.status.ok());
  EXPECT_FALSE(without.r.cache);
  EXPECT_EQ(hashed_and_cached(without.r), std::make_pair(3, 0));
}

TEST(Mirror, ACacheItDidNotWriteIsSetAsideAndAForgedDigestNeverReachesTheStage) {
  TempDir src, cache;
  put(src.path(), "a.txt", "a\n");
  ::usleep(static_cast<useconds_t>(kRacyGranuleNs / 1000 + 100'000));
  DriveOptions opt;
  opt.cache = cache.path();
  put(cache.path(), "digests", "not a cache\n");
  auto garbage = mirror(src.path(), {}, opt);
  ASSERT_TRUE(garbage.r.status.ok()) << garbage.r.status.error().line();
  expect_warning(warnings(garbage.r), "the digest cache was set aside");
  EXPECT_EQ(hashed_and_cached(garbage.r), std::make_pair(1, 0));
  EXPECT_EQ(garbage.declared.at("a.txt").sha256, sha256_hex("a\n"));
  // A cache that lies about a file whose stat it matches: the plan declares
  // the lie, and the bytes staged for it are refused, never sent as that.
  std::ifstream in(cache.path() + "/digests");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string real = sha256_hex("a\n");
  ASSERT_NE(text.find(real), std::string::npos) << text;
  text.replace(text.find(real), real.size(), sha256_hex("b\n"));
  put(cache.path(), "digests", text);
  auto forged = mirror(src.path(), {}, opt);
  EXPECT_EQ(forged.declared.at("a.txt").sha256, sha256_hex("b\n"));
  expect_plugin_error(forged.r, Method::Materialize, -32000, "its bytes differ from what dot.plan read");
}

TEST(Mirror, AFileOverMaxFileBytesIsSkippedWithAWarning) {
  TempDir src;
  put(src.path(), "big", "");
  put(src.path(), "small", "s");
  ASSERT_EQ(::truncate((src.path() + "/big").c_str(), static_cast<off_t>(general::kLimits.max_file_bytes)), 0);
  DriveOptions opt;
  opt.stop_after_plan = true;
  auto at = mirror(src.path(), {}, opt);
  ASSERT_TRUE(at.r.status.ok()) << at.r.status.error().line();
  EXPECT_EQ(at.ops, (Ops{{"write", 0644, "big"}, {"write", 0644, "small"}}));
  ASSERT_EQ(::truncate((src.path() + "/big").c_str(), static_cast<off_t>(general::kLimits.max_file_bytes + 1)), 0);
  // The rest is still mirrored; a managed "big" is left as it is.
  auto over = mirror(src.path(), {"big"}, opt);
  ASSERT_TRUE(over.r.status.ok()) << over.r.status.error().line();
  EXPECT_EQ(over.ops, (Ops{{"write", 0644, "small"}}));
  expect_warning(warnings(over.r), "skipped \"big\": 16777217 bytes, more than max_file_bytes 16777216");
  expect_warning(warnings(over.r),
                 "\"big\" is managed and the source holds a file over max_file_bytes there: left as it is");
  EXPECT_NE(over.r.logs.back().message.find("1 files to write, 0 managed paths to remove, 1 entries skipped"),
            std::string::npos)
      << over.r.logs.back().message;
}

// A git dotfiles repository as the source: `.git` (a folder, or a
// submodule's file) and what `.dotignore` ignores are left out silently;
// `.dotignore` itself too.
TEST(Mirror, AGitRepositoryAndItsDotignoreAreLeftOut) {
  TempDir src;
  put(src.path(), ".git/HEAD", "ref: refs/heads/main\n");
  put(src.path(), ".git/objects/ab/cdef", "blob");
  put(src.path(), ".dotignore", "# editor files\n*.swp\n!keep.swp\n/README.md\nbuild/\n");
  put(src.path(), ".vimrc", "set nocompatible\n");
  put(src.path(), "README.md", "my dotfiles\n");
  put(src.path(), "docs/README.md", "kept: the rule is anchored\n");
  put(src.path(), ".vimrc.swp", "swap");
  put(src.path(), "keep.swp", "re-included\n");
  put(src.path(), "build/out.o", "o");
  put(src.path(), "vendor/plugin/.git", "gitdir: ../../.git/modules/plugin\n");
  put(src.path(), "vendor/plugin/plugin.vim", "\" plugin\n");
  auto m = mirror(src.path());
  ASSERT_TRUE(m.r.status.ok()) << m.r.status.error().line();
  EXPECT_EQ(m.ops, (Ops{{"write", 0644, ".vimrc"},
                        {"write", 0644, "docs/README.md"},
                        {"write", 0644, "keep.swp"},
                        {"write", 0644, "vendor/plugin/plugin.vim"}}));
  EXPECT_TRUE(warnings(m.r).empty()) << ::testing::PrintToString(warnings(m.r));
  EXPECT_NE(m.r.logs.back().message.find("4 files to write, 0 managed paths to remove, 0 entries skipped, 6 ignored"),
            std::string::npos)
      << m.r.logs.back().message;
}

// A managed path the walk skips or ignores (or one below a folder it
// ignores) is neither written nor removed: only what SRC no longer holds is.
TEST(Mirror, ManagedPathsTheWalkLeavesOutAreKeptNotRemoved) {
  TempDir src;
  put(src.path(), ".dotignore", "secret.txt\ncache/\n");
  put(src.path(), "secret.txt", "s");
  put(src.path(), "cache/x", "c");
  ASSERT_EQ(::mkfifo((src.path() + "/pipe").c_str(), 0644), 0);
  auto m = mirror(src.path(), {"cache/old/y", "gone.txt", "pipe", "secret.txt"});
  ASSERT_TRUE(m.r.status.ok()) << m.r.status.error().line();
  EXPECT_EQ(m.ops, (Ops{{"remove", 0, "gone.txt"}}));
  const auto w = warnings(m.r);
  expect_warning(w, "\"secret.txt\" is managed and the source ignores it (.git, .dotignore): left as it is");
  expect_warning(w, "\"cache/old/y\" is managed and the source ignores it");
  expect_warning(w, "\"pipe\" is managed and the source holds no regular file there");
  EXPECT_NE(m.r.logs.back().message.find("3 managed paths kept as they are"), std::string::npos)
      << m.r.logs.back().message;
}

TEST(Mirror, ADotignoreThatIsNoRuleFileIsAnErrorNamingTheLine) {
  TempDir src;
  put(src.path(), "a", "a");
  put(src.path(), ".dotignore", "*.swp\n\n!\n");
  auto bad = mirror(src.path());
  expect_plugin_error(bad.r, Method::Plan, -32000, "\".dotignore\" in \"" + src.path() + "\", line 3: pattern");
  ASSERT_EQ(::unlink((src.path() + "/.dotignore").c_str()), 0);
  ASSERT_EQ(::symlink("/etc/passwd", (src.path() + "/.dotignore").c_str()), 0);
  auto link = mirror(src.path());
  ASSERT_FALSE(link.r.status.ok());
  ASSERT_TRUE(link.r.plugin_error.has_value());
  EXPECT_NE(link.r.plugin_error->error.message.find(".dotignore"), std::string::npos)
      << link.r.plugin_error->error.message;
}

// Several dot-mirror registrations in one root, each under its own id: the
// echo carries the id core gave (DOT_PLUGIN_ID).
TEST(Mirror, ItEchoesTheIdItIsRegisteredUnder) {
  TempDir src;
  put(src.path(), "a", "a");
  DriveOptions opt;
  opt.profile = Profile::General;
  opt.id = "org.example.work-dotfiles";
  opt.inputs = {src.path()};
  opt.stop_after_plan = true;
  TempDir stage;
  auto r = testing::drive(bin("dot-mirror"), stage.path(), opt);
  ASSERT_TRUE(r.status.ok()) << r.status.error().line();
  EXPECT_EQ(r.plan.operations.size(), 1u);
}

TEST(Mirror, SourcesOverMaxTotalBytesTogetherAreAnError) {
  // Sparse files: the walk only looks at their sizes.
  TempDir src;
  const auto each = static_cast<off_t>(general::kLimits.max_file_bytes);
  const std::uint64_t count = general::kLimits.max_total_bytes / general::kLimits.max_file_bytes;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::string name = "f" + std::to_string(i);
    put(src.path(), name, "");
    ASSERT_EQ(::truncate((src.path() + "/" + name).c_str(), each), 0);
  }
  DriveOptions opt;
  opt.stop_after_plan = true;
  auto at = mirror(src.path(), {}, opt);
  ASSERT_TRUE(at.r.status.ok()) << at.r.status.error().line();
  EXPECT_EQ(at.ops.size(), count);
  put(src.path(), "one-byte-more", "x");
  auto over = mirror(src.path(), {}, opt);
  expect_plugin_error(over.r, Method::Plan, -32000, "hold more than max_total_bytes 1073741824 together");
}

TEST(Mirror, WarningsStayWithinMaxLogMessages) {
  TempDir src;
  put(src.path(), "real.txt", "r\n");
  // FIFOs: what dot-mirror skips with a warning each (a symlink is a link).
  for (int i = 0; i < 1500; ++i) ASSERT_EQ(::mkfifo((src.path() + "/f" + std::to_string(i)).c_str(), 0644), 0);
  auto m = mirror(src.path());
  ASSERT_TRUE(m.r.status.ok()) << m.r.status.error().line();
  EXPECT_EQ(m.ops, (Ops{{"write", 0644, "real.txt"}}));
  ASSERT_EQ(m.r.logs.size(), general::kLimits.max_log_messages);
  EXPECT_EQ(m.r.logs[m.r.logs.size() - 2].message,
            "502 more entries of the source were skipped (not listed: at most 1000 dot.log messages per run)");
  EXPECT_EQ(m.r.logs.back().level, "info");
}

}  // namespace
}  // namespace dot::dpp
