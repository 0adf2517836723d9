#pragma once
// The root's one plugin: `register` pins a copy of an ELF executable and its
// digest with the manifest {assurance, id, profile, protocol, sha256}; `plan`
// copies the pinned file into a sealed memfd, hashes the sealed copy and
// executes that same descriptor (dot/base/sealed_executable.h): the bytes
// that run are the bytes that were checked, even if the pinned file is
// rewritten in place meanwhile.

#include <string>
#include <string_view>

#include "dot/base/fd.h"
#include "dot/base/result.h"
#include "dot/core/root.h"

namespace dot::core {

enum class Assurance { Audit, Process };
std::string_view assurance_name(Assurance a) noexcept;  // "audit" | "process"
Result<Assurance> assurance_from_name(std::string_view name);

struct Manifest {
  std::string assurance;  // "audit" | "process"
  std::string id;         // "org.dot.hello"
  std::string profile;    // "org.dot.hello/v1"
  std::uint64_t protocol = 1;
  std::string sha256;     // of the pinned copy
  bool operator==(const Manifest&) const = default;
};
Result<std::string> encode_manifest(const Manifest& m);  // canonical JSON
Result<Manifest> decode_manifest(std::string_view canonical);

// Largest executable `register` accepts.
inline constexpr std::size_t kMaxPluginBytes = 64 * 1024 * 1024;

struct Registration {
  Manifest manifest;
  bool replaced = false;
};
// Copies the ELF executable at `plugin_path` (absolute) into the state folder
// (mode 0500, created exclusively, fsync'd, renamed into place) and stores the
// manifest. An existing plugin is replaced only with `replace`, and only when
// no transaction is unfinished (DOT_E_RECOVERY_REQUIRED otherwise). A script,
// a relative path or a non-regular file is DOT_E_POLICY naming the reason.
Result<Registration> register_plugin(Root& root, const std::string& plugin_path, Assurance assurance, bool replace);

// The command that registers a plugin at this root, for hints:
// `dot-core register --root R --plugin PATH --assurance audit|process`.
std::string register_command(const store::RootLayout& layout);
// The registered plugin's row; none is DOT_E_POLICY (no_plugin) whose detail
// says how to register one.
Result<store::PluginRecord> registered_plugin(Root& root);

struct PinnedPlugin {
  Manifest manifest;
  UniqueFd exec_fd;  // the sealed memfd whose digest matched the manifest
};
// Opens the pinned copy, seals a copy of it, hashes the sealed copy and
// compares it with the manifest: DOT_E_PLUGIN_IDENTITY on any difference,
// DOT_E_POLICY when no plugin is registered.
Result<PinnedPlugin> open_pinned_plugin(Root& root);

}  // namespace dot::core
