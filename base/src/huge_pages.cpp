// huge_pages.h says why.
#include "huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace dot::json::detail {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

}  // namespace

void advise_huge_pages(const void* p, std::size_t bytes) {
  auto at = reinterpret_cast<std::uintptr_t>(p);
  std::uintptr_t begin = (at + kHugePage - 1) & ~std::uintptr_t{kHugePage - 1};
  std::uintptr_t end = (at + bytes) & ~std::uintptr_t{kHugePage - 1};
  if (end > begin) (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

void* allocate_block(std::size_t bytes) {
  if (bytes < kHugePagesFrom) return ::operator new(bytes);
  void* p = ::operator new(bytes, std::align_val_t{kHugePage});
  advise_huge_pages(p, bytes);
  return p;
}

void release_block(void* p, std::size_t bytes) noexcept {
  if (p == nullptr) return;
  if (bytes < kHugePagesFrom)
    ::operator delete(p);
  else
    ::operator delete(p, std::align_val_t{kHugePage});
}

}  // namespace dot::json::detail
