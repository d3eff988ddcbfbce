// A set of storage ids for the evicted regions: open addressing with linear
// probing, deletion by backward shift (no tombstones), at most half full and
// at least an eighth full once it has grown. Membership, insertion and
// deletion in O(1); iteration in slot order (deterministic for a given
// history of operations), in time proportional to the size.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "model/trace.h"

namespace dtr {

class StorageSet {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  bool contains(StorageId s) const {
    if (size_ == 0) return false;
    for (uint32_t i = Home(s);; i = (i + 1) & mask_) {
      if (slots_[i] == s) return true;
      if (slots_[i] == kEmpty) return false;
    }
  }
  // Adds s; false if it was already there.
  bool insert(StorageId s) {
    if ((size_ + 1) * 2 > slots_.size()) Resize(slots_.empty() ? 8 : slots_.size() * 2);
    uint32_t i = Home(s);
    for (; slots_[i] != kEmpty; i = (i + 1) & mask_)
      if (slots_[i] == s) return false;
    slots_[i] = s;
    ++size_;
    return true;
  }
  // Removes s; false if it was not there.
  bool erase(StorageId s);
  // Room for `n` members without growing.
  void reserve(size_t n) {
    if (n * 2 > slots_.size()) Resize(std::bit_ceil(std::max<size_t>(8, n * 2)));
  }
  // Makes the set hold exactly `members` (distinct).
  void assign(std::span<const StorageId> members);
  // Empties the set and releases its memory.
  void clear() {
    slots_ = {};
    size_ = 0;
    mask_ = 0;
    shift_ = 32;
  }
  template <class F>
  void ForEach(F&& f) const {
    for (StorageId s : slots_)
      if (s != kEmpty) f(s);
  }

 private:
  static constexpr StorageId kEmpty = -1;
  uint32_t Home(StorageId s) const {
    return static_cast<uint32_t>(
        (static_cast<uint64_t>(static_cast<uint32_t>(s)) * 0x9E3779B97F4A7C15ull) >> (32 + shift_));
  }
  void Resize(size_t slots);

  std::vector<StorageId> slots_;
  size_t size_ = 0;
  uint32_t mask_ = 0;
  uint32_t shift_ = 32;  // 32 - log2(slots): Home() keeps the top bits of the product
};

// A set of storages taken out in storage order (ascending, or descending
// when `descending`): a bit per storage and a bit per word of those bits.
// Empty between uses; Init() sizes it for the trace's storages.
class StorageQueue {
 public:
  void Init(size_t storages) {
    bits_.assign(storages / 64 + 1, 0);
    words_.assign(bits_.size() / 64 + 1, 0);
  }
  bool empty() const { return size_ == 0; }
  // Adds s, which must not be queued.
  void push(StorageId s, bool descending) {
    const size_t w = static_cast<size_t>(s) / 64;
    bits_[w] |= uint64_t{1} << (s % 64);
    words_[w / 64] |= uint64_t{1} << (w % 64);
    if (size_++ == 0)
      next_ = w;
    else
      next_ = descending ? std::max(next_, w) : std::min(next_, w);
  }
  // Takes out the first storage in the queue's order. REQUIRES: !empty().
  StorageId pop(bool descending);

 private:
  std::vector<uint64_t> bits_, words_;
  size_t size_ = 0;
  size_t next_ = 0;  // a word at or before the first queued one
};

}  // namespace dtr
