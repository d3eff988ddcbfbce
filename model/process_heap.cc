#include "model/process_heap.h"

#include <malloc.h>

namespace dtr {

void TuneHeapForReplay() {
  constexpr int kThreshold = 32 << 20;
  mallopt(M_MMAP_THRESHOLD, kThreshold);
  mallopt(M_TRIM_THRESHOLD, kThreshold);
}

}  // namespace dtr
