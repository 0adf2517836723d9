// `dot-core metewand conform`: a worker checked against Metewand v1 as dot-core runs it (conformance.h).
#include "dot/metewand/conformance.h"
#include "dot/metewand/error_kinds.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <functional>

#include <fmt/format.h>

#include "dot/base/orphan_sweep.h"
#include "dot/base/sha256.h"
#include "dot/metewand/launch.h"
#include "dot/metewand/operations.h"
#include "dot/metewand/worker_session.h"

namespace dot::metewand {
namespace {

using std::chrono::milliseconds;

enum class AbuseShape : std::uint8_t { DuplicateKey, InvalidUtf8, ByteOrderMark, MalformedJson, LineTooLong, EarlyEof };
struct Abuse {
  AbuseShape shape;
  const char* name;  // the case is abuse_<name>
  const char* checks;
};
constexpr Abuse kAbuses[] = {
    {AbuseShape::DuplicateKey, "duplicate_key", "a request with its id twice"},
    {AbuseShape::InvalidUtf8, "invalid_utf8", "a request with a byte that is not UTF-8"},
    {AbuseShape::ByteOrderMark, "byte_order_mark", "a request line starting with a byte-order mark"},
    {AbuseShape::MalformedJson, "malformed_json", "a request line that is not JSON"},
    {AbuseShape::LineTooLong, "line_too_long", "a line of 1 MiB + 1 bytes"},
    {AbuseShape::EarlyEof, "early_eof", "a partial request line, then the end of the stream"},
};

// The bytes of an abuse, sent where the shutdown request `id` would go.
std::string abuse_bytes(AbuseShape shape, const std::string& id) {
  std::string shutdown = fmt::format(R"({{"id":"{}","method":"shutdown"}})", id);
  switch (shape) {
    case AbuseShape::DuplicateKey:
      return fmt::format(R"({{"id":"{}","id":"{}","method":"shutdown"}})", id, id) + "\n";
    case AbuseShape::InvalidUtf8:
      return fmt::format("{{\"id\":\"{}\",\"method\":\"shutdown\",\"x\":\"\xff\"}}\n", id);
    case AbuseShape::ByteOrderMark:
      return "\xEF\xBB\xBF" + shutdown + "\n";
    case AbuseShape::MalformedJson:
      return fmt::format(R"({{"id":"{}","method":}})", id) + "\n";
    case AbuseShape::LineTooLong:
      return std::string(kMaxLineBytes, ' ') + "\n";
    case AbuseShape::EarlyEof:
      break;
  }
  return shutdown;  // early_eof: no LF
}

// One valid request per method, naming folders under `dir`.
jcs::Node valid_params(Method method, const std::string& dir) {
  jcs::Node p = jcs::Node::object();
  auto s = [](std::string v) { return jcs::Node::string(std::move(v)); };
  switch (method) {
    case Method::Materialize: {
      jcs::Node values = jcs::Node::array();
      for (int v : {1, 2, 3}) values.push(jcs::Node::integer(v));
      jcs::Node params = jcs::Node::object();
      params.set("values", std::move(values));
      p.set("source_dir", s(dir + "/source")).set("dataset_parameters", std::move(params));
      p.set("dataset_seed", jcs::Node::integer(17)).set("output_dir", s(dir + "/dataset"));
      break;
    }
    case Method::Prepare:
      p.set("dataset_dir", s(dir + "/dataset")).set("problem_contract_id", s("mw1-problem-contract-conformance"));
      p.set("problem_parameters", jcs::Node::object()).set("implementation_parameters", jcs::Node::object());
      p.set("implementation_seed", jcs::Node::integer(23));
      break;
    case Method::Execute:
      p.set("result_dir", s(dir + "/result"));
      break;
    case Method::Evaluate:
      p.set("dataset_dir", s(dir + "/dataset")).set("problem_contract_id", s("mw1-problem-contract-conformance"));
      p.set("problem_parameters", jcs::Node::object()).set("result_dir", s(dir + "/result"));
      p.set("metrics_path", s(dir + "/metrics/metrics.json"));
      break;
    default:
      break;
  }
  return p;
}

std::vector<Method> operations_of(WorkerRole role) {
  auto all = role_methods(role);
  std::vector<Method> out(all.begin(), all.end());
  out.pop_back();  // shutdown
  return out;
}

// A method of some other role.
Method foreign_method(WorkerRole role) {
  return role == WorkerRole::DatasetMaterializer ? Method::Evaluate : Method::Materialize;
}

std::string describe(const SessionError& e) { return fmt::format("{}: {}", e.name(), e.message()); }

// What one case needs: a fresh worker and its folder.
struct CaseContext {
  const ConformanceOptions& options;
  const ResolvedWorker& worker;
  std::string worker_id;
  std::string dir;

  Expected<WorkerSession, SessionError> start() const {
    SessionOptions so;
    so.command.argv = options.command;
    so.command.exec_fd = worker.exe.fd.get();
    so.command.env = {"PATH=/usr/local/bin:/usr/bin:/bin"};
    so.timeouts.set_all(options.deadline);
    return WorkerSession::start(so);
  }
  std::vector<Capability> selected() const {
    if (options.role == WorkerRole::Implementation) return {Capability::OneShot};
    return {};
  }
};

using CaseBody = std::function<std::optional<std::string>(const CaseContext&, std::string& detail)>;

// Hello, then `body`, then shutdown must succeed; a returned string fails.
std::optional<std::string> with_session(const CaseContext& c, const std::string& identity,
                                        const std::function<std::optional<std::string>(WorkerSession&)>& body) {
  auto s = c.start();
  if (!s.ok()) return describe(s.error());
  auto n = s->hello(c.options.role, identity, c.selected());
  if (!n.ok()) return "hello: " + describe(n.error());
  if (body)
    if (auto failed = body(*s)) return failed;
  auto st = s->shutdown();
  if (!st.ok()) return "shutdown: " + describe(st.error());
  return std::nullopt;
}

// The valid requests up to and including `last`; a structured
// operation_failed/internal_error is an answer, the wrong-request codes are
// not.
std::optional<std::string> valid_sequence(WorkerSession& s, const CaseContext& c, std::optional<Method> last,
                                          std::string& detail) {
  for (Method m : operations_of(c.options.role)) {
    if (m == Method::Execute) ::mkdir((c.dir + "/result").c_str(), 0700);
    auto r = s.request(m, valid_params(m, c.dir));
    if (!r.ok()) {
      const SessionError& e = r.error();
      if (e.kind != SessionError::Kind::WorkerFailure || !e.failure)
        return fmt::format("{}: {}", method_name(m), describe(e));
      if (e.failure->code == "invalid_request" || e.failure->code == "unsupported_operation")
        return fmt::format("{}: a valid request was answered {}: {}", method_name(m), e.failure->code,
                           e.failure->message);
      detail += fmt::format("{}{} answered {} ({})", detail.empty() ? "" : "; ", method_name(m), e.failure->code,
                            e.failure->message);
    }
    if (last && m == *last) break;
  }
  return std::nullopt;
}

// A raw request must get a structured failure answer.
std::optional<std::string> expect_failure(WorkerSession& s, Phase phase, jcs::Node request, std::string_view expected,
                                          std::string& detail) {
  auto r = s.exchange(phase, std::move(request));
  if (!r.ok()) return describe(r.error());
  auto reply = decode_operation_reply(Method::Shutdown, r->document.root());
  if (!reply.ok()) return fmt::format("not a response of version 1: {}", reply.error().message());
  auto* failure = std::get_if<WorkerFailure>(&*reply);
  if (failure == nullptr) return "answered with a success";
  detail = fmt::format("answered {}", failure->code);
  if (failure->code != expected) detail += fmt::format(" ({} expected)", expected);
  return std::nullopt;
}

struct CaseDef {
  std::string name;
  std::string checks;
  CaseBody body;
};

std::vector<CaseDef> case_defs(WorkerRole role) {
  std::vector<CaseDef> out;
  out.push_back({"hello_identity", "hello with the resolved identity: id \"0\", protocol 1, identity echoed; shutdown",
                 [](const CaseContext& c, std::string&) { return with_session(c, c.worker_id, nullptr); }});
  out.push_back({"hello_identity_echo", "hello with another identity: that identity is echoed; shutdown",
                 [](const CaseContext& c, std::string&) {
                   std::string other = worker_identity_from_digest(sha256_hex("metewand conform: " + c.worker_id));
                   return with_session(c, other, nullptr);
                 }});
  out.push_back({"serial_ids", "the role's requests in order, ids \"0\", \"1\", ... answered one by one; shutdown",
                 [](const CaseContext& c, std::string& detail) {
                   return with_session(c, c.worker_id,
                                       [&](WorkerSession& s) { return valid_sequence(s, c, std::nullopt, detail); });
                 }});
  for (Method m : operations_of(role)) {
    std::string name(method_name(m));
    out.push_back({name + "_valid",
                   fmt::format("a valid {} (after the methods before it): its success shape, or operation_failed/"
                               "internal_error; shutdown",
                               name),
                   [m](const CaseContext& c, std::string& detail) {
                     return with_session(c, c.worker_id,
                                         [&](WorkerSession& s) { return valid_sequence(s, c, m, detail); });
                   }});
    out.push_back({name + "_invalid", fmt::format("{} with an unknown member: a structured failure; shutdown", name),
                   [m](const CaseContext& c, std::string& detail) {
                     return with_session(c, c.worker_id, [&](WorkerSession& s) {
                       jcs::Node request = valid_params(m, c.dir);
                       request.set("method", jcs::Node::string(std::string(method_name(m))));
                       request.set("unexpected_member", jcs::Node::boolean(true));
                       return expect_failure(s, phase_of(m), std::move(request), "invalid_request", detail);
                     });
                   }});
  }
  out.push_back({"other_role_method", "a method of another role: a structured failure; shutdown",
                 [](const CaseContext& c, std::string& detail) {
                   return with_session(c, c.worker_id, [&](WorkerSession& s) {
                     Method m = foreign_method(c.options.role);
                     jcs::Node request = valid_params(m, c.dir);
                     request.set("method", jcs::Node::string(std::string(method_name(m))));
                     return expect_failure(s, phase_of(m), std::move(request), "unsupported_operation", detail);
                   });
                 }});
  out.push_back({"shutdown", "shutdown right after hello: the acknowledgment, then exit 0, within the deadline",
                 [](const CaseContext& c, std::string&) { return with_session(c, c.worker_id, nullptr); }});
  for (const Abuse& a : kAbuses) {
    const AbuseShape shape = a.shape;
    out.push_back({std::string("abuse_") + a.name,
                   fmt::format("after hello, {}: no success answer, and the worker exits", a.checks),
                   [shape](const CaseContext& c, std::string& detail) -> std::optional<std::string> {
                     auto s = c.start();
                     if (!s.ok()) return describe(s.error());
                     auto n = s->hello(c.options.role, c.worker_id, c.selected());
                     if (!n.ok()) return "hello: " + describe(n.error());
                     WorkerSession::Probe p = s->probe_raw(abuse_bytes(shape, "1"));
                     for (const auto& line : p.lines) {
                       auto doc = json::parse(line);
                       auto ok = doc.ok() && doc->root().is_object() ? doc->root().find("ok") : std::nullopt;
                       if (ok && ok->is_bool() && ok->as_bool()) return "answered with a success: " + line;
                     }
                     if (p.frame_error) return "its answer broke the framing: " + p.frame_error->message();
                     if (!p.exit) return "still running at the deadline";
                     detail =
                         fmt::format("{}, {}", p.lines.empty() ? "no answer" : "a failure answer", p.exit->describe());
                     return std::nullopt;
                   }});
  }
  return out;
}

}  // namespace

std::vector<ConformanceCaseInfo> conformance_cases(WorkerRole role) {
  std::vector<ConformanceCaseInfo> out;
  for (auto& d : case_defs(role)) out.push_back({d.name, d.checks});
  return out;
}

Result<ConformanceResult> run_conformance(const ConformanceOptions& options) {
  auto defs = case_defs(options.role);
  for (const auto& name : options.only)
    if (std::none_of(defs.begin(), defs.end(), [&](const CaseDef& d) { return d.name == name; }))
      return make_error(metewand::ErrorKind::Case,
                        fmt::format("no case {} for the {} role", name, role_name(options.role)));
  if (options.command.empty()) return make_error(metewand::ErrorKind::Worker, "no worker command given");
  DOT_ASSIGN_OR_RETURN(ResolvedWorker worker, resolve_worker(options.command.front()));
  std::string templ = (std::filesystem::temp_directory_path() / "dot-metewand-conform-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr)
    return make_error(metewand::ErrorKind::Mkdtemp, fmt::format("cannot make a private directory under {}", templ));
  ConformanceResult result;
  result.sha256 = worker.exe.sha256;
  result.worker_id = worker.identity;
  auto sweep = OrphanSweep::begin();
  if (!sweep.ok()) return std::move(sweep).error();
  for (const auto& d : defs) {
    if (!options.only.empty() && std::find(options.only.begin(), options.only.end(), d.name) == options.only.end())
      continue;
    CaseContext c{options, worker, worker.identity, templ + "/" + d.name};
    ::mkdir(c.dir.c_str(), 0700);
    ConformanceCase out;
    out.name = d.name;
    auto t0 = Clock::now();
    std::string detail;
    auto failed = d.body(c, detail);
    sweep->sweep();
    out.elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
    out.passed = !failed;
    out.detail = failed ? *failed : detail;
    result.cases.push_back(std::move(out));
  }
  std::error_code ignored;
  std::filesystem::remove_all(templ, ignored);
  return result;
}

}  // namespace dot::metewand
