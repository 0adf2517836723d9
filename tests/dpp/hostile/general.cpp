// The hostile plugins of the general profile org.dot.dpp/v1
// (docs/spec/dpp-general.md). Each is the honest plugin of the runtime
// (dot/dpp/runtime.h) with its stdout passed through a hook that breaks
// exactly one rule: the hook sees every frame the runtime writes (a
// response, an error response or a dot.log) and writes what the case wants
// instead. So every case speaks the profile correctly up to the one byte
// that makes it hostile, and the runtime itself runs under each.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "../../common/test_error_kinds.h"
#include "dot/base/error_kinds.h"
#include "dot/base/fd.h"
#include "dot/base/sha256.h"
#include "dot/dpp/body.h"
#include "dot/dpp/runtime.h"
#include "hostile.h"

namespace dot::dpp::hostile {
namespace {

using general::kLimits;

constexpr std::string_view kPath = "etc/app.conf";
constexpr std::string_view kContent = "key = value\n";

// Plans one write and stages it; asks for log only when told to, and then
// says what it plans.
class Honest final : public general::Plugin {
 public:
  Honest(bool log, bool fail_plan, bool write_outside = false, bool wrong_digest = false)
      : log_(log), fail_plan_(fail_plan), write_outside_(write_outside), wrong_digest_(wrong_digest) {}
  std::string id() const override { return std::string(kGeneralPluginId); }
  bool wants_log() const override { return log_; }
  // The one that declares digests declares a wrong one: the SHA-256 of other
  // bytes than it stages (of the same size).
  bool declares_digests() const override { return wrong_digest_; }
  Result<std::vector<general::Operation>> plan(general::Context& ctx, const std::vector<std::string>&) override {
    if (fail_plan_) return make_error(test::ErrorKind::Input, "the source folder /src is gone");
    if (ctx.log_negotiated()) DOT_TRY(ctx.log("info", "planning " + std::string(kPath)));
    std::optional<general::Digest> declared;
    if (wrong_digest_) declared = general::Digest{sha256_hex(std::string(kContent.size(), 'x')), kContent.size()};
    return std::vector<general::Operation>{{"write", 0644, std::string(kPath), std::nullopt, declared}};
  }
  Result<std::vector<general::Artifact>> materialize(general::Context&, const std::string& stage) override {
    DOT_ASSIGN_OR_RETURN(general::Artifact a, general::write_staged_file(stage, kPath, kContent));
    if (write_outside_) {
      // Beside the stage, in the folder that holds it: not a staged file.
      UniqueFd f(::open((stage + "/../escaped.txt").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
      if (!f) return make_error(base::ErrorKind::Open, "cannot write beside the stage");
    }
    return std::vector<general::Artifact>{a};
  }

 private:
  bool log_, fail_plan_, write_outside_, wrong_digest_;
};

// `"key":<value>,` cut out of a canonical body (the value has no '}' or ']'
// of its own nested below the first one closing it: limits, inputs).
std::string drop(std::string body, std::string_view key, char closing) {
  auto pos = body.find("\"" + std::string(key) + "\":");
  if (pos == std::string::npos) std::exit(99);
  auto end = body.find(closing, pos);
  if (end == std::string::npos || end + 1 >= body.size() || body[end + 1] != ',') std::exit(99);
  return body.erase(pos, end + 2 - pos);
}

std::string log_frame(std::string_view level, std::string_view message) {
  return frame("{\"jsonrpc\":\"2.0\",\"method\":\"dot.log\",\"params\":{\"level\":\"" + std::string(level) +
               "\",\"message\":\"" + std::string(message) + "\"}}");
}

std::string error_frame(std::string_view id, std::string_view error) {
  return frame("{\"error\":" + std::string(error) + ",\"id\":" + std::string(id) + ",\"jsonrpc\":\"2.0\"}");
}

[[noreturn]] void sleep_forever() {
  for (;;) ::pause();
}

// One frame the runtime is about to write.
struct Out {
  ByteSink& raw;
  std::uint64_t id;  // the request it answers, 1..5; 0 for a notification
  std::string body;
  Status write(std::string_view bytes) { return raw.write(bytes); }
  Status honest() { return raw.write(frame(body)); }
};
// Writes what the case wants for `o` (o.honest() to pass it on).
using Hook = Status (*)(Out& o);

class HookedSink final : public ByteSink {
 public:
  HookedSink(ByteSink& raw, Hook hook) : raw_(raw), hook_(hook) {}
  // FrameWriter hands over one whole frame per write.
  Status write(std::string_view bytes) override {
    auto at = bytes.find("\r\n\r\n");
    if (at == std::string_view::npos) std::exit(99);
    std::string body(bytes.substr(at + 4));
    auto doc = parse_body(body, 0, kLimits.max_frame_bytes);
    if (!doc.ok()) std::exit(99);
    auto id = doc->root().find("id");
    Out o{raw_, id && !id->is_null() ? std::stoull(std::string(id->number_text())) : 0, std::move(body)};
    return hook_(o);
  }

 private:
  ByteSink& raw_;
  Hook hook_;
};

struct Options {
  bool log = false;            // ask for log
  bool fail_plan = false;      // the plan handler fails
  bool write_outside = false;  // materialize also writes beside the stage
  bool wrong_digest = false;   // declare digests, one of them wrong
};

int serve_hooked(Hook hook, Options opt = {}) {
  Honest plugin(opt.log, opt.fail_plan, opt.write_outside, opt.wrong_digest);
  FdSource in(STDIN_FILENO, "standard input");
  FdSink out(STDOUT_FILENO, "standard output");
  FdSink err(STDERR_FILENO, "standard error");
  HookedSink sink(out, hook);
  return general::serve(plugin, in, sink, err);
}

// Answers request `n` with `expr` (in scope: Out& o) in place of the honest answer.
#define AT(n, expr) +[](Out& o) -> Status { return o.id == (n) ? o.write(expr) : o.honest(); }
#define RUN(hook, ...) +[] { return serve_hooked(hook __VA_OPT__(, ) __VA_ARGS__); }

// The operations array with `n` writes of distinct paths, as a plan result.
std::string plan_with(std::size_t n) {
  std::string ops;
  for (std::size_t i = 0; i < n; ++i)
    ops += (i ? "," : "") + std::string("{\"action\":\"write\",\"mode\":420,\"path\":\"f") + std::to_string(i) + "\"}";
  return "{\"id\":2,\"jsonrpc\":\"2.0\",\"result\":{\"effects\":[{\"failure_policy\":\"required\",\"kind\":\"sync\","
         "\"target\":\"managed-root\"}],\"operations\":[" +
         ops + "]}}";
}

// A dot.operations batch of `n` writes of distinct paths, from f<first>.
std::string operations_batch(std::size_t first, std::size_t n) {
  std::string ops;
  for (std::size_t i = first; i < first + n; ++i)
    ops += (i > first ? "," : "") + std::string("{\"action\":\"write\",\"mode\":420,\"path\":\"f") +
           std::to_string(i) + "\"}";
  return frame("{\"jsonrpc\":\"2.0\",\"method\":\"dot.operations\",\"params\":{\"operations\":[" + ops + "]}}");
}

// A dot.artifacts batch of one artifact claim.
std::string artifacts_batch() {
  return frame(
      "{\"jsonrpc\":\"2.0\",\"method\":\"dot.artifacts\",\"params\":{\"artifacts\":[{\"path\":\"f0\",\"sha256\":\"" +
      std::string(64, 'a') + "\",\"size\":1}]}}");
}

// `n` artifact claims of `size` bytes each, as a materialize result.
std::string claims(std::size_t n, std::uint64_t size) {
  std::string arts;
  for (std::size_t i = 0; i < n; ++i)
    arts += (i ? "," : "") + std::string("{\"path\":\"f") + std::to_string(i) + "\",\"sha256\":\"" +
            std::string(64, 'a') + "\",\"size\":" + std::to_string(size) + "}";
  return "{\"id\":3,\"jsonrpc\":\"2.0\",\"result\":{\"artifacts\":[" + arts + "]}}";
}

// The honest body padded with spaces after the value to exactly
// max_frame_bytes: legal, and four of them pass max_stdout_bytes.
std::string padded(std::string body) {
  body.append(kLimits.max_frame_bytes - body.size(), ' ');
  return frame(body);
}

const Case kGeneralCases[] = {
    // ---- the echo (DOT_E_PLUGIN_IDENTITY before planning) ----
    {"general_echo_limits_changed",
     RUN(AT(1, frame(replace(o.body, "\"max_operations\":100000", "\"max_operations\":100001")))),
     Code::PluginIdentity, "limits", "limits", false},
    {"general_echo_limits_missing", RUN(AT(1, frame(drop(o.body, "limits", '}')))), Code::PluginIdentity, "limits",
     "\"limits\"", false},
    {"general_echo_limit_missing", RUN(AT(1, frame(replace(o.body, "\"max_log_messages\":1000,", "")))),
     Code::PluginIdentity, "limits", "max_log_messages", false},
    {"general_echo_limit_added",
     RUN(AT(1, frame(replace(o.body, "\"max_log_messages\":1000,", "\"max_hooks\":1,\"max_log_messages\":1000,")))),
     Code::PluginIdentity, "limits", "max_hooks", false},
    {"general_echo_inputs_changed", RUN(AT(1, frame(replace(o.body, "\"inputs\":[\"/in\"]", "\"inputs\":[\"/\"]")))),
     Code::PluginIdentity, "inputs", "inputs", false},
    {"general_echo_inputs_missing", RUN(AT(1, frame(drop(o.body, "inputs", ']')))), Code::PluginIdentity, "inputs",
     "\"inputs\"", false},
    {"general_echo_member_added", RUN(AT(1, frame(replace(o.body, "\"id\":\"", "\"hooks\":[],\"id\":\"")))),
     Code::PluginIdentity, "echo", "hooks", false},
    {"general_echo_wrong_id",
     RUN(AT(1, frame(replace(o.body, "\"org.dot.hostile\"", "\"org.dot.mirror\"")))), Code::PluginIdentity, "id",
     "org.dot.mirror", false},
    {"general_echo_profile_hello",
     RUN(AT(1, frame(replace(o.body, "\"org.dot.dpp/v1\"", "\"org.dot.hello/v1\"")))), Code::PluginIdentity,
     "profile", "org.dot.hello/v1", false},
    {"general_echo_capability_added",
     RUN(AT(1, frame(replace(o.body, "\"batches\"]", "\"batches\",\"exec\"]")))), Code::PluginIdentity,
     "capabilities", "exec", false},
    {"general_echo_digests_before_log",
     RUN(AT(1, frame(replace(o.body, "\"validate\",\"log\"", "\"validate\",\"digests\",\"log\""))),
         Options{.log = true}),
     Code::PluginIdentity, "capabilities", "digests", false},
    // ---- declared digests (docs/spec/dpp-general.md, "Declared digests") ----
    {"general_digest_not_negotiated",
     RUN(AT(2, frame(replace(o.body, "\"path\":\"etc/app.conf\"}",
                             "\"path\":\"etc/app.conf\",\"sha256\":\"" + std::string(64, 'a') + "\",\"size\":12}")))),
     Code::Protocol, "unknown_field", "sha256", false},
    // ---- dot.log ----
    {"general_log_without_negotiation", RUN(AT(2, log_frame("info", "planning") + frame(o.body))), Code::Protocol,
     "log_not_negotiated", "during dot.plan without negotiating log", false},
    {"general_log_during_initialize_without_negotiation",
     RUN(AT(1, log_frame("info", "starting") + frame(o.body))), Code::Protocol, "log_not_negotiated",
     "during dot.initialize", false},
    {"general_log_after_shutdown", RUN(AT(5, frame(o.body) + log_frame("info", "bye")), Options{.log = true}),
     Code::Protocol, "trailing_output", "after its dot.shutdown response", false},
    {"general_log_1001",
     RUN(AT(2,
            [] {
              std::string logs;
              for (int i = 0; i <= 1000; ++i) logs += log_frame("debug", std::to_string(i));
              return logs;
            }() + frame(o.body)),
         Options{.log = true}),
     Code::Protocol, "log_limit", "more than 1000 dot.log messages", false},
    {"general_log_oversized", RUN(AT(2, log_frame("info", std::string(4097, 'x')) + frame(o.body)), Options{.log = true}),
     Code::Protocol, "log_message", "4097 bytes", false},
    {"general_log_bad_level", RUN(AT(2, log_frame("fatal", "x") + frame(o.body)), Options{.log = true}),
     Code::Protocol, "log_level", "fatal", false},
    {"general_log_with_id",
     RUN(AT(2, frame("{\"id\":2,\"jsonrpc\":\"2.0\",\"method\":\"dot.log\",\"params\":{\"level\":\"info\","
                     "\"message\":\"x\"}}") +
                   frame(o.body)),
         Options{.log = true}),
     Code::Protocol, "method_in_response", "method", false},
    {"general_notification_other_method",
     RUN(AT(2, frame("{\"jsonrpc\":\"2.0\",\"method\":\"dot.progress\",\"params\":{}}") + frame(o.body)),
         Options{.log = true}),
     Code::Protocol, "notification_method", "dot.progress", false},
    // ---- error responses ----
    {"general_error_response",
     RUN(AT(2, error_frame("2", "{\"code\":-32001,\"data\":{\"path\":\"/src\"},\"message\":\"source folder is gone\"}"))),
     Code::PluginError, "error_response", "plugin org.dot.hostile answered dot.plan with error -32001: source folder is gone",
     false},
    // Not hooked at all: the runtime answers a failing handler itself.
    {"general_handler_fails", RUN(+[](Out& o) { return o.honest(); }, Options{.fail_plan = true}), Code::PluginError,
     "error_response", "answered dot.plan with error -32000: Plugin error: the source folder /src is gone", false},
    {"general_error_message_oversized",
     RUN(AT(2, error_frame("2", "{\"code\":-32001,\"message\":\"" + std::string(4097, 'm') + "\"}"))),
     Code::Protocol, "error_message", "4097 bytes", false},
    {"general_error_data_oversized",
     RUN(AT(2, error_frame("2", "{\"code\":-32001,\"data\":\"" + std::string(4095, 'd') + "\",\"message\":\"m\"}"))),
     Code::Protocol, "error_data", "4097 bytes", false},
    {"general_error_for_id_null",
     RUN(AT(2, error_frame("null", "{\"code\":-32600,\"message\":\"Invalid request\"}"))), Code::Protocol, "id",
     "id null", false},
    // ---- negotiated limits ----
    {"general_frame_over_max", RUN(AT(2, std::string("Content-Length: 16777217\r\n\r\n"))), Code::Protocol, "length",
     "over the limit of 16777216 bytes", false},
    {"general_stdout_over_max", RUN(+[](Out& o) { return o.write(padded(o.body)); }), Code::Protocol,
     "stdout_limit", "more than 67108864 bytes", false},
    {"general_stderr_over_max",
     +[] {
       std::string noise(65537, 'e');
       if (!write_all(STDERR_FILENO, noise, "stderr").ok()) return 1;
       return serve_hooked(+[](Out& o) { return o.honest(); });
     },
     Code::Protocol, "stderr_limit", "more than 65536 bytes", false},
    {"general_operations_over_max", RUN(AT(2, frame(plan_with(100001)))), Code::Protocol, "max_operations",
     "100001 operations", false},
    {"general_claim_over_max_file", RUN(AT(3, frame(claims(1, 16777217)))), Code::Protocol, "max_file_bytes",
     "16777217 bytes", false},
    {"general_claims_over_max_total", RUN(AT(3, frame(claims(65, 16777216)))), Code::Protocol, "max_total_bytes",
     "1090519040 bytes", false},
    // ---- batches (docs/spec/dpp-general.md, "Batches") ----
    {"general_batch_without_negotiation",
     +[] {
       return serve_hooked(+[](Out& o) -> Status {
         if (o.id == 1) return o.write(frame(replace(o.body, ",\"batches\"]", "]")));
         if (o.id == 2) return o.write(operations_batch(0, 1) + frame(o.body));
         return o.honest();
       });
     },
     Code::Protocol, "batch_not_negotiated", "dot.operations during dot.plan without negotiating batches", false},
    {"general_operations_batch_during_initialize", RUN(AT(1, operations_batch(0, 1) + frame(o.body))),
     Code::Protocol, "notification_method", "dot.operations during dot.initialize; it belongs to dot.plan", false},
    {"general_operations_batch_during_materialize", RUN(AT(3, operations_batch(0, 1) + frame(o.body))),
     Code::Protocol, "notification_method", "dot.operations during dot.materialize; it belongs to dot.plan", false},
    {"general_artifacts_batch_during_plan", RUN(AT(2, artifacts_batch() + frame(o.body))), Code::Protocol,
     "notification_method", "dot.artifacts during dot.plan; it belongs to dot.materialize", false},
    {"general_batches_over_max_operations",
     RUN(AT(2, operations_batch(0, 50000) + operations_batch(50000, 50000) + frame(o.body))), Code::Protocol,
     "max_operations", "1 operations after 100000 in earlier batches", false},
    {"general_batch_operation_without_path",
     RUN(AT(2, frame("{\"jsonrpc\":\"2.0\",\"method\":\"dot.operations\",\"params\":{\"operations\":[{"
                     "\"action\":\"write\",\"mode\":420}]}}") +
                   frame(o.body))),
     Code::Protocol, "missing_field", "dot.operations during dot.plan", false},
    {"general_batch_with_hooks",
     RUN(AT(2, frame("{\"jsonrpc\":\"2.0\",\"method\":\"dot.operations\",\"params\":{\"hooks\":[],"
                     "\"operations\":[]}}") +
                   frame(o.body))),
     Code::Protocol, "unknown_field", "hooks", false},
    {"general_plan_with_hooks",
     RUN(AT(2, frame(replace(o.body, "\"operations\":", "\"hooks\":[],\"operations\":")))), Code::Protocol,
     "unknown_field", "hooks", false},
    // ---- the deadline (tests/dpp/test_hostile_general.cpp sends deadline_ms
    // 2000 for these; the session takes its deadline from what it sends) ----
    {"general_sleep_past_deadline", +[]() -> int { sleep_forever(); }, Code::Timeout, "timeout", "waiting for dot.initialize",
     true},
    {"general_hang_mid_frame",
     RUN(+[](Out& o) -> Status {
       std::string f = frame(o.body);
       (void)o.write(std::string_view(f).substr(0, f.size() / 2));
       sleep_forever();
     }),
     Code::Timeout, "timeout", "waiting for dot.initialize", true},
};

// A dot.log already written in this process (general_log_when_not_offered).
bool g_logged = false;

// The broken plugins of `dot-core dpp conform` (tests/dpp/test_conformance.cpp
// says which of its cases each must fail): core's own lifecycle with log
// offered completes for each; one answer the profile requires is wrong.
const Case kConformCases[] = {
    {"general_writes_outside_stage",
     RUN(
         +[](Out& o) { return o.honest(); }, Options{.write_outside = true}),
     Code::PathEscape, "outside_stage", "escaped.txt", false},
    // The -32700 error is not sent: the runtime gives up (exit 1).
    {"general_silent_on_parse_error", RUN(+[](Out& o) -> Status {
       if (o.body.find("\"code\":-32700") != std::string::npos)
         return make_error(base::ErrorKind::Write, "the parse error is not answered");
       return o.honest();
     }),
     Code::Protocol, "eof", "without", false},
    {"general_result_for_unknown_method", RUN(+[](Out& o) -> Status {
       if (o.body.find("\"code\":-32601") == std::string::npos) return o.honest();
       return o.write(frame("{\"id\":" + std::to_string(o.id) + ",\"jsonrpc\":\"2.0\",\"result\":{}}"));
     }),
     Code::Protocol, "error_response", "got a result", false},
    // Logs during dot.plan whether or not log was negotiated.
    {"general_log_when_not_offered",
     RUN(
         +[](Out& o) -> Status {
           if (o.id == 0) g_logged = true;
           if (o.id != 2 || g_logged) return o.honest();
           return o.write(log_frame("info", "planning") + frame(o.body));
         },
         Options{.log = true}),
     Code::Protocol, "log_not_negotiated", "without negotiating log", false},
    // Echoes an id no root could register it with (no '.'): wrong without
    // --id too (every case's lifecycle checks the echo). Only the echo is
    // changed: the error answers to conform's probes (id 1 too) stay honest.
    {"general_echo_malformed_id", RUN(+[](Out& o) -> Status {
       if (o.id != 1 || o.body.find("\"org.dot.hostile\"") == std::string::npos) return o.honest();
       return o.write(frame(replace(o.body, "\"org.dot.hostile\"", "\"hostile\"")));
     }),
     Code::PluginIdentity, "id", "which is not a plugin id: it has no '.'", false},
    // Exit 0 where the profile requires 1: at end of input before dot.shutdown.
    // Declares a digest other than the bytes it stages: every case that
    // offers digests fails; without them it is honest.
    {"general_declares_a_wrong_digest",
     RUN(
         +[](Out& o) { return o.honest(); }, Options{.wrong_digest = true}),
     Code::ArtifactMismatch, "declared_digest", "declared", false},
    {"general_exit_0_at_early_eof",
     +[] {
       int rc = serve_hooked(+[](Out& o) { return o.honest(); });
       return rc == 1 ? 0 : rc;
     },
     Code::Protocol, "exit_status", "exit 0", false},
};

#undef AT
#undef RUN

}  // namespace

std::span<const Case> conform_cases() { return kConformCases; }

const Case* find_conform(const char* name) {
  for (const Case& c : kConformCases)
    if (std::string_view(c.name) == name) return &c;
  return nullptr;
}

std::span<const Case> general_cases() { return kGeneralCases; }

int run_general_honest() {
  return serve_hooked(
      +[](Out& o) { return o.honest(); }, Options{.log = true});
}

const Case* find_general(const char* name) {
  for (const Case& c : kGeneralCases)
    if (std::string_view(c.name) == name) return &c;
  return nullptr;
}

}  // namespace dot::dpp::hostile
