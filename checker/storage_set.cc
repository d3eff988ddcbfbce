#include "checker/storage_set.h"

#include <bit>

namespace dtr {

bool StorageSet::erase(StorageId s) {
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

void StorageSet::assign(std::span<const StorageId> members) {
  size_t slots = 8;
  while (slots < 2 * members.size()) slots *= 2;
  slots_.clear();
  size_ = 0;
  Resize(slots);
  for (StorageId s : members) {
    uint32_t i = Home(s);
    while (slots_[i] != kEmpty) i = (i + 1) & mask_;
    slots_[i] = s;
  }
  size_ = members.size();
}

void StorageSet::Resize(size_t slots) {
  std::vector<StorageId> old = std::move(slots_);
  slots_.assign(slots, kEmpty);
  mask_ = static_cast<uint32_t>(slots - 1);
  shift_ = 32 - static_cast<uint32_t>(std::countr_zero(slots));
  for (StorageId s : old) {
    if (s == kEmpty) continue;
    uint32_t i = Home(s);
    while (slots_[i] != kEmpty) i = (i + 1) & mask_;
    slots_[i] = s;
  }
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
