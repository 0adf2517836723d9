#include "dot/base/sha256.h"

#include <cerrno>
#include <cstring>
#include <vector>

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <unistd.h>

#include <fmt/format.h>

namespace dot {

struct Sha256::Ctx {
  EVP_MD_CTX* md = nullptr;
  ~Ctx() { EVP_MD_CTX_free(md); }
};

Sha256::Sha256() : ctx_(std::make_unique<Ctx>()) {
  ctx_->md = EVP_MD_CTX_new();
  // Allocation failure of a few bytes is not recoverable in any useful way.
  if (ctx_->md == nullptr || EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr) != 1) std::abort();
}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::span<const std::uint8_t> bytes) {
  if (!bytes.empty()) EVP_DigestUpdate(ctx_->md, bytes.data(), bytes.size());
}
void Sha256::update(std::string_view bytes) {
  if (!bytes.empty()) EVP_DigestUpdate(ctx_->md, bytes.data(), bytes.size());
}

Digest Sha256::finish() {
  Digest d{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_->md, d.data(), &len);
  EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr);
  return d;
}

Digest sha256(std::string_view bytes) {
  Digest d{};
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), d.data(), &len, EVP_sha256(), nullptr);
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
      return make_error(Code::Io, "read", fmt::format("cannot read {}: {}", what, std::strerror(errno)));
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

bool is_sha256_hex(std::string_view s) noexcept {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

Status random_bytes(std::span<std::uint8_t> out) {
  if (RAND_bytes(out.data(), static_cast<int>(out.size())) != 1)
    return make_error(Code::Internal, "random", "the OpenSSL CSPRNG failed");
  return {};
}

Result<std::string> random_hex32() {
  std::array<std::uint8_t, 32> b{};
  DOT_TRY(random_bytes(b));
  return to_hex(std::span<const std::uint8_t>(b));
}

}  // namespace dot
