#pragma once
// Where a protocol's frames come from and go to. Every frame reader of the
// project (DPP, Metewand) reads through a ByteSource and writes through a
// ByteSink, so one reader works over a pipe to a child (with a deadline, see
// pipe_io.h), a file, standard input, or memory (tests, fuzzing, benchmarks).

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/result.h"

namespace dot {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads at most `max` (>= 1) bytes into `buf`; returns how many, 0 only at
  // end of stream. A reader never asks for more than it may buffer. An error
  // keeps its code (Code::Io for an I/O failure, Code::Timeout for a passed
  // deadline, or whatever limit the source enforces).
  virtual Result<std::size_t> read(char* buf, std::size_t max) = 0;
};

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Writes every byte or fails.
  virtual Status write(std::string_view bytes) = 0;
};

// A blocking descriptor it does not own (retries EINTR). Errors are Code::Io
// naming `what` ("cannot read standard input: ...").
class FdSource final : public ByteSource {
 public:
  explicit FdSource(int fd, std::string what = "input") : fd_(fd), what_(std::move(what)) {}
  Result<std::size_t> read(char* buf, std::size_t max) override;

 private:
  int fd_;
  std::string what_;
};

class FdSink final : public ByteSink {
 public:
  explicit FdSink(int fd, std::string what = "output") : fd_(fd), what_(std::move(what)) {}
  Status write(std::string_view bytes) override;

 private:
  int fd_;
  std::string what_;
};

// Bytes in memory it does not own, handed out in the chunk sizes given
// (cycled; a 0 puts no extra limit on that read), or as much as asked when
// `chunks` is empty: tests and fuzzers split reads anywhere with it.
class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view bytes, std::vector<std::size_t> chunks = {})
      : bytes_(bytes), chunks_(std::move(chunks)) {}
  Result<std::size_t> read(char* buf, std::size_t max) override;
  std::size_t consumed() const noexcept { return pos_; }
  std::size_t reads() const noexcept { return reads_; }

 private:
  std::string_view bytes_;
  std::vector<std::size_t> chunks_;
  std::size_t pos_ = 0;
  std::size_t next_chunk_ = 0;
  std::size_t reads_ = 0;
};

class StringSink final : public ByteSink {
 public:
  Status write(std::string_view bytes) override {
    out.append(bytes);
    return {};
  }
  std::string out;
};

}  // namespace dot
