#include "checker/storage_set.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace dtr {

namespace {

// n elements of `size` bytes, uninitialized (zeroed with `zero`).
void* Allocate(size_t n, size_t size, bool zero) {
  void* p = zero ? std::calloc(n, size) : std::malloc(n * size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

// 64-id words from lo's to hi's, both included.
size_t Words(StorageId lo, StorageId hi) {
  return static_cast<size_t>(hi) / 64 - static_cast<size_t>(lo) / 64 + 1;
}

}  // namespace

StorageSet::StorageSet(const StorageSet& other)
    : len_(other.len_),
      size_(other.size_),
      base_(other.base_),
      shift_(other.shift_),
      form_(other.form_) {
  if (other.buf_ == nullptr) return;
  if (form_ == Form::kBlocks) {  // the blocks shared
    const size_t n = block_count();
    buf_ = Allocate(n, sizeof(Block*), false);
    std::memcpy(buf_, other.buf_, n * sizeof(Block*));
    for (size_t i = 0; i < n; ++i)
      if (blocks()[i] != nullptr) Share(blocks()[i]);
    return;
  }
  const size_t bytes = len_ * (form_ == Form::kBitmap ? sizeof(uint64_t)
                               : form_ == Form::kRuns ? sizeof(Run)
                                                      : sizeof(StorageId));
  buf_ = Allocate(bytes, 1, false);
  std::memcpy(buf_, other.buf_, bytes);
}

bool StorageSet::erase(StorageId s) {
  if (form_ == Form::kBitmap) {
    uint64_t* word = bits();
    const size_t w = static_cast<size_t>(s) / 64 - base_;
    if (w >= len_ || !(word[w] >> (s % 64) & 1)) return false;
    word[w] &= ~(uint64_t{1} << (s % 64));
    --size_;
    if (len_ > 4 * size_t{size_} + 16) Sparsify();
    return true;
  }
  if (form_ == Form::kRuns) return EraseRun(s);
  if (form_ == Form::kBlocks) {
    if (!contains(s)) return false;
    Block*& slot = blocks()[static_cast<size_t>(s) / kBlockIds - first_block()];
    Block* b = Own(slot);
    b->word[static_cast<size_t>(s) / 64 % kBlockWords] &= ~(uint64_t{1} << (s % 64));
    --size_;
    if (len_ > 4 * size_t{size_} + 16) Sparsify();
    return true;
  }
  if (size_ == 0) return false;
  StorageId* slot = slots();
  uint32_t i = Home(s);
  for (; slot[i] != s; i = (i + 1) & mask())
    if (slot[i] == kEmpty) return false;
  // Backward shift: move later members of the probe run into the hole when
  // their home is not in (hole, their slot].
  for (uint32_t j = (i + 1) & mask(); slot[j] != kEmpty; j = (j + 1) & mask()) {
    const uint32_t home = Home(slot[j]);
    if (((j - home) & mask()) >= ((j - i) & mask())) {
      slot[i] = slot[j];
      i = j;
    }
  }
  slot[i] = kEmpty;
  --size_;
  if (size_t{size_} * 16 < len_ && len_ > 8) Resize(len_ / 4);
  return true;
}

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
  if (form_ == Form::kRuns) return;  // UnionWith() merges
  const size_t n = size_t{size_} + other.size_ + 1;
  // Scanning this set's members for their range costs about what taking in
  // `other` does only when `other` is not much the smaller.
  if (other.size_ == 0 || (form_ == Form::kTable && size_t{other.size_} * 4 < size_)) {
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
  if (form_ == Form::kTable) {
    TableToBitmap(lo, hi);
    return;
  }
  // A bitmap that must widen takes a quarter of its words more on each side
  // it widens (while the dense form still holds): a region absorbing small
  // regions at its edge one at a time was copied whole at every new word
  // (resnet of 10^5 operators at 0.2: 7.2 M copies, 4.2 G words).
  const size_t room = len_ / 4;
  size_t wide_lo = lo < base_ ? (lo > room ? lo - room : 0) : lo;
  size_t wide_hi = hi >= size_t{base_} + len_ ? hi + room : hi;
  if (wide_hi - wide_lo + 1 > n) wide_lo = lo, wide_hi = hi;
  Rebase(wide_lo, wide_hi);
}

std::pair<size_t, size_t> StorageSet::WordRange() const {
  if (dense()) return {base_, size_t{base_} + len_ - 1};
  if (form_ == Form::kRuns)
    return {static_cast<size_t>(runs_front().first) / 64,
            static_cast<size_t>(run_span().back().last) / 64};
  size_t lo = SIZE_MAX, hi = 0;
  ForEach([&](StorageId s) {
    lo = std::min(lo, static_cast<size_t>(s) / 64);
    hi = std::max(hi, static_cast<size_t>(s) / 64);
  });
  return {lo, hi};
}

void StorageSet::Rebase(size_t lo, size_t hi) {
  if (lo == base_ && hi - lo + 1 == len_) return;
  if (RunsIfFew(hi - lo + 1)) return;
  if (hi - lo + 1 >= kBlocksMinWords) {
    RebaseBlocks(lo, hi);
    return;
  }
  auto* bits = static_cast<uint64_t*>(Allocate(hi - lo + 1, sizeof(uint64_t), true));
  if (len_ != 0) std::memcpy(bits + (base_ - lo), buf_, len_ * sizeof(uint64_t));
  std::free(buf_);
  buf_ = bits;
  len_ = static_cast<uint32_t>(hi - lo + 1);
  base_ = static_cast<uint32_t>(lo);
}

bool StorageSet::Densify() {
  if (size_ < 8) return false;
  const auto [lo, hi] = WordRange();
  if (hi - lo + 1 <= size_) {
    TableToBitmap(lo, hi);
    return true;
  }
  if (size_ < kRunsMinMembers) return false;
  // Runs: the members less those that follow another member.
  size_t runs = size_;
  ForEach([&](StorageId s) { runs -= contains(s + 1); });
  if (!FewRuns(runs, hi - lo + 1)) return false;
  ToRuns();
  return true;
}

void StorageSet::TableToBitmap(size_t lo, size_t hi) {
  const uint32_t slots = len_;
  void* table = buf_;
  buf_ = nullptr;  // MakeDense() clears the set: keep the table until it is read
  MakeDense(static_cast<StorageId>(lo * 64), static_cast<StorageId>(hi * 64),
            {static_cast<const StorageId*>(table), slots});
  std::free(table);
}

void StorageSet::Sparsify() {
  if (RunsIfFew(len_)) return;
  std::vector<StorageId> members;
  members.reserve(size_);
  ForEach([&](StorageId s) { members.push_back(s); });
  MakeSparse(members, members.size() + 1);  // room for one more
}

void StorageSet::MakeDense(StorageId lo, StorageId hi, std::span<const StorageId> members) {
  clear();
  form_ = Form::kBitmap;
  base_ = static_cast<uint32_t>(static_cast<size_t>(lo) / 64);
  len_ = static_cast<uint32_t>(Words(lo, hi));
  buf_ = Allocate(len_, sizeof(uint64_t), true);
  uint64_t* word = bits();
  for (StorageId s : members) {
    if (s == kEmpty) continue;
    word[static_cast<size_t>(s) / 64 - base_] |= uint64_t{1} << (s % 64);
    ++size_;
  }
  if (!RunsIfFew(len_) && len_ >= kBlocksMinWords) RebaseBlocks(base_, size_t{base_} + len_ - 1);
}

void StorageSet::MakeSparse(std::span<const StorageId> members, size_t room) {
  clear();
  size_t slots = 8;
  while (slots < 2 * room) slots *= 2;
  Resize(slots);
  for (StorageId s : members) Place(s);
  size_ = static_cast<uint32_t>(members.size());
}

bool StorageSet::InsertDense(StorageId s) {
  const size_t w = static_cast<size_t>(s) / 64;
  if (w < base_ || w >= size_t{base_} + len_) {
    // Grow the range with room for as much again, or go sparse.
    const size_t lo = std::min<size_t>(w, base_),
                 hi = std::max<size_t>(w, size_t{base_} + len_ - 1);
    if (hi - lo + 1 > 4 * (size_t{size_} + 1) + 16) {
      if (RunsIfFew(hi - lo + 1)) return InsertRun(s);
      Sparsify();  // with room for s: insert() will not grow (nor densify)
      return insert(s);
    }
    const size_t room = len_ / 2;
    Rebase(w < base_ ? (lo > room ? lo - room : 0) : base_, w < base_ ? hi : hi + room);
    if (form_ == Form::kRuns) return InsertRun(s);
  }
  const uint64_t bit = uint64_t{1} << (s % 64);
  if (form_ == Form::kBlocks) {
    if (Word(w) & bit) return false;
    MutableWord(w) |= bit;
    ++size_;
    return true;
  }
  uint64_t& word = bits()[w - base_];
  if (word & bit) return false;
  word |= bit;
  ++size_;
  return true;
}

void StorageSet::Resize(size_t slots) {
  const uint32_t old_len = len_;
  auto* old = static_cast<StorageId*>(buf_);
  buf_ = Allocate(slots, sizeof(StorageId), false);
  len_ = static_cast<uint32_t>(slots);
  std::fill_n(this->slots(), slots, kEmpty);
  shift_ = static_cast<uint8_t>(32 - std::countr_zero(slots));
  for (uint32_t i = 0; i < old_len; ++i)
    if (old[i] != kEmpty) Place(old[i]);
  std::free(old);
}

bool StorageSet::FewRuns(size_t runs, size_t words) const {
  return words >= kRunsMinWords && kRunsFactor * runs <= std::min<size_t>(words, size_);
}

bool StorageSet::RunsIfFew(size_t words) {
  if (words < kRunsMinWords || size_ == 0) return false;
  // A run starts at each member whose predecessor is not one. The count
  // stops once there are too many: most bitmaps that widen are fragmented.
  const size_t most = std::min<size_t>(words, size_) / kRunsFactor;
  size_t runs = 0;
  uint64_t carry = 0;
  if (form_ == Form::kBitmap) {
    const uint64_t* word = bits();
    for (size_t w = 0; w < len_; ++w) {
      runs += Popcount(word[w] & ~(word[w] << 1 | carry));
      if (runs > most) return false;
      carry = word[w] >> 63;
    }
  } else {  // blocks: a null one is words of zeros (ids outside the range are not members)
    Block* const* block = blocks();
    for (size_t i = 0, n = block_count(); i < n; ++i) {
      if (block[i] == nullptr) {
        carry = 0;
        continue;
      }
      for (const uint64_t word : block[i]->word) {
        runs += Popcount(word & ~(word << 1 | carry));
        carry = word >> 63;
      }
      if (runs > most) return false;
    }
  }
  ToRuns();
  return true;
}

std::vector<StorageSet::Run>& StorageSet::RunScratch(int which) {
  thread_local std::vector<Run> scratch[2];
  return scratch[which];
}

std::span<const StorageSet::Run> StorageSet::RunsOf(std::vector<Run>& scratch) const {
  if (form_ == Form::kRuns) return run_span();
  scratch.clear();
  if (dense()) {
    bool open = false;  // a run is open: it started at scratch.back().first
    size_t next = 0;    // the word after the last one looked at
    ForEachWord([&](size_t w, uint64_t word) {
      if (open && w != next) {  // after empty blocks
        scratch.back().last = static_cast<StorageId>(next * 64 - 1);
        open = false;
      }
      const size_t id0 = w * 64;
      for (int bit = 0; bit < 64;) {
        // Open: look for the next clear bit; closed: the next set one.
        const uint64_t rest = (open ? ~word : word) >> bit;
        if (rest == 0) break;
        bit += std::countr_zero(rest);
        if (open)
          scratch.back().last = static_cast<StorageId>(id0 + bit - 1);
        else
          scratch.push_back({static_cast<StorageId>(id0 + bit), 0});
        open = !open;
      }
      next = w + 1;
    });
    if (open) scratch.back().last = static_cast<StorageId>(next * 64 - 1);
    return scratch;
  }
  thread_local std::vector<StorageId> members;
  members.clear();
  ForEach([&](StorageId s) { members.push_back(s); });
  std::sort(members.begin(), members.end());
  for (StorageId s : members) {
    if (!scratch.empty() && scratch.back().last + 1 == s)
      scratch.back().last = s;
    else
      scratch.push_back({s, s});
  }
  return scratch;
}

void StorageSet::MakeRuns(std::span<const Run> runs, size_t members) {
  auto* buf = static_cast<Run*>(Allocate(std::max<size_t>(runs.size(), 4), sizeof(Run), false));
  std::copy(runs.begin(), runs.end(), buf);
  clear();  // after the copy: `runs` may be this set's own
  buf_ = buf;
  form_ = Form::kRuns;
  len_ = static_cast<uint32_t>(std::max<size_t>(runs.size(), 4));
  base_ = static_cast<uint32_t>(runs.size());
  size_ = static_cast<uint32_t>(members);
}

bool StorageSet::RunsHold(StorageId s) const {
  const size_t i = RunAfter(s);
  return i > 0 && s <= run_span()[i - 1].last;
}

bool StorageSet::InsertRun(StorageId s) {
  const size_t i = RunAfter(s);
  Run* run = runs();
  if (i > 0 && s <= run[i - 1].last) return false;
  const bool after = i > 0 && run[i - 1].last + 1 == s;  // s extends run i - 1
  const bool before = i < base_ && run[i].first - 1 == s;
  ++size_;
  if (after && before) {
    run[i - 1].last = run[i].last;
    CloseRun(i);
  } else if (after) {
    run[i - 1].last = s;
  } else if (before) {
    run[i].first = s;
  } else {
    OpenRun(i);
    runs()[i] = {s, s};
    Settle();
  }
  return true;
}

bool StorageSet::EraseRun(StorageId s) {
  size_t i = RunAfter(s);
  if (i == 0 || s > run_span()[i - 1].last) return false;
  Run& run = runs()[--i];
  --size_;
  if (run.first == run.last) {
    CloseRun(i);
  } else if (s == run.first) {
    ++run.first;
  } else if (s == run.last) {
    --run.last;
  } else {  // split
    const StorageId last = run.last;
    run.last = s - 1;
    OpenRun(i + 1);
    runs()[i + 1] = {s + 1, last};
  }
  Settle();
  return true;
}

void StorageSet::OpenRun(size_t i) {
  if (base_ == len_) {
    const size_t room = std::max<size_t>(4, size_t{len_} * 2);
    void* grown = std::realloc(buf_, room * sizeof(Run));
    if (grown == nullptr) throw std::bad_alloc();
    buf_ = grown;
    len_ = static_cast<uint32_t>(room);
  }
  Run* run = runs();
  std::memmove(run + i + 1, run + i, (base_ - i) * sizeof(Run));
  ++base_;
}

void StorageSet::CloseRun(size_t i) {
  Run* run = runs();
  std::memmove(run + i, run + i + 1, (base_ - i - 1) * sizeof(Run));
  --base_;
  if (len_ > 8 && size_t{base_} * 4 < len_) {
    void* shrunk = std::realloc(buf_, size_t{len_ / 2} * sizeof(Run));
    if (shrunk != nullptr) {
      buf_ = shrunk;
      len_ /= 2;
    }
  }
}

void StorageSet::Settle() {
  if (size_ == 0) {
    clear();
    return;
  }
  const size_t runs = base_;
  if (runs <= 4) return;
  const auto [lo, hi] = WordRange();
  const size_t words = hi - lo + 1;
  if (2 * runs <= std::min<size_t>(words, size_)) return;
  std::vector<StorageId> members;
  members.reserve(size_);
  ForEach([&](StorageId s) { members.push_back(s); });
  if (words <= size_)
    MakeDense(members.front(), members.back(), members);
  else
    MakeSparse(members, members.size() + 1);
}

namespace {
thread_local uint64_t g_blocks_made = 0;
}  // namespace

uint64_t StorageSet::blocks_made() { return g_blocks_made; }

StorageSet::Block* StorageSet::NewBlock() {
  auto* b = new Block();
  b->refs.store(1, std::memory_order_relaxed);
  ++g_blocks_made;
  return b;
}

StorageSet::Block* StorageSet::CopyBlock(Block* shared) {
  auto* b = new Block;
  b->refs.store(1, std::memory_order_relaxed);
  b->hash.store(0, std::memory_order_relaxed);
  std::memcpy(b->word, shared->word, sizeof(b->word));
  ++g_blocks_made;
  Release(shared);
  return b;
}

bool StorageSet::BlocksHold(StorageId s) const {
  if (static_cast<size_t>(s) / 64 - base_ >= len_) return false;
  const Block* b = blocks()[static_cast<size_t>(s) / kBlockIds - first_block()];
  return b != nullptr && (b->word[static_cast<size_t>(s) / 64 % kBlockWords] >> (s % 64) & 1);
}

void StorageSet::Release(Block* b) {
  if (b->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete b;
}

void StorageSet::ReleaseBlocks() {
  for (size_t i = 0, n = block_count(); i < n; ++i)
    if (blocks()[i] != nullptr) Release(blocks()[i]);
}

void StorageSet::RebaseBlocks(size_t lo, size_t hi) {
  const size_t first = lo / kBlockWords, n = hi / kBlockWords - first + 1;
  auto** block = static_cast<Block**>(Allocate(n, sizeof(Block*), true));
  if (form_ == Form::kBlocks) {
    std::memcpy(block + (first_block() - first), blocks(), block_count() * sizeof(Block*));
  } else {
    const uint64_t* word = bits();
    for (size_t w = 0; w < len_; ++w) {
      if (word[w] == 0) continue;
      const size_t at = base_ + w;
      Block*& b = block[at / kBlockWords - first];
      if (b == nullptr) b = NewBlock();
      b->word[at % kBlockWords] = word[w];
    }
  }
  std::free(buf_);  // the blocks are moved, not released
  buf_ = block;
  base_ = static_cast<uint32_t>(lo);
  len_ = static_cast<uint32_t>(hi - lo + 1);
  form_ = Form::kBlocks;
}

namespace {

// The hash of a block's place and contents, never 0.
uint32_t BlockHash(const StorageSet::Block& b, size_t index) {
  uint64_t h = index * 0x9E3779B97F4A7C15ull;
  for (const uint64_t w : b.word) h = (h ^ w) * 0xFF51AFD7ED558CCDull, h ^= h >> 32;
  return static_cast<uint32_t>(h) | 1;
}

}  // namespace

void BlockSharing::Add(StorageSet& set) {
  if (set.form_ != StorageSet::Form::kBlocks) return;
  StorageSet::Block** block = set.blocks();
  for (size_t i = 0, n = set.block_count(); i < n; ++i) {
    StorageSet::Block* b = block[i];
    if (b == nullptr) continue;
    ++references_;
    const size_t index = set.first_block() + i;
    uint32_t h = b->hash.load(std::memory_order_relaxed);
    if (h == 0) {
      h = BlockHash(*b, index);
      b->hash.store(h, std::memory_order_relaxed);
    }
    if (2 * (used_ + 1) > slots_.size()) Grow();
    const size_t mask = slots_.size() - 1;
    for (size_t k = h & mask;; k = (k + 1) & mask) {
      Slot& slot = slots_[k];
      if (slot.block == nullptr) {
        slot = {b, index};
        ++used_;
        break;
      }
      if (slot.block == b) break;
      if (slot.index == index && slot.block->hash.load(std::memory_order_relaxed) == h &&
          std::memcmp(slot.block->word, b->word, sizeof(b->word)) == 0) {
        block[i] = StorageSet::Share(slot.block);
        StorageSet::Release(b);
        break;
      }
    }
  }
}

void BlockSharing::Grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(std::max<size_t>(1024, 2 * old.size()), Slot{});
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.block == nullptr) continue;
    size_t k = s.block->hash.load(std::memory_order_relaxed) & mask;
    while (slots_[k].block != nullptr) k = (k + 1) & mask;
    slots_[k] = s;
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
