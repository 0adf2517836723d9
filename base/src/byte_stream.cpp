// ByteSource and ByteSink over descriptors and memory, the I/O every frame reader uses (byte_stream.h).
#include "dot/base/byte_stream.h"
#include "dot/base/error_kinds.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "dot/base/fd.h"

namespace dot {

Result<std::size_t> FdSource::read(char* buf, std::size_t max) {
  for (;;) {
    ssize_t n = ::read(fd_, buf, max);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno != EINTR)
      return make_error(base::ErrorKind::Read, fmt::format("cannot read {}: {}", what_, std::strerror(errno)));
  }
}

Status FdSink::write(std::string_view bytes) { return write_all(fd_, bytes, what_); }

Result<std::size_t> MemorySource::read(char* buf, std::size_t max) {
  ++reads_;
  std::size_t n = std::min(max, bytes_.size() - pos_);
  if (!chunks_.empty()) {
    std::size_t chunk = chunks_[next_chunk_];
    next_chunk_ = (next_chunk_ + 1) % chunks_.size();
    if (chunk != 0) n = std::min(n, chunk);
  }
  if (n > 0) std::memcpy(buf, bytes_.data() + pos_, n);
  pos_ += n;
  return n;
}

}  // namespace dot
