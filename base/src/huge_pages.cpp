// huge_pages.h says why.
#include "huge_pages.h"

#include <sys/mman.h>

#include <algorithm>
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

void prepare_foreign_buffer(const void* p, std::size_t bytes) {
  advise_huge_pages(p, bytes);
  auto at = reinterpret_cast<std::uintptr_t>(p);
  std::uintptr_t first_page = at & ~std::uintptr_t{4095};
  std::uintptr_t boundary = std::min((at + kHugePage - 1) & ~std::uintptr_t{kHugePage - 1}, at + bytes);
  if (boundary > first_page)
    (void)::madvise(reinterpret_cast<void*>(first_page), boundary - first_page, MADV_POPULATE_WRITE);
}

void* allocate_block(std::size_t bytes) {
  if (bytes < kHugePagesFrom) return ::operator new(bytes);
  // Whole huge pages: a block's last, partly used 2 MiB would otherwise be
  // left out of the advice and fault 4 KiB at a time (an 8 MiB - 200 byte
  // input took 512 such faults, 5 ms).
  if (bytes > static_cast<std::size_t>(-1) - kHugePage) throw std::bad_alloc();
  std::size_t whole = (bytes + kHugePage - 1) & ~(kHugePage - 1);
  void* p = ::operator new (whole, std::align_val_t{kHugePage});
  advise_huge_pages(p, whole);
  return p;
}

void release_block(void* p, std::size_t bytes) noexcept {
  if (p == nullptr) return;
  if (bytes < kHugePagesFrom)
    ::operator delete(p);
  else
    ::operator delete (p, std::align_val_t{kHugePage});
}

}  // namespace dot::json::detail
