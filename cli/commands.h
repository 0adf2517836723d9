#pragma once
// How subcommands plug into the one dot-core binary. Each command group lives
// in its own cmd_<group>.cpp and registers its subcommands on the app; the
// chosen command's action runs after parsing and returns the exit code.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dot/store/store.h"

// Declared only: each file that defines a command's options includes
// <CLI/CLI.hpp> itself. The header-only CLI11 costs every file that includes
// it about 7 s of compiling (its inline functions are compiled again in each),
// so the files that only carry out a command do without it.
namespace CLI {
class App;
}  // namespace CLI

namespace dot::cli {

struct Context {
  // Set by the callback of the chosen subcommand; run after a successful parse.
  std::function<int()> action;
};

// Exit codes of docs/spec/cli.md.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
// `plan --detailed-exitcode` (Terraform's rule: 0 no changes, 1 an error, 2
// changes; a usage error is then 1, so 2 means changes only) and `status
// --exit-code` (1 when a target drifted).
inline constexpr int kExitChanges = 2;
inline constexpr int kExitDrift = 1;
inline constexpr std::string_view kDetailedExitcodeFlag = "--detailed-exitcode";

// A command whose one option is --json (doctor, version): `run(json)` is its
// action when it is the command parsed. Returns it, for its footer.
CLI::App* add_json_command(CLI::App& app, Context& ctx, const std::string& name, const std::string& about,
                           const std::string& json_help, std::function<int(bool)> run);

void add_version_command(CLI::App& app, Context& ctx);
// "dot-core VERSION (commit COMMIT)": what `dot-core version` and
// `dot-core --version` print (cmd_version.cpp, the one place that sees the
// generated build_info.h).
std::string version_line();
// The reference plugin dot-hello installed with this dot-core (in
// LIBEXECDIR/dot-core/ of the same prefix), or beside it in a build tree;
// nullopt when there is none (install_paths.cpp).
std::optional<std::string> reference_plugin_path();

void add_jcs_commands(CLI::App& app, Context& ctx);      // jcs canonicalize|hash
void add_vectors_commands(CLI::App& app, Context& ctx);  // vectors replay
void add_frames_commands(CLI::App& app, Context& ctx);   // frames decode
void add_init_command(CLI::App& app, Context& ctx);      // init
void add_store_commands(CLI::App& app, Context& ctx);    // store check|prune, judging plans with core
// The store group with `judge` for every stored plan (cmd_store.cpp); core's
// judge is passed by add_store_commands, defined in cmd_engine.cpp, the one
// CLI file that sees core (dot-core-hooked compiles it against hooked core).
void add_store_group(CLI::App& app, Context& ctx, store::Store::PlanJudge judge);
void add_inspect_commands(CLI::App& app, Context& ctx);  // inspect list|show|events
void add_engine_commands(CLI::App& app, Context& ctx);   // register, plan, apply, rollback, recover, ...
void add_doctor_command(CLI::App& app, Context& ctx);    // doctor
void add_adopt_command(CLI::App& app, Context& ctx);  // adopt (cmd_adopt.cpp: sees core and adopt, like cmd_engine.cpp)
void add_adpp_commands(CLI::App& app, Context& ctx);  // adpp conform, adpp hello|list|...
void add_metewand_commands(CLI::App& app, Context& ctx);  // metewand hello
void add_dpp_commands(CLI::App& app, Context& ctx);       // dpp conform (cmd_dpp.cpp)

// frames decode, one function per wire format (frames_<format>.cpp).
struct FramesOptions {
  std::string input = "-";  // FILE or "-"
  bool count_only = false;  // --count
  std::string direction;    // adpp only, where it is required
};
int decode_frames_dpp(const FramesOptions& options);
int decode_frames_metewand(const FramesOptions& options);

// The ADPP actions (frames_adpp.cpp, adpp_conform.cpp).
int decode_frames_adpp(const FramesOptions& options);
struct AdppConformOptions {
  double timeout_s = 3.0;
  bool json = false;
  bool list = false;
  std::string suite = "profile";  // profile | semantics | all
  std::vector<std::string> cases;
  std::vector<std::string> provider;
};
int run_adpp_conform(const AdppConformOptions& options);

// dot-core adpp hello|list|describe|read|call|health|wait-ready -- PROVIDER
struct AdppClientOptions {
  std::string verb;  // the subcommand's name
  bool json = false;
  double timeout_s = 5.0;
  bool health = false;               // list: include_health
  std::vector<std::string> devices;  // describe, read: one request per device; call: exactly one
  std::vector<std::string> signals;  // read
  std::string function;              // call: a function_id (digits) or a function_name
  std::string args = "{}";           // call: a JSON object, name -> value
  double max_wait_s = 0;             // wait-ready: max_wait_ms_hint (0: none)
  std::vector<std::string> provider;
};
int run_adpp_client(const AdppClientOptions& options);

}  // namespace dot::cli
