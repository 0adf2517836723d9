// The simulated ADPP device provider the tests and `adpp` examples talk to (sim_provider.h).
#include "dot/adpp/sim_provider.h"
#include "dot/adpp/error_kinds.h"

#include <cmath>
#include <numbers>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include "dot/base/fd.h"

namespace dot::adpp {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxConfigBytes = 4 * 1024 * 1024;

Error config_error(std::string detail) { return make_error(ErrorKind::SimConfig, std::move(detail)); }

class Collector final : public google::protobuf::io::ErrorCollector {
 public:
  explicit Collector(std::string what) : what_(std::move(what)) {}
  void AddError(int line, int column, const std::string& message) override {
    if (first_.empty()) first_ = fmt::format("{}:{}:{}: {}", what_, line + 1, column + 1, message);
  }
  void AddWarning(int, int, const std::string&) override {}
  const std::string& first() const { return first_; }

 private:
  std::string what_;
  std::string first_;
};

pb::ValueType kind_type(const pb::Value& v) {
  switch (v.kind_case()) {
    case pb::Value::kBoolValue:
      return pb::VALUE_TYPE_BOOL;
    case pb::Value::kInt64Value:
      return pb::VALUE_TYPE_INT64;
    case pb::Value::kUint64Value:
      return pb::VALUE_TYPE_UINT64;
    case pb::Value::kDoubleValue:
      return pb::VALUE_TYPE_DOUBLE;
    case pb::Value::kStringValue:
      return pb::VALUE_TYPE_STRING;
    case pb::Value::kBytesValue:
      return pb::VALUE_TYPE_BYTES;
    case pb::Value::KIND_NOT_SET:
      break;
  }
  return pb::VALUE_TYPE_UNSPECIFIED;
}

pb::Value zero_of(pb::ValueType t) {
  pb::Value v;
  v.set_type(t);
  switch (t) {
    case pb::VALUE_TYPE_BOOL:
      v.set_bool_value(false);
      break;
    case pb::VALUE_TYPE_INT64:
      v.set_int64_value(0);
      break;
    case pb::VALUE_TYPE_UINT64:
      v.set_uint64_value(0);
      break;
    case pb::VALUE_TYPE_DOUBLE:
      v.set_double_value(0);
      break;
    case pb::VALUE_TYPE_STRING:
      v.set_string_value("");
      break;
    case pb::VALUE_TYPE_BYTES:
      v.set_bytes_value("");
      break;
    default:
      break;
  }
  return v;
}

void set_now(google::protobuf::Timestamp* ts) {
  auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  ts->set_seconds(ns / 1'000'000'000);
  ts->set_nanos(static_cast<std::int32_t>(ns % 1'000'000'000));
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Checks one argument against its spec; the Reply names the argument.
Reply check_arg(const pb::ArgSpec& spec, const pb::Value& v) {
  pb::ValueType got = kind_type(v);
  if (got != spec.type() || (v.type() != pb::VALUE_TYPE_UNSPECIFIED && v.type() != got))
    return Reply::error(pb::Status::CODE_INVALID_ARGUMENT,
                        fmt::format("argument \"{}\" must be {}, got {}", spec.name(), pb::ValueType_Name(spec.type()),
                                    pb::ValueType_Name(v.type() != pb::VALUE_TYPE_UNSPECIFIED ? v.type() : got)));
  // Semantics §8.3: numeric bounds are validated, and invalid input is
  // INVALID_ARGUMENT (OUT_OF_RANGE is not one of the codes it allows).
  auto out_of_range = [&](std::string shown) {
    return Reply::error(pb::Status::CODE_INVALID_ARGUMENT,
                        fmt::format("argument \"{}\" = {} is outside its declared range", spec.name(), shown));
  };
  switch (got) {
    case pb::VALUE_TYPE_DOUBLE: {
      double x = v.double_value();
      if (std::isnan(x))
        return Reply::error(pb::Status::CODE_INVALID_ARGUMENT, fmt::format("argument \"{}\" is NaN", spec.name()));
      if ((spec.has_min_double() && x < spec.min_double()) || (spec.has_max_double() && x > spec.max_double()))
        return out_of_range(fmt::format("{}", x));
      break;
    }
    case pb::VALUE_TYPE_INT64: {
      auto x = v.int64_value();
      if ((spec.has_min_int64() && x < spec.min_int64()) || (spec.has_max_int64() && x > spec.max_int64()))
        return out_of_range(fmt::format("{}", x));
      break;
    }
    case pb::VALUE_TYPE_UINT64: {
      auto x = v.uint64_value();
      if ((spec.has_min_uint64() && x < spec.min_uint64()) || (spec.has_max_uint64() && x > spec.max_uint64()))
        return out_of_range(fmt::format("{}", x));
      break;
    }
    case pb::VALUE_TYPE_STRING:
      if (spec.allowed_values_size() > 0 && std::find(spec.allowed_values().begin(), spec.allowed_values().end(),
                                                      v.string_value()) == spec.allowed_values().end())
        return Reply::error(
            pb::Status::CODE_INVALID_ARGUMENT,
            fmt::format("argument \"{}\" = \"{}\" is not one of the allowed values", spec.name(), v.string_value()));
      break;
    default:
      break;
  }
  return Reply::ok();
}

}  // namespace

Result<simpb::SimConfig> parse_sim_config(const std::string& text, const std::string& what) {
  simpb::SimConfig config;
  google::protobuf::TextFormat::Parser parser;
  Collector errors(what);
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &config))
    return config_error(errors.first().empty() ? fmt::format("{}: not a SimConfig", what) : errors.first());
  return config;
}

Result<simpb::SimConfig> load_sim_config(const std::string& path) {
  auto text = read_file(path, kMaxConfigBytes);
  if (!text.ok()) return config_error(text.error().detail);
  return parse_sim_config(*text, path);
}

simpb::SimConfig default_sim_config() {
  // Kept equal to adpp/examples/basic.textproto (a test checks it).
  static constexpr const char* kText = R"pb(
    provider_name: "adpp-sim"
    init_time_ms: 50
    devices {
      device {
        device_id: "tempctl0"
        type_id: "sim.tempctl"
        type_version: "1"
        label: "Simulated temperature controller"
        address: "sim://tempctl0"
      }
      signals {
        spec {
          signal_id: "temp_c"
          name: "Temperature"
          value_type: VALUE_TYPE_DOUBLE
          unit: "degC"
          poll_hint_hz: 2
          stale_after_ms: 2000
        }
        initial { type: VALUE_TYPE_DOUBLE double_value: 21.5 }
        wobble: 0.25
        period_ms: 10000
      }
      signals {
        spec { signal_id: "setpoint_c" name: "Setpoint" value_type: VALUE_TYPE_DOUBLE unit: "degC" }
        initial { type: VALUE_TYPE_DOUBLE double_value: 21 }
      }
      signals {
        spec { signal_id: "heater_on" name: "Heater" value_type: VALUE_TYPE_BOOL }
        initial { type: VALUE_TYPE_BOOL bool_value: false }
      }
      functions {
        spec {
          name: "set_setpoint"
          description: "Set the target temperature"
          policy { category: CATEGORY_CONFIG is_idempotent: true }
          args { name: "value" type: VALUE_TYPE_DOUBLE unit: "degC" required: true min_double: 5 max_double: 35 }
          results { name: "setpoint_c" type: VALUE_TYPE_DOUBLE unit: "degC" }
        }
        writes { key: "value" value: "setpoint_c" }
      }
      functions {
        spec {
          name: "set_heater"
          description: "Switch the heater"
          policy { category: CATEGORY_ACTUATE }
          args { name: "on" type: VALUE_TYPE_BOOL required: true }
          results { name: "heater_on" type: VALUE_TYPE_BOOL }
        }
        writes { key: "on" value: "heater_on" }
      }
    }
    devices {
      device {
        device_id: "relay0"
        type_id: "sim.relay"
        type_version: "1"
        label: "Simulated relay bank"
        address: "sim://relay0"
      }
      signals {
        spec { signal_id: "channel" name: "Selected channel" value_type: VALUE_TYPE_UINT64 }
        initial { type: VALUE_TYPE_UINT64 uint64_value: 0 }
      }
      signals {
        spec { signal_id: "mode" name: "Mode" value_type: VALUE_TYPE_STRING }
        initial { type: VALUE_TYPE_STRING string_value: "auto" }
      }
      functions {
        spec {
          name: "select_channel"
          policy { category: CATEGORY_ACTUATE }
          args { name: "channel" type: VALUE_TYPE_UINT64 required: true min_uint64: 0 max_uint64: 7 }
        }
        writes { key: "channel" value: "channel" }
      }
      functions {
        spec {
          name: "set_mode"
          policy { category: CATEGORY_CONFIG }
          args { name: "mode" type: VALUE_TYPE_STRING required: true allowed_values: "auto" allowed_values: "manual" }
        }
        writes { key: "mode" value: "mode" }
      }
    }
  )pb";
  auto parsed = parse_sim_config(kText, "built-in config");
  return parsed.ok() ? std::move(parsed).value() : simpb::SimConfig{};
}

SimProvider::SimProvider(simpb::SimConfig config, std::string version)
    : config_(std::move(config)), version_(std::move(version)), started_(Clock::now()) {}

Result<SimProvider> SimProvider::create(simpb::SimConfig config, std::string version) {
  if (config.provider_name().empty()) config.set_provider_name("adpp-sim");
  SimProvider sim(std::move(config), std::move(version));
  std::set<std::string> device_ids;
  for (const auto& sd : sim.config_.devices()) {
    Device d;
    d.device = sd.device();
    const std::string& id = d.device.device_id();
    if (id.empty()) return config_error("a device has no device_id");
    if (!device_ids.insert(id).second) return config_error(fmt::format("device_id \"{}\" appears twice", id));
    if (d.device.provider_name().empty()) d.device.set_provider_name(sim.config_.provider_name());
    for (const auto& s : sd.signals()) {
      const std::string& sid = s.spec().signal_id();
      if (sid.empty()) return config_error(fmt::format("device \"{}\": a signal has no signal_id", id));
      if (d.values.count(sid) != 0)
        return config_error(fmt::format("device \"{}\": signal \"{}\" appears twice", id, sid));
      pb::Value v = s.has_initial() ? s.initial() : zero_of(s.spec().value_type());
      if (kind_type(v) != s.spec().value_type())
        return config_error(fmt::format("device \"{}\": signal \"{}\" has an initial value of another type", id, sid));
      v.set_type(s.spec().value_type());
      d.values.emplace(sid, v);
      d.signals.push_back(s);
      *d.capabilities.add_signals() = s.spec();
    }
    std::set<std::string> names;
    std::uint32_t n = 0;
    for (auto f : sd.functions()) {
      ++n;
      if (f.spec().function_id() != 0 && f.spec().function_id() != n)
        return config_error(fmt::format("device \"{}\": function \"{}\" must have id {} (ids are 1..N in order)", id,
                                        f.spec().name(), n));
      f.mutable_spec()->set_function_id(n);
      if (f.spec().name().empty() || !names.insert(f.spec().name()).second)
        return config_error(fmt::format("device \"{}\": function {} needs a unique name", id, n));
      for (const auto& write : f.writes()) {
        const std::string& arg = write.first;
        const std::string& signal = write.second;
        auto spec_it = std::find_if(f.spec().args().begin(), f.spec().args().end(),
                                    [&](const pb::ArgSpec& a) { return a.name() == arg; });
        if (spec_it == f.spec().args().end())
          return config_error(fmt::format("device \"{}\": function \"{}\" writes from unknown argument \"{}\"", id,
                                          f.spec().name(), arg));
        auto sig = d.values.find(signal);
        if (sig == d.values.end() || sig->second.type() != spec_it->type())
          return config_error(
              fmt::format("device \"{}\": function \"{}\" writes \"{}\" into \"{}\", which is not a "
                          "signal of that type",
                          id, f.spec().name(), arg, signal));
      }
      *d.capabilities.add_functions() = f.spec();
      d.functions.push_back(std::move(f));
    }
    sim.devices_.push_back(std::move(d));
  }
  return sim;
}

ProviderInfo SimProvider::info() const {
  ProviderInfo info;
  info.name = config_.provider_name();
  info.version = version_;
  info.supports_wait_ready = true;
  info.metadata["devices"] = std::to_string(devices_.size());
  return info;
}

SimProvider::Device* SimProvider::find(const std::string& device_id) {
  for (auto& d : devices_)
    if (d.device.device_id() == device_id) return &d;
  return nullptr;
}

bool SimProvider::ready() const { return Clock::now() - started_ >= std::chrono::milliseconds(config_.init_time_ms()); }

pb::Value SimProvider::sample(const Device& d, const simpb::SimSignal& s) const {
  pb::Value v = d.values.at(s.spec().signal_id());
  if (v.kind_case() == pb::Value::kDoubleValue && s.wobble() != 0 && s.period_ms() != 0) {
    double t = std::chrono::duration<double, std::milli>(Clock::now() - started_).count();
    v.set_double_value(v.double_value() + s.wobble() * std::sin(2 * std::numbers::pi * t / s.period_ms()));
  }
  return v;
}

Reply SimProvider::list_devices(const pb::ListDevicesRequest& request, pb::ListDevicesResponse& response) {
  for (const auto& d : devices_) {
    *response.add_devices() = d.device;
    if (request.include_health()) {
      auto* h = response.add_device_health();
      h->set_device_id(d.device.device_id());
      h->set_state(ready() ? pb::DeviceHealth::STATE_OK : pb::DeviceHealth::STATE_UNREACHABLE);
      set_now(h->mutable_last_seen());
    }
  }
  return Reply::ok();
}

Reply SimProvider::describe_device(const pb::DescribeDeviceRequest& request, pb::DescribeDeviceResponse& response) {
  Device* d = find(request.device_id());
  if (d == nullptr)
    return Reply::error(pb::Status::CODE_NOT_FOUND, fmt::format("no device \"{}\"", request.device_id()));
  *response.mutable_device() = d->device;
  *response.mutable_capabilities() = d->capabilities;
  return Reply::ok();
}

Reply SimProvider::read_signals(const pb::ReadSignalsRequest& request, pb::ReadSignalsResponse& response) {
  Device* d = find(request.device_id());
  if (d == nullptr)
    return Reply::error(pb::Status::CODE_NOT_FOUND, fmt::format("no device \"{}\"", request.device_id()));
  std::vector<const simpb::SimSignal*> wanted;
  if (request.signal_ids().empty()) {
    for (const auto& s : d->signals) wanted.push_back(&s);
  } else {
    for (const auto& id : request.signal_ids()) {
      auto it = std::find_if(d->signals.begin(), d->signals.end(),
                             [&](const simpb::SimSignal& s) { return s.spec().signal_id() == id; });
      // One policy for unknown signals: the whole read fails, naming the first.
      if (it == d->signals.end())
        return Reply::error(pb::Status::CODE_NOT_FOUND,
                            fmt::format("device \"{}\" has no signal \"{}\"", request.device_id(), id));
      wanted.push_back(&*it);
    }
  }
  const bool is_ready = ready();
  response.set_device_id(d->device.device_id());
  for (const auto* s : wanted) {
    auto* v = response.add_values();
    v->set_signal_id(s->spec().signal_id());
    *v->mutable_value() = sample(*d, *s);
    set_now(v->mutable_timestamp());
    v->set_quality(is_ready ? pb::SignalValue::QUALITY_OK : pb::SignalValue::QUALITY_UNKNOWN);
  }
  return Reply::ok();
}

Reply SimProvider::call(const pb::CallRequest& request, pb::CallResponse& response) {
  Device* d = find(request.device_id());
  if (d == nullptr)
    return Reply::error(pb::Status::CODE_NOT_FOUND, fmt::format("no device \"{}\"", request.device_id()));
  const simpb::SimFunction* fn = nullptr;
  if (request.function_id() != 0) {
    if (request.function_id() > d->functions.size())
      return Reply::error(pb::Status::CODE_NOT_FOUND,
                          fmt::format("device \"{}\" has no function {}", request.device_id(), request.function_id()));
    // Semantics §6.2: with both given, the provider MUST prefer function_id;
    // the name is a human-readable convenience and a differing one is ignored.
    fn = &d->functions[request.function_id() - 1];
  } else if (!request.function_name().empty()) {
    for (const auto& f : d->functions)
      if (f.spec().name() == request.function_name()) fn = &f;
    if (fn == nullptr)
      return Reply::error(pb::Status::CODE_NOT_FOUND, fmt::format("device \"{}\" has no function \"{}\"",
                                                                  request.device_id(), request.function_name()));
  } else {
    return Reply::error(pb::Status::CODE_INVALID_ARGUMENT, "a Call needs a function_id or a function_name");
  }
  const auto& spec = fn->spec();
  for (const auto& entry : request.args()) {
    const std::string& name = entry.first;
    const pb::Value& value = entry.second;
    auto it =
        std::find_if(spec.args().begin(), spec.args().end(), [&](const pb::ArgSpec& a) { return a.name() == name; });
    if (it == spec.args().end())
      return Reply::error(pb::Status::CODE_INVALID_ARGUMENT,
                          fmt::format("function \"{}\" has no argument \"{}\"", spec.name(), name));
    Reply r = check_arg(*it, value);
    if (r.code != pb::Status::CODE_OK) return r;
  }
  for (const auto& a : spec.args())
    if (a.required() && request.args().count(a.name()) == 0)
      return Reply::error(pb::Status::CODE_INVALID_ARGUMENT,
                          fmt::format("function \"{}\" needs argument \"{}\"", spec.name(), a.name()));
  if (request.has_deadline()) {
    std::int64_t deadline_ns = request.deadline().seconds() * 1'000'000'000 + request.deadline().nanos();
    if (deadline_ns < now_ns())
      return Reply::error(pb::Status::CODE_DEADLINE_EXCEEDED, "the call's deadline has passed");
  }
  if (!ready()) return Reply::error(pb::Status::CODE_UNAVAILABLE, "the device is still initialising");
  for (const auto& [arg, signal] : fn->writes()) {
    auto it = request.args().find(arg);
    if (it == request.args().end()) continue;
    pb::Value v = it->second;
    v.set_type(kind_type(v));
    d->values[signal] = v;
  }
  response.set_device_id(d->device.device_id());
  for (const auto& r : spec.results()) {
    auto it = d->values.find(r.name());
    if (it != d->values.end()) (*response.mutable_results())[r.name()] = it->second;
  }
  response.set_operation_id(fmt::format("op-{}", ++operations_));
  return Reply::ok();
}

Reply SimProvider::get_health(const pb::GetHealthRequest&, pb::GetHealthResponse& response) {
  const bool is_ready = ready();
  auto* p = response.mutable_provider();
  p->set_state(is_ready ? pb::ProviderHealth::STATE_OK : pb::ProviderHealth::STATE_DEGRADED);
  p->set_message(is_ready ? "running" : "initialising");
  (*p->mutable_metrics())["calls"] = std::to_string(operations_);
  for (const auto& d : devices_) {
    auto* h = response.add_devices();
    h->set_device_id(d.device.device_id());
    h->set_state(is_ready ? pb::DeviceHealth::STATE_OK : pb::DeviceHealth::STATE_UNREACHABLE);
    set_now(h->mutable_last_seen());
  }
  return Reply::ok();
}

Reply SimProvider::wait_ready(const pb::WaitReadyRequest& request, pb::WaitReadyResponse& response) {
  auto ready_at = started_ + std::chrono::milliseconds(config_.init_time_ms());
  auto now = Clock::now();
  if (now < ready_at) {
    auto left = ready_at - now;
    if (request.max_wait_ms_hint() != 0 && left > std::chrono::milliseconds(request.max_wait_ms_hint()))
      return Reply::error(
          pb::Status::CODE_DEADLINE_EXCEEDED,
          fmt::format("initialisation needs {} ms more than the {} ms hint",
                      std::chrono::duration_cast<std::chrono::milliseconds>(left).count(), request.max_wait_ms_hint()));
    std::this_thread::sleep_for(left);
  }
  auto& diag = *response.mutable_diagnostics();
  diag["init_time_ms"] = std::to_string(config_.init_time_ms());
  diag["devices"] = std::to_string(devices_.size());
  return Reply::ok();
}

}  // namespace dot::adpp
