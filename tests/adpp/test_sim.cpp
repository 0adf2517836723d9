// adpp-sim's device semantics, called directly.
#include <gtest/gtest.h>

#include <google/protobuf/util/message_differencer.h>

#include "dot/adpp/sim_provider.h"
#include "dot/base/fd.h"

namespace dot::adpp {
namespace {

SimProvider sim(std::uint32_t init_ms = 0) {
  auto c = default_sim_config();
  c.set_init_time_ms(init_ms);
  auto s = SimProvider::create(c, "test");
  EXPECT_TRUE(s.ok());
  return std::move(s).value();
}

pb::Value dbl(double x) {
  pb::Value v;
  v.set_type(pb::VALUE_TYPE_DOUBLE);
  v.set_double_value(x);
  return v;
}

TEST(AdppSim, ListAndDescribe) {
  auto s = sim();
  pb::ListDevicesRequest lr;
  lr.set_include_health(true);
  pb::ListDevicesResponse list;
  ASSERT_EQ(s.list_devices(lr, list).code, pb::Status::CODE_OK);
  ASSERT_EQ(list.devices_size(), 2);
  EXPECT_EQ(list.device_health_size(), 2);
  EXPECT_EQ(list.devices(0).provider_name(), "adpp-sim");

  pb::DescribeDeviceRequest dr;
  dr.set_device_id("tempctl0");
  pb::DescribeDeviceResponse desc;
  ASSERT_EQ(s.describe_device(dr, desc).code, pb::Status::CODE_OK);
  ASSERT_EQ(desc.capabilities().functions_size(), 2);
  EXPECT_EQ(desc.capabilities().functions(0).function_id(), 1u);
  EXPECT_EQ(desc.capabilities().functions(1).function_id(), 2u);
  EXPECT_EQ(desc.capabilities().signals_size(), 3);

  dr.set_device_id("nope");
  pb::DescribeDeviceResponse none;
  EXPECT_EQ(s.describe_device(dr, none).code, pb::Status::CODE_NOT_FOUND);
}

TEST(AdppSim, ReadSignalsAndTheUnknownSignalPolicy) {
  auto s = sim();
  pb::ReadSignalsRequest rr;
  rr.set_device_id("tempctl0");
  pb::ReadSignalsResponse all;
  ASSERT_EQ(s.read_signals(rr, all).code, pb::Status::CODE_OK);
  EXPECT_EQ(all.values_size(), 3);
  EXPECT_EQ(all.values(0).quality(), pb::SignalValue::QUALITY_OK);
  EXPECT_TRUE(all.values(0).has_timestamp());

  rr.add_signal_ids("heater_on");
  rr.add_signal_ids("no_such_signal");
  pb::ReadSignalsResponse partial;
  Reply r = s.read_signals(rr, partial);
  EXPECT_EQ(r.code, pb::Status::CODE_NOT_FOUND);
  EXPECT_NE(r.message.find("no_such_signal"), std::string::npos);

  rr.set_device_id("ghost");
  pb::ReadSignalsResponse ghost;
  EXPECT_EQ(s.read_signals(rr, ghost).code, pb::Status::CODE_NOT_FOUND);
}

TEST(AdppSim, CallByIdAndByNameWritesTheSignal) {
  auto s = sim();
  pb::CallRequest c;
  c.set_device_id("tempctl0");
  c.set_function_id(1);
  (*c.mutable_args())["value"] = dbl(25.0);
  pb::CallResponse out;
  ASSERT_EQ(s.call(c, out).code, pb::Status::CODE_OK);
  EXPECT_EQ(out.results().at("setpoint_c").double_value(), 25.0);
  EXPECT_EQ(out.operation_id(), "op-1");

  pb::CallRequest by_name;
  by_name.set_device_id("relay0");
  by_name.set_function_name("set_mode");
  pb::Value mode;
  mode.set_type(pb::VALUE_TYPE_STRING);
  mode.set_string_value("manual");
  (*by_name.mutable_args())["mode"] = mode;
  pb::CallResponse out2;
  ASSERT_EQ(s.call(by_name, out2).code, pb::Status::CODE_OK);

  pb::ReadSignalsRequest rr;
  rr.set_device_id("relay0");
  rr.add_signal_ids("mode");
  pb::ReadSignalsResponse read;
  ASSERT_EQ(s.read_signals(rr, read).code, pb::Status::CODE_OK);
  EXPECT_EQ(read.values(0).value().string_value(), "manual");
}

TEST(AdppSim, CallErrors) {
  auto s = sim();
  auto call = [&](pb::CallRequest c) {
    pb::CallResponse out;
    return s.call(c, out).code;
  };
  pb::CallRequest base;
  base.set_device_id("tempctl0");
  base.set_function_id(1);

  auto missing = base;
  EXPECT_EQ(call(missing), pb::Status::CODE_INVALID_ARGUMENT);

  auto wrong_type = base;
  pb::Value b;
  b.set_type(pb::VALUE_TYPE_BOOL);
  b.set_bool_value(true);
  (*wrong_type.mutable_args())["value"] = b;
  EXPECT_EQ(call(wrong_type), pb::Status::CODE_INVALID_ARGUMENT);

  auto lying_type = base;
  pb::Value lie = dbl(20);
  lie.set_type(pb::VALUE_TYPE_INT64);  // the tag says int64, the value is a double
  (*lying_type.mutable_args())["value"] = lie;
  EXPECT_EQ(call(lying_type), pb::Status::CODE_INVALID_ARGUMENT);

  auto unknown_arg = base;
  (*unknown_arg.mutable_args())["value"] = dbl(20);
  (*unknown_arg.mutable_args())["extra"] = dbl(1);
  EXPECT_EQ(call(unknown_arg), pb::Status::CODE_INVALID_ARGUMENT);

  auto too_hot = base;
  (*too_hot.mutable_args())["value"] = dbl(99);
  // Semantics §8.3: a value outside the declared bounds is INVALID_ARGUMENT.
  EXPECT_EQ(call(too_hot), pb::Status::CODE_INVALID_ARGUMENT);
  auto too_cold = base;
  (*too_cold.mutable_args())["value"] = dbl(4.5);
  EXPECT_EQ(call(too_cold), pb::Status::CODE_INVALID_ARGUMENT);
  pb::CallRequest channel;
  channel.set_device_id("relay0");
  channel.set_function_name("select_channel");
  pb::Value eight;
  eight.set_type(pb::VALUE_TYPE_UINT64);
  eight.set_uint64_value(8);
  (*channel.mutable_args())["channel"] = eight;
  EXPECT_EQ(call(channel), pb::Status::CODE_INVALID_ARGUMENT);

  auto no_fn = base;
  no_fn.set_function_id(3);
  EXPECT_EQ(call(no_fn), pb::Status::CODE_NOT_FOUND);

  auto no_name = base;
  no_name.set_function_id(0);
  no_name.set_function_name("explode");
  EXPECT_EQ(call(no_name), pb::Status::CODE_NOT_FOUND);

  auto neither = base;
  neither.set_function_id(0);
  EXPECT_EQ(call(neither), pb::Status::CODE_INVALID_ARGUMENT);

  // Semantics §6.2: function_id wins over a differing function_name. Id 1 is
  // set_setpoint; the name says set_heater, whose argument "on" is not given:
  // the call runs set_setpoint.
  auto mismatch = base;
  mismatch.set_function_name("set_heater");
  (*mismatch.mutable_args())["value"] = dbl(20);
  pb::CallResponse by_id;
  ASSERT_EQ(s.call(mismatch, by_id).code, pb::Status::CODE_OK);
  EXPECT_EQ(by_id.results().at("setpoint_c").double_value(), 20.0);
  EXPECT_EQ(by_id.results().count("heater_on"), 0u);
  // An unknown id is NOT_FOUND even when the name is a real function's.
  auto bad_id = base;
  bad_id.set_function_id(9);
  bad_id.set_function_name("set_setpoint");
  (*bad_id.mutable_args())["value"] = dbl(20);
  EXPECT_EQ(call(bad_id), pb::Status::CODE_NOT_FOUND);

  auto late = base;
  (*late.mutable_args())["value"] = dbl(20);
  late.mutable_deadline()->set_seconds(1);
  EXPECT_EQ(call(late), pb::Status::CODE_DEADLINE_EXCEEDED);

  auto no_device = base;
  no_device.set_device_id("ghost");
  EXPECT_EQ(call(no_device), pb::Status::CODE_NOT_FOUND);
}

TEST(AdppSim, NotReadyUntilInitTimeAndWaitReadyHint) {
  auto s = sim(60'000);
  pb::CallRequest c;
  c.set_device_id("tempctl0");
  c.set_function_id(2);
  pb::Value on;
  on.set_type(pb::VALUE_TYPE_BOOL);
  on.set_bool_value(true);
  (*c.mutable_args())["on"] = on;
  pb::CallResponse out;
  EXPECT_EQ(s.call(c, out).code, pb::Status::CODE_UNAVAILABLE);
  pb::WaitReadyRequest w;
  w.set_max_wait_ms_hint(10);
  pb::WaitReadyResponse wr;
  EXPECT_EQ(s.wait_ready(w, wr).code, pb::Status::CODE_DEADLINE_EXCEEDED);
  pb::GetHealthResponse h;
  ASSERT_EQ(s.get_health({}, h).code, pb::Status::CODE_OK);
  EXPECT_EQ(h.provider().state(), pb::ProviderHealth::STATE_DEGRADED);

  auto ready = sim(0);
  pb::WaitReadyResponse ok;
  ASSERT_EQ(ready.wait_ready(w, ok).code, pb::Status::CODE_OK);
  EXPECT_EQ(ok.diagnostics().at("init_time_ms"), "0");
}

TEST(AdppSim, ConfigErrorsAreNamed) {
  auto bad = [](const std::string& text) {
    auto c = parse_sim_config(text, "t");
    if (!c.ok()) return c.error();
    auto s = SimProvider::create(*c, "x");
    return s.ok() ? Error{} : s.error();
  };
  EXPECT_EQ(bad("devices { device { device_id: 3 } }").kind, "config");
  EXPECT_NE(bad("devices { device { device_id: \"a\" } } devices { device { device_id: \"a\" } }").detail.find("twice"),
            std::string::npos);
  EXPECT_NE(bad("devices { device { device_id: \"a\" } functions { spec { function_id: 2 name: \"f\" } } }")
                .detail.find("ids are 1..N"),
            std::string::npos);
  EXPECT_NE(bad("devices { device { device_id: \"a\" } signals { spec { signal_id: \"s\" value_type: VALUE_TYPE_BOOL } "
                "initial { double_value: 1 } } }")
                .detail.find("another type"),
            std::string::npos);
  EXPECT_NE(bad("devices { device { device_id: \"a\" } functions { spec { name: \"f\" } writes { key: \"x\" value: "
                "\"s\" } } }")
                .detail.find("unknown argument"),
            std::string::npos);
  EXPECT_EQ(load_sim_config("/nonexistent/adpp.textproto").error().kind, "config");
}

TEST(AdppSim, ExampleConfigsLoadAndBasicIsTheBuiltIn) {
  auto basic = load_sim_config(DOT_SOURCE_DIR "/adpp/examples/basic.textproto");
  ASSERT_TRUE(basic.ok()) << basic.error().line();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*basic, default_sim_config()));
  auto lab = load_sim_config(DOT_SOURCE_DIR "/adpp/examples/lab.textproto");
  ASSERT_TRUE(lab.ok()) << lab.error().line();
  EXPECT_TRUE(SimProvider::create(*lab, "x").ok());
  EXPECT_TRUE(SimProvider::create(*basic, "x").ok());
}

}  // namespace
}  // namespace dot::adpp
