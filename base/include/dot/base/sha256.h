#pragma once
// SHA-256 through OpenSSL (low-level API, no global initialisation):
// streaming, over memory or a file descriptor.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "dot/base/result.h"

namespace dot {

using Digest = std::array<std::uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::span<const std::uint8_t> bytes);
  void update(std::string_view bytes);
  // Finishes and resets for reuse.
  Digest finish();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

Digest sha256(std::string_view bytes);
std::string sha256_hex(std::string_view bytes);
// Hashes everything readable from `fd` starting at offset 0 (pread: the file
// position is untouched, so the same descriptor can be executed afterwards).
// Fails with Code::Io naming `what` on a read error.
Result<std::string> sha256_fd_hex(int fd, std::string_view what = "file");

// Lowercase hex.
std::string to_hex(std::span<const std::uint8_t> bytes);
inline std::string to_hex(const Digest& d) { return to_hex(std::span<const std::uint8_t>(d)); }
// True when every character is a lowercase hex digit (true for "").
bool is_lower_hex(std::string_view s) noexcept;
// True for exactly 64 lowercase hex characters.
bool is_sha256_hex(std::string_view s) noexcept;

// Bytes from the kernel CSPRNG (getrandom).
Status random_bytes(std::span<std::uint8_t> out);
// 32 random bytes as 64 lowercase hex characters (nonces, root ids).
Result<std::string> random_hex32();

}  // namespace dot
