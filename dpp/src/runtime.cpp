// The general-profile plugin runtime a plugin author links (runtime.h).
#include "dot/dpp/runtime.h"
#include "dot/dpp/error_kinds.h"

// See messages.cpp: g++ 12 at -O1 with sanitizers reports a false
// -Wmaybe-uninitialized inside std::variant's move of jcs::Node.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "dot/base/beneath.h"
#include "dot/base/fd.h"
#include "dot/base/sha256.h"
#include "dot/base/utf8.h"
#include "dot/dpp/body.h"
#include "dot/dpp/frame.h"
#include "dot/dpp/jsonrpc.h"
#include "fields.h"

namespace dot::dpp::general {

namespace {

// Plugin-defined error code for a handler's failure (JSON-RPC reserves
// -32099..-32000 for the server's own).
constexpr std::int64_t kHandlerError = -32000;
// JSON-RPC's internal error: the runtime cannot send what the handler built.
constexpr std::int64_t kInternalError = -32603;
// How much of a source copy_staged_file holds at once.
constexpr std::size_t kCopyChunkBytes = 64 * 1024;

// An error response's message: valid UTF-8 (a handler's detail may quote
// bytes that are not) and at most kMaxErrorMessageBytes, cut at a character
// boundary, so the host never refuses the answer itself.
std::string error_message(std::string_view text) {
  std::string out = utf8_repaired(text);
  if (out.size() > kMaxErrorMessageBytes)
    out.resize(utf8_valid_prefix(std::string_view(out).substr(0, kMaxErrorMessageBytes)));
  return out;
}

}  // namespace

class Runtime {
 public:
  Runtime(Plugin& plugin, ByteSource& in, ByteSink& out, ByteSink& err)
      : plugin_(plugin), reader_(in, kLimits.max_frame_bytes), writer_(out, kLimits.max_frame_bytes), err_(err) {}

  int run() {
    for (;;) {
      auto frame = reader_.next();
      if (!frame.ok()) return give_up(frame.error());  // framing: nothing can be answered
      if (!frame->has_value()) {
        if (next_ == kDone) return 0;
        note(fmt::format("DOT_E_PROTOCOL: the host closed stdin before {}", method_name(static_cast<Method>(next_))));
        return 1;
      }
      auto doc = parse_body((*frame)->body, (*frame)->body_offset, kLimits.max_frame_bytes);
      frame->reset();  // the document holds its own copy of the body
      Status st;
      if (doc.ok()) {
        request_.emplace(std::move(doc).value());
        st = handle(*request_);
        request_.reset();
      } else {
        st = answer_error(std::nullopt, kParseError, "Parse error", doc.error());
      }
      if (!st.ok()) return give_up(st.error());  // the host no longer reads
    }
  }

  Status log(std::string_view level, std::string_view message) {
    if (!in_request_) return make_error(dpp::ErrorKind::Log, "dot.log is allowed only while a request is handled");
    if (!log_) return make_error(dpp::ErrorKind::Log, "dot.log was not negotiated");
    LogParams p{std::string(level), std::string(message)};
    DOT_TRY(check_log(p));
    if (logs_sent_ >= params_.limits.max_log_messages)
      return make_error(dpp::ErrorKind::LogLimit,
                        fmt::format("more than {} dot.log messages", params_.limits.max_log_messages));
    DOT_ASSIGN_OR_RETURN(std::string body, encode_log(p));
    DOT_TRY(writer_.write(body));
    ++logs_sent_;
    return {};
  }

  bool log_negotiated() const noexcept { return log_; }
  const InitializeParams& params() const noexcept { return params_; }
  bool digests_negotiated() const noexcept { return digests_; }
  const std::string* cache_folder() const noexcept { return cache_ ? &*params_.cache : nullptr; }
  const std::vector<std::string>& paths_to_stage() const noexcept { return to_stage_; }

 private:
  static constexpr int kDone = 6;  // after dot.shutdown

  void note(const std::string& line) { (void)err_.write(line + "\n"); }

  int give_up(const Error& e) {
    note(e.line());
    return 1;
  }

  Status answer_error(std::optional<std::uint64_t> id, std::int64_t code, std::string_view what, const Error& why) {
    note(why.line());
    ErrorObject obj{code, error_message(fmt::format("{}: {}", what, why.message())), std::nullopt};
    DOT_ASSIGN_OR_RETURN(std::string body, encode_error_response(id, obj));
    return writer_.write(body);
  }

  Status invalid(std::optional<std::uint64_t> id, std::string detail, std::uint64_t offset) {
    return answer_error(id, kInvalidRequest, "Invalid request",
                        make_parse_error(dpp::ErrorKind::InvalidRequest, offset, std::move(detail)));
  }

  // The envelope, answered the way docs/spec/dpp-general.md lists, then the method.
  Status handle(const json::Document& doc) {
    json::Value root = doc.root();
    if (!root.is_object()) return invalid(std::nullopt, "not a request object", root.offset());
    const fields::Envelope env = fields::read_envelope(root, fields::kRequestMembers);
    const auto& [version, id, result, error, method, params, unknown] = env;
    std::optional<std::uint64_t> rid;
    if (id) {
      auto got = read_id(*id, "request");
      if (got.ok()) rid = *got;
    }
    if (!id) return invalid(std::nullopt, "a request needs an \"id\" (notifications are not requests)", root.offset());
    if (!rid) return invalid(std::nullopt, "the request id is not a positive integer", id->offset());
    if (unknown)
      return invalid(rid, fmt::format("unknown member \"{}\" in the request", fields::excerpt(unknown->key)),
                     unknown->key_offset);
    if (!version) return invalid(rid, "the request has no \"jsonrpc\"", root.offset());
    if (auto st = check_version(*version); !st.ok()) return invalid(rid, st.error().detail, version->offset());
    if (!method || !method->is_string()) return invalid(rid, "the request needs a string \"method\"", root.offset());
    auto m = method_from_name(method->as_string());
    if (!m || next_ == kDone || *m != static_cast<Method>(next_)) {
      std::string expected = next_ == kDone ? std::string("nothing after dot.shutdown")
                                            : fmt::format("{}", method_name(static_cast<Method>(next_)));
      return answer_error(
          rid, kMethodNotFound, "Method not found",
          make_parse_error(dpp::ErrorKind::Method, method->offset(),
                           fmt::format("\"{}\" {}; expected {}", fields::excerpt(method->as_string()),
                                       m ? "is out of the lifecycle order" : "is not implemented", expected)));
    }
    if (*rid != static_cast<std::uint64_t>(next_))
      return invalid(rid, fmt::format("id {} for {}; ids go 1..5 in method order", *rid, method_name(*m)),
                     id->offset());
    if (!params)
      return answer_error(rid, kInvalidParams, "Invalid params",
                          make_parse_error_as(Code::Protocol, base::ErrorKind::MissingField, root.offset(),
                                              "the request has no params"));
    return dispatch(*rid, *m, *params);
  }

  // Once a request's params are decoded, its document (and every
  // json::Value into it) goes before the plugin's handler runs: a dot.plan
  // naming 100,000 managed paths is about 16 MB of text and document that
  // the handler never reads.
  void release_request() { request_.reset(); }

  Status bad_params(std::uint64_t id, const Error& e) { return answer_error(id, kInvalidParams, "Invalid params", e); }

  // The profile's checks on dot.initialize beyond the schema.
  static Status check_initialize(const InitializeParams& p) {
    auto bad = [](std::string detail) { return make_error(dpp::ErrorKind::Params, std::move(detail)); };
    if (p.protocol != kProtocol) return bad(fmt::format("unsupported protocol {}", p.protocol));
    if (p.profile != kProfile) return bad(fmt::format("unsupported profile \"{}\"", fields::excerpt(p.profile)));
    if (p.required_assurance != "audit" && p.required_assurance != "process")
      return bad(fmt::format("unknown required_assurance \"{}\"", fields::excerpt(p.required_assurance)));
    if (!is_sha256_hex(p.nonce)) return bad("the nonce is not 64 lowercase hex");
    if (!(p.limits == kLimits)) return bad("the limits are not the profile's");
    if (!is_profile_offer(p.capabilities)) return bad("the capabilities are not the profile's");
    if (!cache_offer_is_whole(p))
      return bad("\"cache\" is offered without a cache folder, or a cache folder without the offer");
    return {};
  }

  Status dispatch(std::uint64_t id, Method m, json::Value params) {
    Context ctx(*this);
    Result<jcs::Node> result = jcs::Node::null();
    in_request_ = true;
    switch (m) {
      case Method::Initialize: {
        auto p = decode_initialize_params(params);
        if (!p.ok()) return done(bad_params(id, p.error()));
        if (auto st = check_initialize(*p); !st.ok()) return done(bad_params(id, st.error()));
        params_ = *p;
        auto offered = [&](std::string_view c) {
          return std::find(p->capabilities.begin(), p->capabilities.end(), c) != p->capabilities.end();
        };
        log_ = plugin_.wants_log() && offered(kLogCapability);
        digests_ = plugin_.declares_digests() && offered(kDigestsCapability);
        cache_ = plugin_.keeps_cache() && offered(kCacheCapability);
        // Batches change nothing a plugin sees: the runtime cuts its lists.
        batches_ = offered(kBatchesCapability);
        if (auto st = plugin_.initialize(ctx, params_); !st.ok()) {
          log_ = digests_ = cache_ = batches_ = false;
          return done(handler_error(id, st.error()));
        }
        InitializeResult echo;
        echo.assurance = p->required_assurance;
        echo.capabilities = p->capabilities;
        echo.capabilities.resize(4);
        if (log_) echo.capabilities.emplace_back(kLogCapability);
        if (digests_) echo.capabilities.emplace_back(kDigestsCapability);
        if (cache_) echo.capabilities.emplace_back(kCacheCapability);
        if (batches_) echo.capabilities.emplace_back(kBatchesCapability);
        echo.id = plugin_.id();
        echo.inputs = p->inputs;
        echo.limits = p->limits;
        echo.nonce = p->nonce;
        echo.profile = p->profile;
        echo.protocol = p->protocol;
        result = to_node(echo);
        break;
      }
      case Method::Plan: {
        auto p = decode_plan_params(params);
        if (!p.ok()) return done(bad_params(id, p.error()));
        release_request();
        writes_.clear();
        write_ids_.clear();
        BatchOut<Operation, OperationOut> out(*this, kOperationsMethod, encode_operations_batch,
                                              [this](Operation& op) { return take_write(op); });
        Status planned = plugin_.plan_each(ctx, p->managed, out);
        // The runtime's own failure first: the plugin may have returned it
        // (or carried on past it).
        if (!out.failure.ok()) return done(answer_error(id, kInternalError, "Internal error", out.failure.error()));
        if (!planned.ok()) return done(handler_error(id, planned.error()));
        auto encoded = to_node(
            PlanResult{{EffectRequest{"sync", "managed-root", "required"}}, std::move(out.last), plugin_.folders()});
        if (!encoded.ok()) return done(answer_error(id, kInternalError, "Internal error", encoded.error()));
        result = std::move(encoded).value();
        break;
      }
      case Method::Materialize: {
        auto p = decode_materialize_params(params, kLimits);
        if (!p.ok()) return done(bad_params(id, p.error()));
        release_request();
        if (auto st = take_paths(*p); !st.ok()) return done(bad_params(id, st.error()));
        BatchOut<Artifact, ArtifactOut> out(*this, kArtifactsMethod, encode_artifacts_batch);
        Status staged = plugin_.materialize_each(ctx, p->stage, out);
        to_stage_.clear();
        if (!out.failure.ok()) return done(answer_error(id, kInternalError, "Internal error", out.failure.error()));
        if (!staged.ok()) return done(handler_error(id, staged.error()));
        result = to_node(MaterializeResult{std::move(out.last)});
        break;
      }
      case Method::Validate:
      case Method::Shutdown:
        if (auto st = decode_empty_params(params); !st.ok()) return done(bad_params(id, st.error()));
        result = dpp::to_node(ValidatedResult{true});
        break;
    }
    in_request_ = false;
    // What the handler built must still fit the wire: a result that cannot be
    // encoded (a string that is not UTF-8) or is over max_frame_bytes is
    // answered -32603 instead of being sent for the host to refuse.
    auto body = encode_result(id, std::move(*result));
    if (!body.ok()) return answer_error(id, kInternalError, "Internal error", body.error());
    if (body->size() > kLimits.max_frame_bytes)
      return answer_error(
          id, kInternalError, "Internal error",
          make_error(dpp::ErrorKind::Length, fmt::format("the {} result has {} bytes; a frame carries at most {}",
                                                         method_name(m), body->size(), kLimits.max_frame_bytes)));
    DOT_TRY(writer_.write(*body));
    ++next_;
    return {};
  }

  template <typename T, typename Encode>
  Status send_batch(std::span<const T> batch, std::string_view method, Encode encode) {
    DOT_ASSIGN_OR_RETURN(std::string body, encode(batch));
    if (body.size() > kLimits.max_frame_bytes)
      return make_error(dpp::ErrorKind::Length, fmt::format("a {} batch has {} bytes; a frame carries at most {}",
                                                            method, body.size(), kLimits.max_frame_bytes));
    return writer_.write(body);
  }

  // A list handed on item by item (plan_each's operations, materialize_each's
  // artifacts): each full batch is sent once another item follows it
  // (batches negotiated), so that what is left at the end, 1 to
  // kBatchElements of them (or all, without batches), is the result's, and
  // no frame holds a whole large list. `take` (optional) checks each item
  // first. The first failure is kept and refuses the rest.
  template <typename T, typename Out>
  class BatchOut final : public Out {
   public:
    BatchOut(Runtime& rt, std::string_view method, Result<std::string> (*encode)(std::span<const T>),
             std::function<Status(T&)> take = nullptr)
        : rt_(rt), method_(method), encode_(encode), take_(std::move(take)) {}
    Status add(T item) override {
      if (!failure.ok()) return failure;
      if (take_) failure = take_(item);
      if (failure.ok() && rt_.batches_ && last.size() == kBatchElements) {
        failure = rt_.send_batch(std::span<const T>(last), method_, encode_);
        last.clear();
      }
      if (!failure.ok()) return failure;
      last.push_back(std::move(item));
      return {};
    }
    std::vector<T> last;
    Status failure;

   private:
    Runtime& rt_;
    std::string_view method_;
    Result<std::string> (*encode_)(std::span<const T>);
    std::function<Status(T&)> take_;
  };

  // One operation of the plan: a write is one materialize stages unless
  // core names fewer. With digests every write must declare its sha256 and
  // size; without, what a plugin declared anyway is not sent (core did not
  // offer digests).
  Status take_write(Operation& op) {
    if (op.action != "write") {
      if (op.digest)
        return make_error(dpp::ErrorKind::DeclaredDigest,
                          fmt::format("the plugin declared a digest for its {} of \"{}\"", fields::excerpt(op.action),
                                      fields::excerpt(op.path)));
      return {};
    }
    if (digests_ && !op.digest)
      return make_error(
          dpp::ErrorKind::DeclaredDigest,
          fmt::format("digests were negotiated but the write of \"{}\" declares none", fields::excerpt(op.path)));
    if (!digests_) {
      op.digest.reset();
      writes_.push_back(op.path);
    } else {
      write_ids_.push_back(sha256(op.path));
    }
    return {};
  }

  // The paths to stage: params.paths with digests (each a write of the plan,
  // in its order), every write without.
  Status take_paths(MaterializeParams& p) {
    auto bad = [](std::string detail) { return make_error(dpp::ErrorKind::Params, std::move(detail)); };
    if (!digests_) {
      if (p.paths) return bad("dot.materialize names paths, but digests were not negotiated");
      to_stage_ = writes_;
      return {};
    }
    if (!p.paths) return bad("digests were negotiated, but dot.materialize names no paths");
    std::size_t next = 0;
    for (const std::string& path : *p.paths) {
      const dot::Digest asked = sha256(path);
      while (next < write_ids_.size() && write_ids_[next] != asked) ++next;
      if (next == write_ids_.size())
        return bad(fmt::format("paths names \"{}\", which is not a later write of the plan", fields::excerpt(path)));
      ++next;
    }
    write_ids_ = {};
    to_stage_ = std::move(*p.paths);
    return {};
  }

  Status handler_error(std::uint64_t id, const Error& e) {
    if (e.code == Code::Protocol && e.is(dpp::ErrorKind::InvalidParams)) return bad_params(id, e);
    return answer_error(id, kHandlerError, "Plugin error", e);
  }

  // Every answer ends the request: no dot.log after it.
  Status done(Status st) {
    in_request_ = false;
    return st;
  }

  Plugin& plugin_;
  FrameReader reader_;
  FrameWriter writer_;
  ByteSink& err_;
  int next_ = 1;  // the method (and id) expected next; kDone after dot.shutdown
  bool in_request_ = false;
  bool log_ = false;
  bool digests_ = false;
  bool cache_ = false;
  bool batches_ = false;
  // The plan's writes, in order. Without digests their paths: every one is
  // staged. With digests each path's SHA-256: dot.materialize names some of
  // them, and holding its paths to the plan's needs only each write's
  // identity (32 bytes instead of a path: 100,000 writes of 64-byte paths
  // were 12 MB beside the paths asked for).
  std::vector<std::string> writes_;
  std::vector<dot::Digest> write_ids_;
  std::vector<std::string> to_stage_;      // what dot.materialize asks for
  std::optional<json::Document> request_;  // the request being handled, until release_request()
  std::size_t logs_sent_ = 0;
  InitializeParams params_;
};

Status Context::log(std::string_view level, std::string_view message) { return rt_.log(level, message); }
bool Context::log_negotiated() const noexcept { return rt_.log_negotiated(); }
const InitializeParams& Context::initialize_params() const noexcept { return rt_.params(); }
bool Context::digests_negotiated() const noexcept { return rt_.digests_negotiated(); }
const std::string* Context::cache_folder() const noexcept { return rt_.cache_folder(); }
const std::vector<std::string>& Context::paths_to_stage() const noexcept { return rt_.paths_to_stage(); }

Status Plugin::initialize(Context&, const InitializeParams&) { return {}; }

Result<std::vector<Operation>> Plugin::plan(Context&, const std::vector<std::string>&) {
  return make_error(dpp::ErrorKind::NoPlan, "the plugin implements neither plan nor plan_each");
}

Status Plugin::plan_each(Context& ctx, const std::vector<std::string>& managed, OperationOut& out) {
  DOT_ASSIGN_OR_RETURN(std::vector<Operation> ops, plan(ctx, managed));
  for (Operation& op : ops) DOT_TRY(out.add(std::move(op)));
  return {};
}

Result<std::vector<Artifact>> Plugin::materialize(Context&, const std::string&) {
  return make_error(dpp::ErrorKind::NoMaterialize, "the plugin implements neither materialize nor materialize_each");
}

Status Plugin::materialize_each(Context& ctx, const std::string& stage, ArtifactOut& out) {
  DOT_ASSIGN_OR_RETURN(std::vector<Artifact> arts, materialize(ctx, stage));
  for (Artifact& art : arts) DOT_TRY(out.add(std::move(art)));
  return {};
}

std::string registered_id(std::string_view fallback) {
  const char* given = std::getenv("DOT_PLUGIN_ID");
  if (given != nullptr && check_plugin_id(given).ok()) return given;
  return std::string(fallback);
}

int serve(Plugin& plugin, ByteSource& in, ByteSink& out, ByteSink& err) {
  Runtime rt(plugin, in, out, err);
  return rt.run();
}

int serve(Plugin& plugin) {
  FdSource in(STDIN_FILENO, "standard input");
  FdSink out(STDOUT_FILENO, "standard output");
  FdSink err(STDERR_FILENO, "standard error");
  return serve(plugin, in, out, err);
}

Error invalid_params(std::string detail) { return make_error(dpp::ErrorKind::InvalidParams, std::move(detail)); }

namespace {

// `path` created exclusively (0600) beneath `stage`, its missing folders made
// (0700) component by component through descriptors, never through a symlink.
Result<beneath::CreatedFile> create_staged_file(const std::string& stage, std::string_view path) {
  DOT_TRY(beneath::check_relative_path(path));
  DOT_ASSIGN_OR_RETURN(UniqueFd dir, beneath::open_root(stage));
  std::string_view rest = path;
  for (auto slash = rest.find('/'); slash != std::string_view::npos; slash = rest.find('/')) {
    std::string name(rest.substr(0, slash));
    const bool made = ::mkdirat(dir.get(), name.c_str(), 0700) == 0;
    if (!made && errno != EEXIST) return beneath::errno_error(errno, "mkdirat", path);
    // Opened beneath the folder already held: a symlink planted anywhere on
    // the way is refused (DOT_E_PATH_ESCAPE), never followed.
    auto sub = beneath::open_beneath(dir.get(), name, O_RDONLY | O_DIRECTORY);
    if (!sub.ok()) {
      // O_NOFOLLOW | O_DIRECTORY on a symlink says ENOTDIR: name it for what it is.
      struct stat st {};
      if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
        return make_error(dpp::ErrorKind::Symlink,
                          fmt::format("{} in the stage is a symlink; staged files are never written through one",
                                      fields::excerpt(name)));
      return sub.error();
    }
    // The umask may have taken bits away from a folder made here; core must
    // be able to read it back.
    if (made && ::fchmod(sub->get(), 0700) != 0) return beneath::errno_error(errno, "fchmod", path);
    dir = std::move(sub).value();
    rest.remove_prefix(slash + 1);
  }
  return beneath::create_exclusive(dir.get(), rest, 0600);
}

}  // namespace

Operation link_operation(std::string path, std::string link_text) {
  Operation op;
  op.action = "link";
  op.path = std::move(path);
  op.link_text = std::move(link_text);
  return op;
}

Result<Artifact> write_staged_file(const std::string& stage, std::string_view path, std::string_view bytes) {
  DOT_ASSIGN_OR_RETURN(beneath::CreatedFile file, create_staged_file(stage, path));
  DOT_TRY(write_all(file.fd.get(), bytes, path));
  return Artifact{std::string(path), sha256_hex(bytes), bytes.size()};
}

Result<Artifact> copy_staged_file(const std::string& stage, std::string_view path, int source,
                                  std::uint64_t max_bytes) {
  DOT_ASSIGN_OR_RETURN(beneath::CreatedFile file, create_staged_file(stage, path));
  std::vector<char> chunk(kCopyChunkBytes);
  Sha256 hash;
  std::uint64_t size = 0;
  for (;;) {
    const ssize_t n = ::read(source, chunk.data(), chunk.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return beneath::errno_error(errno, "read", path);
    }
    if (n == 0) break;
    const auto got = static_cast<std::uint64_t>(n);
    if (got > max_bytes - size)
      return make_error(dpp::ErrorKind::TooLarge,
                        fmt::format("the source of {} has more than {} bytes", fields::excerpt(path), max_bytes));
    std::string_view bytes(chunk.data(), got);
    hash.update(bytes);
    DOT_TRY(write_all(file.fd.get(), bytes, path));
    size += got;
  }
  return Artifact{std::string(path), to_hex(hash.finish()), size};
}

}  // namespace dot::dpp::general
