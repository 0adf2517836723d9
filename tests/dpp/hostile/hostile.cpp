// The behaviours of the hostile plugins. Each starts from the honest
// org.dot.hello answers (HelloPlugin) and breaks exactly one rule.
#include "hostile.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include "dot/dpp/plugin.h"

namespace dot::dpp::hostile {
namespace {

constexpr int kHonest = -1;   // answer this request honestly
constexpr int kHandled = -2;  // the hook wrote its own answer

struct Ctx {
  PluginConnection& conn;
  const Request& req;
  std::string honest;  // the honest response body
  bool is(Method m) const { return req.method == m; }
};
using Hook = int (*)(Ctx&);

void write_raw(Ctx& c, std::string_view bytes) { (void)c.conn.write_raw(bytes); }

// Runs a session answering honestly except where `hook` says otherwise.
// Returns `final_exit` when the host closes stdin after the last answer.
int session(Hook hook, int final_exit = 0) {
  PluginConnection conn(STDIN_FILENO, STDOUT_FILENO);
  HelloPlugin hello;
  for (;;) {
    auto in = conn.next_request();
    if (!in.ok()) {
      std::fprintf(stderr, "hostile: %s\n", in.error().line().c_str());
      return 1;
    }
    if (!in->has_value()) return final_exit;
    const Request& req = (*in)->request;
    Result<jcs::Node> node = jcs::Node::null();
    switch (req.method) {
      case Method::Initialize: {
        auto p = decode_initialize_params(req.params);
        if (!p.ok()) return 1;
        auto r = hello.initialize(*p);
        if (!r.ok()) return 1;
        node = to_node(*r);
        break;
      }
      case Method::Plan: node = to_node(*hello.plan()); break;
      case Method::Materialize: {
        auto p = decode_materialize_params(req.params);
        if (!p.ok()) return 1;
        auto r = hello.materialize(*p);
        if (!r.ok()) return 1;
        node = to_node(*r);
        break;
      }
      case Method::Validate: node = to_node(*hello.validate()); break;
      case Method::Shutdown: node = to_node(*hello.shutdown()); break;
    }
    Ctx ctx{conn, req, *encode_result(req.id, *node)};
    int r = hook(ctx);
    if (r == kHonest) {
      if (!conn.write_frame(ctx.honest).ok()) return 1;
    } else if (r != kHandled) {
      return r;
    }
  }
}

// Answers `m` with `body` in place of the honest answer.
#define AT(m, expr)                                  \
  session(+[](Ctx& c) -> int {                       \
    if (!c.is(Method::m)) return kHonest;            \
    write_raw(c, expr);                              \
    return kHandled;                                 \
  })

[[noreturn]] void sleep_forever() {
  for (;;) ::pause();
}

// Forks a child that keeps running after the plugin exits; with `own_session`
// it leaves the process group with setsid. The child writes its pid to
// survivor.pid in the stage (the working directory) before the plugin goes on.
void leave_a_child(bool own_session) {
  int p[2];
  if (::pipe(p) != 0) std::exit(98);
  pid_t pid = ::fork();
  if (pid == 0) {
    if (own_session) ::setsid();
    int fd = ::open("survivor.pid", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    std::string text = std::to_string(::getpid());
    if (fd >= 0) {
      ssize_t ignored = ::write(fd, text.data(), text.size());
      (void)ignored;
      ::close(fd);
    }
    char c = 1;
    ssize_t ignored = ::write(p[1], &c, 1);
    (void)ignored;
    ::close(p[0]);
    ::close(p[1]);
    sleep_forever();
  }
  char c;
  ssize_t ignored = ::read(p[0], &c, 1);
  (void)ignored;
  ::close(p[0]);
  ::close(p[1]);
}

std::string flip_nonce(std::string body) {
  auto pos = body.find("\"nonce\":\"");
  if (pos == std::string::npos) std::exit(99);
  char& ch = body[pos + 9];
  ch = ch == 'a' ? 'b' : 'a';
  return body;
}

std::string drop_member(std::string body, std::string_view key) {
  auto pos = body.find("\"" + std::string(key) + "\":");
  if (pos == std::string::npos) std::exit(99);
  auto end = body.find("\",", pos);
  if (end == std::string::npos) std::exit(99);
  return body.erase(pos, end + 2 - pos);
}

std::string nested(int arrays) {
  return std::string(static_cast<std::size_t>(arrays), '[') + std::string(static_cast<std::size_t>(arrays), ']');
}

const Case kCases[] = {
    // ---- framing ----
    {"no_output", +[] { return 0; }, Code::Protocol, "eof", "without answering dot.initialize", false},
    // The same refusal as no_output, but the plugin is alive until the
    // request has landed in its stdin (tests/dpp/test_hostile.cpp forces both).
    {"exits_after_reading_the_request", +[] { return session(+[](Ctx&) -> int { return 0; }); }, Code::Protocol,
     "eof", "without answering dot.initialize", false},
    {"garbage_before_header", +[] { return AT(Initialize, "garbage" + frame(c.honest)); }, Code::Protocol, "header",
     "expects", false},
    {"lf_only_line_ends",
     +[] { return AT(Initialize, "Content-Length: " + std::to_string(c.honest.size()) + "\n\n" + c.honest); },
     Code::Protocol, "header", "LF-only", false},
    {"lowercase_header_name",
     +[] { return AT(Initialize, "content-length: " + std::to_string(c.honest.size()) + "\r\n\r\n" + c.honest); },
     Code::Protocol, "header", "expects 'C'", false},
    {"extra_content_type_header",
     +[] {
       return AT(Initialize, "Content-Length: " + std::to_string(c.honest.size()) +
                                 "\r\nContent-Type: application/json\r\n\r\n" + c.honest);
     },
     Code::Protocol, "extra_header", "second header line", false},
    {"length_plus_sign",
     +[] { return AT(Initialize, "Content-Length: +" + std::to_string(c.honest.size()) + "\r\n\r\n" + c.honest); },
     Code::Protocol, "length", "sign", false},
    {"length_leading_space",
     +[] { return AT(Initialize, "Content-Length:  " + std::to_string(c.honest.size()) + "\r\n\r\n" + c.honest); },
     Code::Protocol, "length", "whitespace", false},
    {"length_leading_zero",
     +[] { return AT(Initialize, "Content-Length: 0" + std::to_string(c.honest.size()) + "\r\n\r\n" + c.honest); },
     Code::Protocol, "length", "leading zero", false},
    {"length_65537", +[] { return AT(Initialize, "Content-Length: 65537\r\n\r\n" + std::string(65537, ' ')); },
     Code::Protocol, "length", "over the limit", false},
    {"length_minus_one", +[] { return AT(Initialize, "Content-Length: -1\r\n\r\n" + c.honest); }, Code::Protocol,
     "length", "sign", false},
    {"length_20_digits", +[] { return AT(Initialize, "Content-Length: 12345678901234567890\r\n\r\n" + c.honest); },
     Code::Protocol, "length", "over the limit", false},
    {"short_body_then_eof",
     +[] {
       return session(+[](Ctx& c) -> int {
         if (!c.is(Method::Initialize)) return kHonest;
         write_raw(c, "Content-Length: " + std::to_string(c.honest.size()) + "\r\n\r\n" +
                          c.honest.substr(0, c.honest.size() - 5));
         return 0;
       });
     },
     Code::Protocol, "early_eof", "body bytes", false},
    {"body_longer_than_length", +[] { return AT(Initialize, frame(c.honest) + "{\"extra\":1}"); }, Code::Protocol,
     "unsolicited", "before it was sent dot.plan", false},
    {"invalid_utf8", +[] { return AT(Initialize, frame(replace(c.honest, "org.dot.hello\"", "org.dot.hello\xff\""))); },
     Code::Protocol, "utf8", "", false},
    {"depth_17",
     +[] { return AT(Initialize, frame("{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{\"x\":" + nested(15) + "}}")); },
     Code::Protocol, "depth", "", false},
    {"duplicate_key", +[] { return AT(Initialize, frame(replace(c.honest, "{\"id\":1,", "{\"id\":1,\"id\":1,"))); },
     Code::Protocol, "duplicate_key", "id", false},
    {"duplicate_key_escaped",
     +[] { return AT(Initialize, frame(replace(c.honest, "\"result\":{", "\"result\":{\"a\":1,\"\\u0061\":2,"))); },
     Code::Protocol, "duplicate_key", "a", false},
    // ---- JSON-RPC envelope and messages ----
    {"unknown_field", +[] { return AT(Initialize, frame(replace(c.honest, "\"result\":{", "\"result\":{\"extra\":true,"))); },
     Code::Protocol, "unknown_field", "extra", false},
    {"missing_field", +[] { return AT(Initialize, frame(drop_member(c.honest, "nonce"))); }, Code::Protocol,
     "missing_field", "nonce", false},
    {"id_uppercase", +[] { return AT(Initialize, frame(replace(c.honest, "{\"id\":1,", "{\"ID\":1,"))); },
     Code::Protocol, "unknown_field", "\"ID\"", false},
    {"jsonrpc_1_0", +[] { return AT(Initialize, frame(replace(c.honest, "\"jsonrpc\":\"2.0\"", "\"jsonrpc\":\"1.0\""))); },
     Code::Protocol, "jsonrpc_version", "2.0", false},
    {"id_zero", +[] { return AT(Initialize, frame(replace(c.honest, "{\"id\":1,", "{\"id\":0,"))); }, Code::Protocol,
     "id", "not a positive integer", false},
    {"id_negative", +[] { return AT(Initialize, frame(replace(c.honest, "{\"id\":1,", "{\"id\":-1,"))); },
     Code::Protocol, "id", "not a positive integer", false},
    {"id_string", +[] { return AT(Initialize, frame(replace(c.honest, "{\"id\":1,", "{\"id\":\"1\","))); },
     Code::Protocol, "id", "positive integer", false},
    {"id_repeated", +[] { return AT(Plan, frame(replace(c.honest, "{\"id\":2,", "{\"id\":1,"))); }, Code::Protocol,
     "id_mismatch", "expected 2", false},
    {"id_out_of_order", +[] { return AT(Initialize, frame(replace(c.honest, "{\"id\":1,", "{\"id\":2,"))); },
     Code::Protocol, "id_mismatch", "expected 1", false},
    {"notification",
     +[] {
       return AT(Initialize,
                 frame("{\"jsonrpc\":\"2.0\",\"method\":\"dot.log\",\"params\":{\"message\":\"hi\"}}") + frame(c.honest));
     },
     Code::Protocol, "notification", "notifications are not allowed", false},
    {"batch", +[] { return AT(Initialize, frame("[" + c.honest + "]")); }, Code::Protocol, "batch", "batch", false},
    {"response_with_method",
     +[] {
       return AT(Initialize,
                 frame(replace(c.honest, "\"jsonrpc\":\"2.0\",", "\"jsonrpc\":\"2.0\",\"method\":\"dot.initialize\",")));
     },
     Code::Protocol, "method_in_response", "method", false},
    {"error_object",
     +[] { return AT(Plan, frame(*encode_error(2, -32000, "refusing to plan"))); }, Code::Protocol, "error_response",
     "refusing to plan", false},
    {"protocol_as_string", +[] { return AT(Initialize, frame(replace(c.honest, "\"protocol\":1", "\"protocol\":\"1\""))); },
     Code::Protocol, "wrong_type", "protocol", false},
    {"valid_false", +[] { return AT(Validate, frame(replace(c.honest, "true", "false"))); }, Code::Protocol,
     "not_valid", "valid:false", false},
    {"exits_before_shutdown",
     +[] { return session(+[](Ctx& c) -> int { return c.is(Method::Shutdown) ? 0 : kHonest; }); }, Code::Protocol,
     "eof", "without answering dot.shutdown", false},
    // ---- identity echo ----
    {"wrong_nonce", +[] { return AT(Initialize, frame(flip_nonce(c.honest))); }, Code::PluginIdentity, "nonce",
     "nonce", false},
    {"wrong_profile", +[] { return AT(Initialize, frame(replace(c.honest, "org.dot.hello/v1", "org.dot.hello/v2"))); },
     Code::PluginIdentity, "profile", "org.dot.hello/v2", false},
    {"wrong_protocol", +[] { return AT(Initialize, frame(replace(c.honest, "\"protocol\":1", "\"protocol\":2"))); },
     Code::PluginIdentity, "protocol", "protocol 2", false},
    {"wrong_assurance",
     +[] { return AT(Initialize, frame(replace(c.honest, "\"assurance\":\"audit\"", "\"assurance\":\"process\""))); },
     Code::PluginIdentity, "assurance", "process", false},
    {"wrong_plugin_id",
     +[] { return AT(Initialize, frame(replace(c.honest, "\"id\":\"org.dot.hello\"", "\"id\":\"org.dot.evil\""))); },
     Code::PluginIdentity, "id", "org.dot.evil", false},
    {"capabilities_reordered",
     +[] { return AT(Initialize, frame(replace(c.honest, "\"materialize\",\"plan\"", "\"plan\",\"materialize\""))); },
     Code::PluginIdentity, "capabilities", "order matters", false},
    {"capabilities_dropped", +[] { return AT(Initialize, frame(replace(c.honest, ",\"validate\"", ""))); },
     Code::PluginIdentity, "capabilities", "dropped capability \"validate\"", false},
    {"capabilities_added",
     +[] { return AT(Initialize, frame(replace(c.honest, ",\"validate\"", ",\"validate\",\"exec\""))); },
     Code::PluginIdentity, "capabilities", "added capability \"exec\"", false},
    // ---- hello allowlists ----
    {"names_outside_allowlist", +[] { return AT(Plan, frame(replace(c.honest, "welcome.txt", "other.txt"))); },
     Code::Policy, "names", "other.txt", false},
    {"name_escapes_root", +[] { return AT(Plan, frame(replace(c.honest, "\"hello.txt\"", "\"../hello.txt\""))); },
     Code::PathEscape, "slot_name", "../hello.txt", false},
    {"extra_effect",
     +[] {
       return AT(Plan, frame(replace(c.honest, "\"effects\":[",
                                     "\"effects\":[{\"failure_policy\":\"required\",\"kind\":\"sync\",\"target\":"
                                     "\"managed-root\"},")));
     },
     Code::Policy, "effects", "exactly one", false},
    {"wrong_effect_policy", +[] { return AT(Plan, frame(replace(c.honest, "\"required\"", "\"best-effort\""))); },
     Code::Policy, "effects", "best-effort", false},
    {"no_effect",
     +[] {
       return AT(Plan, frame(replace(c.honest,
                                     "{\"failure_policy\":\"required\",\"kind\":\"sync\",\"target\":\"managed-root\"}",
                                     "")));
     },
     Code::Policy, "effects", "exactly one", false},
    {"artifact_missing",
     +[] {
       return session(+[](Ctx& c) -> int {
         if (!c.is(Method::Materialize)) return kHonest;
         auto pos = c.honest.find("},{");
         write_raw(c, frame(c.honest.substr(0, pos + 1) + "]}}"));
         return kHandled;
       });
     },
     Code::ArtifactMismatch, "count", "1 artifacts for 2", false},
    // ---- limits and process handling ----
    {"stdout_600k", +[] { return AT(Initialize, frame(c.honest) + std::string(600 * 1024, ' ')); }, Code::Protocol,
     "unsolicited", "before it was sent dot.plan", false},
    {"stderr_9k",
     +[] {
       std::string noise(9 * 1024, 'e');
       ssize_t ignored = ::write(STDERR_FILENO, noise.data(), noise.size());
       (void)ignored;
       return session(+[](Ctx&) -> int { return kHonest; });
     },
     Code::Protocol, "stderr_limit", "8192", false},
    {"sleep_past_deadline",
     +[] {
       return session(+[](Ctx& c) -> int {
         if (c.is(Method::Plan)) sleep_forever();
         return kHonest;
       });
     },
     Code::Timeout, "timeout", "dot.plan", true},
    {"hang_mid_frame",
     +[] {
       return session(+[](Ctx& c) -> int {
         if (!c.is(Method::Plan)) return kHonest;
         std::string f = frame(c.honest);
         write_raw(c, f.substr(0, f.size() / 2));
         sleep_forever();
       });
     },
     Code::Timeout, "timeout", "dot.plan", true},
    {"output_after_shutdown", +[] { return AT(Shutdown, frame(c.honest) + frame(c.honest)); }, Code::Protocol,
     "trailing_output", "after its dot.shutdown response", false},
    {"exit_3_after_clean_session", +[] { return session(+[](Ctx&) -> int { return kHonest; }, 3); }, Code::Protocol,
     "exit_status", "exit 3", false},
    {"grandchild_setsid_keeps_running",
     +[] {
       leave_a_child(true);
       return session(+[](Ctx&) -> int { return kHonest; });
     },
     Code::Protocol, "survivor", "left 1 process running", false},
    {"child_in_group_keeps_running",
     +[] {
       leave_a_child(false);
       return session(+[](Ctx&) -> int { return kHonest; });
     },
     Code::Protocol, "survivor", "left 1 process running", false},
    {"sigkill_mid_frame",
     +[] {
       return session(+[](Ctx& c) -> int {
         if (!c.is(Method::Plan)) return kHonest;
         std::string f = frame(c.honest);
         write_raw(c, f.substr(0, f.size() / 2));
         ::raise(SIGKILL);
         return 1;
       });
     },
     // The death explains the half frame: the host reports the signal.
     Code::Protocol, "killed", "killed by SIGKILL (signal 9) while core waited for dot.plan", false},
    {"stdout_closed_early",
     +[] {
       ::close(STDOUT_FILENO);
       sleep_forever();
       return 0;
     },
     Code::Protocol, "eof", "without answering dot.initialize", false},
    {"stdout_closed_after_initialize",
     +[] {
       return session(+[](Ctx& c) -> int {
         if (!c.is(Method::Plan)) return kHonest;
         ::close(STDOUT_FILENO);
         sleep_forever();
       });
     },
     Code::Protocol, "eof", "without answering dot.plan", false},
};

#undef AT

}  // namespace

std::string frame(std::string_view body) {
  return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

std::string replace(std::string s, std::string_view from, std::string_view to) {
  auto pos = s.find(from);
  if (pos == std::string::npos) {
    std::fprintf(stderr, "hostile: \"%.*s\" not in the honest body\n", static_cast<int>(from.size()), from.data());
    std::exit(99);
  }
  return s.replace(pos, from.size(), to);
}

std::span<const Case> cases() { return kCases; }

const Case* find(const char* name) {
  for (const Case& c : kCases)
    if (std::strcmp(c.name, name) == 0) return &c;
  return nullptr;
}

}  // namespace dot::dpp::hostile

extern "C" int dot_dpp_run_hostile(const char* name) {
  const auto* c = dot::dpp::hostile::find(name);
  if (c == nullptr) c = dot::dpp::hostile::find_general(name);
  if (c == nullptr) c = dot::dpp::hostile::find_conform(name);
  if (c == nullptr) {
    std::fprintf(stderr, "hostile: unknown case %s\n", name);
    return 99;
  }
  return c->run();
}
