#include "checker/storage_set.h"

#include <bit>
#include <cstdint>

namespace dtr {

bool StorageSet::erase(StorageId s) {
  if (dense_) {
    const size_t w = static_cast<size_t>(s) / 64 - base_;
    if (w >= bits_.size() || !(bits_[w] >> (s % 64) & 1)) return false;
    bits_[w] &= ~(uint64_t{1} << (s % 64));
    --size_;
    if (bits_.size() > 4 * size_ + 16) Sparsify();
    return true;
  }
  if (size_ == 0) return false;
  uint32_t i = Home(s);
  for (; slots_[i] != s; i = (i + 1) & mask_)
    if (slots_[i] == kEmpty) return false;
  // Backward shift: move later members of the probe run into the hole when
  // their home is not in (hole, their slot].
  for (uint32_t j = (i + 1) & mask_; slots_[j] != kEmpty; j = (j + 1) & mask_) {
    const uint32_t home = Home(slots_[j]);
    if (((j - home) & mask_) >= ((j - i) & mask_)) {
      slots_[i] = slots_[j];
      i = j;
    }
  }
  slots_[i] = kEmpty;
  --size_;
  if (size_ * 16 < slots_.size() && slots_.size() > 8) Resize(slots_.size() / 4);
  return true;
}

namespace {

// 64-id words from lo's to hi's, both included.
size_t Words(StorageId lo, StorageId hi) {
  return static_cast<size_t>(hi) / 64 - static_cast<size_t>(lo) / 64 + 1;
}

}  // namespace

void StorageSet::assign(std::span<const StorageId> members) {
  clear();
  if (members.empty()) return;
  const auto [lo, hi] = std::minmax_element(members.begin(), members.end());
  if (Words(*lo, *hi) <= members.size())
    MakeDense(*lo, *hi, members);
  else
    MakeSparse(members, members.size());
}

void StorageSet::ReserveFor(const StorageSet& other) {
  const size_t n = size_ + other.size_ + 1;
  // Scanning this set's members for their range costs about what taking in
  // `other` does only when `other` is not much the smaller.
  if (other.size_ == 0 || (!dense_ && other.size_ * 4 < size_)) {
    reserve(n);
    return;
  }
  const auto [other_lo, other_hi] = other.WordRange();
  const auto [own_lo, own_hi] = WordRange();
  const size_t lo = std::min(other_lo, own_lo), hi = std::max(other_hi, own_hi);
  if (hi - lo + 1 > n) {  // too wide for the dense form
    reserve(n);
    return;
  }
  if (!dense_) {
    const std::vector<StorageId> slots = std::move(slots_);
    MakeDense(static_cast<StorageId>(lo * 64), static_cast<StorageId>(hi * 64), slots);
    return;
  }
  // A bitmap that must widen takes a quarter of its words more on each side
  // it widens (while the dense form still holds): a region absorbing small
  // regions at its edge one at a time was copied whole at every new word
  // (resnet of 10^5 operators at 0.2: 7.2 M copies, 4.2 G words).
  const size_t room = bits_.size() / 4;
  size_t wide_lo = lo < base_ ? (lo > room ? lo - room : 0) : lo;
  size_t wide_hi = hi >= base_ + bits_.size() ? hi + room : hi;
  if (wide_hi - wide_lo + 1 > n) wide_lo = lo, wide_hi = hi;
  Rebase(wide_lo, wide_hi);
}

std::pair<size_t, size_t> StorageSet::WordRange() const {
  if (dense_) return {base_, base_ + bits_.size() - 1};
  size_t lo = SIZE_MAX, hi = 0;
  for (StorageId s : slots_) {
    if (s == kEmpty) continue;
    lo = std::min(lo, static_cast<size_t>(s) / 64);
    hi = std::max(hi, static_cast<size_t>(s) / 64);
  }
  return {lo, hi};
}

void StorageSet::Rebase(size_t lo, size_t hi) {
  if (lo == base_ && hi - lo + 1 == bits_.size()) return;
  std::vector<uint64_t> bits(hi - lo + 1, 0);
  std::copy(bits_.begin(), bits_.end(), bits.begin() + (base_ - lo));
  bits_ = std::move(bits);
  base_ = lo;
}

bool StorageSet::Densify() {
  if (size_ < 8) return false;
  const auto [lo, hi] = WordRange();
  if (hi - lo + 1 > size_) return false;
  const std::vector<StorageId> slots = std::move(slots_);
  MakeDense(static_cast<StorageId>(lo * 64), static_cast<StorageId>(hi * 64), slots);
  return true;
}

void StorageSet::Sparsify() {
  std::vector<StorageId> members;
  members.reserve(size_);
  ForEach([&](StorageId s) { members.push_back(s); });
  MakeSparse(members, members.size() + 1);  // room for one more
}

void StorageSet::MakeDense(StorageId lo, StorageId hi, std::span<const StorageId> members) {
  clear();
  dense_ = true;
  base_ = static_cast<size_t>(lo) / 64;
  bits_.assign(Words(lo, hi), 0);
  for (StorageId s : members) {
    if (s == kEmpty) continue;
    bits_[static_cast<size_t>(s) / 64 - base_] |= uint64_t{1} << (s % 64);
    ++size_;
  }
}

void StorageSet::MakeSparse(std::span<const StorageId> members, size_t room) {
  clear();
  size_t slots = 8;
  while (slots < 2 * room) slots *= 2;
  Resize(slots);
  for (StorageId s : members) Place(s);
  size_ = members.size();
}

bool StorageSet::InsertDense(StorageId s) {
  const size_t w = static_cast<size_t>(s) / 64;
  if (w < base_ || w >= base_ + bits_.size()) {
    // Grow the range with room for as much again, or go sparse.
    const size_t lo = std::min(w, base_), hi = std::max(w, base_ + bits_.size() - 1);
    if (hi - lo + 1 > 4 * (size_ + 1) + 16) {
      Sparsify();  // with room for s: insert() will not grow (nor densify)
      return insert(s);
    }
    const size_t room = bits_.size() / 2;
    Rebase(w < base_ ? (lo > room ? lo - room : 0) : base_, w < base_ ? hi : hi + room);
  }
  uint64_t& word = bits_[w - base_];
  const uint64_t bit = uint64_t{1} << (s % 64);
  if (word & bit) return false;
  word |= bit;
  ++size_;
  return true;
}

void StorageSet::Resize(size_t slots) {
  std::vector<StorageId> old = std::move(slots_);
  slots_.assign(slots, kEmpty);
  mask_ = static_cast<uint32_t>(slots - 1);
  shift_ = 32 - static_cast<uint32_t>(std::countr_zero(slots));
  for (StorageId s : old)
    if (s != kEmpty) Place(s);
}

StorageId StorageQueue::pop(bool descending) {
  size_t sw = next_ / 64;
  if (descending) {
    uint64_t m = words_[sw] & (~uint64_t{0} >> (63 - next_ % 64));
    while (m == 0) m = words_[--sw];
    next_ = sw * 64 + 63 - std::countl_zero(m);
  } else {
    uint64_t m = words_[sw] & (~uint64_t{0} << (next_ % 64));
    while (m == 0) m = words_[++sw];
    next_ = sw * 64 + std::countr_zero(m);
  }
  uint64_t& word = bits_[next_];
  const int bit = descending ? 63 - std::countl_zero(word) : std::countr_zero(word);
  word &= ~(uint64_t{1} << bit);
  if (word == 0) words_[next_ / 64] &= ~(uint64_t{1} << (next_ % 64));
  --size_;
  return static_cast<StorageId>(next_ * 64 + bit);
}

}  // namespace dtr
