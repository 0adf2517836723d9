// read_elf_dynamic_info over arbitrary bytes: every offset, size and count in
// the input is attacker-chosen; nothing may be read outside the buffer.
#include <cstdint>
#include <cstring>
#include <string_view>

#include "dot/base/sandbox.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto info = dot::read_elf_dynamic_info([&](std::uint64_t off, std::size_t len, char* out) -> long {
    if (off >= bytes.size()) return 0;
    std::size_t n = len < bytes.size() - off ? len : bytes.size() - off;
    std::memcpy(out, bytes.data() + off, n);
    return static_cast<long>(n);
  });
  if (info.ok()) {
    // Touch what came back so a bad string would show.
    std::size_t total = info->interpreter.size();
    for (const auto& n : info->needed) total += n.size();
    for (const auto& r : info->runpath) total += r.size();
    for (const auto& r : info->rpath) total += r.size();
    if (total == SIZE_MAX) return 1;
  }
  return 0;
}
