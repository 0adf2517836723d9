#pragma once
// The root's plugins, each under its own id (docs/spec/dpp-general.md,
// "Registration and manifest"): `register` pins a copy of an ELF executable
// and its digest with the manifest {assurance, id, profile, protocol, sha256}
// (plus `inputs` for the general profile, `interpreter` for a `#!` script);
// `plan` copies the pinned file (and a script's interpreter) into
// a sealed memfd, hashes the sealed copy and executes that same descriptor
// (dot/base/sealed_executable.h): the bytes that run are the bytes that were
// checked, even if the pinned file is rewritten in place meanwhile.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/fd.h"
#include "dot/base/result.h"
#include "dot/core/plan_v2.h"
#include "dot/core/root.h"

namespace dot::core {

enum class Assurance { Audit, Process };
std::string_view assurance_name(Assurance a) noexcept;  // "audit" | "process"
Result<Assurance> assurance_from_name(std::string_view name);

// An interpreted plugin's interpreter, pinned like the plugin itself
// (dot/base/plugin_executable.h): its path (symlinks resolved), the digest of
// its bytes, the options it is run with and the folders it may read under
// process assurance.
struct ManifestInterpreter {
  std::string path;
  std::string sha256;
  std::vector<std::string> options;
  std::vector<std::string> runtime;
  bool operator==(const ManifestInterpreter&) const = default;
};

struct Manifest {
  std::string assurance;  // "audit" | "process"
  std::string id;         // "org.dot.hello", "org.dot.mirror", ...
  std::string profile;    // "org.dot.hello/v1" | "org.dot.dpp/v1"
  std::uint64_t protocol = 1;
  std::string sha256;  // of the pinned copy
  // The directories the plugin may read, in registration order. The hello
  // profile has none and its manifest has no `inputs` key (its bytes are
  // exactly what earlier releases stored); the general profile's always has
  // one (possibly empty).
  std::vector<std::string> inputs;
  // A `#!` script's interpreter (`sha256` is then the script's); none for an
  // ELF plugin, whose manifest has no `interpreter` key (its bytes are what
  // earlier releases stored).
  std::optional<ManifestInterpreter> interpreter;
  // The user's consent, given once at `register --allow-audit-plugin`, to run
  // this audit-assurance plugin uncontained at every `plan` without a flag.
  // Stored as "consent": "audit" only when given, so a manifest without it
  // keeps the bytes earlier releases stored.
  bool audit_consent = false;
  bool operator==(const Manifest&) const = default;
};
Result<std::string> encode_manifest(const Manifest& m);  // canonical JSON
Result<Manifest> decode_manifest(std::string_view canonical);

// At most this many --input directories, each at most this many bytes.
inline constexpr std::size_t kMaxInputs = 16;
inline constexpr std::size_t kMaxInputBytes = 4095;

struct RegisterRequest {
  std::string plugin_path;  // absolute path of the ELF executable or #! script
  std::string id;           // "" = org.dot.hello
  std::string profile;      // "" = org.dot.hello/v1 (only for org.dot.hello)
  Assurance assurance = Assurance::Audit;
  std::vector<std::string> inputs;  // general profile only; kept in this order
  // An interpreted plugin's read-only runtime folders beyond those derived
  // from its interpreter (register --runtime), checked as inputs are.
  std::vector<std::string> runtime;
  bool replace = false;
  // register --allow-audit-plugin: recorded in the manifest (audit assurance
  // only; with process assurance it is DOT_E_POLICY kind consent).
  bool allow_audit = false;
};
struct Registration {
  Manifest manifest;
  bool replaced = false;
};
// Checks the request (id, profile, inputs: every --input absolute, an
// existing directory reached without a symlink in any component, not the
// managed root, its state folder or above the root (a folder inside the
// root may be one: a plan never writes inside it); at most kMaxInputs, no
// repeats),
// copies the executable (dot::open_plugin_executable decides which are
// accepted: an ELF executable, or a `#!` script whose interpreter is one,
// pinned by path and digest in the manifest) into the state folder under the
// id's own name (store::plugin_copy_name; mode 0500, created exclusively,
// fsync'd, renamed into place) and stores the manifest. A plugin already registered under
// the id is replaced only with `replace`, and only when no transaction is
// unfinished (DOT_E_RECOVERY_REQUIRED otherwise); other plugins are never
// touched. `runtime` folders (a script only: their union with the derived
// ones, derived first, at most kMaxInputs given) are recorded in the
// manifest's interpreter, read-only under process assurance.
// Any refusal changes nothing: a script with an unusable `#!`
// line, a relative path, a non-regular file, a bad id, profile or input is DOT_E_POLICY (a symlink on
// an input's way DOT_E_PATH_ESCAPE, a missing one DOT_E_IO) naming it.
Result<Registration> register_plugin(Root& root, const RegisterRequest& request);

// The command that registers a plugin at this root, for hints:
// `dot-core register --root R --plugin PATH --assurance audit|process`
// (Root::command("register") and these arguments).
inline constexpr std::string_view kRegisterArguments = " --plugin PATH --assurance audit|process";
std::string register_command(const Root& root);

// The plugin a command works with: `plugin_id`, or, when it is empty, the
// root's only plugin. DOT_E_POLICY when none is registered (kind no_plugin,
// saying how to register one), when `plugin_id` is not registered (kind
// unknown_plugin) or when it is empty and several are (kind plugin_required);
// the detail lists the registered ids and says to pass --plugin ID.
Result<store::PluginRecord> registered_plugin(Root& root, std::string_view plugin_id);

// Every registered plugin, ascending by id, with its manifest (nullopt when
// the stored manifest does not decode: status still shows the row).
struct ListedPlugin {
  store::PluginRecord record;
  std::optional<Manifest> manifest;
};
Result<std::vector<ListedPlugin>> list_plugins(Root& root);

// What a plan runs, everything checked against the manifest; the planner
// launches any plugin from these fields alone, whatever its language.
struct PinnedPlugin {
  Manifest manifest;
  UniqueFd exec_fd;               // the sealed memfd executed: the plugin, or its interpreter
  std::string exec_path;          // where exec_fd was read from: the sandbox's loader lookup
  std::string copy_path;          // DIR/.dot/<copy name>, for messages
  std::vector<std::string> argv;  // {"dot-plugin"}, or the interpreter's (dot::interpreter_argv)
  // An interpreted plugin's sealed script, kept by the child as
  // dot::kScriptChildFd; empty for an ELF plugin.
  UniqueFd script_fd;
  // Read-only folders under process assurance besides the inputs: the
  // interpreter's runtime (O_PATH descriptors, opened at pin time).
  std::vector<UniqueFd> runtime_dirs;
  // Environment entries besides LANG and DOT_STAGE_ROOT for a plugin whose
  // stage is `stage_dir` (an interpreted plugin: HOME, dot::interpreter_env).
  std::vector<std::string> extra_env(const std::string& stage_dir) const;
};
// Opens the pinned copy of registered_plugin(root, plugin_id), seals a copy
// of it, hashes the sealed copy and compares it with the manifest; for an
// interpreted plugin the same for the interpreter at its recorded path:
// DOT_E_PLUGIN_IDENTITY on any difference (the manifest's id included, a
// missing interpreter or runtime folder), registered_plugin's errors when
// there is no such plugin.
Result<PinnedPlugin> open_pinned_plugin(Root& root, std::string_view plugin_id);

// A general plugin's cache folder (docs/spec/dpp-general.md, "The plugin's
// cache"): DIR/.dot/cache-<id>, made 0700 when missing, opened beneath the
// state folder without following a symlink (a symlink there is
// DOT_E_PATH_ESCAPE). Core never reads what is in it; under process
// assurance the descriptor is the one folder besides the stage the plugin
// may write.
struct PluginCache {
  UniqueFd fd;
  std::string path;  // absolute: what dot.initialize's `cache` names
};
Result<PluginCache> open_plugin_cache(const Root& root, std::string_view plugin_id);
// Removes it and everything in it (unregister, register --replace: a new
// plugin starts without an old one's files). Nothing to remove is fine.
Status remove_plugin_cache(const Root& root, std::string_view plugin_id);

// Opens a general plugin's input directory `path` (register checks each
// --input with it, the planner again before every run) from "/" one
// component at a time, never following a symlink (O_PATH | O_NOFOLLOW |
// O_DIRECTORY on each), and refuses an input that is the managed root, lies
// inside it, or contains it (the plugin could then read the state folder:
// the store, other plugins' copies). Returns the O_PATH descriptor of the
// directory that was checked: process containment grants read access to
// that inode, never to what the path names later. DOT_E_POLICY (kinds
// input_path, input_type, input_root), DOT_E_PATH_ESCAPE for a symlink,
// DOT_E_IO for a missing directory.
// `option` names the flag in the errors (register --runtime checks its
// folders with the same rules).
Result<UniqueFd> open_input(const Root& root, const std::string& path, std::string_view option = "--input");

// ---- path ownership (docs/spec/dpp-general.md, "Plan") ---------------------------
// A path belongs to the plugin whose applied plan (COMMITTED or DONE, not
// rolled back) wrote it last, until a plan removes it (store::Store's
// path_owner; dot-core's own history decides, never the plugin).
//
// The paths `plugin_id` owns, ascending by UTF-8 bytes: dot.plan's `managed`.
Result<std::vector<std::string>> owned_paths(Root& root, std::string_view plugin_id);
// The planner's check before it seals: none of `paths` (the operations'
// paths, writes and removes alike) is owned by a plugin other than
// `plugin_id`. DOT_E_POLICY (kind owned_by_other) naming the first such path
// and its owner otherwise.
Status check_ownership(Root& root, std::string_view plugin_id, std::span<const std::string_view> paths);

// `dot-core forget PATH...`: the paths (relative to the root, each passing
// dpp::check_path) stop being managed; their files stay exactly as they
// are. All or nothing (store::Store::release_paths: kind not_owned for a
// path nobody manages). The owners released.
Result<std::vector<store::PathOwner>> forget_paths(Root& root, const std::vector<std::string>& paths);

// `dot-core unregister ID [--forget]`: the plugin's row goes (with every
// path it owns released when `forget`; store::Store::unregister_plugin's
// kinds), then its pinned copy in the state folder. Never touches a target.
struct Unregistered {
  std::string plugin_id;
  std::vector<store::PathOwner> released;
  // Empty, or why the pinned copy or the plugin's cache folder could not
  // be removed (the plugin is unregistered either way; neither is used).
  std::string copy_left;
};
Result<Unregistered> unregister_plugin(Root& root, std::string_view plugin_id, bool forget);

}  // namespace dot::core
