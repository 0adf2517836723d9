#pragma once
// SHA-256 through OpenSSL (low-level API, no global initialisation):
// streaming, over memory or a file descriptor.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
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

// A SHA-256 held as its 32 bytes, or none: a plan's snapshot digest ("" in
// its text when the target is absent). Held per path, 100,000 times in a
// large plan: inline, 33 bytes, where the hex text was a 64-byte string on
// the heap (112 bytes with its handle). Spelled as hex only where it is
// written (plan text, store rows, messages).
class Sha256Digest {
 public:
  Sha256Digest() = default;  // none
  explicit Sha256Digest(const Digest& bytes) noexcept : bytes_(bytes), set_(true) {}
  // 64 lowercase hex digits; nullopt for anything else (none is "", which
  // from_hex also refuses: a caller that accepts none says so).
  static std::optional<Sha256Digest> from_hex(std::string_view hex) noexcept;
  // from_hex, with none for "" (an observation of a file too large to hash
  // spells its digest so): for text this process spelled or checked itself.
  static Sha256Digest from_hex_or_none(std::string_view hex) noexcept { return from_hex(hex).value_or(Sha256Digest()); }
  // The digest of `bytes`.
  static Sha256Digest of(std::string_view bytes) { return Sha256Digest(sha256(bytes)); }

  bool empty() const noexcept { return !set_; }
  // The bytes (all zero when none).
  const Digest& bytes() const noexcept { return bytes_; }
  // 64 lowercase hex digits, "" when none.
  std::string hex() const;
  bool operator==(const Sha256Digest&) const = default;
  // Equal to a digest spelled in hex ("" for none), as store rows and
  // observations spell theirs.
  bool operator==(std::string_view hex) const noexcept;

 private:
  Digest bytes_{};
  bool set_ = false;
};

// Bytes from the kernel CSPRNG (getrandom).
Status random_bytes(std::span<std::uint8_t> out);
// 32 random bytes as 64 lowercase hex characters (nonces, root ids).
Result<std::string> random_hex32();

}  // namespace dot
