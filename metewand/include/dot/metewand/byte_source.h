#pragma once
// ByteSource: where a FrameReader gets its bytes. The reader assumes nothing
// about how a source fragments its data; a source returns as many bytes as it
// likes (at least one), or end of stream, or an error.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/result.h"

namespace dot::metewand {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `capacity` bytes (capacity >= 1) into `buffer`. Returns the
  // number of bytes read, 0 only at end of stream, or an error (its code is
  // kept: Code::Io for an I/O failure, Code::Timeout for a passed deadline).
  virtual Result<std::size_t> read(char* buffer, std::size_t capacity) = 0;
};

// A blocking descriptor (pipe, file, socket); retries EINTR. Does not own fd.
class FdByteSource final : public ByteSource {
 public:
  explicit FdByteSource(int fd, std::string what = "protocol stream") : fd_(fd), what_(std::move(what)) {}
  Result<std::size_t> read(char* buffer, std::size_t capacity) override;

 private:
  int fd_;
  std::string what_;
};

// Bytes in memory, handed out in the chunk sizes given (cycled), or all at
// once when `chunks` is empty. For tests, fuzzing and benchmarks.
class MemoryByteSource final : public ByteSource {
 public:
  explicit MemoryByteSource(std::string_view bytes, std::vector<std::size_t> chunks = {})
      : bytes_(bytes), chunks_(std::move(chunks)) {}
  Result<std::size_t> read(char* buffer, std::size_t capacity) override;
  std::size_t consumed() const noexcept { return pos_; }
  std::size_t reads() const noexcept { return reads_; }

 private:
  std::string_view bytes_;
  std::vector<std::size_t> chunks_;
  std::size_t pos_ = 0;
  std::size_t next_chunk_ = 0;
  std::size_t reads_ = 0;
};

}  // namespace dot::metewand
