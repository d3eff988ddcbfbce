// A set of storage ids for the evicted regions, in one of two forms. Sparse:
// open addressing with linear probing, deletion by backward shift (no
// tombstones), at most half full. Dense, once the members' range has no more
// 64-id words than members: a bitmap over that range (8 bytes per word,
// against 8-16 bytes per member sparse), back to sparse when it holds fewer
// than a quarter of its words' count. Membership, insertion and deletion in
// O(1) (amortized); iteration in time proportional to the size (sparse) or
// the range (dense), in an order fixed by the history of operations.
// Either form lives in one heap buffer and the set itself is 24 bytes: every
// storage has two regions of two sets each, so a set's fixed size counts four
// times per storage (as two vectors and their bookkeeping it was 80 bytes:
// 320 MB of empty sets at 10^6 storages).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <utility>
#include <vector>

#include "model/trace.h"

namespace dtr {

class StorageSet {
 public:
  StorageSet() = default;
  StorageSet(const StorageSet& other);
  StorageSet(StorageSet&& other) noexcept { Swap(other); }
  StorageSet& operator=(StorageSet other) noexcept {
    Swap(other);
    return *this;
  }
  ~StorageSet() { std::free(buf_); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool dense() const { return dense_; }  // which form it is in now

  // Inlined always: it is the inner test of region upkeep, and where GCC
  // stopped inlining it on its own a call cost 12% of the LSTM 0.266 run's
  // region passes.
  [[gnu::always_inline]] bool contains(StorageId s) const {
    if (dense_) {
      const size_t w = static_cast<size_t>(s) / 64 - base_;  // wraps below base_
      return w < len_ && (bits()[w] >> (s % 64) & 1);
    }
    if (size_ == 0) return false;
    const StorageId* slot = slots();
    for (uint32_t i = Home(s);; i = (i + 1) & mask()) {
      if (slot[i] == s) return true;
      if (slot[i] == kEmpty) return false;
    }
  }
  // Adds s; false if it was already there.
  bool insert(StorageId s) {
    if (dense_) return InsertDense(s);
    if ((size_ + 1) * 2 > len_) {
      if (Densify()) return InsertDense(s);
      Resize(len_ == 0 ? 8 : size_t{len_} * 2);
    }
    StorageId* slot = slots();
    uint32_t i = Home(s);
    for (; slot[i] != kEmpty; i = (i + 1) & mask())
      if (slot[i] == s) return false;
    slot[i] = s;
    ++size_;
    return true;
  }
  // Removes s; false if it was not there.
  bool erase(StorageId s);
  // Room for `n` members without growing (sparse); a set that must grow
  // takes the dense form instead when its members' range allows.
  void reserve(size_t n) {
    if (!dense_ && n * 2 > len_ && !Densify()) Resize(std::bit_ceil(std::max<size_t>(8, n * 2)));
  }
  // Room for this set's members and `other`'s: the dense form over both
  // ranges when that is no larger (a small set about to take in a large dense
  // one would otherwise become a large hash table); a bitmap that widens
  // takes room to widen again.
  void ReserveFor(const StorageSet& other);
  // Both sets are bitmaps and this one's range covers other's.
  bool BitmapCovers(const StorageSet& other) const {
    return dense_ && other.dense_ && other.base_ >= base_ &&
           size_t{other.base_} + other.len_ <= size_t{base_} + len_;
  }
  // Adds other's members, calling on_new(s) for each one that was not here
  // (in no particular order). Word by word when both sets are bitmaps and
  // this one's range covers other's (as ReserveFor() arranges).
  template <class F>
  void UnionWith(const StorageSet& other, F&& on_new) {
    if (BitmapCovers(other)) {
      uint64_t* to = bits() + (other.base_ - base_);
      const uint64_t* from = other.bits();
      for (size_t w = 0; w < other.len_; ++w) {
        uint64_t added = from[w] & ~to[w];
        if (added == 0) continue;
        to[w] |= added;
        size_ += static_cast<uint32_t>(Popcount(added));
        for (; added != 0; added &= added - 1)
          on_new(static_cast<StorageId>((other.base_ + w) * 64 + std::countr_zero(added)));
      }
      return;
    }
    other.ForEach([&](StorageId s) {
      if (insert(s)) on_new(s);
    });
  }
  // The bits set in x, inline: std::popcount is a call to libgcc's
  // __popcountdi2 without -mpopcnt (5% of a report's profile), and counting
  // bit by bit costs a loop where on_new does nothing (1.3x on the rnn
  // trace's long unions).
  static size_t Popcount(uint64_t x) {
    x -= (x >> 1) & 0x5555555555555555u;
    x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fu;
    return static_cast<size_t>((x * 0x0101010101010101u) >> 56);
  }
  // Adds other's members, without saying which were new.
  void UnionWith(const StorageSet& other) { UnionWith(other, [](StorageId) {}); }
  // At least as many as the members of both sets: the ids the two bitmaps'
  // ranges share. REQUIRES: both are bitmaps.
  size_t CommonBound(const StorageSet& other) const {
    const size_t lo = std::max(base_, other.base_);
    const size_t hi = std::min(size_t{base_} + len_, size_t{other.base_} + other.len_);
    return hi > lo ? 64 * (hi - lo) : 0;
  }
  // Calls f(s) for each member of both sets: word by word when both are
  // bitmaps, else over the smaller set's members.
  template <class F>
  void ForEachCommon(const StorageSet& other, F&& f) const {
    if (dense_ && other.dense_) {
      const size_t lo = std::max(base_, other.base_);
      const size_t hi = std::min(size_t{base_} + len_, size_t{other.base_} + other.len_);
      const uint64_t *a = bits(), *b = other.bits();
      for (size_t w = lo; w < hi; ++w)
        for (uint64_t m = a[w - base_] & b[w - other.base_]; m != 0; m &= m - 1)
          f(static_cast<StorageId>(w * 64 + std::countr_zero(m)));
      return;
    }
    const StorageSet& small = size_ <= other.size_ ? *this : other;
    const StorageSet& large = size_ <= other.size_ ? other : *this;
    small.ForEach([&](StorageId s) {
      if (large.contains(s)) f(s);
    });
  }
  // Makes the set hold exactly `members` (distinct).
  void assign(std::span<const StorageId> members);
  // Empties the set and releases its memory.
  void clear() {
    std::free(buf_);
    buf_ = nullptr;
    len_ = size_ = base_ = 0;
    shift_ = 32;
    dense_ = false;
  }
  template <class F>
  void ForEach(F&& f) const {
    if (dense_) {
      const uint64_t* word = bits();
      for (size_t w = 0; w < len_; ++w)
        for (uint64_t m = word[w]; m != 0; m &= m - 1)
          f(static_cast<StorageId>((base_ + w) * 64 + std::countr_zero(m)));
      return;
    }
    const StorageId* slot = slots();
    for (size_t i = 0; i < len_; ++i)
      if (slot[i] != kEmpty) f(slot[i]);
  }

 private:
  static constexpr StorageId kEmpty = -1;
  // The buffer: len_ slots (sparse) or len_ words (dense), never both.
  StorageId* slots() { return static_cast<StorageId*>(buf_); }
  const StorageId* slots() const { return static_cast<const StorageId*>(buf_); }
  uint64_t* bits() { return static_cast<uint64_t*>(buf_); }
  const uint64_t* bits() const { return static_cast<const uint64_t*>(buf_); }
  uint32_t mask() const { return len_ - 1; }
  uint32_t Home(StorageId s) const {
    return static_cast<uint32_t>(
        (static_cast<uint64_t>(static_cast<uint32_t>(s)) * 0x9E3779B97F4A7C15ull) >> (32 + shift_));
  }
  void Swap(StorageSet& other) noexcept {
    std::swap(buf_, other.buf_);
    std::swap(len_, other.len_);
    std::swap(size_, other.size_);
    std::swap(base_, other.base_);
    std::swap(shift_, other.shift_);
    std::swap(dense_, other.dense_);
  }
  void Resize(size_t slots);
  // s into the first free slot of its probe run (s is not a member).
  void Place(StorageId s) {
    StorageId* slot = slots();
    uint32_t i = Home(s);
    while (slot[i] != kEmpty) i = (i + 1) & mask();
    slot[i] = s;
  }
  // The set as `members` (distinct), in the dense form over lo's to hi's
  // words (kEmpty entries skipped: a slot array will do), or in the sparse
  // form with room for `room` members.
  void MakeDense(StorageId lo, StorageId hi, std::span<const StorageId> members);
  void MakeSparse(std::span<const StorageId> members, size_t room);
  bool InsertDense(StorageId s);
  // The first and last 64-id words of the set: a bitmap's, or those holding
  // a table's members ((SIZE_MAX, 0) when it has none).
  std::pair<size_t, size_t> WordRange() const;
  // The bitmap over words lo..hi, which include its current ones.
  void Rebase(size_t lo, size_t hi);
  // To the dense form if the members' range allows; false if it does not.
  bool Densify();
  // The hash table as a bitmap over words lo..hi, which hold its members.
  void TableToBitmap(size_t lo, size_t hi);
  void Sparsify();

  void* buf_ = nullptr;  // malloc'd: len_ StorageIds (sparse) or len_ words (dense)
  uint32_t len_ = 0;
  uint32_t size_ = 0;
  uint32_t base_ = 0;   // dense: ids (base_ + w) * 64 + b
  uint8_t shift_ = 32;  // 32 - log2(slots): Home() keeps the top bits of the product
  bool dense_ = false;
};

static_assert(sizeof(StorageSet) <= 24, "four sets per storage: keep StorageSet small");

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
  // Adds s (nothing if it is queued).
  void push(StorageId s, bool descending) {
    const size_t w = static_cast<size_t>(s) / 64;
    if (bits_[w] >> (s % 64) & 1) return;
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
