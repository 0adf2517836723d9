#include "dot/core/registry.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "dot/base/beneath.h"
#include "dot/base/jcs.h"
#include "dot/base/json.h"
#include "dot/base/sealed_executable.h"
#include "dot/base/sha256.h"
#include "dot/dpp/hello.h"

namespace dot::core {

std::string_view assurance_name(Assurance a) noexcept { return a == Assurance::Audit ? "audit" : "process"; }

Result<Assurance> assurance_from_name(std::string_view name) {
  if (name == "audit") return Assurance::Audit;
  if (name == "process") return Assurance::Process;
  return make_error(Code::Validation, "assurance", fmt::format("assurance \"{}\" is not audit or process", name));
}

Result<std::string> encode_manifest(const Manifest& m) {
  auto n = jcs::Node::object();
  n.set("assurance", jcs::Node::string(m.assurance));
  n.set("id", jcs::Node::string(m.id));
  n.set("profile", jcs::Node::string(m.profile));
  n.set("protocol", jcs::Node::integer(static_cast<std::int64_t>(m.protocol)));
  n.set("sha256", jcs::Node::string(m.sha256));
  return jcs::encode(n, jcs::Profile::Hello);
}

Result<Manifest> decode_manifest(std::string_view canonical) {
  auto relabel = [](Error e) {
    e.code = Code::PluginIdentity;
    e.detail = "stored plugin manifest: " + e.detail;
    return e;
  };
  auto doc = json::parse(canonical, json::ReadLimits{.max_bytes = 4096, .max_depth = 4});
  if (!doc.ok()) return relabel(std::move(doc).error());
  json::ObjectReader r(doc->root(), "manifest");
  Manifest m;
  auto a = r.required_string("assurance");
  auto id = r.required_string("id");
  auto profile = r.required_string("profile");
  auto protocol = r.required_uint("protocol", 1 << 20);
  auto sha = r.required_string("sha256");
  for (const Status& s : {a.ok() ? Status{} : Status(a.error()), id.ok() ? Status{} : Status(id.error()),
                          profile.ok() ? Status{} : Status(profile.error()),
                          protocol.ok() ? Status{} : Status(protocol.error()), sha.ok() ? Status{} : Status(sha.error()),
                          r.finish()})
    if (!s.ok()) return relabel(s.error());
  m.assurance = std::string(*a);
  m.id = std::string(*id);
  m.profile = std::string(*profile);
  m.protocol = *protocol;
  m.sha256 = std::string(*sha);
  if (!is_sha256_hex(m.sha256) || !assurance_from_name(m.assurance).ok())
    return make_error(Code::PluginIdentity, "manifest", "stored plugin manifest has an invalid digest or assurance");
  return m;
}

Result<Registration> register_plugin(Root& root, const std::string& plugin_path, Assurance assurance, bool replace) {
  if (plugin_path.empty() || plugin_path.front() != '/')
    return make_error(Code::Policy, "plugin_path",
                      fmt::format("--plugin must be an absolute path (got \"{}\"): plugins are never looked up", plugin_path));
  DOT_ASSIGN_OR_RETURN(auto existing, root.store().plugin());
  if (existing && !replace)
    return make_error(Code::Conflict, "plugin_registered",
                      fmt::format("the root already has a plugin ({}); use --replace to swap it", existing->plugin_id));
  if (existing) {
    DOT_ASSIGN_OR_RETURN(auto unfinished, root.store().in_flight());
    if (!unfinished.empty())
      return make_error(Code::RecoveryRequired, "unfinished",
                        fmt::format("transaction {} is unfinished ({}); run `{}` before --replace",
                                    unfinished.front().plan_id, store::state_name(unfinished.front().state),
                                    store::command_for(root.layout(), "recover")));
  }

  UniqueFd src(::open(plugin_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!src) return beneath::errno_error(errno, "open plugin", plugin_path);
  struct stat st {};
  if (::fstat(src.get(), &st) != 0) return beneath::errno_error(errno, "stat plugin", plugin_path);
  if (!S_ISREG(st.st_mode))
    return make_error(Code::Policy, "plugin_type", fmt::format("plugin {} is not a regular file", plugin_path));
  DOT_ASSIGN_OR_RETURN(std::string bytes, read_all(src.get(), kMaxPluginBytes, plugin_path));
  if (bytes.size() >= 2 && bytes.compare(0, 2, "#!") == 0)
    return make_error(Code::Policy, "plugin_script",
                      fmt::format("plugin {} is a #! script: a script cannot be executed from a close-on-exec "
                                  "descriptor, so only ELF executables can be registered",
                                  plugin_path));
  if (bytes.size() < 4 || bytes.compare(0, 4, "\x7f" "ELF") != 0)
    return make_error(Code::Policy, "plugin_not_elf", fmt::format("plugin {} is not an ELF executable", plugin_path));

  Manifest m;
  m.assurance = std::string(assurance_name(assurance));
  m.id = std::string(dpp::hello::kPluginId);
  m.profile = std::string(dpp::hello::kProfile);
  m.protocol = dpp::hello::kProtocol;
  m.sha256 = sha256_hex(bytes);
  DOT_ASSIGN_OR_RETURN(std::string manifest_bytes, encode_manifest(m));

  // The copy is written, renamed into place and synced beneath the state
  // folder's descriptor.
  const int state_fd = root.dirs().state_fd.get();
  DOT_ASSIGN_OR_RETURN(beneath::CreatedFile copy, beneath::create_temp(state_fd, "plugin.new-", 0500));
  auto cleanup = [&](Error e) {
    ::unlinkat(state_fd, copy.name.c_str(), 0);
    return e;
  };
  if (auto s = write_all(copy.fd.get(), bytes, copy.name); !s.ok()) return cleanup(s.error());
  if (auto s = beneath::fsync_fd(copy.fd.get(), copy.name); !s.ok()) return cleanup(s.error());
  copy.fd.reset();
  if (auto s = beneath::rename_entry(state_fd, copy.name, store::kPluginName, /*no_replace=*/!existing); !s.ok())
    return cleanup(s.error());
  DOT_TRY(beneath::fsync_fd(state_fd, root.layout().state_dir));

  store::PluginRecord rec;
  rec.plugin_id = m.id;
  rec.sha256 = m.sha256;
  rec.manifest = manifest_bytes;
  DOT_TRY(root.store().register_plugin(rec, replace));
  return Registration{m, existing.has_value()};
}

std::string register_command(const store::RootLayout& layout) {
  return store::command_for(layout, "register") + " --plugin PATH --assurance audit|process";
}

Result<store::PluginRecord> registered_plugin(Root& root) {
  DOT_ASSIGN_OR_RETURN(auto rec, root.store().plugin());
  if (!rec)
    return make_error(Code::Policy, "no_plugin",
                      fmt::format("no plugin is registered; run `{}` first", register_command(root.layout())));
  return std::move(*rec);
}

Result<PinnedPlugin> open_pinned_plugin(Root& root) {
  DOT_ASSIGN_OR_RETURN(store::PluginRecord rec, registered_plugin(root));
  DOT_ASSIGN_OR_RETURN(Manifest m, decode_manifest(rec.manifest));
  if (m.sha256 != rec.sha256)
    return make_error(Code::PluginIdentity, "manifest", "the stored manifest and the plugin row disagree on the digest");
  auto opened = root.dirs().open_entry(store::kPluginName, O_RDONLY);
  if (!opened.ok()) {
    Error e = std::move(opened).error();
    if (e.code != Code::PathEscape) e.code = Code::PluginIdentity;
    return e;
  }
  UniqueFd fd = std::move(*opened);
  // What is hashed is the sealed copy, and the sealed copy is what runs: an
  // in-place rewrite of the pinned file after this point changes nothing.
  auto copy = seal_executable(fd.get(), "the pinned plugin", kMaxPluginBytes);
  if (!copy.ok()) {
    Error e = copy.error();
    if (e.kind == "too_large") e.code = Code::PluginIdentity;  // register never pins one that large
    return e;
  }
  SealedExecutable sealed = std::move(copy).value();
  if (sealed.sha256 != m.sha256)
    return make_error(Code::PluginIdentity, "digest",
                      fmt::format("the pinned plugin changed after register: sha256 {} but the manifest pins {}",
                                  sealed.sha256, m.sha256));
  return PinnedPlugin{std::move(m), std::move(sealed.fd)};
}

}  // namespace dot::core
