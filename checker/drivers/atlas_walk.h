// The scheduling of an exact budget atlas (checker/drivers/budget_atlas.h): how the
// byte range is cut into parts that workers walk independently, and how the
// parts' intervals are put back together in budget order.
//
// A part [lo, hi] is walked as one worker would walk the whole range: replay
// at the cursor, record the run's interval clipped to the part, move past it.
// A run that crosses the seam between two parts is replayed by both and
// recorded as two pieces with the same run_lo/run_hi; Collect merges them.
//
// Everything AtlasWalk reports is defined by the merged intervals in budget
// order, never by which worker did what: `runs` is the number of replays one
// worker walking up from lo needs (seam replays are not counted), and a
// cap (AtlasCap) stops at the first interval in budget order where it is
// reached. So the
// atlas, its run count, whether a cap stopped it and how far it got are the
// same for any number of workers and any timing. Parts are tasks of the task
// farm (checker/farm/parallel.h) and are collected in part order.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "checker/drivers/budget_atlas.h"
#include "checker/farm/farm_codec.h"

namespace dtr {

struct AtlasPart {
  int64_t lo = 0, hi = 0;  // budgets, inclusive
};

// What walking one part gave: its pieces in budget order, the first at the
// part's lo, each clipped to the part. `complete`: they reach the part's hi
// (else the walk stopped at the per-part replay cap or was cancelled).
struct AtlasPartWalk {
  std::vector<AtlasInterval> pieces;
  bool complete = false;
};

class AtlasWalk {
 public:
  // The walk of [lo, hi] given the intervals an earlier walk finished (any
  // order; each inside the range, none overlapping, else Error). The gaps
  // between them are cut into parts: one per gap with parts_wanted <= 1,
  // else about parts_wanted parts of equal width overall. `cap` is counted in
  // budget order.
  AtlasWalk(int64_t lo, int64_t hi, std::vector<AtlasInterval> finished, AtlasCap cap,
            size_t parts_wanted);

  const std::vector<AtlasPart>& parts() const { return parts_; }
  size_t resumed() const { return finished_.size(); }
  int64_t resumed_width() const { return resumed_width_; }
  int64_t resumed_evals() const { return resumed_evals_; }

  // Walks part `k`. replay(budget) returns the run at that budget as an
  // unclipped interval (lo = hi = budget is fine; run_lo/run_hi must hold
  // the budget). record(piece) is called for each piece as it is found.
  // Stops early, incomplete, once its own replays reach the cap (the cap is
  // then reached in budget order at or before them) or `cancel` is set.
  // Safe to call concurrently for different parts.
  AtlasPartWalk WalkPart(size_t k, const std::function<AtlasInterval(int64_t)>& replay,
                         const std::function<void(const AtlasInterval&)>& record,
                         const std::atomic<bool>* cancel = nullptr) const;

  // Adds part k's pieces, parts in order 0, 1, ... Returns false once the
  // atlas is decided (the cap was reached): later parts are not needed.
  bool Collect(size_t k, AtlasPartWalk&& walk);

  // The atlas; after every part was collected or Collect returned false.
  // Throws Error if the intervals do not tile the range (a broken invariant).
  BudgetAtlas Finish();

 private:
  void Add(const AtlasInterval& piece);  // the next piece in budget order
  void AddFinishedBelow(int64_t budget);  // journal pieces starting below `budget`

  int64_t lo_, hi_;
  AtlasCap cap_;
  std::vector<AtlasInterval> finished_;  // sorted by lo
  int64_t resumed_width_ = 0, resumed_evals_ = 0;
  std::vector<AtlasPart> parts_;
  // The merge, in budget order.
  size_t next_finished_ = 0;
  int64_t next_ = 0;  // the first budget not merged yet
  std::vector<AtlasInterval> merged_;
  int64_t merged_evals_ = 0;  // of merged_'s runs
  bool decided_ = false;  // the cap was reached: stopped_ tells how
  bool stopped_ = false;
  int64_t covered_ = 0;  // when stopped_
};

// A part's walk as bytes (checker/drivers/atlas_walk_codec.cc), so that parts can be
// walked on MPI ranks (checker/farm/parallel.h).
template <>
struct FarmCodec<AtlasPartWalk> {
  static void Encode(const AtlasPartWalk& walk, ByteWriter& w);
  static AtlasPartWalk Decode(ByteReader& r);
};

}  // namespace dtr
