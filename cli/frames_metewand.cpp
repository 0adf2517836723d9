// frames decode --format metewand: one JSON object per frame of a captured
// Metewand JSON-lines stream, then the clean end or the first FrameError
// (spec/cli.md). The FrameReader is the one the worker session uses.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "commands.h"
#include "dot/base/fd.h"
#include "dot/base/jcs.h"
#include "dot/metewand/byte_source.h"
#include "dot/metewand/frame_reader.h"
#include "output.h"

namespace dot::cli {

int decode_frames_metewand(const FramesOptions& options) {
  UniqueFd file;
  int fd = STDIN_FILENO;
  std::string what = "standard input";
  if (options.input != "-") {
    file.reset(::open(options.input.c_str(), O_RDONLY | O_CLOEXEC));
    if (!file)
      return report(make_error(Code::Io, "open", fmt::format("cannot open {}: {}", options.input, std::strerror(errno))));
    fd = file.get();
    what = options.input;
  }
  metewand::FdByteSource source(fd, what);
  metewand::FrameReader reader(source);
  std::uint64_t frames = 0;
  std::string out;
  for (;;) {
    std::optional<metewand::FrameError> error;
    if (options.count_only) {
      auto line = reader.next_line();
      if (!line.ok()) error = std::move(line).error();
      else if (!line->has_value()) break;
      else ++frames;
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
        out = fmt::format("{{\"frame\":{},\"offset\":{},\"value\":{}}}\n", frames, (*frame)->offset, *value);
        if (!write_stdout(out)) return report(make_error(Code::Io, "write", "cannot write standard output"));
      }
    }
    if (error) {
      std::string payload = error->json_payload();
      std::string name;
      jcs::append_string(name, error->name());
      out = fmt::format("{{\"error\":{},\"offset\":{}{}{}}}\n", name, error->offset, payload.empty() ? "" : ",",
                        payload);
      (void)write_stdout(out);
      return report(error->to_error());
    }
  }
  out = fmt::format("{{\"end\":\"eof\",\"frames\":{}}}\n", frames);
  if (!write_stdout(out)) return report(make_error(Code::Io, "write", "cannot write standard output"));
  return kExitOk;
}

}  // namespace dot::cli
