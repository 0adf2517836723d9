#pragma once
// The stage check of both profiles (docs/spec/dpp-general.md, "Materialize and
// validate"; docs/spec/dpp-hello.md): the host reads every file the plugin
// staged itself, through the stage's descriptor, never following a symlink,
// streaming (one bounded buffer per file, whatever its size), and holds it
// to the claims. Part of the protocol module so that core's planner and
// `dpp conform` (conformance.h) judge a stage by the same code.
//
// Codes, exactly as the spec says (a claimed size over max_file_bytes, or
// claims together over max_total_bytes, DOT_E_PROTOCOL, is the decoder's:
// general.h): a staged symlink anywhere (on the way to a file, as a file, or anywhere
// else in the stage) DOT_E_PATH_ESCAPE; anything else that differs from the
// claims (an artifact missing, extra, out of order or for another path than
// the write it stands for, not a regular file, a hard link, a size or digest
// other than claimed, a file that grew past its claim while read, a stage
// holding anything else) DOT_E_ARTIFACT_MISMATCH. Every detail names the
// path (escaped: it is plugin-controlled text).

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/fd.h"
#include "dot/base/result.h"
#include "dot/base/sha256.h"
#include "dot/dpp/general.h"
#include "dot/dpp/messages.h"

namespace dot::dpp {

// One staged file as the host holds it to the stage: the write's path (a
// view into the caller's records: the plan's, or the claims it kept) and
// the size and SHA-256 its bytes must have. None for a write that declared
// no digest (ClaimCheck), or for a claim whose text is not 64 lowercase hex
// digits, which no file matches (claimed()).
struct StagedClaim {
  std::string_view path;
  Sha256Digest sha256;
  std::uint64_t size = 0;
};
// What the artifact `claim` of dot.materialize claims, as a StagedClaim.
StagedClaim claimed(const general::Artifact& claim);

// The claims of dot.materialize held to the writes they stand for, one at a
// time as they are decoded (HostSession's artifact sink hands them on), so
// that neither list is ever copied: each claim for the next write, in
// operation order, and, when that write declared its digest (digests
// negotiated), claiming exactly that size and SHA-256. The negotiated limits
// on the claims are the decoder's (general.h). finish() judges the whole
// list as one check would, before a byte is read: an artifact missing,
// extra, out of order or for another path first, then a claim other than
// its write's declaration (DOT_E_ARTIFACT_MISMATCH, the first of each).
class ClaimCheck {
 public:
  // `write_at(i)`, for i below `writes`: the write the i-th claim stands
  // for; its sha256 empty when the write declared nothing.
  ClaimCheck(std::size_t writes, std::function<StagedClaim(std::size_t)> write_at);
  void take(const general::Artifact& claim);
  Status finish() const;

 private:
  std::size_t writes_;
  std::function<StagedClaim(std::size_t)> write_at_;
  std::size_t taken_ = 0;
  std::optional<Error> order_;     // the first claim out of place
  std::optional<Error> declared_;  // the first claim other than its declaration
};

// Reads every claimed file beneath `stage_fd` once the claims hold, in
// order: each a regular single-link file of exactly its claimed size and
// digest.
Status read_stage(int stage_fd, std::span<const StagedClaim> claimed);

// The stage holds nothing but the claimed files and the folders on their
// way: every entry is visited through descriptors (never following a
// symlink). Run once the plugin is gone.
Status check_stage_holds_only(int stage_fd, std::span<const StagedClaim> claimed);

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
