// A set of storage ids for the evicted regions, in one of five forms.
// Table: open addressing with linear probing, deletion by backward shift (no
// tombstones), at most half full. Bitmap, once the members' range has no more
// 64-id words than members: a bit per id of that range (8 bytes per word,
// against 8-16 bytes per member in a table), back to a table when it holds
// fewer than a quarter of its words' count. Runs, when the members of a wide
// range lie in few runs of consecutive ids (see kRunsFactor): the runs in
// order, 8 bytes each; back to a bitmap or a table when there are more than
// half as many runs as words or members. A region
// of a long recurrent trace is a few long runs over a range of 10^5 ids: its
// bitmap grows with the trace, its runs do not.
// Table and bitmap: membership, insertion and deletion in O(1) (amortized).
// Runs: membership in O(log runs), insertion and deletion in O(runs).
// Iteration in time proportional to the size (table), the range (bitmap) or
// the size (runs), in an order fixed by the history of operations.
// Small: up to kSmallMax (3) members held in the set itself, in insertion
// order (in the bytes of the buffer pointer and of base_), no buffer. A
// region rebuilt with one to three frontier storages far apart keeps them so:
// on the generated rnn each evicted storage's own frontier is such a set,
// iterated by every one of its ~1,300 absorbs (as a table: 8 slots in a
// buffer). A fourth member makes it a table, for good.
// Each other form lives in one heap buffer and the set itself is 24 bytes: every
// storage has two regions of two sets each, so a set's fixed size counts four
// times per storage (as two vectors and their bookkeeping it was 80 bytes:
// 320 MB of empty sets at 10^6 storages).
// Blocks: a bitmap of kBlocksMinWords words or more is kept as blocks of
// 1,024 ids, shared between sets copy on write: a union shares the blocks
// this set lacks or holds a subset of, a copy shares all, and BlockSharing
// makes equal blocks of many sets one. It is the bitmap form in every other
// way (same range, same changes of form, same order): on a generated resnet
// of 10^5 operators at 0.2 the regions' 1.9 M non-empty blocks held about
// 27,000 distinct contents. A block is null until a member is added; one
// emptied by erasing stays (freed and made again, such blocks cost 29 M
// allocations on that trace).
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <utility>
#include <vector>

#include "model/trace.h"

namespace dtr {

class StorageSet {
 public:
  enum class Form : uint8_t { kTable, kBitmap, kRuns, kBlocks, kSmall };
  static constexpr uint32_t kSmallMax = 3;
  static constexpr size_t kBlockWords = 16, kBlockIds = 64 * kBlockWords;
  // Consecutive ids first..last, both included.
  struct Run {
    StorageId first, last;
  };

  StorageSet() = default;
  StorageSet(const StorageSet& other);
  StorageSet(StorageSet&& other) noexcept { Swap(other); }
  StorageSet& operator=(StorageSet other) noexcept {
    Swap(other);
    return *this;
  }
  ~StorageSet() {
    if (form_ == Form::kBlocks) ReleaseBlocks();
    if (form_ != Form::kSmall) std::free(buf_);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Form form() const { return form_; }  // which form it is in now
  // A bitmap, in one buffer or in blocks.
  bool dense() const { return form_ == Form::kBitmap || form_ == Form::kBlocks; }
  // Members listed one by one: held in place or in a hash table.
  bool listed() const { return form_ == Form::kSmall || form_ == Form::kTable; }

  // Inlined always: it is the inner test of region upkeep, and where GCC
  // stopped inlining it on its own a call cost 12% of the LSTM 0.266 run's
  // region passes.
  [[gnu::always_inline]] bool contains(StorageId s) const {
    if (form_ == Form::kBitmap) {
      const size_t w = static_cast<size_t>(s) / 64 - base_;  // wraps below base_
      return w < len_ && (bits()[w] >> (s % 64) & 1);
    }
    if (form_ == Form::kSmall) return SmallHolds(s);
    if (size_ == 0) return false;
    if (form_ != Form::kTable) return form_ == Form::kRuns ? RunsHold(s) : BlocksHold(s);
    const StorageId* slot = slots();
    for (uint32_t i = Home(s);; i = (i + 1) & mask()) {
      if (slot[i] == s) return true;
      if (slot[i] == kEmpty) return false;
    }
  }
  // Adds s; false if it was already there.
  bool insert(StorageId s) {
    if (form_ == Form::kBitmap) return InsertDense(s);
    if (form_ == Form::kRuns) return InsertRun(s);
    if (form_ == Form::kBlocks) return InsertDense(s);
    if (form_ == Form::kSmall || len_ == 0) return InsertSmall(s);
    if ((size_ + 1) * 2 > len_) {
      if (Densify()) return insert(s);
      Resize(size_t{len_} * 2);  // an empty table took the small form above
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
  // Room for `n` members without growing (table); a table that must grow
  // takes another form instead when its members allow.
  void reserve(size_t n) {
    if (form_ == Form::kSmall || (form_ == Form::kTable && len_ == 0)) {
      if (n < 8) return;  // no buffer yet: a fourth member makes a table of 8 slots
      if (form_ == Form::kSmall) SmallToTable(n);
    }
    if (form_ == Form::kTable && n * 2 > len_ && !Densify())
      Resize(std::bit_ceil(std::max<size_t>(8, n * 2)));
  }
  // Room for this set's members and `other`'s: the bitmap over both ranges
  // when that is no larger (a small set about to take in a large bitmap
  // would otherwise become a large table); a bitmap that widens takes room
  // to widen again; nothing in the runs form (the union is a merge).
  void ReserveFor(const StorageSet& other);
  // Both sets are bitmaps in one buffer and this one's range covers other's.
  bool BitmapCovers(const StorageSet& other) const {
    return form_ == Form::kBitmap && other.form_ == Form::kBitmap && Covers(other);
  }
  // Adds other's members, calling on_new(s) for each one that was not here
  // (in no particular order). Word by word when this set is a bitmap whose
  // range covers other's (as ReserveFor() arranges) and other is a bitmap or
  // runs; run by run when this set is in the runs form.
  // Inlined always, as before the blocks form, whose test pushed it out of
  // line (10% of the rnn of 10^5 operators at 0.5 in calls).
  template <class F>
  [[gnu::always_inline]] void UnionWith(const StorageSet& other, F&& on_new) {
    if (BitmapCovers(other)) {
      OrWords(other.bits(), other.base_, other.len_, on_new);
      return;
    }
    if (form_ == Form::kBlocks && other.dense() && Covers(other)) {
      UnionIntoBlocks(other, on_new);
      return;
    }
    if (form_ == Form::kRuns || other.form_ == Form::kRuns) {
      UnionWithRuns(other, on_new);
      return;
    }
    InsertEach(other, on_new);
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
  // ranges share. REQUIRES: both are dense().
  size_t CommonBound(const StorageSet& other) const {
    const size_t lo = std::max(base_, other.base_);
    const size_t hi = std::min(size_t{base_} + len_, size_t{other.base_} + other.len_);
    return hi > lo ? 64 * (hi - lo) : 0;
  }
  // Calls f(s) for each member of both sets: word by word when both are
  // dense, run by run when both are runs, else over the smaller set's
  // members.
  template <class F>
  void ForEachCommon(const StorageSet& other, F&& f) const {
    if (form_ == Form::kBitmap && other.form_ == Form::kBitmap) {
      const size_t lo = std::max(base_, other.base_);
      const size_t hi = std::min(size_t{base_} + len_, size_t{other.base_} + other.len_);
      const uint64_t *a = bits(), *b = other.bits();
      for (size_t w = lo; w < hi; ++w)
        for (uint64_t m = a[w - base_] & b[w - other.base_]; m != 0; m &= m - 1)
          f(static_cast<StorageId>(w * 64 + std::countr_zero(m)));
      return;
    }
    if (dense() && other.dense()) {
      const size_t lo = std::max(base_, other.base_);
      const size_t hi = std::min(size_t{base_} + len_, size_t{other.base_} + other.len_);
      for (size_t w = lo; w < hi; ++w)
        for (uint64_t m = Word(w) & other.Word(w); m != 0; m &= m - 1)
          f(static_cast<StorageId>(w * 64 + std::countr_zero(m)));
      return;
    }
    if (form_ == Form::kRuns && other.form_ == Form::kRuns) {
      const std::span<const Run> a = run_span(), b = other.run_span();
      for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
        const StorageId lo = std::max(a[i].first, b[j].first);
        const StorageId hi = std::min(a[i].last, b[j].last);
        for (StorageId s = lo; s <= hi; ++s) f(s);
        if (a[i].last < b[j].last)
          ++i;
        else
          ++j;
      }
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
    if (form_ == Form::kBlocks) ReleaseBlocks();
    if (form_ != Form::kSmall) std::free(buf_);
    buf_ = nullptr;
    len_ = size_ = base_ = 0;
    shift_ = 32;
    form_ = Form::kTable;
    fresh_ = false;
  }
  template <class F>
  void ForEach(F&& f) const {
    if (form_ == Form::kBitmap) {
      const uint64_t* word = bits();
      for (size_t w = 0; w < len_; ++w)
        for (uint64_t m = word[w]; m != 0; m &= m - 1)
          f(static_cast<StorageId>((base_ + w) * 64 + std::countr_zero(m)));
      return;
    }
    if (form_ == Form::kBlocks) {
      ForEachInBlocks(f);
      return;
    }
    if (form_ == Form::kRuns) {
      for (const Run& r : run_span())
        for (StorageId s = r.first; s <= r.last; ++s) f(s);
      return;
    }
    if (form_ == Form::kSmall) {
      const StorageId copy[kSmallMax] = {SmallAt(0), SmallAt(1),
                                         SmallAt(2)};  // f may change the set
      for (uint32_t i = 0, n = size_; i < n; ++i) f(copy[i]);
      return;
    }
    const StorageId* slot = slots();
    for (size_t i = 0; i < len_; ++i)
      if (slot[i] != kEmpty) f(slot[i]);
  }

  // Blocks made (new or copied) on this thread so far: when the sets'
  // blocks are worth sharing again (BlockSharing).
  static uint64_t blocks_made();
  // Block numbers the arena has handed to threads so far, in chunks of
  // kArenaChunk: blocks in use, freed for reuse, or not yet made.
  static size_t arena_blocks();
  static constexpr size_t kArenaChunk = size_t{1} << 14;  // 2 MiB of words: a huge page

 private:
  friend class BlockSharing;
  // Blocks form: a block of ids kBlockIds * k onwards, named by its number
  // in the block arena (0: no block). Its kBlockWords words are at a place
  // computed from the number (BlockWords()), so a set holds 4 bytes per
  // block where a pointer took 8, and reads a word with no more loads.
  using BlockNo = uint32_t;
  // In a set's slot, beside the number: the block may not have been looked
  // at by BlockSharing since it was made or changed (see fresh_). Block
  // numbers stay below it (kArenaBlocks).
  static constexpr BlockNo kUnhashed = BlockNo{1} << 31;
  // What else a block has, beside its words: how many sets share it, and
  // BlockSharing's hash of its place and contents (0: not known).
  struct BlockMeta {
    std::atomic<uint32_t> refs;
    std::atomic<uint32_t> hash;
  };
  static constexpr StorageId kEmpty = -1;
  // A bitmap this wide or wider is kept in blocks (16,384 ids: wider than
  // every public trace, whose sets keep their one buffer).
  static constexpr size_t kBlocksMinWords = 256;
  // The buffer: len_ slots (table), len_ words (bitmap), room for len_ runs
  // of which base_ are held (runs), or pointers to the blocks holding words
  // base_ to base_ + len_ - 1 (blocks: those of ids kBlockIds * (base_ /
  // kBlockWords) onwards).
  StorageId* slots() { return static_cast<StorageId*>(buf_); }
  const StorageId* slots() const { return static_cast<const StorageId*>(buf_); }
  uint64_t* bits() { return static_cast<uint64_t*>(buf_); }
  const uint64_t* bits() const { return static_cast<const uint64_t*>(buf_); }
  Run* runs() { return static_cast<Run*>(buf_); }
  std::span<const Run> run_span() const { return {static_cast<const Run*>(buf_), base_}; }
  BlockNo* blocks() const { return static_cast<BlockNo*>(buf_); }
  size_t first_block() const { return base_ / kBlockWords; }
  size_t block_count() const {
    return (size_t{base_} + len_ - 1) / kBlockWords - first_block() + 1;
  }
  // Blocks form: whether s is a member. Out of line, as RunsHold(), to keep
  // contains() small where it is inlined.
  bool BlocksHold(StorageId s) const;
  // Word w (of ids 64 w onwards) of a dense set; 0 outside its range.
  uint64_t Word(size_t w) const {
    if (w - base_ >= len_) return 0;
    if (form_ == Form::kBitmap) return bits()[w - base_];
    const BlockNo b = blocks()[w / kBlockWords - first_block()];
    return b == 0 ? 0 : BlockWords(b)[w % kBlockWords];
  }
  // Word w of a dense set, to change (within range): its block made, or
  // copied when shared.
  uint64_t& MutableWord(size_t w) {
    if (form_ == Form::kBitmap) return bits()[w - base_];
    fresh_ = true;
    return BlockWords(Own(blocks()[w / kBlockWords - first_block()]))[w % kBlockWords];
  }
  // Calls f(w, word) for the words of a dense set in order, skipping empty
  // blocks (a bitmap's words all).
  template <class F>
  void ForEachWord(F&& f) const {
    if (form_ == Form::kBitmap) {
      for (size_t w = 0; w < len_; ++w) f(base_ + w, bits()[w]);
      return;
    }
    const BlockNo* block = blocks();
    for (size_t i = 0, n = block_count(); i < n; ++i)
      if (block[i] != 0)
        for (size_t k = 0; k < kBlockWords; ++k)
          f((first_block() + i) * kBlockWords + k, BlockWords(block[i])[k]);
  }
  // ForEach() in the blocks form. Out of line: inlined, it kept GCC from
  // inlining ForEach() into the absorbs of the other forms (rnn of 10^5
  // operators at 0.5: 10% of the run in calls).
  template <class F>
  [[gnu::noinline]] void ForEachInBlocks(F& f) const {
    ForEachWord([&](size_t w, uint64_t word) {
      for (uint64_t m = word; m != 0; m &= m - 1)
        f(static_cast<StorageId>(w * 64 + std::countr_zero(m)));
    });
  }
  // The block in slot b, this set's alone: made if none, copied if shared.
  static BlockNo Own(BlockNo& b) {
    if (b == 0) {
      b = NewBlock();
    } else if (Meta(b).refs.load(std::memory_order_acquire) > 1) {
      b = CopyBlock(b);
    } else {
      Meta(b).hash.store(0, std::memory_order_relaxed);
    }
    b |= kUnhashed;
    return b;
  }
  static BlockNo NewBlock();                 // its words zero
  static BlockNo CopyBlock(BlockNo shared);  // a copy; the shared block released
  static BlockNo Share(BlockNo b) {
    Meta(b).refs.fetch_add(1, std::memory_order_relaxed);
    return b;
  }
  static void Release(BlockNo b);
  // The arena (storage_set.cc): kBlockWords words and a BlockMeta for each
  // block number, in address space reserved once and made usable a chunk at
  // a time.
  static inline uint64_t* arena_words_ = nullptr;
  static inline BlockMeta* arena_meta_ = nullptr;
  static uint64_t* BlockWords(BlockNo b) {
    return arena_words_ + size_t{b & ~kUnhashed} * kBlockWords;
  }
  static BlockMeta& Meta(BlockNo b) { return arena_meta_[b & ~kUnhashed]; }
  void ReleaseBlocks();  // every block of this set's (blocks form)
  // The dense set over words lo..hi (which include its range) in blocks.
  void RebaseBlocks(size_t lo, size_t hi);
  // Small form: member i (below size_) is in the buffer pointer's bytes
  // (i < 2) or in base_.
  StorageId SmallAt(uint32_t i) const {
    if (i == 2) return static_cast<StorageId>(base_);
    StorageId pair[2];
    std::memcpy(pair, &buf_, sizeof pair);
    return pair[i];
  }
  void SetSmall(uint32_t i, StorageId s) {
    if (i == 2) {
      base_ = static_cast<uint32_t>(s);
      return;
    }
    StorageId pair[2];
    std::memcpy(pair, &buf_, sizeof pair);
    pair[i] = s;
    std::memcpy(&buf_, pair, sizeof pair);
  }
  bool SmallHolds(StorageId s) const {
    for (uint32_t i = 0; i < size_; ++i)
      if (SmallAt(i) == s) return true;
    return false;
  }
  // Adds s to a small set or an empty table (which becomes small); a full
  // small set becomes a table first.
  bool InsertSmall(StorageId s);
  // The small set as a table with room for n members.
  void SmallToTable(size_t n);
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
    std::swap(form_, other.form_);
    std::swap(fresh_, other.fresh_);
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
  // The set as `runs` (in order, apart, with `members` ids in all).
  void MakeRuns(std::span<const Run> runs, size_t members);
  bool InsertDense(StorageId s);
  // The first and last 64-id words of the set: a bitmap's, or those holding
  // a table's or runs' members ((SIZE_MAX, 0) when it has none).
  std::pair<size_t, size_t> WordRange() const;
  // This bitmap's range covers other's (a bitmap's or runs').
  bool Covers(const StorageSet& other) const {
    if (other.form_ == Form::kRuns)
      return static_cast<size_t>(other.runs_front().first) / 64 >= base_ &&
             static_cast<size_t>(other.run_span().back().last) / 64 < size_t{base_} + len_;
    return other.base_ >= base_ && size_t{other.base_} + other.len_ <= size_t{base_} + len_;
  }
  const Run& runs_front() const { return run_span().front(); }
  // The bitmap over words lo..hi, which include its current ones; or the
  // runs form instead, when the bitmap's runs are few for that range.
  void Rebase(size_t lo, size_t hi);
  // To the bitmap or runs form if the members allow; false if they do not.
  bool Densify();
  // The hash table as a bitmap over words lo..hi, which hold its members.
  void TableToBitmap(size_t lo, size_t hi);
  // To a table, or runs if they are few.
  void Sparsify();
  // The runs form pays when there are at most 1/32 as many runs as words of
  // range and as members, over a range of 16,384 ids at least (a table is
  // looked at from 1,024 members on); it is left for another when there
  // are more than half as many. (Taken sooner, at 1/8 and 1,024 ids, it
  // made the resnet of 10^5 operators at 0.2 8% slower and no smaller.)
  static constexpr size_t kRunsMinWords = 256, kRunsMinMembers = 1024, kRunsFactor = 32;
  bool FewRuns(size_t runs, size_t words) const;
  // A bitmap to the runs form if it has few runs for a range of `words`
  // words; whether it did.
  bool RunsIfFew(size_t words);
  // The members as runs in order: this set's own (runs form) or built into
  // `scratch`.
  std::span<const Run> RunsOf(std::vector<Run>& scratch) const;
  // Runs form: whether s is a member; s added or removed; back to a bitmap
  // or table when the runs have become many (Settle()).
  bool RunsHold(StorageId s) const;
  bool InsertRun(StorageId s);
  bool EraseRun(StorageId s);
  void Settle();
  // The index of the first run starting after s.
  size_t RunAfter(StorageId s) const {
    const std::span<const Run> r = run_span();
    return static_cast<size_t>(
        std::upper_bound(r.begin(), r.end(), s,
                         [](StorageId x, const Run& y) { return x < y.first; }) -
        r.begin());
  }
  // Room for one more run at index i, the runs from i on moved up one.
  void OpenRun(size_t i);
  void CloseRun(size_t i);  // run i removed, later ones moved down
  // UnionWith() where either set is in the runs form. Out of line: inlined,
  // it slowed every absorb of bitmaps and tables by 5% (resnet of 10^5
  // operators at 0.2). Into runs: a few members or runs one at a time, in
  // place; more as a merge of the two run lists.
  template <class F>
  [[gnu::noinline]] void UnionWithRuns(const StorageSet& other, F& on_new) {
    if (other.size_ == 0) return;
    // Other's runs, or its members when it is not in the runs form.
    const size_t pieces = other.form_ == Form::kRuns ? other.base_ : other.size_;
    if (form_ == Form::kRuns && pieces > kFewRuns && pieces * kFewRuns > base_) {
      MergeRuns(other.RunsOf(RunScratch(0)), on_new);
    } else if (form_ == Form::kRuns && other.form_ == Form::kRuns) {
      for (const Run& r : other.run_span()) AddRun(r, on_new);
      Settle();
    } else if (dense() && other.form_ == Form::kRuns && Covers(other)) {
      for (const Run& r : other.run_span()) OrRun(r, on_new);
    } else {
      InsertEach(other, on_new);  // into runs, the form may change on the way
    }
  }
  // Adds other's members one by one, calling on_new for each that was not here.
  template <class F>
  void InsertEach(const StorageSet& other, F& on_new) {
    other.ForEach([&](StorageId s) {
      if (insert(s)) on_new(s);
    });
  }
  static constexpr size_t kFewRuns = 8;
  // A thread's two scratch vectors: 0 for RunsOf(), 1 for MergeRuns().
  static std::vector<Run>& RunScratch(int which);
  // To the runs form (from a table or a bitmap).
  void ToRuns() { MakeRuns(RunsOf(RunScratch(0)), size_); }
  // Calls on_new for the ids of b that no run of own from index k on holds
  // (the runs before k end before b); returns how many.
  template <class F>
  static uint32_t NewIds(std::span<const Run> own, size_t k, const Run& b, F& on_new) {
    uint32_t added = 0;
    for (StorageId at = b.first; at <= b.last;) {
      if (k < own.size() && own[k].first <= at) {
        at = std::max(at, own[k++].last + 1);
        continue;
      }
      const StorageId gap_end = k < own.size() ? std::min(b.last, own[k].first - 1) : b.last;
      for (StorageId s = at; s <= gap_end; ++s) on_new(s);
      added += static_cast<uint32_t>(gap_end - at + 1);
      at = gap_end + 1;
    }
    return added;
  }
  // Runs form: adds the ids of r in place, calling on_new for each that was
  // not here; Settle() is left to the caller.
  template <class F>
  void AddRun(const Run& r, F& on_new) {
    const std::span<const Run> own = run_span();
    // Runs i..j-1 overlap r or touch it.
    const size_t i = static_cast<size_t>(
        std::partition_point(own.begin(), own.end(),
                             [&](const Run& x) { return x.last + 1 < r.first; }) -
        own.begin());
    const size_t j = static_cast<size_t>(
        std::partition_point(own.begin() + static_cast<ptrdiff_t>(i), own.end(),
                             [&](const Run& x) { return x.first <= r.last + 1; }) -
        own.begin());
    const uint32_t added = NewIds(own, i, r, on_new);
    if (added == 0) return;
    size_ += added;
    if (i == j) {
      OpenRun(i);
      runs()[i] = r;
      return;
    }
    Run* run = runs();
    run[i] = {std::min(r.first, run[i].first), std::max(r.last, run[j - 1].last)};
    std::memmove(run + i + 1, run + j, (base_ - j) * sizeof(Run));
    base_ -= static_cast<uint32_t>(j - i - 1);
  }
  // UnionWith() into blocks from a dense set whose range this one covers.
  // Where other's block is new here or holds all this one's block does,
  // this set takes other's block. Out of line, as UnionWithRuns() (inlined,
  // it made the rnn of 10^5 operators at 0.5 16% slower, no set there being
  // in blocks).
  template <class F>
  [[gnu::noinline]] void UnionIntoBlocks(const StorageSet& other, F& on_new) {
    if (other.form_ == Form::kBitmap) {
      const uint64_t* from = other.bits();
      for (size_t w = 0; w < other.len_; ++w)
        if (from[w] != 0) OrWord(other.base_ + w, from[w], on_new);
      return;
    }
    const BlockNo* from = other.blocks();
    BlockNo* to = blocks() + (other.first_block() - first_block());
    static constexpr uint64_t kNone[kBlockWords] = {};
    for (size_t i = 0, n = other.block_count(); i < n; ++i) {
      if (from[i] == 0 || from[i] == to[i]) continue;
      const size_t w0 = (other.first_block() + i) * kBlockWords;
      const uint64_t* theirs = BlockWords(from[i]);
      const uint64_t* mine = to[i] == 0 ? kNone : BlockWords(to[i]);
      bool more = false, less = false;  // other's block has ids this one lacks, or the reverse
      for (size_t k = 0; k < kBlockWords; ++k) {
        more = more || (theirs[k] & ~mine[k]) != 0;
        less = less || (mine[k] & ~theirs[k]) != 0;
      }
      if (!more) continue;
      if (less) {
        for (size_t k = 0; k < kBlockWords; ++k)
          if (theirs[k] != 0) OrWord(w0 + k, theirs[k], on_new);
        continue;
      }
      for (size_t k = 0; k < kBlockWords; ++k) {
        uint64_t added = theirs[k] & ~mine[k];
        size_ += static_cast<uint32_t>(Popcount(added));
        for (; added != 0; added &= added - 1)
          on_new(static_cast<StorageId>((w0 + k) * 64 + std::countr_zero(added)));
      }
      if (to[i] != 0) Release(to[i]);
      to[i] = Share(from[i]);
      fresh_ = fresh_ || other.fresh_;
    }
  }
  // Dense: or-s `bits` into word w (within range).
  template <class F>
  void OrWord(size_t w, uint64_t bits, F& on_new) {
    uint64_t added = bits & ~Word(w);
    if (added == 0) return;
    MutableWord(w) |= added;
    size_ += static_cast<uint32_t>(Popcount(added));
    for (; added != 0; added &= added - 1)
      on_new(static_cast<StorageId>(w * 64 + std::countr_zero(added)));
  }
  // Bitmap: or-s in `len` words of ids from word `base` on (within range).
  template <class F>
  void OrWords(const uint64_t* from, size_t base, size_t len, F& on_new) {
    uint64_t* to = bits() + (base - base_);
    for (size_t w = 0; w < len; ++w) {
      uint64_t added = from[w] & ~to[w];
      if (added == 0) continue;
      to[w] |= added;
      size_ += static_cast<uint32_t>(Popcount(added));
      for (; added != 0; added &= added - 1)
        on_new(static_cast<StorageId>((base + w) * 64 + std::countr_zero(added)));
    }
  }
  // Dense: adds the ids of r (within range).
  template <class F>
  void OrRun(const Run& r, F& on_new) {
    const size_t first = static_cast<size_t>(r.first), last = static_cast<size_t>(r.last);
    for (size_t w = first / 64; w <= last / 64; ++w) {
      const size_t lo = std::max(first, w * 64) - w * 64, hi = std::min(last, w * 64 + 63) - w * 64;
      OrWord(w, (hi == 63 ? ~uint64_t{0} : (uint64_t{1} << (hi + 1)) - 1) >> lo << lo, on_new);
    }
  }
  // Runs form: adds the ids of `add` (in order, apart), calling on_new for
  // each that was not here.
  template <class F>
  void MergeRuns(std::span<const Run> add, F& on_new) {
    const std::span<const Run> own = run_span();
    size_t i = 0;
    uint32_t added = 0;
    for (const Run& b : add) {
      while (i < own.size() && own[i].last < b.first) ++i;
      added += NewIds(own, i, b, on_new);
    }
    if (added == 0) return;
    std::vector<Run>& out = RunScratch(1);
    out.clear();
    for (size_t a = 0, b = 0; a < own.size() || b < add.size();) {
      const Run& r =
          b == add.size() || (a < own.size() && own[a].first <= add[b].first) ? own[a++] : add[b++];
      if (!out.empty() && r.first <= out.back().last + 1)
        out.back().last = std::max(out.back().last, r.last);
      else
        out.push_back(r);
    }
    const size_t n = out.size();
    if (n > len_) {
      void* grown = std::realloc(buf_, n * sizeof(Run));
      if (grown == nullptr) throw std::bad_alloc();
      buf_ = grown;
      len_ = static_cast<uint32_t>(n);
    }
    std::memcpy(buf_, out.data(), n * sizeof(Run));
    base_ = static_cast<uint32_t>(n);
    size_ += added;
    Settle();
  }

  void* buf_ = nullptr;  // malloc'd: see slots(), bits(), runs(), blocks(); small: SmallAt()
  uint32_t len_ = 0;
  uint32_t size_ = 0;
  uint32_t base_ = 0;   // bitmap, blocks: ids (base_ + w) * 64 + b; runs: how many; small: a member
  uint8_t shift_ = 32;  // 32 - log2(slots): Home() keeps the top bits of the product
  Form form_ = Form::kTable;
  // Blocks form: the set may hold a block that BlockSharing has not looked
  // at since it was made or changed (its hash 0), in a slot marked
  // kUnhashed. A set not fresh holds only blocks some BlockSharing keeps
  // (or kept: one destroyed leaves its blocks' hashes, and a block's one
  // holder that changes it marks it again).
  bool fresh_ = false;
};

static_assert(sizeof(StorageSet) <= 24, "four sets per storage: keep StorageSet small");

// Makes the equal blocks of many sets one (see the blocks form above). It
// keeps one block of each content it has seen (holding a reference to it,
// so that no set changes it in place): Add() looks at the blocks a set made
// or changed since it was last added (see StorageSet::fresh_) and replaces
// each by the kept block equal to it (same ids, same members), or keeps it.
// A pass over the sets after each burst of changes costs about what the
// changes made, not what every set holds.
class BlockSharing {
 public:
  BlockSharing() = default;
  BlockSharing(const BlockSharing& other);  // keeps the same blocks
  BlockSharing(BlockSharing&& other) noexcept { Swap(other); }
  BlockSharing& operator=(BlockSharing other) noexcept {
    Swap(other);
    return *this;
  }
  ~BlockSharing();

  void Add(StorageSet& set);
  // Lets go of the kept blocks no set holds any more.
  void Prune();
  size_t references() const { return references_; }  // blocks looked at
  size_t distinct() const { return used_; }          // blocks kept
  size_t slots_seen() const { return slots_seen_; }  // block slots of the fresh sets added

 private:
  struct Slot {
    StorageSet::BlockNo block = 0;
    uint32_t index = 0;  // the block's ids: kBlockIds * index onwards
  };
  void Swap(BlockSharing& other) noexcept {
    std::swap(slots_, other.slots_);
    std::swap(used_, other.used_);
    std::swap(references_, other.references_);
    std::swap(slots_seen_, other.slots_seen_);
  }
  void Grow();
  // The table again at `size` slots: the kept blocks, less those no set
  // holds when `drop_unheld`.
  void Rebuild(size_t size, bool drop_unheld);
  void Place(Slot slot);  // REQUIRES: room, and no equal block kept
  std::vector<Slot> slots_;
  size_t used_ = 0, references_ = 0, slots_seen_ = 0;
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
