// frames decode --format metewand: one JSON object per frame of a captured
// Metewand JSON-lines stream, then the clean end or the first FrameError
// (docs/spec/cli.md). The FrameReader is the one the worker session uses.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "commands.h"
#include "dot/base/byte_stream.h"
#include "dot/base/error_kinds.h"
#include "dot/base/fd.h"
#include "dot/base/jcs.h"
#include "dot/metewand/frame_reader.h"
#include "json_writer.h"
#include "output.h"

namespace dot::cli {

int decode_frames_metewand(const FramesOptions& options) {
  UniqueFd file;
  int fd = STDIN_FILENO;
  std::string what = "standard input";
  if (options.input != "-") {
    file.reset(::open(options.input.c_str(), O_RDONLY | O_CLOEXEC));
    if (!file)
      return report(
          make_error(base::ErrorKind::Open, fmt::format("cannot open {}: {}", options.input, std::strerror(errno))));
    fd = file.get();
    what = options.input;
  }
  FdSource source(fd, what);
  metewand::FrameReader reader(source);
  std::uint64_t frames = 0;
  for (;;) {
    std::optional<metewand::FrameError> error;
    if (options.count_only) {
      auto line = reader.next_line();
      if (!line.ok())
        error = std::move(line).error();
      else if (!line->has_value())
        break;
      else
        ++frames;
    } else {
      auto frame = reader.read_frame();
      if (!frame.ok()) {
        error = std::move(frame).error();
      } else if (!frame->has_value()) {
        break;
      } else {
        ++frames;
        // RFC 8785 rendering: every accepted value has one (numbers as their
        // binary64 value, which is what a Metewand peer means by them).
        auto value = jcs::canonicalize((*frame)->document.root(), jcs::Profile::Rfc8785);
        if (!value.ok()) return report(value.error());
        JsonWriter w;
        w.begin_object().key("frame").number(frames).key("offset").number((*frame)->offset).key("value").raw(*value);
        if (!write_stdout(std::move(w.end_object()).line()))
          return report(make_error(base::ErrorKind::Write, "cannot write standard output"));
      }
    }
    if (error) {
      JsonWriter w;
      w.begin_object().key("error").string(error->name()).key("offset").number(error->offset);
      w.raw_members(error->json_payload()).end_object();
      (void)write_stdout(std::move(w).line());
      return report(error->to_error());
    }
  }
  JsonWriter end;
  end.begin_object().key("end").string("eof").key("frames").number(frames).end_object();
  if (!write_stdout(std::move(end).line()))
    return report(make_error(base::ErrorKind::Write, "cannot write standard output"));
  return kExitOk;
}

}  // namespace dot::cli
