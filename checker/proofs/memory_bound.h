// The static lower bound on the memory of any schedule of a trace.
//
// Whatever is evicted and whenever, at the budget check of an operator's
// model computation its argument storages are material (locked) and every
// storage pinned so far is material (pinned storages are never evicted), and
// the check adds the operator's total output size. After the last step, every
// pinned storage is material at once, and memory never exceeds the budget in
// a passing run (it only grows at checked computations). So a budget below
//   max( max over operators o of  |pinned before o  U  storages of args(o)| + outputs(o),
//        |storages pinned at the end| )
// fails for every eviction script: the OOM is inherent.
#pragma once

#include <cstdint>
#include <vector>

#include "model/trace.h"

namespace dtr {

struct OperatorNeed {
  OpId op = 0;
  int32_t program_step = 0;
  int64_t pinned = 0;     // storages pinned before the step that are not arguments
  int64_t arguments = 0;  // distinct argument storages (pinned or not)
  int64_t request = 0;    // the operator's total output size
  int64_t total() const { return pinned + arguments + request; }
};

struct MemoryBound {
  int64_t bytes = 0;  // every budget below this is infeasible for every schedule
  // What attains it: an operator (op >= 0) or, if op is -1, the storages
  // pinned at the end of the program (their total is `pinned`).
  OperatorNeed attained_by;
  int64_t final_pinned = 0;          // total of the storages pinned at the end
  std::vector<OperatorNeed> per_op;  // indexed by OpId (each op is computed once, in id order)
};

MemoryBound ComputeMemoryBound(const Trace& trace);

}  // namespace dtr
