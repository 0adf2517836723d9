#pragma once
// The fixture of the version-2 apply, rollback and recover tests
// (test_apply_v2.cpp with the product binary, test_crash_v2.cpp with the
// hooked one): a root holding a few files in nested folders, the general
// test plugin registered, and its case "apply" (general_plugin.cpp), whose
// plan writes in folders that exist and in four folders apply creates,
// removes two files, uses every mode, a UTF-8 name and an empty file:
//
//   write  bin/tool              0755  (bin created)
//   write  conf.txt              0644  (was 0600, other bytes)
//   write  deep/er/über.txt      0600  (deep, deep/er created)
//   write  empty.txt             0644  (empty)
//   write  etc/app/main.conf     0600  (was 0644, other bytes)
//   write  etc/app/new.d/x.conf  0644  (etc/app/new.d created)
//   remove etc/app/old.conf
//   write  etc/private           0700
//   remove old.txt
//
// "All before" and "all after" are exact trees (tree(): every entry, its
// type, mode and bytes), so a leftover temp file, a folder left behind or a
// wrong mode fails them.
#include <map>
#include <string>
#include <vector>

#include "dot/base/sha256.h"
#include "dot/base/write_access.h"
#include "engine_harness.h"

namespace dot::core::testing {

inline const std::string kUberPath = "deep/er/\xc3\xbc" "ber.txt";

class ApplyV2Test : public EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    register_general_test_plugin();
    // conf.txt is taken over (nobody manages it yet); under the
    // user-private-group rule it is 0664, as Debian's umask 002 leaves it.
    WriteAccessJudge judge;
    conf_mode_ = judge.refusal(0664, ::geteuid(), ::getegid()) ? 0600 : 0664;
    spit(root_ / "conf.txt", "key = old\n", conf_mode_);
    fs::create_directories(root_ / "etc" / "app");
    ::chmod((root_ / "etc").c_str(), 0755);
    ::chmod((root_ / "etc" / "app").c_str(), 0700);
    spit(root_ / "etc" / "app" / "main.conf", "main = 1\n", 0644);
    spit(root_ / "etc" / "app" / "old.conf", "old\n", 0600);
    spit(root_ / "old.txt", "remove me\n", 0644);
    spit(root_ / "keep.txt", "not in the plan\n", 0600);
    before_ = tree(root_);
    after_ = before_;
    auto file = [&](const std::string& path, unsigned mode, const std::string& bytes) {
      after_[path] = fmt::format("{:o}", S_IFREG | mode) + ":" + sha256_hex(bytes);
    };
    auto folder = [&](const std::string& path, unsigned mode = 0700) {
      after_[path] = fmt::format("{:o}", S_IFDIR | mode);
    };
    folder("bin", 0750);  // the modes the plan names (general_plugin.cpp)
    file("bin/tool", 0755, "#!/bin/sh\necho tool\n");
    file("conf.txt", 0644, "key = new\n");
    folder("deep", 0755);
    folder("deep/er");
    file(kUberPath, 0600, "gr\xc3\xbc\xc3\x9f dich\n");
    file("empty.txt", 0644, "");
    file("etc/app/main.conf", 0600, "main = 2\n");
    folder("etc/app/new.d");
    file("etc/app/new.d/x.conf", 0644, "x = 1\n");
    after_.erase("etc/app/old.conf");
    file("etc/private", 0700, "secret\n");
    after_.erase("old.txt");
  }

  // Plans the case "apply" and returns the plan id (fails the test otherwise).
  std::string plan_apply_case() {
    spit(base_ / "case", "apply\n");
    CmdResult r = core({"plan", "--plugin", "org.test.gplan", "--allow-audit-plugin", "--json"});
    EXPECT_EQ(r.code, 0) << r.err << r.out;
    return json_field(r.out, "plan_id");
  }

  bool all_before() { return tree(root_) == before_; }
  bool all_after() { return tree(root_) == after_; }
  // For a failure message: the entries that differ from `want`.
  std::string differences(const std::map<std::string, std::string>& want) {
    const auto now = tree(root_);
    std::string out;
    for (const auto& [path, v] : now)
      if (!want.contains(path) || want.at(path) != v) out += " +" + path + "=" + v;
    for (const auto& [path, v] : want)
      if (!now.contains(path)) out += " -" + path;
    return out;
  }

  std::map<std::string, std::string> before_, after_;
  mode_t conf_mode_ = 0600;  // conf.txt's mode before the plan takes it over
};

}  // namespace dot::core::testing
