// simrd's equivalence classes of evicted storages (optimization/eqclass.py,
// as RuntimeV2Optimized maintains them): a union-find forest whose roots
// carry the summed compute of their class. Each evicted storage owns a node
// (created at eviction, merged with its evicted neighbours' classes); a
// rematerialized storage leaves its node behind, subtracting its compute
// from the class's root, as simrd does.
#pragma once

#include <cstdint>
#include <vector>

#include "model/trace.h"

namespace dtr {

class EquivalenceClasses {
 public:
  void Init(size_t storages) { node_of_.assign(storages, -1); }

  int32_t node_of(StorageId s) const { return node_of_[s]; }
  void set_node(StorageId s, int32_t node) { node_of_[s] = node; }

  int32_t NewNode(int64_t value) {
    parent_.push_back(-1);
    value_.push_back(value);
    return static_cast<int32_t>(parent_.size() - 1);
  }

  // The root of node's class, compressing the path.
  int32_t Find(int32_t node) {
    int32_t root = node;
    while (parent_[root] >= 0) root = parent_[root];
    while (parent_[node] >= 0) {
      int32_t next = parent_[node];
      parent_[node] = root;
      node = next;
    }
    return root;
  }

  // simrd: EqClassNode.merge(): a's class joins b's; b's root keeps the sum.
  void Merge(int32_t a, int32_t b) {
    int32_t l = Find(a), r = Find(b);
    if (l == r) return;
    parent_[l] = r;
    value_[r] += value_[l];
  }

  int64_t& value(int32_t root) { return value_[root]; }

 private:
  std::vector<int32_t> node_of_;  // per storage: its node while evicted, -1 otherwise
  std::vector<int32_t> parent_;   // per node: parent node, -1 for a root
  std::vector<int64_t> value_;    // per root: the class's compute
};

}  // namespace dtr
