#include "model/process_heap.h"

#include <malloc.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

#if defined(__SANITIZE_ADDRESS__)
#define DTR_HEAP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DTR_HEAP_SANITIZED 1
#endif
#endif

namespace dtr {

void TuneHeapForReplay() {
#ifndef DTR_HEAP_SANITIZED  // ASan has its own allocator (and would poison the reserve)
  constexpr size_t kThreshold = size_t{32} << 20;
  constexpr size_t kReserve = size_t{1} << 30;
  constexpr uintptr_t kPage = 4096;
  // Never trimmed below the reserve; one block of the reserve's size from
  // the heap itself (brk), so that its range becomes the heap's top.
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(kReserve + kThreshold));
  if (mallopt(M_MMAP_THRESHOLD, static_cast<int>(kReserve + kThreshold)) == 1) {
    if (void* block = std::malloc(kReserve)) {
      uintptr_t begin = (reinterpret_cast<uintptr_t>(block) + kPage - 1) & ~(kPage - 1);
      madvise(reinterpret_cast<void*>(begin), kReserve - 2 * kPage, MADV_HUGEPAGE);  // may fail: no matter
      std::free(block);
    }
  }
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(kThreshold));
#endif
}

}  // namespace dtr
