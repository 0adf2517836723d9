#pragma once
// StreamCapture: a child's log stream (its stderr, or a stdout that carries no
// protocol) read without ever blocking and kept within a byte cap. A child
// that writes more than its pipe holds blocks until someone reads; the host
// therefore drains every capture whenever it waits for anything (pipe_io.h),
// keeps at most `cap` bytes and counts the rest.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "dot/base/fd.h"

namespace dot {

class StreamCapture {
 public:
  enum class Keep : std::uint8_t {
    First,        // the first `cap` bytes (what the child said first)
    Last,         // the last `cap` bytes (what the child said before it failed)
    FirstOrFail,  // the first `cap` bytes; one more is a limit violation
                  // (pipe_io.h reports it as Code::Protocol kind "capture_limit")
  };

  StreamCapture() = default;  // closed and empty
  // Takes the read end of the stream and makes it non-blocking. `what` names
  // the stream in errors ("the plugin's stderr").
  StreamCapture(UniqueFd fd, std::size_t cap, Keep keep, std::string what);

  // Reads what the stream holds now (a bounded number of reads, so a child
  // that writes as fast as we read cannot hold us here), without blocking.
  // The stream is closed at its end or on a read error.
  void drain();
  void close() noexcept { fd_.reset(); }
  bool open() const noexcept { return fd_.valid(); }
  int fd() const noexcept { return fd_.get(); }

  const std::string& bytes() const noexcept { return kept_; }
  std::uint64_t total() const noexcept { return total_; }
  bool truncated() const noexcept { return total_ > kept_.size(); }
  // A FirstOrFail capture that received more than its cap.
  bool over_limit() const noexcept { return keep_ == Keep::FirstOrFail && truncated(); }
  std::size_t cap() const noexcept { return cap_; }
  const std::string& what() const noexcept { return what_; }

 private:
  UniqueFd fd_;
  std::size_t cap_ = 0;
  Keep keep_ = Keep::First;
  std::string what_;
  std::string kept_;
  std::uint64_t total_ = 0;
};

}  // namespace dot
