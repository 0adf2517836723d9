#pragma once
// A generator of managed roots exactly as the Go reference implementation
// leaves them (docs/spec/go-roots.md), written from the facts of that page only:
// it replays the reference's init, register, apply, rollback and archive,
// byte by byte and in the reference's write order, and stops at one of the
// reference's fault points (section 8's states). Deterministic: the root id
// and every nonce come from the seed; uid and gid are the caller's (a root
// belongs to one user, and both ids cover them).
//
// It has its own canonical encoder for the two ids (the hello canonical form
// of section 2.1, written out for the plan's fixed shape) so that the ids it
// reports are an independent check of dot-core's; test_go_roots.cpp pins it
// to the byte-level example of section 10.

#include <filesystem>
#include <string>
#include <vector>

namespace dot::adopt_test {

enum class GoGen { PreCapability, Effects };

struct GoRootSpec {
  GoGen gen = GoGen::Effects;
  // One of go_states(gen).
  std::string state = "committed";
  // hello.txt exists before the first apply ("old\n", 0600).
  bool user_file = false;
  // Archived generations made before the active state (even ones committed,
  // odd ones rolled back after their commit).
  int history = 0;
  // The manifest of the oldest host (3e6408f) has no "profile".
  bool manifest_profile = true;
  // "audit", or "process" (`register --assurance process`, 96c454c and
  // later, whose manifests always have "profile").
  std::string assurance = "audit";
  unsigned seed = 1;
  // The registered plugin's bytes; empty: a stand-in script (enough for
  // every reader; a test that plans after adopting copies a real plugin).
  std::string plugin_bytes;
  // Group ids other than ours (0: ours), for the ownership refusals; only
  // root can give them: the files the reference's process staged (stage
  // files and artifacts, so its plans seal that group in `after`), and the
  // user file with its backups.
  unsigned stage_gid = 0;
  unsigned user_file_gid = 0;
};

struct GoTxnIds {
  std::string plan_id;
  std::string proposal_id;
  std::string state;  // COMMITTED or ROLLED_BACK for history
};

struct GoRoot {
  std::string root_id;
  std::string plugin_digest;
  // The transaction the state leaves active (.dot-txn, or the one being
  // archived); empty ids when there is none or no plan.json was written.
  GoTxnIds active;
  // The archived generations, in the order they were made (the one being
  // archived by an ARCHIVING state is not among them).
  std::vector<GoTxnIds> history;
};

// The reference used again on a root make_go_root made (and something else,
// such as a killed `adopt`, may since have left files of its own beside):
// its `archive` of the active transaction, which must be terminal, then a
// new apply stopped at `state` (an apply state of go_states: "prepared",
// "committing", ..., "committed"), written exactly as make_go_root writes
// them. `made` is what make_go_root (or an earlier call) returned; returns
// the root as it then is.
GoRoot continue_go_root(const std::filesystem::path& root, const GoRootSpec& spec, const GoRoot& made,
                        const std::string& state);

// Every state the generator can leave for `gen`, in the reference's order.
std::vector<std::string> go_states(GoGen gen);

// Makes the root at `root` (which must not exist; its parent must). Throws
// std::runtime_error on any failure of its own.
GoRoot make_go_root(const std::filesystem::path& root, const GoRootSpec& spec);

// The 47 bytes the hello plugin stages for both targets.
inline constexpr const char* kHelloBytes = "Hello from an unprivileged calculation plugin.\n";

// The two ids of a hello plan, computed with the generator's own canonical
// encoder (exposed for the section 10 vector test).
struct GoSnapshot {
  bool exists = false;
  std::string sha256;
  unsigned mode = 0;
  unsigned long uid = 0, gid = 0;
};
struct GoOp {
  std::string name;
  GoSnapshot before, after;
};
struct GoPlan {
  std::string root_id, nonce, plugin_digest, proposal_id;
  std::vector<GoOp> ops;
  bool effects = true;
};
std::string go_canonical(const GoPlan& plan);
std::string go_writer_form(const GoPlan& plan, const std::string& plan_id);
std::string go_proposal_id(const GoPlan& plan);
std::string go_plan_id(const GoPlan& plan);
// The plan of section 10's byte-level example (uid and gid 1000, a user
// file "old\n" as hello.txt), proposal_id still empty.
GoPlan section10_plan(bool effects);

}  // namespace dot::adopt_test
