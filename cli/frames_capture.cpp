// The captured stream of `frames decode` and its end line (frames_capture.h).
#include "frames_capture.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "dot/base/error_kinds.h"
#include "json_writer.h"
#include "output.h"

namespace dot::cli {

Result<FramesCapture> FramesCapture::open(const FramesOptions& options) {
  if (options.input == "-") return FramesCapture(UniqueFd(), STDIN_FILENO, "standard input");
  UniqueFd file(::open(options.input.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file)
    return make_error(base::ErrorKind::Open, fmt::format("cannot open {}: {}", options.input, std::strerror(errno)));
  int fd = file.get();
  return FramesCapture(std::move(file), fd, options.input);
}

std::string frames_end_line(std::uint64_t frames) {
  JsonWriter end;
  end.begin_object().key("end").string("eof").key("frames").number(frames).end_object();
  return std::move(end).line();
}

int finish_frames(std::uint64_t frames) {
  if (!write_stdout(frames_end_line(frames))) return report(stdout_error());
  return kExitOk;
}

}  // namespace dot::cli
