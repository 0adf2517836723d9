#pragma once
// What every `frames decode` format shares: the captured stream it reads
// (a file or standard input) and the line a clean stream ends with.

#include <cstdint>
#include <string>

#include "commands.h"
#include "dot/base/byte_stream.h"
#include "dot/base/fd.h"
#include "dot/base/result.h"

namespace dot::cli {

// The file options.input names, or standard input for "-", read
// incrementally (a decoder never holds more than one frame).
class FramesCapture {
 public:
  static Result<FramesCapture> open(const FramesOptions& options);
  ByteSource& source() { return source_; }

 private:
  FramesCapture(UniqueFd file, int fd, std::string what) : file_(std::move(file)), source_(fd, std::move(what)) {}
  UniqueFd file_;  // empty for standard input
  FdSource source_;
};

// {"end":"eof","frames":N}: the last line of a stream that ended cleanly.
std::string frames_end_line(std::uint64_t frames);

// Writes frames_end_line; kExitOk, or the reported write error.
int finish_frames(std::uint64_t frames);

}  // namespace dot::cli
