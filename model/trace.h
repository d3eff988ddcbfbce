// The trace model: operators, tensors and storages of one DTR execution log,
// and the program (compute / get / pin / release) that simrd replays.
//
// Ids are dense and follow simrd's creation order: operator i is the i-th
// operator created (constants included), tensor ids count every output of
// every operator in that order (simrd's Tensor.id), and a storage is created
// with its root (non-alias) tensor. An aliasing output shares the storage of
// the argument it aliases. Every operator appears exactly once in the program,
// as a kCompute step, in id order.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dtr {

using OpId = int32_t;
using TensorId = int32_t;
using StorageId = int32_t;

struct Attribution;  // model/attribution.h

// The most a trace's MEMORY sizes, and its TIME values, may sum to: every sum
// the replay forms then stays below 2^63 (model/trace_parser.cc).
inline constexpr int64_t kMaxTraceSum = int64_t{1} << 62;

// A list of tensor ids inside a buffer that the trace owns and shares with
// its copies (Trace::tensor_lists): reads like a const std::vector<TensorId>,
// in 16 bytes and without an allocation of its own.
class TensorList {
 public:
  TensorList() = default;
  TensorList(const TensorId* data, int32_t size) : data_(data), size_(size) {}
  const TensorId* begin() const { return data_; }
  const TensorId* end() const { return data_ + size_; }
  size_t size() const { return static_cast<size_t>(size_); }
  bool empty() const { return size_ == 0; }
  TensorId operator[](size_t i) const { return data_[i]; }
  friend bool operator==(const TensorList& a, const std::vector<TensorId>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  const TensorId* data_ = nullptr;
  int32_t size_ = 0;
};

struct Operator {
  std::string name;        // simrd's unique name "NAME/ID", ID counting all operators from 0
  int64_t compute = 0;     // the TIME of the CALL or MUTATE; 0 for constants
  int64_t total_size = 0;  // sum of output sizes; aliasing outputs count 0
  std::vector<TensorId> args;  // argument order, duplicates kept
  TensorId first_output = 0;   // outputs are first_output .. first_output + num_outputs - 1
  int32_t num_outputs = 0;
  bool is_constant = false;
  int32_t line = 0;  // trace line of the instruction that created it
};

struct Tensor {
  std::string name;
  OpId op = 0;
  int32_t index = 0;  // output index within the operator
  StorageId storage = 0;
  bool is_alias = false;  // (here, next to the 32-bit fields: no padding of its own)
  int64_t size = 0;  // the operator's size for this output; 0 for an alias
  // simrd's Storage.compute right after this tensor joined its storage: the
  // sum of compute over the distinct operators of the storage's tensors so far.
  int64_t storage_compute_after = 0;
  // Outputs of later operators taking this tensor, one entry per argument
  // occurrence, in creation order (simrd's Tensor.children).
  TensorList children;
};

struct Storage {
  int64_t size = 0;
  TensorId root = 0;
  std::vector<TensorId> tensors;  // creation order, root first
};

// Storage-level edges for traversals: an edge to another storage through some
// tensor pair, visible to the replay once tensor `key` exists (keys are tensor
// ids, so "key < number of tensors created so far"). Each storage's list is
// sorted by key and holds each neighbour once, with its smallest key.
struct StorageEdge {
  TensorId key;
  StorageId storage;
};

struct StorageAdjacency {
  std::vector<int32_t> offset;  // storages + 1 entries
  std::vector<StorageEdge> edges;
  const StorageEdge* begin(StorageId s) const { return edges.data() + offset[s]; }
  const StorageEdge* end(StorageId s) const { return edges.data() + offset[s + 1]; }
};

enum class StepKind : uint8_t {
  kCompute,  // create and materialize an operator's outputs (target: OpId)
  kGet,      // add an external reference (target: TensorId)
  kPin,      // rematerialize if needed, then pin (target: TensorId)
  kRelease,  // drop an external reference (target: TensorId)
};

struct Step {
  StepKind kind;
  int32_t target;
  int32_t line;  // trace line that produced the step
};

struct Trace {
  std::string source;  // file name used in messages
  std::vector<Operator> ops;
  std::vector<Tensor> tensors;
  std::vector<Storage> storages;
  std::vector<Step> program;
  // The entries of every tensor's `children`, one after another; shared by
  // copies of the trace, never changed after parsing.
  std::shared_ptr<const std::vector<TensorId>> tensor_lists;
  // Derived from the above by BuildStorageAdjacency(): children of a storage
  // are the storages of its tensors' children (key: the child tensor);
  // parents are the storages of its tensors' arguments (key: its own tensor).
  StorageAdjacency storage_children, storage_parents;
  // Where the operators come from in the user's model and what the
  // long-lived tensors are (docs/trace_format.md, "Attribution keys"); null
  // for a trace without those keys. Shared by copies of the trace, never
  // changed after parsing; the replay never reads it.
  std::shared_ptr<const Attribution> attribution;

  const Operator& op_of(TensorId t) const { return ops[tensors[t].op]; }
  const Tensor& tensor_named(const std::string& name) const;  // throws Error if absent
};

void BuildStorageAdjacency(Trace& trace);

}  // namespace dtr
