// The hello-profile plugin side: strict framing on stdin and stdout (plugin.h).
#include "dot/dpp/plugin.h"
#include "dot/dpp/error_kinds.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "dot/base/fd.h"
#include "dot/base/sha256.h"
#include "dot/dpp/body.h"
#include "dot/dpp/hello.h"

namespace dot::dpp {

PluginConnection::PluginConnection(int in_fd, int out_fd)
    : in_(in_fd, "standard input"), out_(out_fd, "standard output"), reader_(in_), writer_(out_) {}

Result<std::optional<IncomingRequest>> PluginConnection::next_request() {
  DOT_ASSIGN_OR_RETURN(std::optional<Frame> frame, reader_.next());
  if (!frame) return std::optional<IncomingRequest>();
  IncomingRequest in;
  DOT_ASSIGN_OR_RETURN(json::Document doc, parse_body(frame->body, frame->body_offset));
  in.doc = std::make_unique<json::Document>(std::move(doc));
  DOT_ASSIGN_OR_RETURN(in.request, decode_request(*in.doc));
  return std::optional<IncomingRequest>(std::move(in));
}

Status PluginConnection::reply(std::uint64_t id, const jcs::Node& result) {
  DOT_ASSIGN_OR_RETURN(std::string body, encode_result(id, result));
  return writer_.write(body);
}

Status PluginConnection::reply_error(std::optional<std::uint64_t> id, std::int64_t code, std::string_view message) {
  DOT_ASSIGN_OR_RETURN(std::string body, encode_error(id, code, message));
  return writer_.write(body);
}

Status PluginConnection::write_frame(std::string_view body) {
  std::string bytes = fmt::format("Content-Length: {}\r\n\r\n", body.size());
  bytes += body;
  return out_.write(bytes);
}

Status PluginConnection::write_raw(std::string_view bytes) { return out_.write(bytes); }

namespace {

// Error replies carry printable ASCII only (the hello JCS subset of the host
// has no trouble with them, and neither does a terminal).
std::string printable(std::string_view s) {
  std::string out;
  for (char c : s) out += (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f) ? c : '?';
  return out;
}

int give_up(PluginConnection& conn, std::optional<std::uint64_t> id, std::int64_t code, const Error& e) {
  std::string line = e.line();
  std::fprintf(stderr, "%s\n", line.c_str());
  (void)conn.reply_error(id, code, printable(e.message()));
  return 1;
}

template <typename T>
Result<jcs::Node> node_of(Result<T> r) {
  if (!r.ok()) return r.error();
  return to_node(*r);
}

}  // namespace

int serve(PluginHandler& handler, PluginConnection& conn) {
  int next = 1;  // the method (and id) we expect; 6 after dot.shutdown
  for (;;) {
    auto in = conn.next_request();
    if (!in.ok())
      return give_up(conn, std::nullopt,
                     in.error().is(dpp::ErrorKind::Batch) || in.error().is(dpp::ErrorKind::Notification) ||
                             in.error().is(base::ErrorKind::UnknownField)
                         ? kInvalidRequest
                         : kParseError,
                     in.error());
    if (!in->has_value()) {
      if (next == 6) return 0;
      std::fprintf(stderr, "DOT_E_PROTOCOL: the host closed stdin before %s\n",
                   std::string(method_name(static_cast<Method>(next))).c_str());
      return 1;
    }
    const Request& req = (*in)->request;
    if (next == 6 || req.id != static_cast<std::uint64_t>(next) || req.method != static_cast<Method>(next)) {
      std::string expected = next == 6 ? "end of input after dot.shutdown"
                                       : fmt::format("{} with id {}", method_name(static_cast<Method>(next)), next);
      return give_up(conn, req.id, kInvalidRequest,
                     make_error(dpp::ErrorKind::Order, fmt::format("got {} with id {}, expected {}",
                                                                   method_name(req.method), req.id, expected)));
    }
    Result<jcs::Node> result = jcs::Node::null();
    switch (req.method) {
      case Method::Initialize: {
        auto p = decode_initialize_params(req.params);
        if (!p.ok()) return give_up(conn, req.id, kInvalidParams, p.error());
        result = node_of(handler.initialize(*p));
        break;
      }
      case Method::Plan:
        if (auto st = decode_empty_params(req.params); !st.ok())
          return give_up(conn, req.id, kInvalidParams, st.error());
        result = node_of(handler.plan());
        break;
      case Method::Materialize: {
        auto p = decode_materialize_params(req.params);
        if (!p.ok()) return give_up(conn, req.id, kInvalidParams, p.error());
        result = node_of(handler.materialize(*p));
        break;
      }
      case Method::Validate:
        if (auto st = decode_empty_params(req.params); !st.ok())
          return give_up(conn, req.id, kInvalidParams, st.error());
        result = node_of(handler.validate());
        break;
      case Method::Shutdown:
        if (auto st = decode_empty_params(req.params); !st.ok())
          return give_up(conn, req.id, kInvalidParams, st.error());
        result = node_of(handler.shutdown());
        break;
    }
    if (!result.ok()) return give_up(conn, req.id, kInvalidParams, result.error());
    if (auto st = conn.reply(req.id, *result); !st.ok()) {
      std::fprintf(stderr, "%s\n", st.error().line().c_str());
      return 1;
    }
    ++next;
  }
}

int serve(PluginHandler& handler) {
  PluginConnection conn(STDIN_FILENO, STDOUT_FILENO);
  return serve(handler, conn);
}

Status write_stage_file(const std::string& dir, std::string_view name, std::string_view bytes) {
  UniqueFd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!d)
    return make_error(dpp::ErrorKind::StageOpen,
                      fmt::format("cannot open the stage {}: {}", dir, std::strerror(errno)));
  std::string n(name);
  UniqueFd f(::openat(d.get(), n.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!f)
    return make_error(dpp::ErrorKind::StageOpen,
                      fmt::format("cannot create {} in the stage: {}", n, std::strerror(errno)));
  // The umask may have taken bits away: the mode must be exactly 0600.
  if (::fchmod(f.get(), 0600) != 0)
    return make_error(dpp::ErrorKind::StageOpen, fmt::format("cannot set the mode of {}: {}", n, std::strerror(errno)));
  return write_all(f.get(), bytes, n);
}

std::string_view HelloPlugin::content(std::string_view name) {
  if (name == "hello.txt") return "Hello, world!\n";
  if (name == "welcome.txt") return "Welcome to dot-core: this file was planned by org.dot.hello.\n";
  return {};
}

Result<InitializeResult> HelloPlugin::initialize(const InitializeParams& p) {
  if (p.protocol != hello::kProtocol)
    return make_error(dpp::ErrorKind::Protocol, fmt::format("unsupported protocol {}", p.protocol));
  if (p.profile != hello::kProfile)
    return make_error(dpp::ErrorKind::Profile, fmt::format("unsupported profile \"{}\"", printable(p.profile)));
  if (p.required_assurance != hello::kAssuranceAudit && p.required_assurance != hello::kAssuranceProcess)
    return make_error(dpp::ErrorKind::Assurance, "unknown required_assurance");
  if (p.capabilities != hello::capabilities())
    return make_error(dpp::ErrorKind::Capabilities, "capabilities differ from the hello profile's");
  if (!is_sha256_hex(p.nonce)) return make_error(dpp::ErrorKind::Nonce, "the nonce is not 64 lowercase hex");
  return InitializeResult{.protocol = p.protocol,
                          .profile = p.profile,
                          .assurance = p.required_assurance,
                          .capabilities = p.capabilities,
                          .nonce = p.nonce,
                          .id = std::string(hello::kPluginId)};
}

Result<PlanResult> HelloPlugin::plan() { return PlanResult{hello::allowed_names(), {hello::root_sync_effect()}}; }

Result<MaterializeResult> HelloPlugin::materialize(const MaterializeParams& p) {
  if (p.stage.empty() || p.stage[0] != '/')
    return make_error(dpp::ErrorKind::Stage, "the stage must be an absolute path");
  const char* env_stage = std::getenv("DOT_STAGE_ROOT");
  if (env_stage != nullptr && p.stage != env_stage)
    return make_error(dpp::ErrorKind::Stage, "the stage differs from DOT_STAGE_ROOT");
  MaterializeResult r;
  for (const auto& name : hello::allowed_names()) {
    std::string_view bytes = content(name);
    DOT_TRY(write_stage_file(p.stage, name, bytes));
    r.artifacts.push_back(Artifact{name, sha256_hex(bytes), bytes.size()});
  }
  return r;
}

Result<ValidatedResult> HelloPlugin::validate() { return ValidatedResult{true}; }
Result<ValidatedResult> HelloPlugin::shutdown() { return ValidatedResult{true}; }

}  // namespace dot::dpp
