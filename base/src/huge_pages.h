// Buffers of megabytes on transparent huge pages from their first byte.
//
// Why: a large parse or canonical write touches megabytes of fresh memory
// once. On a virtual machine every first touch of a 4 KiB page is a fault of
// its own, about 10 us here (bench: 64 MiB touched page by page, 10 us a
// page; the same on 2 MiB pages, 0.2 us per 4 KiB of them), and a walk over
// megabytes of 4 KiB pages misses the TLB all along. glibc maps a large
// block a page, not 2 MiB, ahead of it, so up to 2 MiB at its start could
// never be a huge page: the blocks here start on a 2 MiB boundary and are
// advised to huge pages ("madvise" mode) before their first touch. A kernel
// without THP ignores the advice.
//
// Every buffer of the readers and the canonical writer that can grow with
// the input is allocated here (the node array, the unescaped-string arena,
// the padded copy of the input, the writer's output), so the rule has one
// place. simdjson allocates its own buffers; json.cpp advises what it can of
// them.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

namespace dot::json::detail {

// Below this, blocks come from the ordinary heap: a 2 MiB page is zeroed
// whole however little of it is used (about 0.1 ms here, the cost of ten
// 4 KiB faults on this virtual machine, of a hundred or so where a fault
// costs 1 us), and glibc recycles small blocks warm from its heap in a
// long-running process. From 1 MiB on, huge pages win on either.
inline constexpr std::size_t kHugePagesFrom = std::size_t{1} << 20;

// Offers the whole 2 MiB pages inside [p, p + bytes) to transparent huge pages.
void advise_huge_pages(const void* p, std::size_t bytes);

// For a buffer allocated elsewhere (simdjson's, on glibc's alignment): offers
// its whole 2 MiB pages to huge pages, and prefaults in one call
// (MADV_POPULATE_WRITE) its 4 KiB pages before the first 2 MiB boundary,
// which huge pages cannot back. Prefaulting costs about half of faulting the
// same pages one by one (4.5 against 10 us a page here); when the buffer's
// user never reaches the first boundary (a document of a few long strings),
// up to 2 MiB are prefaulted for nothing (at most ~2.3 ms, on an input of 4
// MiB or more). A kernel before 5.14 refuses the call, and pages fault as
// before.
void prepare_foreign_buffer(const void* p, std::size_t bytes);

// The input size from which simdjson's buffers are prepared so: the
// prefault's worst case stays small against the parse of such an input.
inline constexpr std::size_t kForeignBuffersFrom = std::size_t{4} << 20;

// Uninitialised storage of `bytes` bytes, 2 MiB-aligned and advised to huge
// pages from kHugePagesFrom on; throws std::bad_alloc. Released with
// release_block and the same `bytes`, which tells which kind it was.
void* allocate_block(std::size_t bytes);
void release_block(void* p, std::size_t bytes) noexcept;

// std::allocator's contract on allocate_block: for containers that grow
// with the input (the string arena is a std::basic_string of these).
template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(allocate_block(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { release_block(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

// An uninitialised array of `count` trivial T on allocate_block.
template <class T>
struct BlockRelease {
  std::size_t count = 0;
  void operator()(T* p) const noexcept { release_block(p, count * sizeof(T)); }
};
template <class T>
using BlockArray = std::unique_ptr<T[], BlockRelease<T>>;

template <class T>
BlockArray<T> make_block_array(std::size_t count) {
  static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>);
  return BlockArray<T>(static_cast<T*>(HugePageAllocator<T>().allocate(count)), BlockRelease<T>{count});
}

// `a`, whose first `used` elements are kept, as a new array of `count`
// (the old block is released).
template <class T>
void grow_block_array(BlockArray<T>& a, std::size_t used, std::size_t count) {
  BlockArray<T> grown = make_block_array<T>(count);
  if (used != 0) std::memcpy(grown.get(), a.get(), used * sizeof(T));
  a = std::move(grown);
}

// The arena of unescaped strings (it grows with the input).
using Arena = std::basic_string<char, std::char_traits<char>, HugePageAllocator<char>>;

}  // namespace dot::json::detail
