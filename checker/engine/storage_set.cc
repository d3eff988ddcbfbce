#include "checker/engine/storage_set.h"

#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#endif

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
      form_(other.form_),
      fresh_(other.fresh_) {
  if (form_ == Form::kSmall) {
    std::memcpy(&buf_, &other.buf_, sizeof buf_);
    return;
  }
  if (other.buf_ == nullptr) return;
  if (form_ == Form::kBlocks) {  // the blocks shared
    const size_t n = block_count();
    buf_ = Allocate(n, sizeof(BlockNo), false);
    std::memcpy(buf_, other.buf_, n * sizeof(BlockNo));
    for (size_t i = 0; i < n; ++i)
      if (blocks()[i] != 0) Share(blocks()[i]);
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
  if (form_ == Form::kSmall) {
    for (uint32_t i = 0; i < size_; ++i)
      if (SmallAt(i) == s) {
        for (uint32_t j = i + 1; j < size_; ++j) SetSmall(j - 1, SmallAt(j));
        --size_;
        return true;
      }
    return false;
  }
  if (form_ == Form::kBlocks) {
    if (!contains(s)) return false;
    BlockNo& slot = blocks()[static_cast<size_t>(s) / kBlockIds - first_block()];
    fresh_ = true;
    BlockWords(Own(slot))[static_cast<size_t>(s) / 64 % kBlockWords] &= ~(uint64_t{1} << (s % 64));
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
  if (Words(*lo, *hi) <= members.size()) {
    MakeDense(*lo, *hi, members);
  } else if (members.size() <= kSmallMax) {
    form_ = Form::kSmall;
    for (StorageId s : members) SetSmall(size_++, s);
  } else {
    MakeSparse(members, members.size());
  }
}

void StorageSet::ReserveFor(const StorageSet& other) {
  if (form_ == Form::kRuns) return;  // UnionWith() merges
  if (form_ == Form::kSmall) {       // as a table would (a bitmap if the two are close)
    if (other.size_ == 0) return;
    SmallToTable(size_);  // the smallest table: its slots are scanned below
  }
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

bool StorageSet::InsertSmall(StorageId s) {
  if (form_ != Form::kSmall) {  // an empty table, no buffer
    form_ = Form::kSmall;
    buf_ = nullptr;
  }
  if (SmallHolds(s)) return false;
  if (size_ < kSmallMax) {
    SetSmall(size_++, s);
    return true;
  }
  SmallToTable(size_t{size_} + 1);
  return insert(s);
}

void StorageSet::SmallToTable(size_t n) {
  const StorageId members[kSmallMax] = {SmallAt(0), SmallAt(1), SmallAt(2)};
  const uint32_t count = size_;
  buf_ = nullptr;
  len_ = size_ = base_ = 0;
  form_ = Form::kTable;
  Resize(std::bit_ceil(std::max<size_t>(8, n * 2)));
  for (uint32_t i = 0; i < count; ++i) Place(members[i]);
  size_ = count;
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
    const BlockNo* block = blocks();
    for (size_t i = 0, n = block_count(); i < n; ++i) {
      if (block[i] == 0) {
        carry = 0;
        continue;
      }
      for (size_t k = 0; k < kBlockWords; ++k) {
        const uint64_t word = BlockWords(block[i])[k];
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

// The block arena: address space for kArenaBlocks blocks' words and
// metadata, reserved at the first block and never given back, made usable
// kChunkBlocks at a time. Each thread makes blocks from a chunk of its own
// and from the blocks freed on it; a block freed on another thread than the
// one that made it is that thread's to make again. A thread that ends
// leaves its freed blocks and the rest of its chunk to the next thread that
// needs blocks.
constexpr size_t kArenaBlocks = size_t{1} << 28;  // 32 GiB of words: never all used
constexpr size_t kChunkBlocks = StorageSet::kArenaChunk;

// The blocks the arena reserves: kArenaBlocks, or under an address-space
// limit (ulimit -v, prlimit --as) what a quarter of that limit holds, so
// that the reserve never takes the room the rest of the process needs; at
// least one chunk. A run that needs more blocks ends as out of memory.
size_t ArenaCapacity(size_t bytes_per_block) {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return kArenaBlocks;
  const size_t blocks = static_cast<size_t>(limit.rlim_cur / 4) / bytes_per_block / kChunkBlocks * kChunkBlocks;
  return std::clamp(blocks, kChunkBlocks, kArenaBlocks);
}

// Address space for `bytes`, aligned to 2 MiB and in huge pages where the
// kernel allows, as the heap's (TuneHeapForReplay).
void* Reserve(size_t bytes) {
  constexpr size_t kHuge = size_t{2} << 20;
  void* p =
      mmap(nullptr, bytes + kHuge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  auto* at = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1));
  madvise(at, bytes, MADV_HUGEPAGE);  // may fail: no matter
  return at;
}

void MakeUsable(void* at, size_t bytes) {
  if (mprotect(at, bytes, PROT_READ | PROT_WRITE) != 0) throw std::bad_alloc();
}

// Freed block numbers, made again in order of number from where the last
// one was taken (next fit, wrapping around), so that blocks made one after
// another lie side by side: a region's blocks are made together and read
// together. (Made again last freed first, they lay anywhere in the arena:
// on the resnet of 10^5 operators at 0.2 the load of a word in
// `contains()` took 3.5 times the samples it took in the heap's blocks.)
// A bit per block number, and a bit per word of those bits.
class FreeBlocks {
 public:
  bool empty() const { return count_ == 0; }
  void Add(uint32_t b) {
    const size_t w = b / 64;
    if (w >= bits_.size()) {
      bits_.resize(std::max(w + 1, 2 * bits_.size()), 0);
      words_.resize(bits_.size() / 64 + 1, 0);
    }
    bits_[w] |= uint64_t{1} << (b % 64);
    words_[w / 64] |= uint64_t{1} << (w % 64);
    ++count_;
  }
  // The first freed block from the last one taken on. REQUIRES: !empty().
  uint32_t Take() {
    size_t w = WordFrom(cursor_);
    if (w == SIZE_MAX) w = WordFrom(0);
    const auto b = static_cast<uint32_t>(w * 64 + std::countr_zero(bits_[w]));
    bits_[w] &= bits_[w] - 1;
    if (bits_[w] == 0) words_[w / 64] &= ~(uint64_t{1} << (w % 64));
    --count_;
    cursor_ = w;
    return b;
  }
  // Takes in other's blocks, leaving it empty.
  void Merge(FreeBlocks& other) {
    if (other.bits_.size() > bits_.size())
      std::swap(bits_, other.bits_), std::swap(words_, other.words_);
    for (size_t w = 0; w < other.bits_.size(); ++w) bits_[w] |= other.bits_[w];
    for (size_t w = 0; w < other.words_.size(); ++w) words_[w] |= other.words_[w];
    count_ += other.count_;
    other = FreeBlocks();
  }

 private:
  // The first word at or after `from` with a freed block; SIZE_MAX if none.
  size_t WordFrom(size_t from) const {
    size_t sw = from / 64;
    if (sw >= words_.size()) return SIZE_MAX;
    for (uint64_t m = words_[sw] & (~uint64_t{0} << (from % 64));; m = words_[sw]) {
      if (m != 0) return sw * 64 + std::countr_zero(m);
      if (++sw == words_.size()) return SIZE_MAX;
    }
  }
  std::vector<uint64_t> bits_, words_;
  size_t count_ = 0;
  size_t cursor_ = 0;  // the word the last block was taken from
};

std::mutex g_arena_mutex;
size_t g_arena_used = 0;      // blocks in chunks handed out (block 0 is no block)
size_t g_arena_capacity = 0;  // blocks reserved (ArenaCapacity)

// What ended threads left (under g_arena_mutex). Never destroyed: a set
// may be released on a thread that ends after the program's statics go.
FreeBlocks& Freed() {
  static auto* freed = new FreeBlocks;
  return *freed;
}

}  // namespace

uint64_t StorageSet::blocks_made() { return g_blocks_made; }

size_t StorageSet::arena_blocks() {
  const std::lock_guard<std::mutex> lock(g_arena_mutex);
  return g_arena_used;
}

namespace {

// A thread's blocks (see the arena above).
struct ThreadBlocks {
  FreeBlocks free;
  uint32_t next = 0, end = 0;  // the chunk's blocks not yet made
  ~ThreadBlocks();
};
thread_local ThreadBlocks g_thread_blocks;
// Set once this thread's ThreadBlocks is gone: a block released after that
// (a set destroyed later at the thread's end) goes to Freed().
thread_local bool g_thread_ended = false;

ThreadBlocks::~ThreadBlocks() {
  while (next != end) free.Add(next++);
  g_thread_ended = true;
  const std::lock_guard<std::mutex> lock(g_arena_mutex);
  Freed().Merge(free);
}

}  // namespace

StorageSet::BlockNo StorageSet::NewBlock() {
  static_assert(kArenaBlocks <= kUnhashed, "a slot's mark lies above every block number");
  ThreadBlocks& t = g_thread_blocks;
  if (t.free.empty() && t.next == t.end) {
    const std::lock_guard<std::mutex> lock(g_arena_mutex);
    t.free.Merge(Freed());
  }
  BlockNo b = 0;
  if (!t.free.empty()) {
    b = t.free.Take();
    ASAN_UNPOISON_MEMORY_REGION(BlockWords(b), kBlockWords * sizeof(uint64_t));
    std::memset(BlockWords(b), 0, kBlockWords * sizeof(uint64_t));
  } else {
    if (t.next == t.end) {
      const std::lock_guard<std::mutex> lock(g_arena_mutex);
      if (arena_words_ == nullptr) {
        const size_t capacity = ArenaCapacity(kBlockWords * 8 + sizeof(BlockMeta));
        arena_words_ = static_cast<uint64_t*>(Reserve(capacity * kBlockWords * 8));
        arena_meta_ = static_cast<BlockMeta*>(Reserve(capacity * sizeof(BlockMeta)));
        g_arena_capacity = capacity;
        g_arena_used = 1;  // block 0 is no block: its chunk starts at 1
      }
      const size_t first = g_arena_used, end = (first / kChunkBlocks + 1) * kChunkBlocks;
      if (end > g_arena_capacity) throw std::bad_alloc();
      const auto chunk = static_cast<BlockNo>(end - kChunkBlocks);  // first, or 0 for block 1
      MakeUsable(BlockWords(chunk), kChunkBlocks * kBlockWords * 8);
      MakeUsable(&Meta(chunk), kChunkBlocks * sizeof(BlockMeta));
      g_arena_used = end;
      t.next = static_cast<BlockNo>(first);
      t.end = static_cast<BlockNo>(end);
    }
    b = t.next++;  // its words zero, as the pages were made
  }
  Meta(b).refs.store(1, std::memory_order_relaxed);
  Meta(b).hash.store(0, std::memory_order_relaxed);
  ++g_blocks_made;
  return b;
}

StorageSet::BlockNo StorageSet::CopyBlock(BlockNo shared) {
  const BlockNo b = NewBlock();
  std::memcpy(BlockWords(b), BlockWords(shared), kBlockWords * sizeof(uint64_t));
  Release(shared);
  return b;
}

bool StorageSet::BlocksHold(StorageId s) const {
  if (static_cast<size_t>(s) / 64 - base_ >= len_) return false;
  const BlockNo b = blocks()[static_cast<size_t>(s) / kBlockIds - first_block()];
  return b != 0 && (BlockWords(b)[static_cast<size_t>(s) / 64 % kBlockWords] >> (s % 64) & 1);
}

void StorageSet::Release(BlockNo b) {
  b &= ~kUnhashed;
  if (Meta(b).refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  ASAN_POISON_MEMORY_REGION(BlockWords(b), kBlockWords * sizeof(uint64_t));
  if (!g_thread_ended) {
    g_thread_blocks.free.Add(b);
    return;
  }
  const std::lock_guard<std::mutex> lock(g_arena_mutex);
  Freed().Add(b);
}

void StorageSet::ReleaseBlocks() {
  for (size_t i = 0, n = block_count(); i < n; ++i)
    if (blocks()[i] != 0) Release(blocks()[i]);
}

void StorageSet::RebaseBlocks(size_t lo, size_t hi) {
  const size_t first = lo / kBlockWords, n = hi / kBlockWords - first + 1;
  auto* block = static_cast<BlockNo*>(Allocate(n, sizeof(BlockNo), true));
  if (form_ == Form::kBlocks) {
    std::memcpy(block + (first_block() - first), blocks(), block_count() * sizeof(BlockNo));
  } else {
    const uint64_t* word = bits();
    fresh_ = true;  // its blocks are all new
    for (size_t w = 0; w < len_; ++w) {
      if (word[w] == 0) continue;
      const size_t at = base_ + w;
      BlockNo& b = block[at / kBlockWords - first];
      if (b == 0) b = NewBlock() | kUnhashed;
      BlockWords(b)[at % kBlockWords] = word[w];
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
uint32_t BlockHash(const uint64_t* word, size_t index) {
  uint64_t h = index * 0x9E3779B97F4A7C15ull;
  for (size_t k = 0; k < StorageSet::kBlockWords; ++k)
    h = (h ^ word[k]) * 0xFF51AFD7ED558CCDull, h ^= h >> 32;
  return static_cast<uint32_t>(h) | 1;
}

}  // namespace

BlockSharing::BlockSharing(const BlockSharing& other)
    : slots_(other.slots_),
      used_(other.used_),
      references_(other.references_),
      slots_seen_(other.slots_seen_) {
  for (const Slot& slot : slots_)
    if (slot.block != 0) StorageSet::Share(slot.block);
}

BlockSharing::~BlockSharing() {
  for (const Slot& slot : slots_)
    if (slot.block != 0) StorageSet::Release(slot.block);
}

// A block's hash is 0 until it is kept here, and a kept block is never
// changed (it is shared with this object): so the blocks to look at are
// those of hash 0, and a fresh set's other blocks are kept already (here, or
// by another BlockSharing, whose blocks are left as they are).
void BlockSharing::Add(StorageSet& set) {
  if (!set.fresh_) return;
  set.fresh_ = false;
  if (set.form_ != StorageSet::Form::kBlocks) return;
  StorageSet::BlockNo* block = set.blocks();
  const size_t n = set.block_count();
  slots_seen_ += n;
  for (size_t i = 0; i < n; ++i) {
    if (!(block[i] & StorageSet::kUnhashed)) continue;
    const StorageSet::BlockNo b = block[i] &= ~StorageSet::kUnhashed;
    if (StorageSet::Meta(b).hash.load(std::memory_order_relaxed) != 0) continue;
    ++references_;
    const auto index = static_cast<uint32_t>(set.first_block() + i);
    const uint32_t h = BlockHash(StorageSet::BlockWords(b), index);
    if (2 * (used_ + 1) > slots_.size()) Grow();
    const size_t mask = slots_.size() - 1;
    for (size_t k = h & mask;; k = (k + 1) & mask) {
      Slot& slot = slots_[k];
      if (slot.block == 0) {
        StorageSet::Meta(b).hash.store(h, std::memory_order_relaxed);
        slot = {StorageSet::Share(b), index};
        ++used_;
        break;
      }
      if (slot.index == index &&
          StorageSet::Meta(slot.block).hash.load(std::memory_order_relaxed) == h &&
          std::memcmp(StorageSet::BlockWords(slot.block), StorageSet::BlockWords(b),
                      StorageSet::kBlockWords * sizeof(uint64_t)) == 0) {
        block[i] = StorageSet::Share(slot.block);
        StorageSet::Release(b);  // its hash stays 0: other sets holding it are fresh
        break;
      }
    }
  }
}

void BlockSharing::Prune() { Rebuild(slots_.size(), true); }

void BlockSharing::Grow() { Rebuild(std::max<size_t>(1024, 2 * slots_.size()), false); }

void BlockSharing::Rebuild(size_t size, bool drop_unheld) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(size, Slot{});
  used_ = 0;
  for (const Slot& slot : old) {
    if (slot.block == 0) continue;
    if (drop_unheld && StorageSet::Meta(slot.block).refs.load(std::memory_order_acquire) == 1) {
      StorageSet::Release(slot.block);
    } else {
      Place(slot);
      ++used_;
    }
  }
}

void BlockSharing::Place(Slot slot) {
  const size_t mask = slots_.size() - 1;
  size_t k = StorageSet::Meta(slot.block).hash.load(std::memory_order_relaxed) & mask;
  while (slots_[k].block != 0) k = (k + 1) & mask;
  slots_[k] = slot;
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
