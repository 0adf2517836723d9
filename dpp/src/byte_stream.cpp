#include "dot/dpp/byte_stream.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <unistd.h>

#include <fmt/format.h>

#include "dot/base/fd.h"

namespace dot::dpp {

Result<std::size_t> FdSource::read(char* buf, std::size_t max) {
  for (;;) {
    ssize_t n = ::read(fd_, buf, max);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno != EINTR)
      return make_error(Code::Io, "read", fmt::format("cannot read {}: {}", what_, std::strerror(errno)));
  }
}

Status FdSink::write(std::string_view bytes) { return write_all(fd_, bytes, what_); }

Result<std::size_t> MemorySource::read(char* buf, std::size_t max) {
  std::size_t n = std::min(max, bytes_.size() - pos_);
  if (chunk_ != 0) n = std::min(n, chunk_);
  std::memcpy(buf, bytes_.data() + pos_, n);
  pos_ += n;
  return n;
}

}  // namespace dot::dpp
