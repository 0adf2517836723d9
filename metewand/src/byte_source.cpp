#include "dot/metewand/byte_source.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace dot::metewand {

Result<std::size_t> FdByteSource::read(char* buffer, std::size_t capacity) {
  for (;;) {
    ssize_t n = ::read(fd_, buffer, capacity);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno == EINTR) continue;
    return make_error(Code::Io, "read", fmt::format("cannot read the {}: {}", what_, std::strerror(errno)));
  }
}

Result<std::size_t> MemoryByteSource::read(char* buffer, std::size_t capacity) {
  ++reads_;
  std::size_t left = bytes_.size() - pos_;
  std::size_t n = std::min(left, capacity);
  if (!chunks_.empty()) {
    std::size_t chunk = std::max<std::size_t>(1, chunks_[next_chunk_]);
    next_chunk_ = (next_chunk_ + 1) % chunks_.size();
    n = std::min(n, chunk);
  }
  if (n > 0) std::memcpy(buffer, bytes_.data() + pos_, n);
  pos_ += n;
  return n;
}

}  // namespace dot::metewand
