// dot-core adpp conform and frames decode --format adpp, run as processes.
#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "dot/adpp/conformance.h"
#include "dot/adpp/frame.h"
#include "dot/adpp/messages.h"
#include "dot/base/fd.h"
#include "dot/base/json.h"
#include "dot/base/process.h"

namespace dot::adpp {
namespace {

const std::string kCore = DOT_BIN_DIR "/dot-core";
const std::string kSim = DOT_BIN_DIR "/adpp-sim";
const std::string kBroken = DOT_BIN_DIR "/adpp-broken";

struct Ran {
  int code = -1;
  std::string out, err;
};

// A scratch directory per test, removed with everything in it.
class Scratch {
 public:
  Scratch() {
    char tmpl[] = "/tmp/adpp-cli-XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    EXPECT_NE(d, nullptr);
    dir_ = d != nullptr ? d : "/tmp";
  }
  ~Scratch() { std::filesystem::remove_all(dir_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs argv with stdin from `in_path` (or /dev/null), capturing stdout and stderr in files.
Ran run(const Scratch& scratch, std::vector<std::string> argv, const std::string& in_path = "/dev/null") {
  const std::string& dir = scratch.dir();
  std::string script = "exec \"$@\" <\"$IN\" >\"$D/out\" 2>\"$D/err\"";
  std::vector<std::string> full = {"/bin/sh", "-c", script, "sh"};
  full.insert(full.end(), argv.begin(), argv.end());
  SpawnOptions o;
  o.argv = full;
  o.path = "/bin/sh";
  o.env = {"PATH=/usr/bin:/bin", "D=" + dir, "IN=" + in_path};
  o.stdin_mode = o.stdout_mode = o.stderr_mode = StdioMode::DevNull;
  auto child = spawn(o);
  EXPECT_TRUE(child.ok());
  Ran r;
  if (!child.ok()) return r;
  auto st = child->wait_until(Clock::now() + std::chrono::seconds(30));
  EXPECT_TRUE(st.has_value());
  if (st) r.code = st->code;
  r.out = slurp(dir + "/out");
  r.err = slurp(dir + "/err");
  return r;
}

std::string write_tmp(const Scratch& scratch, const std::string& name, const std::string& bytes) {
  std::string path = scratch.dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::size_t cases_in(Suite suite) {
  std::size_t n = 0;
  for (const auto& c : conformance_cases()) n += c.suite == suite ? 1 : 0;
  return n;
}

TEST(AdppCli, ConformPassesAdppSim) {
  Scratch s;
  auto r = run(s, {kCore, "adpp", "conform", "--timeout", "10", "--", kSim, "--config", DOT_SOURCE_DIR "/adpp/examples/basic.textproto"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // The default run: the profile suite under its heading, no semantic case.
  EXPECT_EQ(r.out.rfind("profile: the framed-stdio profile v1\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("PASS hello_metadata"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("semantics"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(fmt::format("\n{} passed, 0 failed\n", cases_in(Suite::Profile))), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

// --suite all: each suite under its own heading with its own count, the
// total last; --json gives every case its suite and counts per suite.
TEST(AdppCli, ConformReportsTheSuitesApart) {
  Scratch s;
  auto r = run(s, {kCore, "adpp", "conform", "--suite", "all", "--timeout", "10", "--", kSim});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  auto profile = r.out.find("profile: the framed-stdio profile v1\n");
  auto semantics = r.out.find("semantics: the device semantics of ADPP v1\n");
  ASSERT_NE(profile, std::string::npos) << r.out;
  ASSERT_NE(semantics, std::string::npos) << r.out;
  EXPECT_LT(r.out.find("PASS hello_metadata"), semantics) << r.out;
  EXPECT_GT(r.out.find("PASS list_devices"), semantics) << r.out;
  EXPECT_NE(r.out.find(fmt::format("  semantics: {} passed, 0 failed\n", cases_in(Suite::Semantics))), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(fmt::format("\n{} passed, 0 failed\n", conformance_cases().size())), std::string::npos) << r.out;

  auto j = run(s, {kCore, "adpp", "conform", "--suite", "semantics", "--json", "--timeout", "10", "--", kBroken,
                   "value-for-unknown-signal"});
  EXPECT_EQ(j.code, 1) << j.out << j.err;
  auto doc = dot::json::parse(j.out);
  ASSERT_TRUE(doc.ok()) << j.out;
  EXPECT_NE(j.out.find("\"name\":\"read_signals_unknown_signal\",\"suite\":\"semantics\",\"passed\":false"),
            std::string::npos)
      << j.out;
  EXPECT_NE(j.out.find(fmt::format("\"suites\":{{\"semantics\":{{\"passed\":{},\"failed\":1}}}}",
                                   cases_in(Suite::Semantics) - 1)),
            std::string::npos)
      << j.out;
  EXPECT_EQ(j.out.find("\"suite\":\"profile\""), std::string::npos) << j.out;
}

// --list: every case, its suite, one line on what it checks; no provider needed.
TEST(AdppCli, ConformListNamesEveryCaseWithItsSuite) {
  Scratch s;
  auto r = run(s, {kCore, "adpp", "conform", "--list"});
  EXPECT_EQ(r.code, 0) << r.err;
  std::size_t lines = 0;
  for (char c : r.out) lines += c == '\n' ? 1 : 0;
  EXPECT_EQ(lines, conformance_cases().size()) << r.out;
  for (const auto& c : conformance_cases()) {
    auto at = r.out.find(std::string(c.name) + " ");
    ASSERT_NE(at, std::string::npos) << c.name;
    auto bol = r.out.rfind('\n', at);
    std::string line = r.out.substr(bol == std::string::npos ? 0 : bol + 1);
    line = line.substr(0, line.find('\n'));
    EXPECT_EQ(line.rfind(std::string(suite_name(c.suite)) + " ", 0), 0u) << line;
    EXPECT_NE(line.find(std::string(c.checks)), std::string::npos) << line;
  }
  auto j = run(s, {kCore, "adpp", "conform", "--list", "--json"});
  EXPECT_EQ(j.code, 0);
  EXPECT_NE(j.out.find("{\"name\":\"max_frame_request\",\"suite\":\"profile\",\"checks\":"), std::string::npos)
      << j.out;
}

// `--` after --case starts the provider's argv: `--config F` is the
// provider's (CLI11's list option used to eat the `--` and refuse --config).
TEST(AdppCli, DoubleDashAfterCaseStartsTheProviderArguments) {
  Scratch s;
  auto r = run(s, {kCore, "adpp", "conform", "--timeout", "10", "--case", "hello_metadata", "--", kSim, "--config",
                   DOT_SOURCE_DIR "/adpp/examples/basic.textproto"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("PASS hello_metadata"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 passed, 0 failed"), std::string::npos) << r.out;
  // One value per --case: a second word is the provider, not a second case.
  auto two = run(s, {kCore, "adpp", "conform", "--case", "hello_metadata", "extra", "--", kSim});
  EXPECT_EQ(two.code, 2) << two.out << two.err;
}

TEST(AdppCli, FramesDecodeRequiresADirection) {
  Scratch s;
  auto none = run(s, {kCore, "frames", "decode", "--format", "adpp", "-"});
  EXPECT_EQ(none.code, 2) << none.err;
  EXPECT_NE(none.err.find("--format adpp requires --direction"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("run 'dot-core frames decode --help'"), std::string::npos) << none.err;
  EXPECT_TRUE(none.out.empty()) << none.out;
  auto other = run(s, {kCore, "frames", "decode", "--format", "dpp", "--direction", "request", "-"});
  EXPECT_EQ(other.code, 2) << other.err;
}

TEST(AdppCli, ConformFailsABrokenProviderWithProtocolError) {
  Scratch s;
  auto r = run(s, {kCore, "adpp", "conform", "--timeout", "10", "--json", "--", kBroken, "answer-then-abort"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("{\"provider\":[", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\"passed\":false"), std::string::npos);
  EXPECT_NE(r.out.find("\"failed\":"), std::string::npos);
  EXPECT_EQ(r.err.rfind("DOT_E_PROTOCOL: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("cases failed; first: "), std::string::npos) << r.err;
}

// A provider's stderr is quoted in the case details: the human report shows
// its controls as \xNN, and the JSON report is JSON.
TEST(AdppCli, ConformShowsAProvidersStderrEscaped) {
  Scratch s;
  auto human = run(s, {kCore, "adpp", "conform", "--timeout", "10", "--", kBroken, "hostile-stderr"});
  EXPECT_EQ(human.code, 1);
  EXPECT_NE(human.out.find("\\x1b]52;c;ZXZpbA==\\x07 \\xc2\\x9b31m \\xff"), std::string::npos) << human.out;
  for (const std::string& text : {human.out, human.err})
    for (unsigned char c : text) EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << "raw byte " << int(c) << " in " << text;
  auto json = run(s, {kCore, "adpp", "conform", "--timeout", "10", "--json", "--", kBroken, "hostile-stderr"});
  EXPECT_EQ(json.code, 1);
  auto doc = dot::json::parse(json.out);
  ASSERT_TRUE(doc.ok()) << doc.error().line() << "\n" << json.out;
  EXPECT_NE(json.out.find("\\u001b]52;c;ZXZpbA==\\u0007"), std::string::npos) << json.out;
}

TEST(AdppCli, ConformTimeoutOptionShortensTheWindow) {
  Scratch s;
  auto start = Clock::now();
  auto r = run(s, {kCore, "adpp", "conform", "--timeout", "0.2", "--", kBroken, "hang"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find(fmt::format("\n0 passed, {} failed\n", cases_in(Suite::Profile))), std::string::npos) << r.out;
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(20));
}

TEST(AdppCli, ConformUsageAndHelp) {
  Scratch s;
  EXPECT_EQ(run(s, {kCore, "adpp", "conform"}).code, 2);
  EXPECT_EQ(run(s, {kCore, "adpp", "conform", "--timeout", "x", "--", kSim}).code, 2);
  EXPECT_EQ(run(s, {kCore, "adpp", "conform", "--suite", "devices", "--", kSim}).code, 2);
  auto help = run(s, {kCore, "adpp", "conform", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("Examples:"), std::string::npos);
  auto missing = run(s, {kCore, "adpp", "conform", "--", "/nonexistent/provider"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_EQ(missing.err.rfind("DOT_E_IO", 0), 0u) << missing.err;
}

std::string hello_frame(std::uint64_t id) {
  pb::Request r;
  r.set_request_id(id);
  r.mutable_hello()->set_protocol_version("v1");
  return *encode_frame(r);
}

TEST(AdppCli, FramesDecodeRequestsThenEnd) {
  Scratch s;
  std::string path = write_tmp(s, "req.bin", hello_frame(1) + hello_frame(18446744073709551615ull));
  auto r = run(s, {kCore, "frames", "decode", "--format", "adpp", "--direction", "request", path});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("{\"frame\":1,\"offset\":0,\"request_id\":\"1\",\"kind\":\"hello\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"request_id\":\"18446744073709551615\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("{\"end\":\"eof\",\"frames\":2}\n"), std::string::npos) << r.out;
  auto count = run(s, {kCore, "frames", "decode", "--format", "adpp", "--direction", "request", "--count", "-"}, path);
  EXPECT_EQ(count.out, "{\"end\":\"eof\",\"frames\":2}\n");
}

TEST(AdppCli, FramesDecodeErrors) {
  Scratch s;
  struct Case {
    std::string bytes, kind;
  } cases[] = {{hello_frame(1) + std::string("\x00\x00\x20\x00", 4), "length"},
               {std::string("\x00\x00\x00\x00", 4), "length"},
               {hello_frame(1) + std::string("\x40\x00\x00\x00", 4), "early_eof"},
               {std::string("\x07\x00\x00\x00garbage", 11), "parse"}};
  for (const auto& c : cases) {
    std::string path = write_tmp(s, "bad.bin", c.bytes);
    auto r = run(s, {kCore, "frames", "decode", "--format", "adpp", "--direction", "request", path});
    EXPECT_EQ(r.code, 1);
    auto last = r.out.substr(r.out.rfind("{\"error\""));
    EXPECT_EQ(last.rfind("{\"error\":\"" + c.kind + "\"", 0), 0u) << r.out;
    EXPECT_EQ(r.err.rfind("DOT_E_PROTOCOL: " + c.kind, 0), 0u) << r.err;
  }
}

TEST(AdppCli, FramesDecodeWhatAdppSimAnswered) {
  Scratch s;
  std::string in = write_tmp(s, "session.bin", hello_frame(1) + std::string("\x00\x00\x00\x00", 4) + hello_frame(2));
  auto sim = run(s, {kSim}, in);
  EXPECT_EQ(sim.code, 0) << sim.err;
  std::string out = write_tmp(s, "responses.bin", sim.out);
  auto r = run(s, {kCore, "frames", "decode", "--format", "adpp", "--direction", "response", out});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"request_id\":\"1\",\"kind\":\"hello\",\"status\":\"CODE_OK\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"request_id\":\"0\",\"kind\":\"none\",\"status\":\"CODE_INVALID_ARGUMENT\""),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("{\"end\":\"eof\",\"frames\":3}"), std::string::npos) << r.out;
}

TEST(AdppCli, AdppSimVersionAndBadArguments) {
  Scratch s;
  auto v = run(s, {kSim, "--version"});
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.out.rfind("adpp-sim ", 0), 0u);
  // Errors before serving are never one of the profile's stream codes (0, 2, 3).
  auto bogus = run(s, {kSim, "--bogus"});
  EXPECT_EQ(bogus.code, 64);
  EXPECT_NE(bogus.err.find("unknown argument: --bogus"), std::string::npos) << bogus.err;
  EXPECT_EQ(run(s, {kSim, "--config"}).code, 64);
  auto missing = run(s, {kSim, "--config", "/nonexistent.textproto"});
  EXPECT_EQ(missing.code, 78);
  EXPECT_NE(missing.err.find("DOT_E_VALIDATION"), std::string::npos) << missing.err;
  std::string bad = write_tmp(s, "bad.textproto", "devices { device { device_id: \"a\" } }\n"
                                                  "devices { device { device_id: \"a\" } }\n");
  auto dup = run(s, {kSim, "--check-config", bad});
  EXPECT_EQ(dup.code, 78);
  EXPECT_NE(dup.err.find("appears twice"), std::string::npos) << dup.err;
  auto good = run(s, {kSim, "--check-config", DOT_SOURCE_DIR "/adpp/examples/lab.textproto"});
  EXPECT_EQ(good.code, 0) << good.err;
  EXPECT_TRUE(good.out.empty()) << good.out;
  auto help = run(s, {kSim, "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("64 usage error, 78 configuration error"), std::string::npos) << help.out;
}

// ---- dot-core adpp hello|list|describe|read|call|health|wait-ready ----------

std::vector<std::string> client(std::initializer_list<std::string> words, std::vector<std::string> provider = {}) {
  std::vector<std::string> argv = {kCore, "adpp"};
  argv.insert(argv.end(), words.begin(), words.end());
  argv.push_back("--");
  if (provider.empty()) provider = {kSim, "--config", DOT_SOURCE_DIR "/adpp/examples/basic.textproto"};
  argv.insert(argv.end(), provider.begin(), provider.end());
  return argv;
}

TEST(AdppClientCli, EveryRequestTypeAgainstAdppSim) {
  Scratch s;
  auto hello = run(s, client({"hello", "--json"}));
  EXPECT_EQ(hello.code, 0) << hello.err;
  auto doc = dot::json::parse(hello.out);
  ASSERT_TRUE(doc.ok()) << hello.out;
  EXPECT_NE(hello.out.find("\"request_id\":\"1\",\"status\":{\"code\":\"CODE_OK\"},\"hello\":{"), std::string::npos)
      << hello.out;
  EXPECT_NE(hello.out.find("\"provider_name\":\"adpp-sim\""), std::string::npos) << hello.out;
  EXPECT_NE(hello.out.find("\"transport\":\"stdio+uint32_le\""), std::string::npos) << hello.out;

  auto list = run(s, client({"list", "--health"}));
  EXPECT_EQ(list.code, 0) << list.err;
  // Commands that use devices wait for a provider that supports WaitReady
  // first (adpp-sim takes 50 ms): the devices are up.
  EXPECT_EQ(list.out.rfind("DEVICE    HEALTH  TYPE", 0), 0u) << list.out;
  EXPECT_NE(list.out.find("\ntempctl0  "), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("\nrelay0    "), std::string::npos) << list.out;

  // A short sequence: one Describe per --device, in order.
  auto describe = run(s, client({"describe", "--device", "tempctl0", "--device", "relay0"}));
  EXPECT_EQ(describe.code, 0) << describe.err;
  auto first = describe.out.find("device tempctl0 (sim.tempctl/1)");
  auto second = describe.out.find("device relay0 (sim.relay/1)");
  ASSERT_NE(first, std::string::npos) << describe.out;
  ASSERT_NE(second, std::string::npos) << describe.out;
  EXPECT_LT(first, second);
  EXPECT_NE(describe.out.find("1   set_setpoint  value:DOUBLE  setpoint_c:DOUBLE\n"), std::string::npos) << describe.out;

  auto read = run(s, client({"read", "--device", "relay0", "--signal", "mode", "--signal", "channel"}));
  EXPECT_EQ(read.code, 0) << read.err;
  EXPECT_NE(read.out.find("  mode     \"auto\"  OK       "), std::string::npos) << read.out;
  EXPECT_NE(read.out.find("  channel  0       OK       "), std::string::npos) << read.out;

  // Arguments as JSON, typed as the device declares them: 25 is a DOUBLE here.
  auto call = run(s, client({"call", "--json", "--device", "tempctl0", "--function", "set_setpoint", "--args",
                             "{\"value\": 25}"}));
  EXPECT_EQ(call.code, 0) << call.err;
  EXPECT_NE(call.out.find("\"setpoint_c\":{\"type\":\"VALUE_TYPE_DOUBLE\",\"double_value\":25}"), std::string::npos)
      << call.out;
  EXPECT_EQ(call.out.find("describe_device"), std::string::npos) << "only the Call is printed: " << call.out;
  auto by_id = run(s, client({"call", "--device", "relay0", "--function", "1", "--args", "{\"channel\": 7}"}));
  EXPECT_EQ(by_id.code, 0) << by_id.err;
  EXPECT_NE(by_id.out.find("device relay0: call done, operation op-1"), std::string::npos) << by_id.out;

  auto health = run(s, client({"health"}));
  EXPECT_EQ(health.code, 0) << health.err;
  EXPECT_NE(health.out.find("provider OK: running\n"), std::string::npos) << health.out;
  auto ready = run(s, client({"wait-ready", "--max-wait", "5"}));
  EXPECT_EQ(ready.code, 0) << ready.err;
  EXPECT_NE(ready.out.find("ready\n"), std::string::npos) << ready.out;
  EXPECT_NE(ready.out.find("init_time_ms  50"), std::string::npos) << ready.out;
}

// An error status is the provider's answer: printed, then exit 1 with a
// DOT_E line naming the code and the provider's message.
TEST(AdppClientCli, AnErrorStatusIsPrintedAndExitsOne) {
  Scratch s;
  auto r = run(s, client({"describe", "--device", "ghost", "--device", "relay0"}));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("CODE_NOT_FOUND: no device \"ghost\"\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("device relay0"), std::string::npos) << "the sequence goes on: " << r.out;
  EXPECT_EQ(r.err, "DOT_E_PROTOCOL: DescribeDevice \"ghost\" answered CODE_NOT_FOUND: no device "
                   "\"ghost\"\n");
  auto json = run(s, client({"call", "--json", "--device", "tempctl0", "--function", "set_setpoint", "--args",
                             "{\"value\": 99}"}));
  EXPECT_EQ(json.code, 1);
  EXPECT_NE(json.out.find("\"status\":{\"code\":\"CODE_INVALID_ARGUMENT\",\"message\":"), std::string::npos)
      << json.out;
}

TEST(AdppClientCli, ArgumentsThatDoNotFitTheDeclaredTypeAreRefusedBeforeTheCall) {
  Scratch s;
  for (const char* args : {"{\"value\": \"hot\"}", "[25]", "{\"value\": 25", "{\"value\": true}"}) {
    auto r = run(s, client({"call", "--device", "tempctl0", "--function", "set_setpoint", "--args", args}));
    EXPECT_EQ(r.code, 1) << args;
    EXPECT_EQ(r.err.rfind("DOT_E_VALIDATION: ", 0), 0u) << args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  auto big = run(s, client({"call", "--device", "relay0", "--function", "select_channel", "--args",
                            "{\"channel\": 18446744073709551616}"}));
  EXPECT_EQ(big.code, 1);
  EXPECT_NE(big.err.find("an integer from 0 to 2^64-1"), std::string::npos) << big.err;
  EXPECT_EQ(run(s, client({"call", "--function", "set_setpoint"})).code, 2);
  EXPECT_EQ(run(s, client({"read"})).code, 2);
}

// What a broken provider does is a typed DOT_E line; a dead one is named
// with its signal.
TEST(AdppClientCli, ProviderFaultsAreTypedErrors) {
  Scratch s;
  struct Case {
    std::vector<std::string> words;
    std::string mode, line;
  } cases[] = {
      // It crashes on the WaitReady the client sends before using devices.
      {{"list"}, "crash-mid-session", "DOT_E_PROTOCOL: WaitReady: the provider closed stdout"},
      {{"hello"}, "unparseable-response", "DOT_E_PROTOCOL: parse at byte 0: Hello: the 10-byte payload is not a valid ADPP Response"},
      {{"hello"}, "over-cap-response", "DOT_E_PROTOCOL: length at byte 0: Hello: frame length 1048822 exceeds the limit of 1048576"},
      {{"hello"}, "wrong-id", "DOT_E_PROTOCOL: Hello: response carries request_id 2 for request 1"},
      {{"hello", "--timeout", "0.3"}, "hang", "DOT_E_TIMEOUT: Hello: no complete response"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {kCore, "adpp"};
    argv.insert(argv.end(), c.words.begin(), c.words.end());
    argv.insert(argv.end(), {"--", kBroken, c.mode});
    auto r = run(s, argv);
    EXPECT_EQ(r.code, 1) << c.mode;
    EXPECT_EQ(r.err.rfind(c.line, 0), 0u) << c.mode << ": " << r.err;
  }
  auto crash = run(s, {kCore, "adpp", "list", "--", kBroken, "crash-mid-session"});
  EXPECT_NE(crash.err.find("(provider: killed by signal 11"), std::string::npos) << crash.err;
  auto json = run(s, {kCore, "adpp", "health", "--json", "--", kBroken, "crash-mid-session"});
  EXPECT_NE(json.out.find("{\"error\":{\"code\":\"DOT_E_PROTOCOL\",\"kind\":\"closed\""), std::string::npos)
      << json.out;
  auto missing = run(s, {kCore, "adpp", "hello", "--", "/nonexistent/provider"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_EQ(missing.err.rfind("DOT_E_IO", 0), 0u) << missing.err;
}

// A provider that forks a child which calls setsid() (out of the process
// group the client kills) and then exits at the end of a clean session:
// `adpp hello` kills and reaps that child before it returns, so right after
// it returned no process has the pid, not even a zombie (which can still be
// signalled).
// Every pid the setsid-grandchild providers appended to `pid_file` (each
// before it answered anything): none may name a process any more. Kills
// those that do, so that a failure leaves nothing running.
void expect_every_grandchild_gone(const std::string& pid_file, std::string_view command) {
  std::ifstream in(pid_file);
  std::size_t n = 0;
  for (long pid = 0; in >> pid; ++n) {
    const bool gone = ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
    if (!gone) ::kill(static_cast<pid_t>(pid), SIGKILL);
    EXPECT_TRUE(gone) << "the setsid grandchild " << pid << " outlived " << command;
  }
  EXPECT_GT(n, 0u) << "no grandchild wrote its pid";
}

TEST(AdppClientCli, ASetsidGrandchildIsReapedBeforeTheCommandReturns) {
  Scratch s;
  const std::string pid_file = s.dir() + "/grandchild.pid";
  auto r = run(s, {kCore, "adpp", "hello", "--", kBroken, "setsid-grandchild", pid_file});
  EXPECT_EQ(r.code, 0) << r.err;
  expect_every_grandchild_gone(pid_file, "dot-core adpp hello");
}

// The conformance runner's providers run side by side; what they abandon is
// swept once, after the last case, before the command returns.
TEST(AdppCli, ConformLeavesNoSetsidGrandchildBehind) {
  Scratch s;
  const std::string pid_file = s.dir() + "/grandchild.pid";
  auto r = run(s, {kCore, "adpp", "conform", "--timeout", "10", "--", kBroken, "setsid-grandchild", pid_file});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  expect_every_grandchild_gone(pid_file, "dot-core adpp conform");
}

// A provider that exits before reading: whether the client's write of Hello
// is refused (the exit came first) or lands in the pipe is a race; the
// verdict is the same every time.
TEST(AdppClientCli, AProviderThatExitsBeforeReadingGetsOneMessage) {
  Scratch s;
  const std::string expected =
      "DOT_E_PROTOCOL: Hello: the provider closed stdout without answering (provider: exit 0)\n";
  for (int i = 0; i < 50; ++i) {
    auto r = run(s, {kCore, "adpp", "hello", "--", kBroken, "exit-before-reading"});
    ASSERT_EQ(r.code, 1) << "run " << i << ": " << r.err;
    ASSERT_EQ(r.err, expected) << "run " << i;
  }
}

}  // namespace
}  // namespace dot::adpp
