// The process's heap settings for parsing and replaying traces.
#pragma once

namespace dtr {

// Blocks of up to 32 MB come from the heap from the start and stay there when
// freed, instead of being mapped and unmapped each time. glibc starts at
// 128 KB and raises both thresholds only as mapped blocks are freed (up to
// 32 MB), so this is the state it reaches anyway; reached at once, the
// parser's and the engine's growing vectors reuse memory already faulted in.
// On the 2-core VM measured, a replay of the LSTM trace took a third fewer
// page faults (docs/speed.md, "Process start"). Call once, before the trace
// is read; the Python module leaves the interpreter's heap as it is.
void TuneHeapForReplay();

}  // namespace dtr
