#pragma once
// The host side of ADPP over framed stdio: launch a provider, talk to it with
// absolute deadlines, kill and reap it.
//
// ProviderProcess is the raw transport (the conformance suite sends malformed
// bytes through it); Client adds what a well-behaved host does: request ids,
// correlation of one outstanding request, the Hello version and metadata
// checks, and a per-request deadline that is one absolute point in time, so a
// provider dripping its answer a byte at a time cannot stretch it.
//
// ProviderProcess kills and reaps the provider's process group. A Client also
// leaves nothing else behind: launching it makes this process a child
// subreaper (dot::OrphanSweep, the sweep the DPP host does), so a descendant
// that left the group with setsid() is re-parented here when its parent dies,
// and shutdown() and the destructor kill and reap every such orphan. Spawn
// every other child of a host through dot::spawn(), or the sweep takes it
// for an orphan; and sweep in one place where providers run side by side
// (the conformance runner sweeps once, after its last case).
//
// Errors are Code::Protocol with these kinds (Code::Timeout "timeout", as
// in every host of the project; Code::Io "spawn" when the provider cannot be
// started, "subreaper" when the client cannot become one):
//   timeout     no complete response (or exit) before the deadline
//   closed      the provider closed stdout (between frames); from
//               ProviderProcess::write, it closed its stdin (a Client never
//               says that: whether a write to a provider that is exiting is
//               refused is a race, so a Client reads stdout instead)
//   early_eof   the provider closed stdout inside a frame
//   length      a zero or over-cap response prefix
//   parse       a response payload that is not an ADPP Response
//   request_id  a response for another request
//   status      a response whose status is missing, UNSPECIFIED or not a defined code
//   payload     an OK response without the payload of the request, or an error with one
//   version     Hello answered with another protocol_version
//   metadata    Hello metadata missing or wrong for the framed-stdio profile

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dot/adpp/frame.h"
#include "dot/adpp/messages.h"
#include "dot/base/plugin_child.h"
#include "dot/base/process.h"
#include "dot/base/result.h"

namespace dot::adpp {

struct LaunchOptions {
  // The provider's environment ("KEY=VALUE"); nullopt passes ours on.
  std::optional<std::vector<std::string>> env;
  std::string cwd;
  // How much of the provider's stderr to keep for diagnostics (the rest is
  // drained and dropped so the provider never blocks on it).
  std::size_t stderr_keep = 4096;
};

class ProviderProcess {
 public:
  // argv[0] is a path, or a name looked up in PATH (dot::find_executable).
  static Result<ProviderProcess> launch(const std::vector<std::string>& argv, const LaunchOptions& options = {});

  ProviderProcess(ProviderProcess&&) noexcept = default;
  ProviderProcess& operator=(ProviderProcess&&) noexcept = default;

  // Writes all bytes to the provider's stdin before the deadline.
  Status write(std::string_view bytes, Clock::time_point deadline);
  Status send(const pb::Request& request, Clock::time_point deadline);
  // The next response frame (parsed) before the deadline.
  Result<pb::Response> read_response(Clock::time_point deadline);
  // Waits for end of stdout; returns how many bytes arrived that no
  // read_response() took (0 for a provider that wrote nothing more).
  Result<std::size_t> read_to_eof(Clock::time_point deadline);
  void close_stdin() { child_.close_input(); }
  // The exit status once the provider has exited, nullopt at the deadline.
  std::optional<ExitStatus> wait_exit(Clock::time_point deadline);
  ExitStatus kill_and_reap() { return child_.kill_and_reap(); }
  // The last stderr_keep bytes the provider wrote to stderr (drained so far).
  std::string stderr_tail() const { return child_.stderr_log().bytes(); }
  pid_t pid() const noexcept { return child_.pid(); }

 private:
  friend class Client;
  ProviderProcess() = default;
  // `sweep_orphans`: the provider's child owns the orphan sweep (a Client).
  static Result<ProviderProcess> launch(const std::vector<std::string>& argv, const LaunchOptions& options,
                                        bool sweep_orphans);
  // Reads stdout (draining stderr) until `want` is satisfied; false at the deadline.
  enum class Want { Frame, Eof };
  Result<bool> pump(Clock::time_point deadline, Want want);

  PluginChild child_;
  FrameReader reader_;
};

struct ClientOptions {
  std::chrono::milliseconds request_timeout{5000};
  std::string client_name = "dot-core";
  std::string client_version;
  LaunchOptions launch;
};

class Client {
 public:
  static Result<Client> launch(const std::vector<std::string>& argv, const ClientOptions& options = {});

  // Hello with version "v1"; checks the echo, the version and the profile's metadata.
  Result<pb::HelloResponse> hello();
  // Sends one request with the next request id (or the one already set when
  // non-zero) and returns its response, checked for correlation, a defined
  // status, and the payload matching the request when the status is OK.
  Result<pb::Response> request(pb::Request request);
  // Closes stdin and waits (up to the request timeout) for a clean exit,
  // then kills and reaps whatever is left: the group, then every orphan.
  Result<ExitStatus> shutdown();

  ProviderProcess& process() noexcept { return process_; }

 private:
  // The provider is launched sweeping orphans: they are swept once it is
  // dead and reaped (they are re-parented to us then).
  Client(ProviderProcess p, ClientOptions o) : process_(std::move(p)), options_(std::move(o)) {}
  ProviderProcess process_;
  ClientOptions options_;
  std::uint64_t next_id_ = 1;
};

// Checks Hello metadata against the framed-stdio profile (kind "metadata").
Status check_hello_metadata(const pb::HelloResponse& hello);
// Checks a response against its request: id, defined status, payload (kinds
// request_id, status, payload).
Status check_response(const pb::Request& request, const pb::Response& response);

}  // namespace dot::adpp
