#pragma once
// The general-profile plugin runtime (docs/spec/dpp-general.md): what a plugin
// author links to speak org.dot.dpp/v1. The author supplies the handlers; the
// runtime does the framing (16 MiB bodies), the decoding, the lifecycle order
// (dot.initialize, dot.plan, dot.materialize, dot.validate, dot.shutdown,
// ids 1..5), the echo, and every protocol answer:
//
//   a body that is not one JSON value            -32700, "id":null
//   not a request object with "jsonrpc":"2.0",
//     a string method and a positive integer id  -32600 (id echoed when valid)
//   an id out of the order 1..5                  -32600
//   an unknown method, or one out of order       -32601
//   params that fail the method's schema (unknown,
//     missing or mistyped fields, wrong profile,
//     protocol, limits, assurance, nonce or
//     capabilities)                              -32602
//   a handler's error                            -32000, "Plugin error: <detail>"
//   a handler's invalid_params(detail)           -32602, "Invalid params: <detail>"
//   a result it cannot send (a string that is not
//     UTF-8, a body over max_frame_bytes)        -32603
//
// Every message is valid UTF-8 of at most 4096 bytes (cut at a character
// boundary); the reason also goes to the error sink. After each answer it
// keeps reading. End of input after the dot.shutdown answer: exit
// status 0; before it: 1. A frame that breaks the framing rules cannot be
// answered: 1 at once, nothing more written. A failed write (the host went
// away): 1. Diagnostics go to the error sink (stderr), never to stdout.
//
//   class Mirror : public dot::dpp::general::Plugin { ... };
//   int main() { Mirror m; return dot::dpp::general::serve(m); }
//
// Logging: a handler may call ctx.log(level, message) while it runs, when
// the plugin wants log (wants_log()) and core offered it; each call is one
// dot.log notification written before the handler's answer. Outside a
// handler, without negotiation, with a bad level or a message over 4096
// bytes, or past max_log_messages, log() sends nothing and returns the error.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/byte_stream.h"
#include "dot/base/result.h"
#include "dot/dpp/general.h"

namespace dot::dpp::general {

class Runtime;

// What a handler gets: the initialize params as received, and log().
class Context {
 public:
  explicit Context(Runtime& rt) : rt_(rt) {}
  Status log(std::string_view level, std::string_view message);
  // Whether log was negotiated (during dot.initialize: will be).
  bool log_negotiated() const noexcept;
  const InitializeParams& initialize_params() const noexcept;
  // Whether digests were negotiated (the plugin declares_digests() and core offered them).
  bool digests_negotiated() const noexcept;
  // The plugin's cache folder when "cache" was negotiated (the plugin
  // keeps_cache() and core offered it; during dot.initialize: will be),
  // else nullptr. The folder is the plugin's alone and outlives the run:
  // what it finds there was written by an earlier run of itself, or is
  // gone (core may empty it; docs/spec/dpp-general.md, "The plugin's cache").
  const std::string* cache_folder() const noexcept;
  // During dot.materialize: the writes to stage, in operation order. With
  // digests, the paths core named (only what it needs); without, every write.
  const std::vector<std::string>& paths_to_stage() const noexcept;

 private:
  Runtime& rt_;
};

// Where Plugin::plan_each puts the operations, one at a time, in order.
// With "batches" negotiated, each full batch (kBatchElements) goes out as a
// dot.operations notification as soon as the next operation shows it is
// not the last; without, they are kept for the result. An error from add()
// is the runtime's (a write without the digest negotiation requires, a
// batch it cannot send): the plugin returns it, and the runtime answers
// the request with it.
class OperationOut {
 public:
  virtual ~OperationOut() = default;
  virtual Status add(Operation op) = 0;
};

// Where Plugin::materialize_each puts the artifacts, one for each path of
// Context::paths_to_stage(), in that order: batched as OperationOut's
// operations are (dot.artifacts notifications), so a stage of 100,000 files
// never has its list whole. An error from add() is the runtime's (a batch it
// cannot send); the plugin returns it.
class ArtifactOut {
 public:
  virtual ~ArtifactOut() = default;
  virtual Status add(Artifact art) = 0;
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  // The id the manifest names (echoed as "id").
  virtual std::string id() const = 0;
  // Ask for "log" when core offers it.
  virtual bool wants_log() const { return false; }
  // Declare each write's SHA-256 and size in dot.plan (Operation::digest)
  // when core offers "digests"; then dot.materialize stages only
  // Context::paths_to_stage(). Without an offer the runtime drops the
  // digests from the answer and every write is to be staged.
  virtual bool declares_digests() const { return false; }
  // Ask for "cache" when core offers it: a folder of the plugin's own that
  // stays from one run to the next (Context::cache_folder()).
  virtual bool keeps_cache() const { return false; }
  // After the params passed the profile's checks, before the echo: a plugin
  // may look at its inputs here. An error is answered -32000.
  virtual Status initialize(Context& ctx, const InitializeParams& params);
  // The operations, given the paths the plugin owns ("managed"). The runtime
  // adds the one root-sync effect. A plugin overrides this or plan_each
  // (the default of each is the other's form; this one's alone is an error).
  virtual Result<std::vector<Operation>> plan(Context& ctx, const std::vector<std::string>& managed);
  // The same operations handed to `out` in order instead of returned, for a
  // plan too large to hold whole (100,000 paths: each batch is sent as it
  // fills). By default, what plan() returns, handed on.
  virtual Status plan_each(Context& ctx, const std::vector<std::string>& managed, OperationOut& out);
  // The modes of the folders the last plan() asks core to create when they
  // are missing (dot.plan `directories`: each the parent folder of one of
  // its writes, ascending). None by default: core creates them 0700.
  virtual std::vector<FolderRequest> folders() const { return {}; }
  // Write each path of ctx.paths_to_stage() (every planned write unless
  // digests were negotiated) into `stage` (see write_staged_file) and return
  // one artifact each, in that order. A plugin overrides this or
  // materialize_each (the default of each is the other's form; this one's
  // alone is an error).
  virtual Result<std::vector<Artifact>> materialize(Context& ctx, const std::string& stage);
  // The same artifacts handed to `out` as each file is staged instead of
  // returned, for a stage too large to list whole. By default, what
  // materialize() returns, handed on.
  virtual Status materialize_each(Context& ctx, const std::string& stage, ArtifactOut& out);
};

// The id this plugin runs under: DOT_PLUGIN_ID when the host set it to a
// valid plugin id (dot-core sets the id it registered the plugin under),
// else `fallback`. For a plugin that may be registered under several ids.
std::string registered_id(std::string_view fallback);

// The whole session over `in`/`out`, diagnostics to `err`; the exit status.
int serve(Plugin& plugin, ByteSource& in, ByteSink& out, ByteSink& err);
// stdin, stdout, stderr.
int serve(Plugin& plugin);

// What a handler returns for params its plugin refuses beyond the profile's
// schema (a plugin that takes exactly one input, given two): answered -32602
// "Invalid params" instead of -32000. Code::Protocol, kind "invalid_params".
Error invalid_params(std::string detail);

// The operation proposing that `path` become a symbolic link holding
// `link_text` (action "link", mode 0): nothing is staged for it; core
// checks the text (path_rules.h check_link_text) and writes the link itself.
Operation link_operation(std::string path, std::string link_text);

// Writes `bytes` at the relative `path` beneath `stage`, creating missing
// folders (0700) component by component through descriptors, never through a
// symlink (DOT_E_PATH_ESCAPE, as for a path that is not plain relative
// names); the file is created exclusively (0600). Returns its artifact
// {path, sha256, size}.
Result<Artifact> write_staged_file(const std::string& stage, std::string_view path, std::string_view bytes);

// The same with the bytes read from `source` (from its offset to end of
// file) in chunks, hashed as they pass, never held whole: a file of any size
// in constant memory. A source with more than `max_bytes` is refused once
// the first byte over has been read (Code::Io, kind "too_large"); a read
// error is Code::Io with its errno's kind.
Result<Artifact> copy_staged_file(const std::string& stage, std::string_view path, int source, std::uint64_t max_bytes);

}  // namespace dot::dpp::general
