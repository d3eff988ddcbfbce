// The process's heap settings for parsing and replaying traces.
#pragma once

namespace dtr {

// Two settings of glibc's malloc, made once before the trace is read (by
// dtrcheck's main and bench_scale; the Python module leaves the
// interpreter's heap as it is; a no-op under AddressSanitizer):
//  - Blocks of up to 32 MB come from the heap from the start, and freed
//    memory stays there: glibc starts at 128 KB and raises its mmap and trim
//    thresholds only as mapped blocks are freed, and until then the growing
//    vectors of the parser and the engine were mapped, unmapped and faulted
//    in again.
//  - The first 1 GB of the heap is reserved (address space only: nothing is
//    touched) and marked for transparent huge pages (MADV_HUGEPAGE), which
//    glibc does itself only when started with GLIBC_TUNABLES=
//    glibc.malloc.hugetlb=1. The trace, the name table and the engine's
//    per-storage arrays are read at random; with 2 MB pages their TLB misses
//    and page faults mostly go. Where the kernel has THP off, nothing changes.
// Measured on the 2-core VM (docs/speed.md, "Process start"): `replay` of
// LSTM 0.2 140 -> 89 ms, `info` of a 10^6-operator chain 10.5 -> 5.4 s
// (peak RSS 785 -> 995 MB: memory is now taken 2 MB at a time).
void TuneHeapForReplay();

}  // namespace dtr
