#pragma once
// Where frames come from and go to. FrameReader and FrameWriter work over any
// byte source or sink: a pipe to a plugin (with a deadline, see
// host_session.h), a file, standard input, or memory (tests, fuzzing).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "dot/base/result.h"

namespace dot::dpp {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads at most `max` (>= 1) bytes into `buf`; returns how many, 0 at end
  // of stream. A reader never asks for more than it is allowed to buffer.
  virtual Result<std::size_t> read(char* buf, std::size_t max) = 0;
};

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Writes every byte or fails.
  virtual Status write(std::string_view bytes) = 0;
};

// A blocking descriptor (retries EINTR). Errors are Code::Io naming `what`.
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

// Bytes in memory, handed out at most `chunk` at a time (0: no extra limit),
// so tests can split reads anywhere. Does not own the bytes.
class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view bytes, std::size_t chunk = 0) : bytes_(bytes), chunk_(chunk) {}
  Result<std::size_t> read(char* buf, std::size_t max) override;
  std::size_t consumed() const noexcept { return pos_; }

 private:
  std::string_view bytes_;
  std::size_t chunk_;
  std::size_t pos_ = 0;
};

class StringSink final : public ByteSink {
 public:
  Status write(std::string_view bytes) override {
    out.append(bytes);
    return {};
  }
  std::string out;
};

}  // namespace dot::dpp
