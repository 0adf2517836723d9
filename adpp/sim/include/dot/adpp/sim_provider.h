#pragma once
// adpp-sim's devices: a ProviderHandler over simulated devices described by a
// SimConfig (protobuf text format, adpp/examples/*.textproto).
//
// Semantics (docs/adpp.md): unknown device, function or signal -> NOT_FOUND
// (a ReadSignals naming any unknown signal fails as a whole); a missing,
// unknown or wrongly typed argument -> INVALID_ARGUMENT; a number outside
// its declared range -> OUT_OF_RANGE; a Call before initialisation finished
// -> UNAVAILABLE; a Call whose deadline has passed -> DEADLINE_EXCEEDED.
// Function ids are 1..N in declaration order per device.

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dot/adpp/provider.h"
#include "dot/adpp/sim/v1/sim_config.pb.h"
#include "dot/base/result.h"

namespace dot::adpp {

namespace simpb = ::dot::adpp::sim::v1;

// Reads a SimConfig in text format; errors are Code::Validation naming the
// file, line and column (kind "config").
Result<simpb::SimConfig> load_sim_config(const std::string& path);
Result<simpb::SimConfig> parse_sim_config(const std::string& text, const std::string& what);
// The built-in configuration used without --config (the same devices as
// adpp/examples/basic.textproto).
simpb::SimConfig default_sim_config();

class SimProvider final : public ProviderHandler {
 public:
  // Checks the config (unique ids, matching types, writes naming real
  // signals); Code::Validation kind "config" otherwise.
  static Result<SimProvider> create(simpb::SimConfig config, std::string version);

  ProviderInfo info() const override;
  Reply list_devices(const pb::ListDevicesRequest& request, pb::ListDevicesResponse& response) override;
  Reply describe_device(const pb::DescribeDeviceRequest& request, pb::DescribeDeviceResponse& response) override;
  Reply read_signals(const pb::ReadSignalsRequest& request, pb::ReadSignalsResponse& response) override;
  Reply call(const pb::CallRequest& request, pb::CallResponse& response) override;
  Reply get_health(const pb::GetHealthRequest& request, pb::GetHealthResponse& response) override;
  Reply wait_ready(const pb::WaitReadyRequest& request, pb::WaitReadyResponse& response) override;

 private:
  struct Device {
    pb::Device device;
    pb::CapabilitySet capabilities;
    std::vector<simpb::SimSignal> signals;
    std::vector<simpb::SimFunction> functions;
    std::map<std::string, pb::Value> values;  // current value per signal id
  };
  SimProvider(simpb::SimConfig config, std::string version);
  Device* find(const std::string& device_id);
  bool ready() const;
  pb::Value sample(const Device& d, const simpb::SimSignal& s) const;

  simpb::SimConfig config_;
  std::string version_;
  std::vector<Device> devices_;
  std::chrono::steady_clock::time_point started_;
  std::uint64_t operations_ = 0;
};

}  // namespace dot::adpp
