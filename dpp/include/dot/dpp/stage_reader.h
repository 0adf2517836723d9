#pragma once
// The stage check of both profiles (docs/spec/dpp-general.md, "Materialize and
// validate"; docs/spec/dpp-hello.md): the host reads every file the plugin
// staged itself, through the stage's descriptor, never following a symlink,
// streaming (one bounded buffer per file, whatever its size), and holds it
// to the claims. Part of the protocol module so that core's planner and
// `dpp conform` (conformance.h) judge a stage by the same code.
//
// Codes, exactly as the spec says: a claimed size over max_file_bytes, or
// claims together over max_total_bytes, DOT_E_PROTOCOL (a negotiated limit);
// a staged symlink anywhere (on the way to a file, as a file, or anywhere
// else in the stage) DOT_E_PATH_ESCAPE; anything else that differs from the
// claims (an artifact missing, extra, out of order or for another path than
// the write it stands for, not a regular file, a hard link, a size or digest
// other than claimed, a file that grew past its claim while read, a stage
// holding anything else) DOT_E_ARTIFACT_MISMATCH. Every detail names the
// path (escaped: it is plugin-controlled text).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/fd.h"
#include "dot/base/result.h"
#include "dot/dpp/general.h"
#include "dot/dpp/messages.h"

namespace dot::dpp {

struct StageLimits {
  std::uint64_t max_file_bytes = general::kLimits.max_file_bytes;
  std::uint64_t max_total_bytes = general::kLimits.max_total_bytes;
  // A file's bytes are kept (for the diff `plan` prints) when it has at most
  // keep_file_bytes and all kept bytes stay within keep_total_bytes.
  std::size_t keep_file_bytes = 0;
  std::size_t keep_total_bytes = 0;
};

// What core read of one staged file.
struct StagedFile {
  std::string path;
  std::uint64_t size = 0;
  std::string sha256;
  std::optional<std::string> content;  // when kept (StageLimits)
};

// The claims alone, before a byte is read: each within max_file_bytes and
// all within max_total_bytes (DOT_E_PROTOCOL), and exactly one per path of
// `writes` (the plan's write paths, in operation order), in that order.
Status check_claims(std::span<const std::string> writes, std::span<const general::Artifact> claimed,
                    const StageLimits& limits);

// Reads every claimed artifact beneath `stage_fd` once check_claims holds;
// each a regular single-link file of exactly its claimed size and digest.
Result<std::vector<StagedFile>> read_stage(int stage_fd, std::span<const std::string> writes,
                                           std::span<const general::Artifact> claimed, const StageLimits& limits);

// The stage holds nothing but the claimed files and the folders on their
// way: every entry is visited through descriptors (never following a
// symlink). Run once the plugin is gone.
Status check_stage_holds_only(int stage_fd, std::span<const general::Artifact> claimed);

// ---- the hello profile (docs/spec/dpp-hello.md): flat names, no folders ----
// Each claimed artifact read back beneath `stage_fd`: a regular single-link
// file of mode 0600 (hello::kArtifactMode), 1 to hello::kMaxArtifactSize bytes, of
// its claimed size and digest; a symlink DOT_E_PATH_ESCAPE, anything else
// DOT_E_ARTIFACT_MISMATCH. The bytes of each, in claim order.
Result<std::vector<std::string>> read_hello_stage(int stage_fd, const MaterializeResult& claimed);
// The stage holds nothing but the claimed artifacts. Run once the plugin is gone.
Status check_hello_stage_holds_only(int stage_fd, const MaterializeResult& claimed);

// Opens staged `path` for reading (regular, single link, no symlink on the
// way): how the seal streams a verified file into the store, which checks
// its size and digest again as it reads.
Result<UniqueFd> open_staged_file(int stage_fd, std::string_view path);

}  // namespace dot::dpp
