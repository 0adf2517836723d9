// The root's registered plugins: pinned copies, manifests, inputs and path ownership (registry.h).
#include "dot/core/registry.h"
#include "dot/core/error_kinds.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dot/base/beneath.h"
#include "dot/base/jcs.h"
#include "dot/base/json.h"
#include "dot/base/plugin_executable.h"
#include "dot/base/sealed_executable.h"
#include "dot/base/sha256.h"
#include "dot/base/utf8.h"
#include "dot/dpp/general.h"
#include "dot/dpp/hello.h"
#include "dot/dpp/host_session.h"
#include "dot/dpp/path_rules.h"

namespace dot::core {

std::string_view assurance_name(Assurance a) noexcept { return a == Assurance::Audit ? "audit" : "process"; }

Result<Assurance> assurance_from_name(std::string_view name) {
  if (name == "audit") return Assurance::Audit;
  if (name == "process") return Assurance::Process;
  return make_error(core::ErrorKind::ManifestAssurance, fmt::format("assurance \"{}\" is not audit or process", name));
}

namespace {

bool is_hello_profile(std::string_view profile) { return profile == dpp::hello::kProfile; }

}  // namespace

Result<std::string> encode_manifest(const Manifest& m) {
  auto n = jcs::Node::object();
  n.set("assurance", jcs::Node::string(m.assurance));
  if (m.audit_consent) n.set("consent", jcs::Node::string("audit"));
  n.set("id", jcs::Node::string(m.id));
  if (!is_hello_profile(m.profile)) {
    auto inputs = jcs::Node::array();
    for (const auto& dir : m.inputs) inputs.push(jcs::Node::string(dir));
    n.set("inputs", std::move(inputs));
  } else if (!m.inputs.empty()) {
    return make_error(core::ErrorKind::ManifestEncoding, "a hello-profile manifest has no inputs");
  }
  n.set("profile", jcs::Node::string(m.profile));
  n.set("protocol", jcs::Node::integer(static_cast<std::int64_t>(m.protocol)));
  n.set("sha256", jcs::Node::string(m.sha256));
  if (m.interpreter) {
    auto strings = [](const std::vector<std::string>& v) {
      auto a = jcs::Node::array();
      for (const auto& s : v) a.push(jcs::Node::string(s));
      return a;
    };
    auto in = jcs::Node::object();
    in.set("options", strings(m.interpreter->options));
    in.set("path", jcs::Node::string(m.interpreter->path));
    in.set("runtime", strings(m.interpreter->runtime));
    in.set("sha256", jcs::Node::string(m.interpreter->sha256));
    n.set("interpreter", std::move(in));
  }
  // The hello form of an ELF plugin is encoded exactly as before (its bytes
  // are what existing roots store); paths (inputs, an interpreter's) are any UTF-8.
  const bool hello_form = is_hello_profile(m.profile) && !m.interpreter;
  return jcs::encode(n, hello_form ? jcs::Profile::Hello : jcs::Profile::Rfc8785);
}

namespace {

Result<std::vector<std::string>> string_array(json::ObjectReader& r, std::string_view name) {
  DOT_ASSIGN_OR_RETURN(json::Value v, r.required_array(name));
  std::vector<std::string> out;
  for (json::Value e : v.elements()) {
    if (!e.is_string())
      return make_error(core::ErrorKind::Manifest, fmt::format("interpreter.{} holds a non-string", name));
    out.emplace_back(e.as_string());
  }
  return out;
}

// {"options": [...], "path": "/usr/bin/python3.11", "runtime": [...], "sha256": "..."}
Result<ManifestInterpreter> decode_interpreter(json::Value v) {
  if (!v.is_object()) return make_error(core::ErrorKind::Manifest, "interpreter is not an object");
  json::ObjectReader r(v, "manifest interpreter");
  ManifestInterpreter in;
  DOT_ASSIGN_OR_RETURN(in.options, string_array(r, "options"));
  DOT_ASSIGN_OR_RETURN(std::string_view path, r.required_string("path"));
  DOT_ASSIGN_OR_RETURN(in.runtime, string_array(r, "runtime"));
  DOT_ASSIGN_OR_RETURN(std::string_view sha, r.required_string("sha256"));
  DOT_TRY(r.finish());
  in.path = std::string(path);
  in.sha256 = std::string(sha);
  if (in.path.empty() || in.path.front() != '/' || !is_sha256_hex(in.sha256))
    return make_error(core::ErrorKind::Manifest, "interpreter has a relative path or an invalid digest");
  for (const auto& dir : in.runtime)
    if (dir.empty() || dir.front() != '/')
      return make_error(core::ErrorKind::Manifest, "interpreter has a relative runtime folder");
  return in;
}

}  // namespace

Result<Manifest> decode_manifest(std::string_view canonical) {
  auto relabel = [](Error e) {
    e.code = Code::PluginIdentity;
    e.detail = "stored plugin manifest: " + e.detail;
    return e;
  };
  // 16 inputs of 4095 bytes, each byte escaped at most as \u00XX.
  auto doc = json::parse(canonical, json::ReadLimits{.max_bytes = 1 << 20, .max_depth = 4});
  if (!doc.ok()) return relabel(std::move(doc).error());
  json::ObjectReader r(doc->root(), "manifest");
  Manifest m;
  auto a = r.required_string("assurance");
  auto id = r.required_string("id");
  auto profile = r.required_string("profile");
  auto protocol = r.required_uint("protocol", 1 << 20);
  auto sha = r.required_string("sha256");
  // The hello form has no inputs key (finish() refuses one); the general
  // profile's always has one. Another profile may have it or not: the
  // planner refuses the profile itself, naming it.
  std::optional<Result<json::Value>> inputs;
  if (profile.ok() && *profile == dpp::general::kProfile) {
    inputs.emplace(r.required_array("inputs"));
  } else if (profile.ok() && !is_hello_profile(*profile)) {
    if (auto v = r.optional("inputs")) inputs.emplace(*v);
  }
  std::optional<json::Value> interpreter = r.optional("interpreter");
  std::optional<json::Value> consent = r.optional("consent");
  if (consent && !(consent->is_string() && consent->as_string() == "audit"))
    return make_error(core::ErrorKind::Manifest, "stored plugin manifest: consent is not \"audit\"");
  m.audit_consent = consent.has_value();
  auto status_of = [](const auto& res) { return res.ok() ? Status{} : Status(res.error()); };
  for (const Status& s : {status_of(a), status_of(id), status_of(profile), status_of(protocol), status_of(sha),
                          inputs ? status_of(*inputs) : Status{}, r.finish()})
    if (!s.ok()) return relabel(s.error());
  if (interpreter) {
    auto in = decode_interpreter(*interpreter);
    if (!in.ok()) return relabel(std::move(in).error());
    m.interpreter = std::move(*in);
  }
  m.assurance = std::string(*a);
  m.id = std::string(*id);
  m.profile = std::string(*profile);
  m.protocol = *protocol;
  m.sha256 = std::string(*sha);
  if (inputs) {
    if (!(**inputs).is_array())
      return make_error(core::ErrorKind::Manifest, "stored plugin manifest: inputs is not an array");
    for (json::Value v : (**inputs).elements()) {
      if (!v.is_string())
        return make_error(core::ErrorKind::Manifest, "stored plugin manifest: an input is not a string");
      m.inputs.emplace_back(v.as_string());
    }
  }
  if (!is_sha256_hex(m.sha256) || !assurance_from_name(m.assurance).ok())
    return make_error(core::ErrorKind::Manifest, "stored plugin manifest has an invalid digest or assurance");
  // The id names the plugin's sealed copy and is printed by status: what a
  // manifest stores must be an id register would have accepted.
  if (!dpp::general::check_plugin_id(m.id).ok())
    return make_error(core::ErrorKind::Manifest, "stored plugin manifest has an invalid plugin id");
  return m;
}

namespace {}  // namespace

// The path must be exactly "/" + components without ".", "..", empty
// components or a trailing '/', so what is stored is what was checked.
Result<UniqueFd> open_input(const Root& root, const std::string& path, std::string_view option) {
  auto policy = [&](ErrorKind kind, std::string why) {
    return make_error(kind, fmt::format("{} {}: {}", option, path, why));
  };
  if (path.empty() || path.front() != '/') return policy(core::ErrorKind::InputPath, "not an absolute path");
  if (path.size() > kMaxInputBytes)
    return policy(core::ErrorKind::InputPath, fmt::format("{} bytes long (at most {})", path.size(), kMaxInputBytes));
  if (utf8_valid_prefix(path) != path.size()) return policy(core::ErrorKind::InputPath, "not valid UTF-8");
  struct stat root_st {};
  if (::fstat(root.root_fd(), &root_st) != 0) return beneath::errno_error(errno, "stat", root.layout().root);
  auto is_root = [&](const struct stat& st) { return st.st_dev == root_st.st_dev && st.st_ino == root_st.st_ino; };
  auto overlap = [&]() {
    return policy(core::ErrorKind::InputRoot,
                  "the managed root, its state folder or above the root: a plugin never reads the root's state "
                  "folder");
  };
  // A folder inside the root may be an input (~/dotfiles of a root ~): the
  // plugin reads it, and a plan may not write inside it (kind inside_input).
  bool in_root = false;

  UniqueFd dir(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return beneath::errno_error(errno, "open", "/");
  std::string walked;
  std::size_t pos = 1;
  while (pos <= path.size() && path != "/") {
    std::size_t slash = path.find('/', pos);
    std::string name = path.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
    if (name.empty() || name == "." || name == "..")
      return policy(core::ErrorKind::InputPath, "not a plain absolute path (an empty, \".\" or \"..\" component)");
    if (in_root && name == store::kStateDirName) return overlap();
    in_root = false;
    walked += "/" + name;
    UniqueFd next(::openat(dir.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC));
    if (!next) {
      int err = errno;
      struct stat st {};
      if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
        return make_error(core::ErrorKind::Symlink,
                          fmt::format("{} {}: {} is a symlink (never followed)", option, path, walked));
      if (err == ENOTDIR) return policy(core::ErrorKind::InputType, fmt::format("{} is not a directory", walked));
      return beneath::errno_error(err, option == "--input" ? "open input" : "open runtime folder", walked);
    }
    dir = std::move(next);
    struct stat st {};
    if (::fstat(dir.get(), &st) != 0) return beneath::errno_error(errno, "stat", walked);
    if (is_root(st)) {
      if (slash == std::string::npos) return overlap();
      in_root = true;  // the next name must not be the state folder
    }
    if (slash == std::string::npos) break;
    pos = slash + 1;
    if (pos == path.size()) return policy(core::ErrorKind::InputPath, "not a plain absolute path (a trailing '/')");
  }
  // Above the root: walk up from the root's own descriptor to "/".
  struct stat input_st {};
  if (::fstat(dir.get(), &input_st) != 0) return beneath::errno_error(errno, "stat", path);
  UniqueFd up(::openat(root.root_fd(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!up) return beneath::errno_error(errno, "open", root.layout().root);
  for (int depth = 0; depth < 4096; ++depth) {
    UniqueFd parent(::openat(up.get(), "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!parent) return beneath::errno_error(errno, "open the parent of", root.layout().root);
    struct stat pst {
    }, cst{};
    if (::fstat(parent.get(), &pst) != 0 || ::fstat(up.get(), &cst) != 0)
      return beneath::errno_error(errno, "stat a parent of", root.layout().root);
    if (pst.st_dev == input_st.st_dev && pst.st_ino == input_st.st_ino) return overlap();
    if (pst.st_dev == cst.st_dev && pst.st_ino == cst.st_ino) break;  // "/"
    up = std::move(parent);
  }
  return dir;
}

namespace {

// The manifest a request asks for (everything but the digest), every field
// checked; nothing is touched.
Result<Manifest> requested_manifest(const Root& root, const RegisterRequest& req) {
  Manifest m;
  m.assurance = std::string(assurance_name(req.assurance));
  if (req.allow_audit && req.assurance != Assurance::Audit)
    return make_error(core::ErrorKind::Consent,
                      "--allow-audit-plugin consents to running an audit-assurance plugin uncontained; a plugin "
                      "registered with --assurance process always runs contained");
  m.audit_consent = req.allow_audit;
  m.id = req.id.empty() ? std::string(dpp::hello::kPluginId) : req.id;
  DOT_TRY(dpp::general::check_plugin_id(m.id));
  if (req.profile.empty() && m.id != dpp::hello::kPluginId)
    return make_error(core::ErrorKind::Profile, fmt::format("plugin {} needs --profile {} (only {} may leave it out)",
                                                            m.id, dpp::general::kProfile, dpp::hello::kPluginId));
  m.profile = req.profile.empty() ? std::string(dpp::hello::kProfile) : req.profile;
  if (is_hello_profile(m.profile)) {
    if (m.id != dpp::hello::kPluginId)
      return make_error(core::ErrorKind::Profile, fmt::format("profile {} is only for plugin id {} (got {})", m.profile,
                                                              dpp::hello::kPluginId, m.id));
    if (!req.inputs.empty())
      return make_error(core::ErrorKind::Inputs, fmt::format("profile {} has no inputs; --input needs --profile {}",
                                                             m.profile, dpp::general::kProfile));
    m.protocol = dpp::hello::kProtocol;
  } else if (m.profile == dpp::general::kProfile) {
    m.protocol = dpp::general::kProtocol;
  } else {
    return make_error(core::ErrorKind::Profile, fmt::format("profile \"{}\" is not {} or {}", m.profile,
                                                            dpp::hello::kProfile, dpp::general::kProfile));
  }
  if (req.inputs.size() > kMaxInputs)
    return make_error(core::ErrorKind::Inputs,
                      fmt::format("{} --input directories (at most {})", req.inputs.size(), kMaxInputs));
  for (std::size_t i = 0; i < req.inputs.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j)
      if (req.inputs[j] == req.inputs[i])
        return make_error(core::ErrorKind::Inputs, fmt::format("--input {} is given twice", req.inputs[i]));
    DOT_ASSIGN_OR_RETURN(UniqueFd checked, open_input(root, req.inputs[i]));
  }
  m.inputs = req.inputs;
  return m;
}

// An interpreted plugin's runtime folders: those derived from its
// interpreter, then each --runtime not among them, checked as an input is
// (absolute, no symlink on the way, a directory, apart from the root).
Result<std::vector<std::string>> runtime_folders(const Root& root, std::vector<std::string> derived,
                                                 const std::vector<std::string>& given) {
  if (given.size() > kMaxInputs)
    return make_error(core::ErrorKind::Runtime,
                      fmt::format("{} --runtime folders (at most {})", given.size(), kMaxInputs));
  for (std::size_t i = 0; i < given.size(); ++i) {
    if (std::find(given.begin(), given.begin() + static_cast<std::ptrdiff_t>(i), given[i]) !=
        given.begin() + static_cast<std::ptrdiff_t>(i))
      return make_error(core::ErrorKind::Runtime, fmt::format("--runtime {} is given twice", given[i]));
    DOT_ASSIGN_OR_RETURN(UniqueFd checked, open_input(root, given[i], "--runtime"));
    if (std::find(derived.begin(), derived.end(), given[i]) == derived.end()) derived.push_back(given[i]);
  }
  return derived;
}

}  // namespace

Result<Registration> register_plugin(Root& root, const RegisterRequest& req) {
  const std::string& plugin_path = req.plugin_path;
  if (plugin_path.empty() || plugin_path.front() != '/')
    return make_error(
        core::ErrorKind::PluginPath,
        fmt::format("--plugin must be an absolute path (got \"{}\"): plugins are never looked up", plugin_path));
  DOT_ASSIGN_OR_RETURN(Manifest m, requested_manifest(root, req));
  DOT_ASSIGN_OR_RETURN(auto existing, root.store().plugin(m.id));
  if (existing && !req.replace)
    return make_error(core::ErrorKind::PluginRegistered,
                      fmt::format("the root already has a plugin {}; use --replace to swap it", existing->plugin_id));
  if (existing) {
    DOT_ASSIGN_OR_RETURN(auto unfinished, root.store().in_flight());
    if (!unfinished.empty())
      return make_error(
          core::ErrorKind::Unfinished,
          fmt::format("transaction {} is unfinished ({}); run `{}` before --replace", unfinished.front().plan_id,
                      store::state_name(unfinished.front().state), root.command("recover")));
  }

  // The one rule for what may be a plugin (dpp conform asks it too).
  DOT_ASSIGN_OR_RETURN(PluginExecutable exe, open_plugin_executable(plugin_path, "plugin", dpp::kMaxPluginBytes));
  const SealedExecutable& pinned = exe.script ? *exe.script : exe.program;
  if (::lseek(pinned.fd.get(), 0, SEEK_SET) != 0)
    return beneath::errno_error(errno, "seek the sealed copy of", plugin_path);
  DOT_ASSIGN_OR_RETURN(std::string bytes, read_all(pinned.fd.get(), dpp::kMaxPluginBytes, plugin_path));
  if (exe.interpreter) {
    DOT_ASSIGN_OR_RETURN(std::vector<std::string> runtime,
                         runtime_folders(root, exe.interpreter->runtime_dirs, req.runtime));
    m.interpreter =
        ManifestInterpreter{exe.interpreter->path, exe.program.sha256, exe.interpreter->options, std::move(runtime)};
  } else if (!req.runtime.empty()) {
    return make_error(core::ErrorKind::Runtime,
                      fmt::format("--runtime {} is for a #! script's interpreter ({} is an ELF executable)",
                                  req.runtime.front(), plugin_path));
  }
  m.sha256 = pinned.sha256;
  DOT_ASSIGN_OR_RETURN(std::string manifest_bytes, encode_manifest(m));

  // What the replaced plugin kept is not the new one's to read: gone before
  // anything is swapped (a cache is disposable; if register fails after
  // this, the plugin it keeps makes a new one).
  if (existing) DOT_TRY(remove_plugin_cache(root, m.id));

  // The copy is written, renamed into place and synced beneath the state
  // folder's descriptor, under the id's own name.
  const int state_fd = root.dirs().state_fd.get();
  const std::string copy_name = store::plugin_copy_name(m.id);
  DOT_ASSIGN_OR_RETURN(beneath::CreatedFile copy, beneath::create_temp(state_fd, "plugin.new-", 0500));
  auto cleanup = [&](Error e) {
    ::unlinkat(state_fd, copy.name.c_str(), 0);
    return e;
  };
  if (auto s = write_all(copy.fd.get(), bytes, copy.name); !s.ok()) return cleanup(s.error());
  if (auto s = beneath::fsync_fd(copy.fd.get(), copy.name); !s.ok()) return cleanup(s.error());
  copy.fd.reset();
  if (auto s = beneath::rename_entry(state_fd, copy.name, copy_name, /*no_replace=*/!existing); !s.ok())
    return cleanup(s.error());
  DOT_TRY(beneath::fsync_fd(state_fd, root.layout().state_dir));

  store::PluginRecord rec;
  rec.plugin_id = m.id;
  rec.sha256 = m.sha256;
  rec.manifest = manifest_bytes;
  DOT_TRY(root.store().register_plugin(rec, req.replace));
  return Registration{m, existing.has_value()};
}

std::string register_command(const Root& root) { return root.command("register") + std::string(kRegisterArguments); }

Result<store::PluginRecord> registered_plugin(Root& root, std::string_view plugin_id) {
  DOT_ASSIGN_OR_RETURN(std::vector<store::PluginRecord> all, root.store().plugins());
  if (all.empty())
    return make_error(core::ErrorKind::NoPlugin,
                      fmt::format("no plugin is registered; run `{}` first", register_command(root)));
  std::string ids;
  for (const auto& p : all) ids += (ids.empty() ? "" : ", ") + p.plugin_id;
  if (plugin_id.empty()) {
    if (all.size() == 1) return std::move(all.front());
    return make_error(core::ErrorKind::PluginRequired,
                      fmt::format("{} plugins are registered ({}): pass --plugin ID to choose one", all.size(), ids));
  }
  for (auto& p : all)
    if (p.plugin_id == plugin_id) return std::move(p);
  return make_error(
      core::ErrorKind::UnknownPlugin,
      fmt::format("no plugin {} is registered (registered: {}): pass --plugin ID with one of them", plugin_id, ids));
}

Result<std::vector<ListedPlugin>> list_plugins(Root& root) {
  DOT_ASSIGN_OR_RETURN(std::vector<store::PluginRecord> all, root.store().plugins());
  std::vector<ListedPlugin> out;
  for (auto& rec : all) {
    ListedPlugin p;
    if (auto m = decode_manifest(rec.manifest); m.ok()) p.manifest = std::move(*m);
    p.record = std::move(rec);
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

// The interpreter at its recorded path, sealed and hashed against the
// manifest, and its runtime folders opened: anything else than what register
// saw is DOT_E_PLUGIN_IDENTITY (a Python upgrade included: register again).
Status pin_interpreter(const ManifestInterpreter& in, PinnedPlugin& p) {
  auto identity = [&](std::string why) {
    return make_error(core::ErrorKind::Interpreter, fmt::format("the pinned plugin's interpreter {} {}", in.path, why));
  };
  auto sealed = seal_interpreter(in.path, dpp::kMaxPluginBytes);
  if (!sealed.ok()) return identity(fmt::format("cannot be used any more: {}", sealed.error().detail));
  if (sealed->sha256 != in.sha256)
    return identity(
        fmt::format("changed after register: sha256 {} but the manifest pins {}", sealed->sha256, in.sha256));
  for (const std::string& dir : in.runtime) {
    UniqueFd fd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!fd) return identity(fmt::format("has lost its runtime folder {}: {}", dir, std::strerror(errno)));
    p.runtime_dirs.push_back(std::move(fd));
  }
  p.exec_fd = std::move(sealed->fd);
  p.exec_path = in.path;
  p.argv = interpreter_argv(Interpreter{in.path, in.options, in.runtime});
  return {};
}

}  // namespace

Result<PinnedPlugin> open_pinned_plugin(Root& root, std::string_view plugin_id) {
  DOT_ASSIGN_OR_RETURN(store::PluginRecord rec, registered_plugin(root, plugin_id));
  DOT_ASSIGN_OR_RETURN(Manifest m, decode_manifest(rec.manifest));
  if (m.sha256 != rec.sha256)
    return make_error(core::ErrorKind::Manifest, "the stored manifest and the plugin row disagree on the digest");
  // The copy's name comes from the id: a manifest naming another id than
  // its row would run another plugin's copy.
  if (m.id != rec.plugin_id)
    return make_error(core::ErrorKind::Manifest,
                      fmt::format("the stored manifest of plugin {} names another id", rec.plugin_id));
  const std::string copy_name = store::plugin_copy_name(m.id);
  auto opened = root.dirs().open_entry(copy_name, O_RDONLY);
  if (!opened.ok()) {
    Error e = std::move(opened).error();
    if (e.code != Code::PathEscape) e.code = Code::PluginIdentity;
    return e;
  }
  UniqueFd fd = std::move(*opened);
  // What is hashed is the sealed copy, and the sealed copy is what runs: an
  // in-place rewrite of the pinned file after this point changes nothing.
  auto copy = seal_executable(fd.get(), "the pinned plugin", dpp::kMaxPluginBytes);
  if (!copy.ok()) {
    Error e = copy.error();
    if (e.is(base::ErrorKind::FileTooLarge)) e.code = Code::PluginIdentity;  // register never pins one that large
    return e;
  }
  SealedExecutable sealed = std::move(copy).value();
  if (sealed.sha256 != m.sha256)
    return make_error(core::ErrorKind::Digest,
                      fmt::format("the pinned plugin changed after register: sha256 {} but the manifest pins {}",
                                  sealed.sha256, m.sha256));
  PinnedPlugin p;
  p.copy_path = root.dirs().entry_path(copy_name);
  if (!m.interpreter) {
    p.exec_fd = std::move(sealed.fd);
    p.exec_path = p.copy_path;
    p.argv = {"dot-plugin"};
  } else {
    DOT_TRY(pin_interpreter(*m.interpreter, p));
    p.script_fd = std::move(sealed.fd);
  }
  p.manifest = std::move(m);
  return p;
}

std::vector<std::string> PinnedPlugin::extra_env(const std::string& stage_dir) const {
  return manifest.interpreter ? interpreter_env(stage_dir) : std::vector<std::string>{};
}

Result<std::vector<std::string>> owned_paths(Root& root, std::string_view plugin_id) {
  return root.store().owned_paths(plugin_id);
}

Result<std::vector<store::PathOwner>> forget_paths(Root& root, const std::vector<std::string>& paths) {
  for (const auto& p : paths) DOT_TRY(dpp::check_path(p));
  return root.store().release_paths(paths);
}

Result<Unregistered> unregister_plugin(Root& root, std::string_view plugin_id, bool forget) {
  Unregistered out;
  out.plugin_id = std::string(plugin_id);
  DOT_ASSIGN_OR_RETURN(out.released, root.store().unregister_plugin(plugin_id, forget));
  const std::string copy_name = store::plugin_copy_name(plugin_id);
  std::vector<std::string> left;
  if (::unlinkat(root.dirs().state_fd.get(), copy_name.c_str(), 0) != 0 && errno != ENOENT)
    left.push_back(fmt::format("{}/{}: {}", root.layout().state_dir, copy_name, std::strerror(errno)));
  if (auto s = remove_plugin_cache(root, plugin_id); !s.ok()) left.push_back(s.error().message());
  out.copy_left = fmt::format("{}", fmt::join(left, "; "));
  return out;
}

Result<PluginCache> open_plugin_cache(const Root& root, std::string_view plugin_id) {
  const std::string name = store::plugin_cache_name(plugin_id);
  PluginCache cache;
  DOT_ASSIGN_OR_RETURN(cache.fd, root.dirs().open_folder_entry(name));
  cache.path = root.dirs().entry_path(name);
  return cache;
}

Status remove_plugin_cache(const Root& root, std::string_view plugin_id) {
  // remove_tree never follows a symlink: one planted there goes, not what it names.
  auto gone = beneath::remove_tree(root.dirs().state_fd.get(), store::plugin_cache_name(plugin_id));
  if (!gone.ok()) return std::move(gone).error();
  return {};
}

Status check_ownership(Root& root, std::string_view plugin_id, std::span<const std::string_view> paths) {
  DOT_ASSIGN_OR_RETURN(std::vector<store::PathOwner> owners, root.store().owners_of(paths, plugin_id));
  if (owners.empty()) return {};
  const store::PathOwner& o = owners.front();
  return make_error(core::ErrorKind::OwnedByOther,
                    fmt::format("path \"{}\" is owned by plugin {} (written by transaction {}): plugin {} may "
                                "neither write nor remove it",
                                o.path, o.plugin_id, o.txn, plugin_id));
}

}  // namespace dot::core
