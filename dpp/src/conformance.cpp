// `dot-core dpp conform`: a plugin checked case by case as dot-core runs it (conformance.h).
#include "dot/dpp/conformance.h"
#include "dot/dpp/error_kinds.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <optional>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "dot/base/beneath.h"
#include "dot/base/path_search.h"
#include "dot/base/plugin_executable.h"
#include "dot/base/sandbox.h"
#include "dot/base/sealed_executable.h"
#include "dot/base/sha256.h"
#include "dot/base/utf8.h"
#include "dot/dpp/body.h"
#include "dot/dpp/frame.h"
#include "dot/dpp/general.h"
#include "dot/dpp/hello.h"
#include "dot/dpp/jsonrpc.h"
#include "dot/dpp/path_rules.h"
#include "dot/dpp/stage_reader.h"

namespace dot::dpp::conform {
namespace {

using std::chrono::milliseconds;
namespace general = dpp::general;

struct Outcome {
  bool passed = false;
  std::string detail;
};
Outcome pass(std::string detail) { return {true, std::move(detail)}; }
Outcome fail(std::string detail) { return {false, std::move(detail)}; }
Outcome fail(const Error& e) { return {false, e.line()}; }

// What byte-by-byte delivery adds to the deadline (as much again, and this):
// the plugin is not to blame for the time core takes to hand it its requests.
constexpr milliseconds kBytewiseAllowance{2000};

// The executable, sealed once: every case executes this same descriptor.
struct Sealed {
  UniqueFd fd;
  std::string sha256;
  std::string path;  // where it was found (the sandbox resolves $ORIGIN from it)
  // Process assurance: the input folders, opened once; what a contained
  // plugin may read besides its stage and what the loader needs.
  std::vector<UniqueFd> inputs;
  // A `#!` script: `fd` is then its interpreter, launched as plan launches
  // it (dot/base/plugin_executable.h), its runtime folders read-only.
  UniqueFd script_fd;
  std::optional<Interpreter> interpreter;
  std::vector<UniqueFd> runtime_dirs;
};

// A fresh temporary folder holding only the stage (0700), removed with all
// it holds on every path. The plugin's working directory is the stage (as
// under dot-core); what it writes beside the stage shows up in the folder.
class Workspace {
 public:
  static Result<Workspace> create(const std::string& temp_dir) {
    std::error_code ec;
    std::filesystem::path tmp =
        temp_dir.empty() ? std::filesystem::temp_directory_path(ec) : std::filesystem::path(temp_dir);
    if (ec) return make_error(dpp::ErrorKind::Tmpdir, fmt::format("no temporary folder: {}", ec.message()));
    std::string tmpl = (tmp / "dot-conform-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return beneath::errno_error(errno, "mkdtemp", tmpl);
    Workspace w;
    w.name_ = std::filesystem::path(tmpl).filename().string();
    DOT_ASSIGN_OR_RETURN(w.parent_fd_, beneath::open_root(tmp.string()));
    w.owned_ = true;
    DOT_ASSIGN_OR_RETURN(w.dir_fd_, beneath::open_beneath(w.parent_fd_.get(), w.name_, O_RDONLY | O_DIRECTORY));
    if (::mkdirat(w.dir_fd_.get(), "stage", 0700) != 0) return beneath::errno_error(errno, "mkdir", tmpl + "/stage");
    DOT_ASSIGN_OR_RETURN(w.stage_fd_, beneath::open_beneath(w.dir_fd_.get(), "stage", O_RDONLY | O_DIRECTORY));
    struct stat st {};
    if (::fstat(w.stage_fd_.get(), &st) != 0) return beneath::errno_error(errno, "stat", tmpl + "/stage");
    w.stage_dev_ = st.st_dev;
    w.stage_ino_ = st.st_ino;
    w.stage_path_ = tmpl + "/stage";
    // A general plugin's cache folder, as core keeps one per plugin.
    if (::mkdirat(w.dir_fd_.get(), "cache", 0700) != 0) return beneath::errno_error(errno, "mkdir", tmpl + "/cache");
    DOT_ASSIGN_OR_RETURN(w.cache_fd_, beneath::open_beneath(w.dir_fd_.get(), "cache", O_RDONLY | O_DIRECTORY));
    w.cache_path_ = tmpl + "/cache";
    return w;
  }
  Workspace() = default;
  Workspace(Workspace&& o) noexcept
      : parent_fd_(std::move(o.parent_fd_)),
        dir_fd_(std::move(o.dir_fd_)),
        stage_fd_(std::move(o.stage_fd_)),
        cache_fd_(std::move(o.cache_fd_)),
        name_(std::move(o.name_)),
        stage_path_(std::move(o.stage_path_)),
        cache_path_(std::move(o.cache_path_)),
        stage_dev_(o.stage_dev_),
        stage_ino_(o.stage_ino_),
        owned_(std::exchange(o.owned_, false)) {}
  Workspace& operator=(Workspace&&) = delete;
  ~Workspace() {
    if (!owned_) return;
    stage_fd_.reset();
    cache_fd_.reset();
    dir_fd_.reset();
    (void)beneath::remove_tree(parent_fd_.get(), name_);
  }

  const std::string& stage_path() const { return stage_path_; }
  int stage_fd() const { return stage_fd_.get(); }
  const std::string& cache_path() const { return cache_path_; }
  int cache_fd() const { return cache_fd_.get(); }

  // Nothing beside the stage and the cache folder, and the stage still the
  // folder made for it.
  Status check_alone() const {
    DOT_ASSIGN_OR_RETURN(std::vector<std::string> names, beneath::list_entries(dir_fd_.get()));
    for (const auto& n : names)
      if (n != "stage" && n != "cache")
        return make_error(dpp::ErrorKind::OutsideStage,
                          fmt::format("the plugin wrote \"{}\" beside its stage (in the stage's parent folder)", n));
    struct stat st {};
    if (::fstatat(dir_fd_.get(), "stage", &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_dev != stage_dev_ || st.st_ino != stage_ino_)
      return make_error(dpp::ErrorKind::StageReplaced, "the stage folder was removed or replaced");
    return {};
  }

 private:
  UniqueFd parent_fd_, dir_fd_, stage_fd_, cache_fd_;
  std::string name_, stage_path_, cache_path_;
  dev_t stage_dev_ = 0;
  ino_t stage_ino_ = 0;
  bool owned_ = false;
};

// The general profile's identity check, against --id when given; without
// it the echoed id must still be a plugin id (docs/spec/dpp-general.md,
// "Registration and manifest"): one that could never be registered is wrong.
Result<general::Negotiated> check_general_identity(const Options& o, const general::InitializeParams& sent,
                                                   const general::InitializeResult& echo) {
  if (o.id.empty()) {
    if (auto why = general::plugin_id_problem(echo.id)) {
      constexpr std::size_t kShown = 80;
      return make_error(
          dpp::ErrorKind::EchoedId,
          fmt::format("the plugin says it is \"{}{}\", which is not a plugin id: it {}",
                      std::string_view(echo.id).substr(0, kShown), echo.id.size() > kShown ? "..." : "", *why));
    }
  }
  return general::check_identity(sent, echo, o.id.empty() ? echo.id : o.id);
}

Result<std::string> request_frame(std::uint64_t id, dpp::Method m, const jcs::Node& params) {
  DOT_ASSIGN_OR_RETURN(std::string body, dpp::encode_request(id, m, params));
  return dpp::encode_frame(body, general::kLimits.max_frame_bytes);
}

// How core's frames reach the plugin.
enum class Delivery : std::uint8_t { Whole, Bytewise, Coalesced };

// What one lifecycle offers and checks (the general profile's; the hello
// profile's reads only check_files).
struct Run {
  bool offer_log = true;
  bool offer_digests = true;
  bool offer_cache = true;
  bool check_files = false;
  // With digests negotiated, ask for every second write only, as core asks
  // for only the writes that change something.
  bool stage_half = false;
};

// One case: its workspace and the one plugin process it starts.
class Case {
 public:
  Case(const Options& o, const Sealed& exe) : o_(o), exe_(exe) {}

  Result<dpp::HostSession*> start(Delivery delivery = Delivery::Whole) {
    DOT_ASSIGN_OR_RETURN(Workspace ws, Workspace::create(o_.temp_dir));
    ws_.emplace(std::move(ws));
    dpp::HostSessionOptions ho;
    // Process assurance: the containment `plan --require-process-sandbox`
    // installs, for this descriptor and this stage, so that the kernel lets
    // the plugin write in its stage and nowhere else. It must outlive the
    // spawn (the child reads it between fork and exec).
    if (o_.process_sandbox) {
      SandboxPolicy policy;
      policy.executable_fd = exe_.fd.get();
      policy.executable_path = exe_.path;
      policy.script_fd = exe_.script_fd ? exe_.script_fd.get() : -1;
      policy.stage_fd = ws_->stage_fd();
      policy.limits = containment_limits(o_.profile);
      policy.stage_folders = general();
      if (general()) policy.cache_fd = ws_->cache_fd();
      for (const UniqueFd& dir : exe_.inputs) policy.read_only_dir_fds.push_back(dir.get());
      for (const UniqueFd& dir : exe_.runtime_dirs) policy.read_only_dir_fds.push_back(dir.get());
      DOT_ASSIGN_OR_RETURN(Sandbox prepared, Sandbox::prepare(policy));
      sandbox_.emplace(std::move(prepared));
      DOT_TRY(sandbox_->apply_to(ho.spawn));
      ho.containment = sandbox_->limits();
    }
    ho.exec_fd = exe_.fd.get();
    ho.stage_dir = ws_->stage_path();
    ho.profile = o_.profile;
    ho.spawn.argv = exe_.interpreter ? interpreter_argv(*exe_.interpreter) : std::vector<std::string>{"dot-plugin"};
    ho.spawn.argv.insert(ho.spawn.argv.end(), o_.command.begin() + 1, o_.command.end());
    if (exe_.interpreter) {
      ho.spawn.keep_fds = {{exe_.script_fd.get(), kScriptChildFd}};
      ho.extra_env = interpreter_env(ws_->stage_path());
    }
    // Named in a DOT_E_PLUGIN_ERROR detail ("plugin <id> answered ...").
    ho.plugin_id = o_.id.empty() ? std::string("under test") : o_.id;
    milliseconds deadline = o_.deadline.count() > 0 ? o_.deadline
                            : general()             ? milliseconds(general::kLimits.deadline_ms)
                                                    : dpp::SessionLimits{}.deadline;
    if (delivery == Delivery::Bytewise) {
      ho.bytewise = true;
      deadline = deadline * 2 + kBytewiseAllowance;
    }
    ho.deadline_override = deadline;
    if (delivery == Delivery::Coalesced) {
      DOT_ASSIGN_OR_RETURN(std::string rest, later_requests());
      ho.deliver = [rest = std::move(rest)](dpp::Method m, std::string frame) {
        return m == dpp::Method::Initialize ? frame + rest : std::string();
      };
    }
    DOT_ASSIGN_OR_RETURN(dpp::HostSession s, dpp::HostSession::start(std::move(ho)));
    session_.emplace(std::move(s));
    return &*session_;
  }

  bool general() const { return o_.profile == dpp::Profile::General; }
  // What dot.initialize asks for: "process" only when core installed the
  // containment itself, as plan does.
  std::string_view assurance() const {
    return o_.process_sandbox ? dpp::hello::kAssuranceProcess : dpp::hello::kAssuranceAudit;
  }
  const Options& options() const { return o_; }
  const Workspace& workspace() const { return *ws_; }
  dpp::HostSession& session() { return *session_; }

  // The whole lifecycle from dot.initialize, as dot-core runs it; what was
  // seen when it passed. The staged files and the folder around the stage
  // are read back only when `check_files` (the lifecycle case's job: the
  // other cases are about the protocol, so one file fault fails one case).
  Result<std::string> lifecycle(Run run = {}) {
    return general() ? general_lifecycle(run) : hello_lifecycle(run.check_files);
  }

  ~Case() {
    // The process first (it may still be writing into the workspace).
    if (session_) session_->abort();
    session_.reset();
    ws_.reset();
  }

 private:
  // Requests 2..5 exactly as the session encodes them (coalesced delivery).
  Result<std::string> later_requests() const {
    using dpp::Method;
    std::string out;
    jcs::Node plan = general() ? general::to_node(general::PlanParams{}) : jcs::Node::object();
    DOT_ASSIGN_OR_RETURN(std::string f2, request_frame(2, Method::Plan, plan));
    DOT_ASSIGN_OR_RETURN(
        std::string f3, request_frame(3, Method::Materialize, dpp::to_node(dpp::MaterializeParams{ws_->stage_path()})));
    DOT_ASSIGN_OR_RETURN(std::string f4, request_frame(4, Method::Validate, jcs::Node::object()));
    DOT_ASSIGN_OR_RETURN(std::string f5, request_frame(5, Method::Shutdown, jcs::Node::object()));
    return f2 + f3 + f4 + f5;
  }

  Result<std::string> hello_lifecycle(bool check_files) {
    dpp::HostSession& s = *session_;
    DOT_ASSIGN_OR_RETURN(std::string nonce, random_hex32());
    dpp::InitializeParams sent = dpp::hello::initialize_params(assurance(), nonce);
    DOT_ASSIGN_OR_RETURN(dpp::InitializeResult echo, s.initialize(sent));
    DOT_TRY(dpp::hello::check_identity(sent, echo, dpp::hello::kPluginId));
    DOT_ASSIGN_OR_RETURN(dpp::PlanResult plan, s.plan());
    DOT_TRY(dpp::hello::check_hello_allowlists(plan));
    DOT_ASSIGN_OR_RETURN(dpp::MaterializeResult staged, s.materialize());
    DOT_TRY(dpp::hello::check_artifacts(plan.names, staged));
    DOT_TRY(s.validate());
    DOT_TRY(s.shutdown());
    DOT_TRY(s.finish());
    const std::size_t n = staged.artifacts.size();
    if (!check_files) return fmt::format("{} artifacts, exit 0", n);
    // The plugin is gone: the stage is read as the planner reads it.
    DOT_TRY(read_hello_stage(ws_->stage_fd(), staged));
    DOT_TRY(check_hello_stage_holds_only(ws_->stage_fd(), staged));
    DOT_TRY(ws_->check_alone());
    return fmt::format("{} files staged as claimed, {}, exit 0", n, files_checked());
  }

  Result<std::string> general_lifecycle(const Run& run) {
    dpp::HostSession& s = *session_;
    DOT_ASSIGN_OR_RETURN(std::string nonce, random_hex32());
    general::InitializeParams sent = general::initialize_params(
        assurance(), nonce, o_.inputs, run.offer_cache ? std::optional(ws_->cache_path()) : std::nullopt);
    if (!run.offer_log) std::erase(sent.capabilities, std::string(general::kLogCapability));
    if (!run.offer_digests) std::erase(sent.capabilities, std::string(general::kDigestsCapability));
    DOT_ASSIGN_OR_RETURN(general::InitializeResult echo, s.initialize(sent));
    DOT_ASSIGN_OR_RETURN(general::Negotiated negotiated, check_general_identity(o_, sent, echo));
    DOT_ASSIGN_OR_RETURN(general::PlanResult plan, s.plan(general::PlanParams{}, negotiated.digests));
    DOT_TRY(dpp::hello::check_hello_effects(plan.effects));
    std::vector<dpp::ProposedOperation> proposed;
    std::vector<std::string> writes;
    std::vector<const general::Operation*> asked;  // the writes asked for
    for (const auto& op : plan.operations) {
      proposed.push_back(dpp::ProposedOperation{op.action, op.mode, op.path, op.link_text ? &*op.link_text : nullptr});
      if (op.action != "write") continue;
      if (!(negotiated.digests && run.stage_half && writes.size() % 2 == 1)) asked.push_back(&op);
      writes.push_back(op.path);
    }
    DOT_TRY(dpp::check_proposed_operations(proposed));
    std::vector<std::string_view> asked_paths;
    for (const general::Operation* op : asked) asked_paths.push_back(op->path);
    std::optional<std::span<const std::string_view>> paths;
    if (negotiated.digests) paths = asked_paths;
    // The claims as the planner judges them, as they come (the files are
    // read below): each a write's, and what it declared.
    ClaimCheck claims(asked.size(), [&asked](std::size_t i) {
      const general::Operation& op = *asked[i];
      // A declared digest is 64 lowercase hex digits (the decoder's rule).
      return op.digest ? StagedClaim{op.path, *Sha256Digest::from_hex(op.digest->sha256), op.digest->size}
                       : StagedClaim{op.path, {}, 0};
    });
    DOT_ASSIGN_OR_RETURN(general::MaterializeResult staged, s.materialize_general(paths));
    for (const general::Artifact& claim : staged.artifacts) claims.take(claim);
    DOT_TRY(claims.finish());
    DOT_TRY(s.validate());
    DOT_TRY(s.shutdown());
    DOT_TRY(s.finish());
    if (run.check_files) {
      // The plugin is gone: the stage is read as the planner reads it.
      std::vector<StagedClaim> claimed;
      for (const general::Artifact& a : staged.artifacts) claimed.push_back(dpp::claimed(a));
      DOT_TRY(read_stage(ws_->stage_fd(), claimed));
      DOT_TRY(check_stage_holds_only(ws_->stage_fd(), claimed));
      DOT_TRY(ws_->check_alone());
    }
    return fmt::format("id {}, {} operations, {} {}{}, log {}{}, digests {}, cache {}, batches {}, exit 0", echo.id,
                       plan.operations.size(), asked.size(), check_files_text(run.check_files),
                       asked.size() == writes.size() ? "" : fmt::format(" (of {} writes)", writes.size()),
                       negotiated.log ? "negotiated" : "not negotiated",
                       s.logs().empty() ? "" : fmt::format(" ({} messages)", s.logs().size()),
                       negotiated.digests ? "negotiated" : "not negotiated",
                       negotiated.cache  ? "negotiated"
                       : run.offer_cache ? "not negotiated"
                                         : "not offered",
                       negotiated.batches ? "negotiated" : "not negotiated");
  }

  std::string check_files_text(bool check_files) const {
    return check_files ? "files staged as claimed, " + files_checked() : "artifacts";
  }

  // What the lifecycle verified about the files, exactly: the stage and the
  // folder around it were read back; a write anywhere else is impossible
  // only under containment, and unseen without it.
  std::string files_checked() const {
    return o_.process_sandbox
               ? "nothing else in the stage or beside it, nothing written elsewhere (contained: only the stage "
                 "was writable)"
               : "nothing else in the stage or beside it (run uncontained: writes elsewhere are not seen)";
  }

  const Options& o_;
  const Sealed& exe_;
  std::optional<Workspace> ws_;
  // Declared before the session: destroyed after it.
  std::optional<Sandbox> sandbox_;
  std::optional<dpp::HostSession> session_;
};

Outcome lifecycle_case(Case& c, Delivery delivery, Run run = {}) {
  auto s = c.start(delivery);
  if (!s.ok()) return fail(s.error());
  auto r = c.lifecycle(run);
  if (!r.ok()) return fail(r.error());
  return pass(std::move(*r));
}

Outcome case_lifecycle(Case& c) { return lifecycle_case(c, Delivery::Whole, Run{.check_files = true}); }
Outcome case_lifecycle_without_log(Case& c) { return lifecycle_case(c, Delivery::Whole, Run{.offer_log = false}); }
Outcome case_lifecycle_without_digests(Case& c) {
  return lifecycle_case(c, Delivery::Whole, Run{.offer_digests = false, .check_files = true});
}
Outcome case_stage_only_asked(Case& c) {
  return lifecycle_case(c, Delivery::Whole, Run{.check_files = true, .stage_half = true});
}
Outcome case_fragmented(Case& c) { return lifecycle_case(c, Delivery::Bytewise); }
// Every request is written before the plan is read, so dot.materialize
// cannot name paths: digests are not offered here.
Outcome case_coalesced(Case& c) { return lifecycle_case(c, Delivery::Coalesced, Run{.offer_digests = false}); }

std::string id_text(std::optional<std::uint64_t> id) { return id ? std::to_string(*id) : std::string("null"); }

// A JSON value in a detail: a number or null as written, a string quoted
// (cut at 64 bytes), anything else by its type.
std::string value_text(json::Value v) {
  if (v.is_null()) return "null";
  if (v.is_number()) return std::string(v.number_text());
  if (v.is_string()) {
    std::string_view text = v.as_string();
    return fmt::format("\"{}{}\"", text.substr(0, 64), text.size() > 64 ? "..." : "");
  }
  if (v.is_bool()) return v.as_bool() ? "true" : "false";
  return v.is_array() ? "an array" : "an object";
}

// The error response a probe must get: exactly jsonrpc "2.0", the id, and an
// error object with `code`. What it was instead, when it was not.
Result<general::ErrorObject> expect_error(json::Value root, std::int64_t code, std::optional<std::uint64_t> id) {
  auto wrong = [&](std::string got) {
    return make_error(dpp::ErrorKind::ErrorResponseExpected,
                      fmt::format("expected error {} with id {}, got {}", code, id_text(id), got));
  };
  if (!root.is_object()) return wrong("a JSON value that is not an object");
  std::optional<json::Value> version, rid, error, result;
  for (json::Member m : root.members()) {
    if (m.key == "jsonrpc")
      version = m.value;
    else if (m.key == "id")
      rid = m.value;
    else if (m.key == "error")
      error = m.value;
    else if (m.key == "result")
      result = m.value;
    else
      return wrong(fmt::format("a response with the unknown member \"{}\"", m.key));
  }
  if (result) return wrong("a result");
  if (!error) return wrong("a message without \"error\"");
  if (!version || !dpp::check_version(*version).ok()) return wrong("a response without \"jsonrpc\":\"2.0\"");
  if (!rid) return wrong("an error without \"id\"");
  if (id) {
    auto got = dpp::read_id(*rid, "response");
    if (!got.ok() || *got != *id) return wrong(fmt::format("id {}", value_text(*rid)));
  } else if (!rid->is_null()) {
    return wrong(fmt::format("id {}", value_text(*rid)));
  }
  auto obj = general::decode_error_object(*error);
  if (!obj.ok()) return wrong(fmt::format("a malformed error object: {}", obj.error().message()));
  if (obj->code != code) return wrong(fmt::format("error {}: {}", obj->code, obj->message));
  return obj;
}

// A request core never sends, the error the profile requires for it, and
// then the whole lifecycle on the same process: the plugin keeps reading.
Outcome probe_case(Case& c, std::string_view body, std::int64_t code, std::optional<std::uint64_t> id) {
  auto s = c.start();
  if (!s.ok()) return fail(s.error());
  auto frame = dpp::encode_frame(body, general::kLimits.max_frame_bytes);
  if (!frame.ok()) return fail(frame.error());
  auto doc = (*s)->probe(*frame);
  if (!doc.ok())
    return fail(fmt::format("expected error {} with id {}, got: {}", code, id_text(id), doc.error().line()));
  auto err = expect_error(doc->root(), code, id);
  if (!err.ok()) return fail(err.error().detail);
  auto r = c.lifecycle();
  if (!r.ok()) return fail(fmt::format("answered error {}, then the lifecycle failed: {}", code, r.error().line()));
  return pass(fmt::format("error {} ({}), then the lifecycle", code, err->message));
}

// dot.initialize params core would send, as canonical text, changed by `edit`.
std::string initialize_body(const Case& c, const std::function<void(general::InitializeParams&)>& edit) {
  auto nonce = random_hex32();
  general::InitializeParams p =
      general::initialize_params(c.assurance(), nonce.ok() ? *nonce : std::string(64, '0'), c.options().inputs);
  edit(p);
  auto body = dpp::encode_request(1, dpp::Method::Initialize, general::to_node(p));
  return body.ok() ? *body : std::string();
}

Outcome case_parse_error(Case& c) {
  return probe_case(c, "{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"dot.initialize\",\"params\":", dpp::kParseError,
                    std::nullopt);
}
Outcome case_invalid_request(Case& c) {
  return probe_case(c, "{\"id\":1,\"jsonrpc\":\"1.0\",\"method\":\"dot.initialize\",\"params\":{}}",
                    dpp::kInvalidRequest, 1);
}
Outcome case_request_without_id(Case& c) {
  return probe_case(c, "{\"jsonrpc\":\"2.0\",\"method\":\"dot.initialize\",\"params\":{}}", dpp::kInvalidRequest,
                    std::nullopt);
}
Outcome case_unknown_method(Case& c) {
  return probe_case(c, "{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"dot.frobnicate\",\"params\":{}}",
                    dpp::kMethodNotFound, 1);
}
Outcome case_method_out_of_order(Case& c) {
  return probe_case(c, "{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"dot.plan\",\"params\":{\"managed\":[]}}",
                    dpp::kMethodNotFound, 1);
}
Outcome case_wrong_profile(Case& c) {
  std::string body = initialize_body(c, [](auto& p) { p.profile = std::string(dpp::hello::kProfile); });
  return probe_case(c, body, dpp::kInvalidParams, 1);
}
Outcome case_wrong_limits(Case& c) {
  std::string body = initialize_body(c, [](auto& p) { p.limits.max_operations = 1; });
  return probe_case(c, body, dpp::kInvalidParams, 1);
}
Outcome case_unknown_param(Case& c) {
  std::string body = initialize_body(c, [](auto&) {});
  // {"id":1,...,"params":{...}}: one member more at the end of params.
  if (body.size() < 2) return fail("internal error: no dot.initialize body");
  body.insert(body.size() - 2, ",\"zz_unknown\":true");
  return probe_case(c, body, dpp::kInvalidParams, 1);
}

Outcome case_eof_before_shutdown(Case& c) {
  auto s = c.start();
  if (!s.ok()) return fail(s.error());
  dpp::HostSession& h = **s;
  auto nonce = random_hex32();
  if (!nonce.ok()) return fail(nonce.error());
  general::InitializeParams sent = general::initialize_params(c.assurance(), *nonce, c.options().inputs);
  auto echo = h.initialize(sent);
  if (!echo.ok()) return fail(echo.error());
  auto identity = check_general_identity(c.options(), sent, *echo);
  if (!identity.ok()) return fail(identity.error());
  auto plan = h.plan(general::PlanParams{}, identity.ok() && identity->digests);
  if (!plan.ok()) return fail(plan.error());
  auto st = h.close_early();
  if (!st.ok()) return fail(st.error());
  if (!st->exited() || st->code != 1)
    return fail(fmt::format("expected exit 1 when stdin closes before dot.shutdown, got {}", st->describe()));
  return pass("stdin closed after dot.plan: nothing more on stdout, exit 1");
}

struct CaseDef {
  CaseInfo info;
  bool hello;  // in the hello profile's suite (every case is in the general one)
  Outcome (*run)(Case&);
};

constexpr CaseDef kCases[] = {
    {{"lifecycle",
      "the five requests as dot-core sends them (general: log offered): echo exact, results within the schemas and "
      "core's rules, staged files as claimed and nothing else in the stage, nothing beside the stage (a write "
      "elsewhere is refused only with --require-process-sandbox), after dot.shutdown EOF and exit 0, stderr within "
      "its cap, dot.log only as negotiated and within limits, the deadline kept"},
     true,
     case_lifecycle},
    {{"lifecycle_without_log", "the lifecycle with log not offered: the echo carries no \"log\", no dot.log"},
     false,
     case_lifecycle_without_log},
    {{"lifecycle_without_digests",
      "the lifecycle with digests not offered: no write declares sha256 or size, dot.materialize names no paths and "
      "every write is staged"},
     false,
     case_lifecycle_without_digests},
    {{"stage_only_asked",
      "with digests negotiated, dot.materialize names every second write: exactly those are staged, each as dot.plan "
      "declared it, nothing else in the stage"},
     false,
     case_stage_only_asked},
    {{"fragmented",
      "the lifecycle with core's frames written a byte at a time, each once the plugin read the one before"},
     true,
     case_fragmented},
    {{"coalesced", "the lifecycle with all five requests in one write before any answer is read: answered in order"},
     true,
     case_coalesced},
    {{"parse_error", "a body that is not JSON: error -32700 with id null, then the whole lifecycle"},
     false,
     case_parse_error},
    {{"invalid_request", "a request with \"jsonrpc\":\"1.0\" and id 1: error -32600 with id 1, then the lifecycle"},
     false,
     case_invalid_request},
    {{"request_without_id", "a request without an id: error -32600 with id null, then the lifecycle"},
     false,
     case_request_without_id},
    {{"unknown_method", "dot.frobnicate with id 1: error -32601 with id 1, then the lifecycle"},
     false,
     case_unknown_method},
    {{"method_out_of_order", "dot.plan before dot.initialize: error -32601 with id 1, then the lifecycle"},
     false,
     case_method_out_of_order},
    {{"wrong_profile", "dot.initialize for org.dot.hello/v1: error -32602 with id 1, then the lifecycle"},
     false,
     case_wrong_profile},
    {{"wrong_limits", "dot.initialize with max_operations 1: error -32602 with id 1, then the lifecycle"},
     false,
     case_wrong_limits},
    {{"unknown_param", "dot.initialize with an unknown params member: error -32602 with id 1, then the lifecycle"},
     false,
     case_unknown_param},
    {{"eof_before_shutdown", "stdin closed after dot.plan: nothing more on stdout, exit 1"},
     false,
     case_eof_before_shutdown},
};

bool in_profile(const CaseDef& c, dpp::Profile p) { return p == dpp::Profile::General || c.hello; }

}  // namespace

std::size_t Report::passed() const noexcept {
  return static_cast<std::size_t>(std::count_if(cases.begin(), cases.end(), [](const auto& c) { return c.passed; }));
}

std::string_view profile_name(dpp::Profile profile) noexcept {
  return profile == dpp::Profile::Hello ? dpp::hello::kProfile : general::kProfile;
}

std::vector<CaseInfo> cases(dpp::Profile profile) {
  std::vector<CaseInfo> out;
  for (const auto& c : kCases)
    if (in_profile(c, profile)) out.push_back(c.info);
  return out;
}

Result<Report> run(const Options& options) {
  if (options.command.empty()) return make_error(dpp::ErrorKind::Usage, "no plugin command given");
  // An id nothing could be registered with (DOT_E_POLICY, as register says).
  if (!options.id.empty()) DOT_TRY(general::check_plugin_id(options.id));
  std::vector<const CaseDef*> selected;
  for (const auto& name : options.only) {
    auto it = std::find_if(std::begin(kCases), std::end(kCases),
                           [&](const CaseDef& c) { return c.info.name == name && in_profile(c, options.profile); });
    if (it == std::end(kCases))
      return make_error(dpp::ErrorKind::Case,
                        fmt::format("{} has no conformance case \"{}\"", profile_name(options.profile), name));
  }
  for (const auto& c : kCases) {
    if (!in_profile(c, options.profile)) continue;
    if (options.only.empty() || std::find(options.only.begin(), options.only.end(), c.info.name) != options.only.end())
      selected.push_back(&c);
  }

  // Containment as plan would install it, or nothing runs (fail closed: a
  // case run uncontained would not check what was asked for).
  if (options.process_sandbox) DOT_TRY(probe_sandbox_support().require_complete());
  DOT_ASSIGN_OR_RETURN(std::string path, find_executable(options.command.front()));
  // What register would accept, launched as plan would launch it.
  DOT_ASSIGN_OR_RETURN(PluginExecutable found, open_plugin_executable(path, "the plugin", kMaxPluginBytes));
  Sealed exe;
  exe.sha256 = found.script ? found.script->sha256 : found.program.sha256;
  exe.fd = std::move(found.program.fd);
  exe.path = found.program_path;
  if (found.script) exe.script_fd = std::move(found.script->fd);
  exe.interpreter = std::move(found.interpreter);
  if (options.process_sandbox && exe.interpreter) {
    for (const auto& dir : exe.interpreter->runtime_dirs) {
      UniqueFd fd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
      if (!fd) return beneath::errno_error(errno, "open", dir);
      exe.runtime_dirs.push_back(std::move(fd));
    }
  }
  if (options.process_sandbox && options.profile == dpp::Profile::General) {
    for (const auto& dir : options.inputs) {
      UniqueFd fd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
      if (!fd) return beneath::errno_error(errno, "open", dir);
      exe.inputs.push_back(std::move(fd));
    }
  }

  Report report;
  report.sha256 = exe.sha256;
  // One case at a time, as dot-core runs one plugin at a time: the orphans a
  // plugin leaves are re-parented to this process, and only one session
  // sweeping them at a time tells whose they are (a survivor is its case's).
  for (const CaseDef* def : selected) {
    CaseResult& out = report.cases.emplace_back();
    out.name = std::string(def->info.name);
    auto start = Clock::now();
    Case c(options, exe);
    Outcome o = def->run(c);
    out.passed = o.passed;
    out.detail = std::move(o.detail);
    out.elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  }
  return report;
}

}  // namespace dot::dpp::conform
