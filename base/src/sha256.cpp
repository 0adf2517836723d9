// SHA-256 through OpenSSL, streaming, over memory or a descriptor (sha256.h).
#include "dot/base/sha256.h"
#include "dot/base/error_kinds.h"

#include <cerrno>
#include <cstring>
#include <vector>

// The low-level SHA256_* functions, not EVP: EVP's first use runs
// OPENSSL_init_crypto (reads openssl.cnf, registers every cipher and digest,
// fetches the default provider), about a millisecond per process, paid by
// every short-lived dot-core and plugin process (docs/startup.md). The
// low-level functions run the same assembly with no global initialisation.
// They are deprecated in OpenSSL 3 but still part of its API.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <sys/random.h>
#include <unistd.h>

#include <fmt/format.h>

namespace dot {

struct Sha256::Ctx {
  SHA256_CTX sha;
};

Sha256::Sha256() : ctx_(std::make_unique<Ctx>()) { SHA256_Init(&ctx_->sha); }
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::span<const std::uint8_t> bytes) {
  if (!bytes.empty()) SHA256_Update(&ctx_->sha, bytes.data(), bytes.size());
}
void Sha256::update(std::string_view bytes) {
  if (!bytes.empty()) SHA256_Update(&ctx_->sha, bytes.data(), bytes.size());
}

Digest Sha256::finish() {
  Digest d{};
  SHA256_Final(d.data(), &ctx_->sha);
  SHA256_Init(&ctx_->sha);
  return d;
}

Digest sha256(std::string_view bytes) {
  Digest d{};
  SHA256_CTX sha;
  SHA256_Init(&sha);
  SHA256_Update(&sha, bytes.data(), bytes.size());
  SHA256_Final(d.data(), &sha);
  return d;
}

std::string sha256_hex(std::string_view bytes) { return to_hex(sha256(bytes)); }

Result<std::string> sha256_fd_hex(int fd, std::string_view what) {
  Sha256 h;
  std::vector<std::uint8_t> buf(1 << 16);
  off_t off = 0;
  for (;;) {
    ssize_t n = ::pread(fd, buf.data(), buf.size(), off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(base::ErrorKind::Read, fmt::format("cannot read {}: {}", what, std::strerror(errno)));
    }
    if (n == 0) break;
    h.update(std::span<const std::uint8_t>(buf.data(), static_cast<std::size_t>(n)));
    off += n;
  }
  return to_hex(h.finish());
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(bytes.size() * 2, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  return out;
}

bool is_lower_hex(std::string_view s) noexcept {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

bool is_sha256_hex(std::string_view s) noexcept { return s.size() == 64 && is_lower_hex(s); }

std::optional<Sha256Digest> Sha256Digest::from_hex(std::string_view hex) noexcept {
  if (!is_sha256_hex(hex)) return std::nullopt;
  Digest bytes{};
  auto nibble = [](char c) { return static_cast<std::uint8_t>(c <= '9' ? c - '0' : c - 'a' + 10); };
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<std::uint8_t>(nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]));
  return Sha256Digest(bytes);
}

std::string Sha256Digest::hex() const { return set_ ? to_hex(bytes_) : std::string(); }

bool Sha256Digest::operator==(std::string_view hex) const noexcept {
  if (!set_) return hex.empty();
  auto other = from_hex(hex);
  return other && other->bytes_ == bytes_;
}

// getrandom(2), not RAND_bytes: the kernel CSPRNG is what OpenSSL seeds
// from, and RAND_bytes would pay OpenSSL's whole initialisation (see above).
Status random_bytes(std::span<std::uint8_t> out) {
  std::size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::getrandom(out.data() + done, out.size() - done, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(base::ErrorKind::Random, fmt::format("getrandom failed: {}", std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
  return {};
}

Result<std::string> random_hex32() {
  std::array<std::uint8_t, 32> b{};
  DOT_TRY(random_bytes(b));
  return to_hex(std::span<const std::uint8_t>(b));
}

}  // namespace dot
