#pragma once
// The bytes of a file or stream, read whole into one buffer followed by
// json::kPadding zero bytes: the input json::Parser::parse_borrowed reads in
// place (jcs canonicalize of a file or of standard input).

#include <cstddef>
#include <memory>
#include <string_view>

#include "dot/base/result.h"

namespace dot::json {

class PaddedText {
 public:
  // Reads `fd` to its end, retrying on EINTR. `expected` sizes the first
  // buffer (a regular file's size; 0 for a pipe), which grows as needed.
  // Errors are Code::Io naming `what`: "read", or "too_large" when there are
  // more than `max_bytes` bytes (nothing past max_bytes + 1 is read).
  //
  // Why a read and not a mapping of the file: the buffer is the project's
  // huge-page block (base/src/huge_pages.h), and on a virtual machine
  // copying 8 MiB into it measured 1.5 ms where mapping the same pages of
  // the page cache with MAP_POPULATE measured 3.5 ms (docs/PERFORMANCE.md).
  static Result<PaddedText> read(int fd, std::size_t max_bytes, std::size_t expected, std::string_view what);

  // The bytes read; kPadding zero bytes follow them. Empty once moved from.
  std::string_view bytes() const noexcept { return data_ ? std::string_view(data_.get(), size_) : std::string_view(); }

 private:
  // Returns the block to base/src/huge_pages.cpp's allocator, which needs its size.
  struct Release {
    std::size_t bytes;  // the block's, padding included
    void operator()(char* p) const noexcept;
  };
  std::unique_ptr<char[], Release> data_{nullptr, Release{0}};
  std::size_t size_ = 0;
};

}  // namespace dot::json
