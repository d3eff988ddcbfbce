#include "checker/proofs/memory_bound.h"

#include <algorithm>

namespace dtr {

MemoryBound ComputeMemoryBound(const Trace& trace) {
  MemoryBound b;
  b.per_op.resize(trace.ops.size());
  std::vector<uint8_t> pinned(trace.storages.size(), 0), seen(trace.storages.size(), 0);
  int64_t pinned_bytes = 0;
  bool op_attains = false;  // else the end attains it, also in a program without operators
  for (int32_t step = 0; step < static_cast<int32_t>(trace.program.size()); ++step) {
    const Step& st = trace.program[step];
    if (st.kind == StepKind::kPin) {
      StorageId s = trace.tensors[st.target].storage;
      if (!pinned[s]) {
        pinned[s] = 1;
        pinned_bytes += trace.storages[s].size;
      }
    } else if (st.kind == StepKind::kCompute) {
      const Operator& op = trace.ops[st.target];
      OperatorNeed n;
      n.op = st.target;
      n.program_step = step;
      n.request = op.total_size;
      int64_t pinned_args = 0;
      for (TensorId a : op.args) {
        StorageId s = trace.tensors[a].storage;
        if (seen[s]) continue;
        seen[s] = 1;
        n.arguments += trace.storages[s].size;
        if (pinned[s]) pinned_args += trace.storages[s].size;
      }
      for (TensorId a : op.args) seen[trace.tensors[a].storage] = 0;
      n.pinned = pinned_bytes - pinned_args;
      b.per_op[st.target] = n;
      if (n.total() > b.bytes) {
        b.bytes = n.total();
        b.attained_by = n;
        op_attains = true;
      }
    }
  }
  b.final_pinned = pinned_bytes;
  if (pinned_bytes > b.bytes || !op_attains) {
    b.bytes = pinned_bytes;
    b.attained_by = OperatorNeed{};
    b.attained_by.op = -1;
    b.attained_by.program_step = static_cast<int32_t>(trace.program.size());
    b.attained_by.pinned = pinned_bytes;
  }
  return b;
}

}  // namespace dtr
