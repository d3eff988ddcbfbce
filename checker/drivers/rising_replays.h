// Replays of one configuration at budgets that rise from run to run the way
// an atlas walks them (checker/drivers/atlas_walk.h): each next budget is the
// previous run's budget_hi + 1, and that run resumes from the previous one
// instead of starting over.
//
// Why that is exact: a run depends on its budget only through the engine's
// budget comparisons (Engine::Fits). Let b be a run's budget and H its
// budget_hi, the least failing total less one; the run at H + 1 compares
// the same totals with the same outcomes up to the first comparison of the
// total H + 1, which fits there and not at b. So a copy of the engine (and
// policy) taken at a computation point before that comparison, driven on
// under H + 1, is the run at H + 1; its interval too, as the comparisons
// before the copy bound it as they bound the run at b.
//
// The copy: during each run, checkpoints (engine and policy copies) are
// taken at computation points, spaced by the time a copy takes (see the
// .cc; copies are timed, so where they are taken varies, never what a run
// gives). When budget_hi drops at a point, the latest checkpoint at or
// before that point becomes the one the next run resumes from. At most two
// checkpoints are held besides the running engine.
//
// Runs with a script or overrides, or without a heuristic, replay from the
// start every time (they are never walked in an atlas).
#pragma once

#include <cstdint>
#include <memory>

#include "checker/engine/heuristic_policy.h"
#include "checker/engine/replay.h"

namespace dtr {

class RisingReplays {
 public:
  // `trace` must outlive this object. config.budget is not used.
  RisingReplays(const Trace& trace, const ReplayConfig& config);
  ~RisingReplays();

  // The run at `budget`, as Replay() gives it. Throws as Replay() does.
  RunResult Run(int64_t budget);
  // The runs so far that resumed from the previous one.
  int64_t resumed() const { return resumed_; }

  // For tests: a checkpoint at every computation point (the next run then
  // resumes right before its first different comparison). Process-wide.
  static void set_checkpoint_every_point(bool every);
  // For benchmarks: false replays every run from the start. Process-wide.
  static void set_resuming(bool resuming);

  struct Snapshot;

 private:
  const Trace& trace_;
  ReplayConfig config_;
  bool resumable_;
  std::shared_ptr<Snapshot> resume_;  // the run at resume_budget_ starts here
  int64_t resume_budget_ = -1;
  int64_t horizon_ = 0;  // where runs part from the next (a computation; see the .cc)
  int64_t resumed_ = 0;
};

}  // namespace dtr
