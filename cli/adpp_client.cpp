// dot-core adpp hello|list|describe|read|call|health|wait-ready: talk to an
// ADPP provider by hand. Each command starts the provider with exactly the
// argv after --, says Hello (checking version and profile metadata), sends
// its request(s) one at a time, closes stdin and reaps the provider.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/time_util.h>

#include "commands.h"
#include "dot/adpp/client.h"
#include "dot/adpp/postscript.h"
#include "dot/base/json.h"
#include "error_kinds.h"
#include "output.h"

namespace dot::cli {
namespace {

namespace pb = adpp::pb;
using std::chrono::milliseconds;

// How long a provider that broke an exchange gets to show its exit status.
constexpr milliseconds kExitGrace{500};

// ---- arguments ------------------------------------------------------------

Error args_error(std::string detail) { return make_error(cli::ErrorKind::Args, std::move(detail)); }

// A JSON number spelled as an integer, when it fits T.
template <typename T>
std::optional<T> integer_of(const json::Value& j) {
  if (!j.is_number() || !j.is_integer_spelling()) return std::nullopt;
  T x = 0;
  auto text = j.number_text();
  if (std::from_chars(text.data(), text.data() + text.size(), x).ec != std::errc{}) return std::nullopt;
  return x;
}

// A JSON value as the declared type; a name the function does not declare
// takes the type its JSON spells (so a provider's own validation can be
// tried), integers as INT64 (UINT64 above INT64's range).
Result<pb::Value> to_value(std::string_view name, const json::Value& j, pb::ValueType declared) {
  pb::Value v;
  auto integer = [&]() -> bool { return j.is_number() && j.is_integer_spelling(); };
  pb::ValueType t = declared;
  if (t == pb::VALUE_TYPE_UNSPECIFIED) {
    if (j.is_bool())
      t = pb::VALUE_TYPE_BOOL;
    else if (j.is_string())
      t = pb::VALUE_TYPE_STRING;
    else if (integer())
      t = j.number_text()[0] == '-' ? pb::VALUE_TYPE_INT64 : pb::VALUE_TYPE_UINT64;
    else if (j.is_number())
      t = pb::VALUE_TYPE_DOUBLE;
    else
      return args_error(fmt::format("argument \"{}\": a value must be a bool, a number or a string", name));
    if (t == pb::VALUE_TYPE_UINT64) {
      std::int64_t probe = 0;
      auto text = j.number_text();
      if (std::from_chars(text.data(), text.data() + text.size(), probe).ec == std::errc{}) t = pb::VALUE_TYPE_INT64;
    }
  }
  v.set_type(t);
  auto wrong = [&](std::string_view want) {
    return args_error(fmt::format("argument \"{}\" is declared {}: expected {}", name, pb::ValueType_Name(t), want));
  };
  switch (t) {
    case pb::VALUE_TYPE_BOOL:
      if (!j.is_bool()) return wrong("true or false");
      v.set_bool_value(j.as_bool());
      break;
    case pb::VALUE_TYPE_INT64: {
      auto x = integer_of<std::int64_t>(j);
      if (!x) return wrong("an integer from -2^63 to 2^63-1");
      v.set_int64_value(*x);
      break;
    }
    case pb::VALUE_TYPE_UINT64: {
      auto x = integer_of<std::uint64_t>(j);
      if (!x) return wrong("an integer from 0 to 2^64-1");
      v.set_uint64_value(*x);
      break;
    }
    case pb::VALUE_TYPE_DOUBLE:
      if (!j.is_number()) return wrong("a number");
      v.set_double_value(j.as_double());
      break;
    case pb::VALUE_TYPE_STRING:
      if (!j.is_string()) return wrong("a string");
      v.set_string_value(std::string(j.as_string()));
      break;
    case pb::VALUE_TYPE_BYTES:
      if (!j.is_string()) return wrong("a string (its UTF-8 bytes are sent)");
      v.set_bytes_value(std::string(j.as_string()));
      break;
    default:
      return wrong("a declared type");
  }
  return v;
}

// ---- printing -------------------------------------------------------------

std::string response_json(const pb::Response& r) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string out;
  if (!google::protobuf::util::MessageToJsonString(r, &out, options).ok()) return "{}";
  return out;
}

std::string value_text(const pb::Value& v) {
  switch (v.kind_case()) {
    case pb::Value::kBoolValue:
      return v.bool_value() ? "true" : "false";
    case pb::Value::kInt64Value:
      return std::to_string(v.int64_value());
    case pb::Value::kUint64Value:
      return std::to_string(v.uint64_value());
    case pb::Value::kDoubleValue:
      return fmt::format("{}", v.double_value());
    case pb::Value::kStringValue:
      return fmt::format("\"{}\"", v.string_value());
    case pb::Value::kBytesValue: {
      std::string hex = "0x";
      for (unsigned char c : v.bytes_value()) hex += fmt::format("{:02x}", c);
      return hex;
    }
    case pb::Value::KIND_NOT_SET:
      break;
  }
  return "(none)";
}

// Strips the enum prefix a reader does not need: VALUE_TYPE_DOUBLE -> DOUBLE.
std::string bare(const std::string& name, std::string_view prefix) {
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

// Left-aligned columns; the cells are escaped when the text is printed.
std::string table(const std::vector<std::vector<std::string>>& rows, std::string_view indent = "") {
  std::vector<std::size_t> width;
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], row[i].size());
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line(indent);
    for (std::size_t i = 0; i < row.size(); ++i)
      line += i + 1 == row.size() ? row[i] : fmt::format("{:<{}}  ", row[i], width[i]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  }
  return out;
}

std::string map_lines(const google::protobuf::Map<std::string, std::string>& m, std::string_view indent) {
  std::vector<std::pair<std::string, std::string>> sorted(m.begin(), m.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::vector<std::string>> rows;
  for (const auto& [k, v] : sorted) rows.push_back({k, v});
  return table(rows, indent);
}

std::string when(const google::protobuf::Timestamp& t) {
  if (t.seconds() == 0 && t.nanos() == 0) return "-";
  return google::protobuf::util::TimeUtil::ToString(t);
}

std::string hello_text(const pb::HelloResponse& h) {
  return fmt::format("provider {} {} (protocol {})\n", h.provider_name(), h.provider_version(), h.protocol_version()) +
         map_lines(h.metadata(), "  ");
}

// The devices, with a HEALTH column when the provider sent their health.
std::string devices_text(const pb::ListDevicesResponse& l) {
  std::vector<std::vector<std::string>> rows{{"DEVICE", "TYPE", "LABEL", "ADDRESS"}};
  bool health = l.device_health_size() > 0;
  if (health) rows[0].insert(rows[0].begin() + 1, "HEALTH");
  for (const auto& d : l.devices()) {
    std::vector<std::string> row{d.device_id(), d.type_id() + (d.type_version().empty() ? "" : "/" + d.type_version()),
                                 d.label(), d.address()};
    if (health) {
      std::string state = "-";
      for (const auto& h : l.device_health())
        if (h.device_id() == d.device_id()) state = bare(pb::DeviceHealth::State_Name(h.state()), "STATE_");
      row.insert(row.begin() + 1, state);
    }
    rows.push_back(std::move(row));
  }
  return table(rows);
}

// name:TYPE, with "?" after an argument that may be left out.
std::string arg_specs(const google::protobuf::RepeatedPtrField<pb::ArgSpec>& args, bool mark_optional) {
  std::string s;
  for (const auto& a : args)
    s += fmt::format("{}{}:{}{}", s.empty() ? "" : " ", a.name(), bare(pb::ValueType_Name(a.type()), "VALUE_TYPE_"),
                     mark_optional && !a.required() ? "?" : "");
  return s.empty() ? std::string("-") : s;
}

// A device with its signals and functions.
std::string device_text(const pb::DescribeDeviceResponse& r) {
  const auto& d = r.device();
  const auto& caps = r.capabilities();
  std::string out = fmt::format("device {} ({}{}) {}\n", d.device_id(), d.type_id(),
                                d.type_version().empty() ? "" : "/" + d.type_version(), d.label());
  std::vector<std::vector<std::string>> signals{{"SIGNAL", "TYPE", "UNIT", "NAME"}};
  for (const auto& s : caps.signals())
    signals.push_back({s.signal_id(), bare(pb::ValueType_Name(s.value_type()), "VALUE_TYPE_"), s.unit(), s.name()});
  out += "  signals:\n" + table(signals, "    ");
  std::vector<std::vector<std::string>> functions{{"ID", "FUNCTION", "ARGUMENTS", "RESULTS"}};
  for (const auto& f : caps.functions())
    functions.push_back(
        {std::to_string(f.function_id()), f.name(), arg_specs(f.args(), true), arg_specs(f.results(), false)});
  return out + "  functions:\n" + table(functions, "    ");
}

std::string signals_text(const pb::ReadSignalsResponse& r) {
  std::vector<std::vector<std::string>> rows{{"SIGNAL", "VALUE", "QUALITY", "TIMESTAMP"}};
  for (const auto& v : r.values())
    rows.push_back({v.signal_id(), value_text(v.value()), bare(pb::SignalValue::Quality_Name(v.quality()), "QUALITY_"),
                    when(v.timestamp())});
  return fmt::format("device {}\n", r.device_id()) + table(rows, "  ");
}

// A call's results, sorted by name.
std::string call_text(const pb::CallResponse& c) {
  std::string out = fmt::format("device {}: call done{}\n", c.device_id(),
                                c.operation_id().empty() ? "" : ", operation " + c.operation_id());
  std::vector<std::pair<std::string, std::string>> results;
  for (const auto& [k, v] : c.results()) results.emplace_back(k, value_text(v));
  std::sort(results.begin(), results.end());
  std::vector<std::vector<std::string>> rows{{"RESULT", "VALUE"}};
  for (auto& [k, v] : results) rows.push_back({k, v});
  if (!results.empty()) out += table(rows, "  ");
  return out;
}

std::string health_text(const pb::GetHealthResponse& h) {
  const auto& p = h.provider();
  std::string out = fmt::format("provider {}{}\n", bare(pb::ProviderHealth::State_Name(p.state()), "STATE_"),
                                p.message().empty() ? "" : ": " + p.message());
  out += map_lines(p.metrics(), "  ");
  std::vector<std::vector<std::string>> rows{{"DEVICE", "STATE", "LAST SEEN", "MESSAGE"}};
  for (const auto& d : h.devices())
    rows.push_back(
        {d.device_id(), bare(pb::DeviceHealth::State_Name(d.state()), "STATE_"), when(d.last_seen()), d.message()});
  return out + table(rows);
}

// A response for a person: one renderer per payload.
std::string human(const pb::Response& r) {
  switch (r.payload_case()) {
    case pb::Response::kHello:
      return hello_text(r.hello());
    case pb::Response::kListDevices:
      return devices_text(r.list_devices());
    case pb::Response::kDescribeDevice:
      return device_text(r.describe_device());
    case pb::Response::kReadSignals:
      return signals_text(r.read_signals());
    case pb::Response::kCall:
      return call_text(r.call());
    case pb::Response::kGetHealth:
      return health_text(r.get_health());
    case pb::Response::kWaitReady:
      return "ready\n" + map_lines(r.wait_ready().diagnostics(), "  ");
    case pb::Response::PAYLOAD_NOT_SET:
      break;
  }
  return fmt::format("{}: {}\n", adpp::status_code_name(r.status().code()), r.status().message()) +
         map_lines(r.status().details(), "  ");
}

// ---- the session ----------------------------------------------------------

// A failed exchange as a DOT_E error (the client's own code: DOT_E_TIMEOUT
// past the deadline, DOT_E_PROTOCOL for what the provider broke), its detail
// ending with how the provider ended, if it did (provider_postscript).
Error exchange_error(Error e, adpp::ProviderProcess& p, std::string_view what) {
  e.detail = fmt::format("{}: {}{}", what, e.detail, adpp::provider_postscript(p, kExitGrace));
  return e;
}

class Session {
 public:
  Session(adpp::Client client, const AdppClientOptions& o) : client_(std::move(client)), o_(o) {}

  Status hello() {
    auto h = client_.hello();
    if (!h.ok()) return exchange_error(std::move(h).error(), client_.process(), "Hello");
    pb::Response r;
    r.set_request_id(1);  // Client numbers from 1 and Hello went first
    r.mutable_status()->set_code(pb::Status::CODE_OK);
    *r.mutable_hello() = *h;
    if (o_.verb == "hello") emit(r);
    // A host waits for a provider that can say when it is ready before
    // using its devices (one command is one short session, so a provider
    // still initialising would otherwise answer every request UNAVAILABLE).
    auto wr = h->metadata().find(std::string(adpp::kMetaSupportsWaitReady));
    if (o_.verb != "hello" && o_.verb != "wait-ready" && wr != h->metadata().end() && wr->second == "true") {
      pb::Request req;
      req.mutable_wait_ready()->set_max_wait_ms_hint(static_cast<std::uint32_t>(
          std::min<long long>(std::llround(o_.timeout_s * 1000.0), std::numeric_limits<std::uint32_t>::max())));
      DOT_ASSIGN_OR_RETURN(pb::Response ready, ask_quiet(std::move(req), "WaitReady"));
      if (ready.status().code() != pb::Status::CODE_OK)
        return make_error(cli::ErrorKind::NotReady,
                          fmt::format("WaitReady answered {}: {}", adpp::status_code_name(ready.status().code()),
                                      ready.status().message()));
    }
    return {};
  }

  // Sends one request; prints its answer. An error status is printed too,
  // and remembered for the exit code.
  Status ask(pb::Request req, std::string_view what) {
    auto r = client_.request(std::move(req));
    if (!r.ok()) return exchange_error(std::move(r).error(), client_.process(), what);
    emit(*r);
    if (r->status().code() != pb::Status::CODE_OK && !status_error_)
      status_error_ = make_error(
          cli::ErrorKind::ProviderStatus,
          fmt::format("{} answered {}: {}", what, adpp::status_code_name(r->status().code()), r->status().message()));
    return {};
  }

  // Sends one request whose answer is not printed.
  Result<pb::Response> ask_quiet(pb::Request req, std::string_view what) {
    auto r = client_.request(std::move(req));
    if (!r.ok()) return exchange_error(std::move(r).error(), client_.process(), what);
    return r;
  }

  // Closes stdin and reaps; a provider that will not exit is killed.
  void close() { (void)client_.shutdown(); }

  const std::optional<Error>& status_error() const { return status_error_; }
  const std::string& out() const { return out_; }

 private:
  void emit(const pb::Response& r) { out_ += o_.json ? response_json(r) + '\n' : human(r); }

  adpp::Client client_;
  const AdppClientOptions& o_;
  std::string out_;
  std::optional<Error> status_error_;
};

// The declared type of each argument of the called function (a Describe
// first), so `{"value": 25}` becomes a DOUBLE when the function says DOUBLE.
Result<pb::Request> call_request(const AdppClientOptions& o, const pb::DescribeDeviceResponse* desc) {
  auto doc = json::parse(o.args);
  if (!doc.ok()) return args_error(fmt::format("--args is not JSON: {}", doc.error().detail));
  auto root = doc->root();
  if (!root.is_object()) return args_error("--args must be a JSON object, name -> value");
  pb::Request req;
  auto* call = req.mutable_call();
  call->set_device_id(o.devices.front());
  std::uint32_t id = 0;
  bool numeric = !o.function.empty() &&
                 std::all_of(o.function.begin(), o.function.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  if (numeric) {
    if (std::from_chars(o.function.data(), o.function.data() + o.function.size(), id).ec != std::errc{} || id == 0)
      return args_error(fmt::format("--function {}: a function_id is 1 to 4294967295", o.function));
    call->set_function_id(id);
  } else {
    call->set_function_name(o.function);
  }
  const pb::FunctionSpec* spec = nullptr;
  if (desc != nullptr)
    for (const auto& f : desc->capabilities().functions())
      if (numeric ? f.function_id() == id : f.name() == o.function) spec = &f;
  for (const auto& m : root.members()) {
    pb::ValueType declared = pb::VALUE_TYPE_UNSPECIFIED;
    if (spec != nullptr)
      for (const auto& a : spec->args())
        if (a.name() == m.key) declared = a.type();
    DOT_ASSIGN_OR_RETURN(pb::Value v, to_value(m.key, m.value, declared));
    (*call->mutable_args())[std::string(m.key)] = std::move(v);
  }
  return req;
}

Status run_verb(Session& s, const AdppClientOptions& o) {
  DOT_TRY(s.hello());
  const std::string& verb = o.verb;
  if (verb == "hello") return {};
  if (verb == "list") {
    pb::Request req;
    req.mutable_list_devices()->set_include_health(o.health);
    return s.ask(std::move(req), "ListDevices");
  }
  if (verb == "describe" || verb == "read") {
    for (const auto& d : o.devices) {
      pb::Request req;
      if (verb == "describe") {
        req.mutable_describe_device()->set_device_id(d);
      } else {
        req.mutable_read_signals()->set_device_id(d);
        for (const auto& sig : o.signals) req.mutable_read_signals()->add_signal_ids(sig);
      }
      DOT_TRY(
          s.ask(std::move(req), fmt::format("{} \"{}\"", verb == "describe" ? "DescribeDevice" : "ReadSignals", d)));
    }
    return {};
  }
  if (verb == "call") {
    // The Describe that types the arguments is not printed (only the Call
    // was asked for); an unknown device is left for the Call to answer.
    pb::Request dreq;
    dreq.mutable_describe_device()->set_device_id(o.devices.front());
    DOT_ASSIGN_OR_RETURN(pb::Response desc, s.ask_quiet(std::move(dreq), "DescribeDevice"));
    const pb::DescribeDeviceResponse* d = desc.has_describe_device() ? &desc.describe_device() : nullptr;
    DOT_ASSIGN_OR_RETURN(pb::Request req, call_request(o, d));
    return s.ask(std::move(req), fmt::format("Call \"{}\" {}", o.devices.front(), o.function));
  }
  if (verb == "health") {
    pb::Request req;
    req.mutable_get_health();
    return s.ask(std::move(req), "GetHealth");
  }
  pb::Request req;
  req.mutable_wait_ready()->set_max_wait_ms_hint(static_cast<std::uint32_t>(std::llround(o.max_wait_s * 1000.0)));
  return s.ask(std::move(req), "WaitReady");
}

}  // namespace

int run_adpp_client(const AdppClientOptions& o) {
  adpp::ClientOptions co;
  co.request_timeout = milliseconds(static_cast<long long>(std::llround(o.timeout_s * 1000.0)));
  co.client_name = "dot-core";
  auto client = adpp::Client::launch(o.provider, co);
  if (!client.ok()) return report(client.error(), o.json);
  Session s(std::move(client).value(), o);
  Status st = run_verb(s, o);
  // What was answered is shown even when a later step failed.
  if (!s.out().empty() && !(o.json ? write_stdout(s.out()) : print_text(s.out()))) return kExitError;
  if (!st.ok()) return report(st.error(), o.json);
  s.close();
  if (s.status_error()) return report(*s.status_error(), false);
  return kExitOk;
}

}  // namespace dot::cli
