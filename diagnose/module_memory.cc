#include "diagnose/module_memory.h"

#include <algorithm>

#include "model/attribution.h"

namespace dtr {

std::optional<std::vector<ModuleMemory>> MemoryByModule(const Trace& trace) {
  const Attribution* a = trace.attribution.get();
  if (!a || a->modules.empty()) return std::nullopt;
  std::vector<ModuleMemory> rows(a->modules.size());
  std::vector<int32_t> first_seen(a->modules.size(), -1);
  for (size_t i = 0; i < rows.size(); ++i) rows[i].module = a->modules[i];
  for (OpId op = 0; op < static_cast<OpId>(trace.ops.size()); ++op) {
    const int32_t m = a->op_module[op];
    if (m < 0) continue;
    if (first_seen[m] < 0) first_seen[m] = op;
    ModuleMemory& row = rows[m];
    const Operator& o = trace.ops[op];
    if (a->op_phase[op] == Phase::kBackward) {
      ++row.backward_ops;
      row.backward_bytes += o.total_size;
      row.backward_compute += o.compute;
    } else {
      ++row.forward_ops;
      row.forward_bytes += o.total_size;
      row.forward_compute += o.compute;
    }
  }
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if (rows[x].forward_bytes != rows[y].forward_bytes) return rows[x].forward_bytes > rows[y].forward_bytes;
    return first_seen[x] < first_seen[y];
  });
  std::vector<ModuleMemory> sorted;
  sorted.reserve(rows.size());
  for (size_t i : order) sorted.push_back(std::move(rows[i]));
  return sorted;
}

}  // namespace dtr
