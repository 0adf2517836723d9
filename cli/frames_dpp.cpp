// dot-core frames decode --format dpp: the DPP decoder as a command, over a
// captured stream read incrementally (never more than one frame in memory).
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "commands.h"
#include "dot/base/byte_stream.h"
#include "dot/base/error_kinds.h"
#include "dot/base/fd.h"
#include "dot/dpp/body.h"
#include "dot/dpp/frame.h"
#include "json_writer.h"
#include "output.h"

namespace dot::cli {

namespace {

std::string error_line(const Error& e) {
  JsonWriter w;
  w.begin_object().key("error").string(e.kind).key("offset").number(e.offset.value_or(0));
  w.key("detail").string(e.detail).end_object();
  return std::move(w).line();
}

}  // namespace

int decode_frames_dpp(const FramesOptions& options) {
  UniqueFd file;
  int fd = STDIN_FILENO;
  if (options.input != "-") {
    file.reset(::open(options.input.c_str(), O_RDONLY | O_CLOEXEC));
    if (!file)
      return report(
          make_error(base::ErrorKind::Open, fmt::format("cannot open {}: {}", options.input, std::strerror(errno))));
    fd = file.get();
  }
  FdSource source(fd, options.input == "-" ? "standard input" : options.input);
  dpp::FrameReader reader(source);
  std::uint64_t count = 0;
  for (;;) {
    auto frame = reader.next();
    Status st;
    if (frame.ok() && frame->has_value()) st = dpp::check_body((*frame)->body, (*frame)->body_offset);
    if (!frame.ok() || !st.ok()) {
      Error e = frame.ok() ? st.error() : frame.error();
      if (e.code != Code::Protocol) return report(e);
      if (!write_stdout(error_line(e)))
        return report(make_error(base::ErrorKind::Write, "cannot write standard output"));
      report(e);
      return kExitError;
    }
    if (!frame->has_value()) break;
    ++count;
    if (!options.count_only) {
      JsonWriter w;
      w.begin_object().key("frame").number(count).key("offset").number((*frame)->offset);
      w.key("value").raw(dpp::compact_json((*frame)->body)).end_object();
      if (!write_stdout(std::move(w).line()))
        return report(make_error(base::ErrorKind::Write, "cannot write standard output"));
    }
  }
  JsonWriter end;
  end.begin_object().key("end").string("eof").key("frames").number(count).end_object();
  if (!write_stdout(std::move(end).line()))
    return report(make_error(base::ErrorKind::Write, "cannot write standard output"));
  return kExitOk;
}

}  // namespace dot::cli
