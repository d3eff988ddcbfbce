// RuntimeV1's banishing (simrd: runtime/v1.py): a storage whose external
// references are gone and whose dependents are all computed is evicted for
// good, and the children of its tensors are pinned in its place. RuntimeV1
// edits the tensors' parent and child lists as it banishes, so it keeps its
// own copies of them (Engine::banishing_), walked as they are.
#include <fmt/core.h>

#include <algorithm>

#include "checker/engine/engine.h"

namespace dtr {

void Engine::BanishingCreate(OpId id) {
  const Operator& op = trace_->ops[id];
  for (int32_t i = 0; i < op.num_outputs; ++i) {
    TensorId u = op.first_output + i;
    StorageId s = storage(u);
    for (TensorId p : op.args)
      if (storage(p) != s) banishing_.evicted_dependents[storage(p)].insert(u);
    banishing_.parents[u] = op.args;
  }
  for (TensorId p : op.args)
    for (int32_t i = 0; i < op.num_outputs; ++i) banishing_.children[p].push_back(op.first_output + i);
}

void Engine::BanishingOnEvict(StorageId s) {
  for (TensorId t : storage_tensors(s))
    for (TensorId p : banishing_.parents[t])
      if (storage(p) != s) banishing_.evicted_dependents[storage(p)].insert(t);
}

// The end of _materialize() in RuntimeV1: simrd iterates the live parent
// list, from which a banished parent removes itself.
void Engine::BanishingAfterCompute(TensorId t) {
  std::vector<TensorId>& parents = banishing_.parents[t];
  for (size_t i = 0; i < parents.size(); ++i) {
    StorageId ps = storage(parents[i]);
    Unlock(ps);
    auto& deps = banishing_.evicted_dependents[ps];
    for (TensorId u : siblings_)
      if (storage(u) != ps) deps.erase(u);
    if (storage(t) != ps) deps.erase(t);
    TryBanish(ps);
  }
}

// simrd: RuntimeV1._try_banish_V1().
void Engine::TryBanish(StorageId s) {
  if (ref_ext_[s] > 0 || !banishing_.evicted_dependents[s].empty()) return;
  for (TensorId t : storage_tensors(s))
    if (tensor_ref_[t] != 0) SimrdAssertion("tried to banish a storage with live tensors");
  if (material_[s]) {
    ref_int_[s] = 0;
    Evict(s, EvictionKind::kEager);
    NoteEagerEviction(s);
  }
  for (TensorId t : storage_tensors(s)) {
    for (size_t i = 0; i < banishing_.parents[t].size(); ++i) {
      TensorId p = banishing_.parents[t][i];
      StorageId ps = storage(p);
      if (ps == s) continue;
      banishing_.evicted_dependents[ps].erase(t);
      auto& kids = banishing_.children[p];
      auto it = std::find(kids.begin(), kids.end(), t);
      if (it == kids.end()) SimrdAssertion("banishing a tensor missing from its parent's children");
      kids.erase(it);
    }
    for (size_t i = 0; i < banishing_.children[t].size(); ++i) {
      TensorId c = banishing_.children[t][i];
      if (storage(c) == s) continue;
      auto& ps = banishing_.parents[c];
      auto it = std::find(ps.begin(), ps.end(), t);
      if (it == ps.end()) SimrdAssertion("banishing a tensor missing from its child's parents");
      ps.erase(it);
      Pin(c);
    }
  }
  banishing_.banished[s] = 1;
}

}  // namespace dtr
