#include "checker/drivers/atlas_walk.h"

#include <fmt/core.h>

#include <algorithm>
#include <limits>

#include "model/error.h"

namespace dtr {

namespace {

bool SameRun(const AtlasInterval& a, const AtlasInterval& b) {
  return a.run_lo == b.run_lo && a.run_hi == b.run_hi;
}

}  // namespace

AtlasWalk::AtlasWalk(int64_t lo, int64_t hi, std::vector<AtlasInterval> finished, AtlasCap cap,
                     size_t parts_wanted)
    : lo_(lo), hi_(hi), cap_(cap), finished_(std::move(finished)), next_(lo) {
  std::sort(finished_.begin(), finished_.end(),
            [](const AtlasInterval& a, const AtlasInterval& b) { return a.lo < b.lo; });
  std::vector<AtlasPart> gaps;
  int64_t gap_from = lo;
  for (const AtlasInterval& iv : finished_) {
    if (iv.lo < gap_from || iv.hi < iv.lo || iv.hi > hi)
      throw Error(fmt::format("a finished atlas interval [{}, {}] is outside the range [{}, {}] or overlaps another",
                              iv.lo, iv.hi, lo, hi));
    if (gap_from < iv.lo) gaps.push_back({gap_from, iv.lo - 1});
    gap_from = iv.hi + 1;
    resumed_width_ += iv.width();
    resumed_evals_ += iv.heuristic_evals;
  }
  if (gap_from <= hi) gaps.push_back({gap_from, hi});
  if (parts_wanted <= 1) {
    parts_ = gaps;
    return;
  }
  // About parts_wanted parts of equal width; every gap is at least one part.
  int64_t open = 0;  // at most hi - lo + 1, which fits
  for (const AtlasPart& g : gaps) open += g.hi - g.lo + 1;
  const int64_t want = static_cast<int64_t>(parts_wanted);
  const int64_t target = std::max<int64_t>(1, open / want + (open % want != 0));
  for (const AtlasPart& g : gaps) {
    int64_t width = g.hi - g.lo + 1;
    int64_t k = width / target + (width % target != 0);
    int64_t base = width / k, extra = width % k;  // the first `extra` parts get one byte more
    int64_t from = g.lo;
    for (int64_t i = 0; i < k; ++i) {
      int64_t w = base + (i < extra ? 1 : 0);
      parts_.push_back({from, from + w - 1});
      from += w;
    }
  }
}

AtlasPartWalk AtlasWalk::WalkPart(size_t k, const std::function<AtlasInterval(int64_t)>& replay,
                                  const std::function<void(const AtlasInterval&)>& record,
                                  const std::atomic<bool>* cancel) const {
  const AtlasPart& part = parts_.at(k);
  AtlasPartWalk out;
  int64_t cursor = part.lo;
  size_t replays = 0;
  int64_t evals = 0;
  while (cursor <= part.hi) {
    // No part needs more than the cap to decide it (Collect): in budget order
    // every replay before the part's, and the part's own, come first.
    if (cap_.Reached(replays, evals)) break;
    if (cancel && cancel->load()) break;
    AtlasInterval iv = replay(cursor);
    ++replays;
    evals += iv.heuristic_evals;
    if (iv.run_lo > cursor || iv.run_hi < cursor)
      throw Error(fmt::format("replay at budget {} reported the interval [{}, {}], which misses it", cursor,
                              iv.run_lo, iv.run_hi));
    iv.lo = cursor;
    iv.hi = std::min(iv.run_hi, part.hi);
    if (record) record(iv);
    out.pieces.push_back(iv);
    cursor = iv.hi + 1;
  }
  out.complete = cursor > part.hi;
  return out;
}

void AtlasWalk::Add(const AtlasInterval& piece) {
  if (decided_) return;
  if (piece.lo != next_ || piece.hi < piece.lo)
    throw Error(fmt::format("atlas intervals do not tile the range at {}", next_));
  next_ = piece.hi + 1;
  if (!merged_.empty() && SameRun(merged_.back(), piece)) {
    merged_.back().hi = piece.hi;
    return;
  }
  merged_.push_back(piece);
  merged_evals_ += piece.heuristic_evals;
  if (cap_.Reached(merged_.size(), merged_evals_)) {
    // One worker walking up from lo_ would stop here, after this run's
    // replay, unless the run reaches the end of the range.
    decided_ = true;
    int64_t end = std::min(piece.run_hi, hi_);
    if (end < hi_) {
      stopped_ = true;
      covered_ = end - lo_ + 1;
    } else {
      merged_.back().hi = hi_;
      next_ = hi_ + 1;
    }
  }
}

void AtlasWalk::AddFinishedBelow(int64_t budget) {
  while (next_finished_ < finished_.size() && finished_[next_finished_].lo < budget)
    Add(finished_[next_finished_++]);
}

bool AtlasWalk::Collect(size_t k, AtlasPartWalk&& walk) {
  if (decided_) return false;
  AddFinishedBelow(parts_.at(k).lo);
  for (const AtlasInterval& piece : walk.pieces) Add(piece);
  if (decided_) return false;
  // An incomplete part reached the cap on its own, so it is reached within it.
  if (!walk.complete) throw Error(fmt::format("atlas part [{}, {}] stopped before the cap", parts_[k].lo, parts_[k].hi));
  return true;
}

BudgetAtlas AtlasWalk::Finish() {
  if (!decided_) AddFinishedBelow(std::numeric_limits<int64_t>::max());
  BudgetAtlas atlas;
  atlas.lo = lo_;
  atlas.hi = hi_;
  atlas.resumed = finished_.size();
  if (stopped_) {  // no intervals and no summary: the range is not covered
    atlas.stopped = true;
    atlas.runs = merged_.size();
    atlas.evals = merged_evals_;
    atlas.covered = covered_;
    // The last merged piece may be clipped to its part; its run reaches the
    // end of what is covered.
    atlas.prefix = std::move(merged_);
    atlas.prefix.back().hi = lo_ + covered_ - 1;
    return atlas;
  }
  if (next_ != hi_ + 1) throw Error(fmt::format("atlas intervals end at {}, not {}", next_ - 1, hi_));
  atlas.intervals = std::move(merged_);
  atlas.runs = atlas.intervals.size();
  atlas.evals = merged_evals_;
  atlas.covered = hi_ - lo_ + 1;
  atlas.summary = SummarizeAtlas(atlas.intervals);
  return atlas;
}

}  // namespace dtr
