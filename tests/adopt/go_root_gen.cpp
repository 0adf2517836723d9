#include "go_root_gen.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "dot/base/sha256.h"

namespace dot::adopt_test {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(fmt::format("go root generator: {}: {}", what, std::strerror(errno)));
}

// Exclusive create with the exact mode, as every reference writer does.
void put(const fs::path& p, std::string_view bytes, mode_t mode) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) fail("create " + p.string());
  if (::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) fail("write " + p.string());
  if (::fchmod(fd, mode) != 0) fail("chmod " + p.string());
  ::close(fd);
}

void append(const fs::path& p, std::string_view bytes) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) fail("append " + p.string());
  if (::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) fail("write " + p.string());
  ::close(fd);
}

void make_dir(const fs::path& p) {
  if (::mkdir(p.c_str(), 0700) != 0 || ::chmod(p.c_str(), 0700) != 0) fail("mkdir " + p.string());
}

void rename_path(const fs::path& from, const fs::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) fail("rename " + from.string());
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

GoSnapshot snapshot(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return GoSnapshot{};
  GoSnapshot s;
  s.exists = true;
  s.sha256 = sha256_hex(slurp(p));
  s.mode = st.st_mode & 07777;
  s.uid = st.st_uid;
  s.gid = st.st_gid;
  return s;
}

// Section 2.1 for the plan's fixed shape: members in bytewise key order, no
// whitespace; every string here is hex, a target name or a fixed word, so
// no character needs an escape.
std::string canon_snapshot(const GoSnapshot& s) {
  return fmt::format(R"({{"exists":{},"gid":{},"mode":{},"sha256":"{}","uid":{}}})", s.exists ? "true" : "false", s.gid,
                     s.mode, s.sha256, s.uid);
}

std::string writer_snapshot(const GoSnapshot& s) {
  return fmt::format(R"({{"exists":{},"sha256":"{}","mode":{},"uid":{},"gid":{}}})", s.exists ? "true" : "false",
                     s.sha256, s.mode, s.uid, s.gid);
}

constexpr const char* kWal[] = {R"({"state":"PREPARED"})", R"({"state":"COMMITTING"})", R"({"state":"COMMITTED"})",
                                R"({"state":"ROLLING_BACK"})", R"({"state":"ROLLED_BACK"})"};
enum WalRec { kPrepared, kCommitting, kCommitted, kRollingBack, kRolledBack };
const char* const kSlots[] = {"hello.txt", "welcome.txt"};

class Sim {
 public:
  Sim(fs::path root, const GoRootSpec& spec) : root_(std::move(root)), spec_(spec) {}

  // Archive, then apply again (continue_go_root).
  GoRoot resume(const GoRoot& made, const std::string& state) {
    out_ = made;
    cur_ = made.active;
    if (cur_.state != "COMMITTED" && cur_.state != "ROLLED_BACK")
      throw std::runtime_error("go root generator: only a terminal transaction is archived, not " + cur_.state);
    // A nonce and journal times of their own, after every earlier one.
    applies_ = 1000 + static_cast<int>(made.history.size());
    clock_ = 100000 + 100 * static_cast<long>(made.history.size());
    stop_.clear();
    archive();
    stop_ = state;
    if (!apply()) throw std::runtime_error("go root generator: not an apply state: " + state);
    out_.active = cur_;
    return out_;
  }

  GoRoot run() {
    const std::string& st = spec_.state;
    make_dir(root_);
    out_.root_id = sha256_hex(fmt::format("root:{}", spec_.seed));
    put(root_ / ".dot-root", "dot-hello-profile-v1:" + out_.root_id + "\n", 0600);
    if (st == "idle-after-init") return out_;
    // register (every command's Open made the lock first).
    put(root_ / ".dot-lock", "", 0600);
    const std::string plugin = !spec_.plugin_bytes.empty()
                                   ? spec_.plugin_bytes
                                   : fmt::format("#!/bin/sh\n# stand-in for the reference's dot-hello, seed {}\n", spec_.seed);
    out_.plugin_digest = sha256_hex(plugin);
    put(root_ / ".dot-plugin", plugin, 0500);
    put(root_ / ".dot-plugin.json",
        fmt::format(R"({{"id":"org.dot.hello","sha256":"{}","protocol":1,{}"assurance":"{}"}})", out_.plugin_digest,
                    spec_.manifest_profile ? R"("profile":"org.dot.hello/v1",)" : "", spec_.assurance),
        0600);
    if (spec_.user_file) {
      put(root_ / "hello.txt", "old\n", 0600);
      regroup(root_ / "hello.txt", spec_.user_file_gid);
    }
    for (int k = 0; k < spec_.history; ++k) {
      stop_.clear();
      apply();
      if (k % 2) rollback();
      archive();
    }
    if (st == "registered") return out_;
    stop_ = st;
    bool stopped = false;
    if (st.rfind("discard-", 0) == 0) {
      stop_ = "prepare-sealed";
      apply();
      stop_ = st;
      stopped = discard();
    } else if (st.rfind("rollback-", 0) == 0 || st == "rolled-back") {
      stop_.clear();
      apply();
      stop_ = st;
      stopped = rollback();
    } else if (st.rfind("archive", 0) == 0) {
      stop_.clear();
      apply();
      stop_ = st;
      stopped = archive();
    } else {
      stopped = apply();
    }
    if (!stopped) throw std::runtime_error("go root generator: unknown state " + st);
    out_.active = cur_;
    return out_;
  }

 private:
  static void regroup(const fs::path& p, unsigned gid) {
    if (gid != 0 && ::chown(p.c_str(), static_cast<uid_t>(-1), gid) != 0) fail("chown (needs root) " + p.string());
  }
    bool hit(const std::string& point) const { return !stop_.empty() && point == stop_; }
  fs::path txn() const { return root_ / ".dot-txn"; }
  // Each record a second after the one before, as a person's commands are:
  // the journal's time is the only order of archived generations on disk.
  void wal(WalRec r) {
    const fs::path p = txn() / "wal";
    append(p, std::string(kWal[r]) + "\n");
    const struct timespec t[2] = {{1700000000 + clock_, 0}, {1700000000 + clock_, 0}};
    ++clock_;
    if (::utimensat(AT_FDCWD, p.c_str(), t, AT_SYMLINK_NOFOLLOW) != 0) fail("utimensat " + p.string());
  }
  void ledger(const char* state) {
    const std::string key = sha256_hex(cur_.plan_id + ":commit:0");
    append(txn() / "effects.wal", fmt::format(R"({{"index":0,"idempotency_key":"{}","state":"{}"}})", key, state) + "\n");
  }

  // apply (section 6): stage, plan, prepare, commit, effects. True when it
  // stopped at the state asked for.
  bool apply() {
    const fs::path stage = root_ / ".dot-stage";
    make_dir(stage);
    put(stage / kSlots[0], kHelloBytes, 0600);
    regroup(stage / kSlots[0], spec_.stage_gid);
    if (hit("stage-partial")) return true;
    put(stage / kSlots[1], kHelloBytes, 0600);
    regroup(stage / kSlots[1], spec_.stage_gid);
    if (hit("staged")) return true;
    plan_ = GoPlan{};
    plan_.root_id = out_.root_id;
    plan_.nonce = sha256_hex(fmt::format("nonce:{}:{}", spec_.seed, applies_++));
    plan_.plugin_digest = out_.plugin_digest;
    plan_.effects = spec_.gen == GoGen::Effects;
    for (const char* name : kSlots) plan_.ops.push_back(GoOp{name, snapshot(root_ / name), GoSnapshot{}});
    // proposal_id over the plan with every `after` absent, then the real ones.
    plan_.proposal_id = go_proposal_id(plan_);
    for (auto& op : plan_.ops) op.after = snapshot(stage / op.name);
    const std::string plan_id = go_plan_id(plan_);

    make_dir(txn());
    if (hit("prepare-created")) return true;
    for (std::size_t i = 0; i < plan_.ops.size(); ++i) {
      const GoOp& op = plan_.ops[i];
      if (op.before.exists) {
        put(txn() / fmt::format("backup-{}", i), slurp(root_ / op.name), op.before.mode);
        regroup(txn() / fmt::format("backup-{}", i), static_cast<unsigned>(op.before.gid == ::getegid() ? 0 : op.before.gid));
      }
      put(txn() / fmt::format("artifact-{}", i), slurp(stage / op.name), 0600);
      regroup(txn() / fmt::format("artifact-{}", i), spec_.stage_gid);
      if (hit(fmt::format("prepare-artifact-{}", i))) return true;
    }
    put(txn() / "plan.json", go_writer_form(plan_, plan_id), 0600);
    cur_ = GoTxnIds{plan_id, plan_.proposal_id, ""};
    if (hit("prepare-sealed")) return true;
    if (hit("prepare-torn-wal")) {
      append(txn() / "wal", R"({"state":"PREP)");
      return true;
    }
    wal(kPrepared);
    if (hit("prepared")) return true;
    wal(kCommitting);
    if (hit("committing")) return true;
    for (std::size_t i = 0; i < plan_.ops.size(); ++i) {
      const fs::path next = root_ / fmt::format(".dot-next-{}", i);
      put(next, slurp(txn() / fmt::format("artifact-{}", i)), 0600);
      if (hit(fmt::format("flushed-{}", i))) return true;
      rename_path(next, root_ / plan_.ops[i].name);
      if (hit(fmt::format("renamed-{}", i))) return true;
    }
    if (hit("renamed-1-torn-committed")) {
      append(txn() / "wal", R"({"state":"COMMI)");
      return true;
    }
    wal(kCommitted);
    if (plan_.effects) {
      if (hit("committed-effects-pending")) return true;
      ledger("ATTEMPTED");
      if (hit("effect-attempted")) return true;
      if (hit("effect-failed")) {
        ledger("FAILED");
        return true;
      }
      ledger("SUCCEEDED");
    }
    cur_.state = "COMMITTED";
    return hit("committed");
  }

  // recover/rollback of the committed transaction, slot 1 down to 0.
  bool rollback() {
    wal(kRollingBack);
    if (hit("rollback-started")) return true;
    for (std::size_t j = plan_.ops.size(); j-- > 0;) {
      const GoOp& op = plan_.ops[j];
      const fs::path target = root_ / op.name;
      if (op.before.exists) {
        const fs::path next = root_ / fmt::format(".dot-next-{}", j);
        put(next, slurp(txn() / fmt::format("backup-{}", j)), op.before.mode);
        if (hit(fmt::format("rollback-flushed-{}", j))) return true;
        rename_path(next, target);
      } else {
        if (hit(fmt::format("rollback-flushed-{}", j))) return true;  // nothing to flush: same bytes as before it
        if (::unlink(target.c_str()) != 0) fail("unlink " + target.string());
      }
      if (hit(fmt::format("rollback-restored-{}", j))) return true;
    }
    wal(kRolledBack);
    cur_.state = "ROLLED_BACK";
    return hit("rolled-back");
  }

  bool archive() {
    const fs::path history = root_ / ".dot-history";
    if (!fs::exists(history)) make_dir(history);
    const bool staged = fs::exists(root_ / ".dot-stage");
    put(root_ / ".dot-archive", fmt::format(R"({{"plan_id":"{}","stage":{}}})", cur_.plan_id, staged ? "true" : "false"),
        0600);
    if (hit("archive-intent")) return true;
    if (staged) rename_path(root_ / ".dot-stage", txn() / "stage");
    if (hit("archive-stage")) return true;
    rename_path(txn(), history / cur_.plan_id);
    if (hit("archive-rename")) return true;
    if (::unlink((root_ / ".dot-archive").c_str()) != 0) fail("unlink .dot-archive");
    out_.history.push_back(cur_);
    cur_ = GoTxnIds{};
    return hit("archived");
  }

  // discard-abandoned of the prepare-sealed leftovers (newest design).
  bool discard() {
    const fs::path stage = root_ / ".dot-stage";
    for (const auto& e : fs::directory_iterator(stage)) fs::remove(e.path());
    if (hit("discard-stage-entries")) return true;
    fs::remove(stage);
    if (hit("discard-stage")) return true;
    for (const auto& e : fs::directory_iterator(txn())) fs::remove(e.path());
    cur_ = GoTxnIds{};
    return hit("discard-transaction-entries");
  }

  fs::path root_;
  GoRootSpec spec_;
  GoRoot out_;
  GoPlan plan_;
  GoTxnIds cur_;
  std::string stop_;
  int applies_ = 0;
  long clock_ = 0;
};

}  // namespace

std::vector<std::string> go_states(GoGen gen) {
  std::vector<std::string> s = {"idle-after-init", "registered", "stage-partial", "staged", "prepare-created",
                                "prepare-artifact-0", "prepare-artifact-1", "prepare-sealed", "prepare-torn-wal",
                                "prepared", "committing", "flushed-0", "renamed-0", "flushed-1", "renamed-1",
                                "renamed-1-torn-committed"};
  if (gen == GoGen::Effects)
    s.insert(s.end(), {"committed-effects-pending", "effect-attempted", "effect-failed"});
  s.insert(s.end(), {"committed", "rollback-started", "rollback-restored-1", "rollback-flushed-0",
                     "rollback-restored-0", "rolled-back", "archive-intent", "archive-stage", "archive-rename",
                     "archived"});
  if (gen == GoGen::Effects)
    s.insert(s.end(), {"discard-stage-entries", "discard-stage", "discard-transaction-entries"});
  return s;
}

GoRoot make_go_root(const fs::path& root, const GoRootSpec& spec) { return Sim(root, spec).run(); }

GoRoot continue_go_root(const fs::path& root, const GoRootSpec& spec, const GoRoot& made, const std::string& state) {
  return Sim(root, spec).resume(made, state);
}

std::string go_canonical(const GoPlan& plan) {
  std::string ops;
  for (const auto& op : plan.ops)
    ops += fmt::format(R"({}{{"after":{},"before":{},"name":"{}"}})", ops.empty() ? "" : ",", canon_snapshot(op.after),
                       canon_snapshot(op.before), op.name);
  return fmt::format(
      R"({{{}"nonce":"{}","operations":[{}],"plugin_digest":"{}","proposal_id":"{}","root_id":"{}","version":1}})",
      plan.effects ? R"("effects":[{"failure_policy":"required","kind":"sync","target":"managed-root"}],)" : "",
      plan.nonce, ops, plan.plugin_digest, plan.proposal_id, plan.root_id);
}

std::string go_writer_form(const GoPlan& plan, const std::string& plan_id) {
  std::string ops;
  for (const auto& op : plan.ops)
    ops += fmt::format(R"({}{{"name":"{}","before":{},"after":{}}})", ops.empty() ? "" : ",", op.name,
                       writer_snapshot(op.before), writer_snapshot(op.after));
  return fmt::format(
      R"({{"plan":{{"version":1,"root_id":"{}","nonce":"{}","plugin_digest":"{}","proposal_id":"{}","operations":[{}]{}}},"plan_id":"{}"}})",
      plan.root_id, plan.nonce, plan.plugin_digest, plan.proposal_id, ops,
      plan.effects ? R"(,"effects":[{"kind":"sync","target":"managed-root","failure_policy":"required"}])" : "",
      plan_id);
}

std::string go_proposal_id(const GoPlan& plan) {
  GoPlan p = plan;
  p.proposal_id.clear();
  for (auto& op : p.ops) op.after = GoSnapshot{};
  return sha256_hex(go_canonical(p));
}

std::string go_plan_id(const GoPlan& plan) { return sha256_hex(go_canonical(plan)); }

GoPlan section10_plan(bool effects) {
  GoPlan p;
  p.root_id = "1e2feb89414c343c1027c4d1c386bbc4cd613e30d8f16adf91b7584a2265b1f5";
  p.nonce = "35bf992dc9e9c616612e7696a6cecc1b78e510617311d8a3c2ce6f447ed4d57b";
  p.plugin_digest = "8e392865653724ddaeb29b0a99018ed2b15415342764a15dee53aa16539d93e5";
  p.effects = effects;
  const GoSnapshot hello{true, "1ada311b8924a6b3d56519d421845bc540769e4627d7f76e22b800ddf8cb9577", 384, 1000, 1000};
  const GoSnapshot old{true, "01d09d19c2139a46aebfb577780d123d7396e97201bc7ead210a2ebff8239dee", 384, 1000, 1000};
  p.ops = {GoOp{"hello.txt", old, hello}, GoOp{"welcome.txt", GoSnapshot{}, hello}};
  return p;
}


}  // namespace dot::adopt_test
