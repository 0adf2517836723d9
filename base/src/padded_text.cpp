// A file or stream read whole into one zero-padded buffer for in-place JSON parsing (padded_text.h).
#include "dot/base/padded_text.h"
#include "dot/base/error_kinds.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "dot/base/json.h"
#include "huge_pages.h"

namespace dot::json {

void PaddedText::Release::operator()(char* p) const noexcept { detail::release_block(p, bytes); }

Result<PaddedText> PaddedText::read(int fd, std::size_t max_bytes, std::size_t expected, std::string_view what) {
  // One byte more than the limit is ever read: enough to tell "too large",
  // and the buffer never grows past it.
  // (A limit beyond any possible input is clamped, so that sizes cannot wrap.)
  const std::size_t most = std::min(max_bytes, static_cast<std::size_t>(-1) / 4) + 1;
  PaddedText text;
  std::size_t capacity = 0;  // of text.data_, padding included
  auto grow = [&](std::size_t room) {
    // room + 1: a buffer that holds the whole input plus one byte meets the
    // end of the input without growing again.
    capacity = room + 1 + kPadding;
    std::unique_ptr<char[], Release> bigger(static_cast<char*>(detail::allocate_block(capacity)), Release{capacity});
    if (text.size_ != 0) std::memcpy(bigger.get(), text.data_.get(), text.size_);
    text.data_ = std::move(bigger);
  };
  grow(std::min(expected, most));
  for (;;) {
    std::size_t room = capacity - kPadding - text.size_;
    if (room == 0) {
      if (text.size_ >= most) break;
      grow(std::min(std::max(text.size_ * 2, std::size_t{64} << 10), most));
      continue;
    }
    ssize_t n = ::read(fd, text.data_.get() + text.size_, std::min(room, most - text.size_));
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(base::ErrorKind::Read, fmt::format("cannot read {}: {}", what, std::strerror(errno)));
    }
    if (n == 0) break;
    text.size_ += static_cast<std::size_t>(n);
    if (text.size_ >= most) break;
  }
  if (text.size_ > max_bytes)
    return make_error(base::ErrorKind::FileTooLarge,
                      fmt::format("{} is larger than the limit of {} bytes", what, max_bytes));
  std::memset(text.data_.get() + text.size_, 0, kPadding);
  return text;
}

}  // namespace dot::json
