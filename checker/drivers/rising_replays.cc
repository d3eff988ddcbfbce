#include "checker/drivers/rising_replays.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <tuple>
#include <utility>

namespace dtr {

struct RisingReplays::Snapshot {
  Engine engine;
  HeuristicPolicy policy;
};

namespace {

std::atomic<bool> g_every_point{false};
std::atomic<bool> g_resuming{true};

// Copying is kept to about 1/kSpacing of the run's time up to twice the
// horizon: where the runs before last dropped budget_hi, a maximum that
// decays by a quarter a run (neighbouring runs tend to part about as far
// in). Beyond it the checkpoints thin out geometrically, each after a
// quarter of the time since the run started, so a run whose neighbours part
// early pays for a few copies only (+0.9% instructions on the generated
// 10^4 rnn at 0.2022, where they part within the first 1%), and one that
// parts late still resumes from four fifths of the way. The clock is read
// every 16th point.
constexpr int kSpacing = 16;
constexpr int64_t kDenseEvents = 1024;  // dense before 2 * horizon + this many computations

// Takes the checkpoints of one run and keeps the one the next run resumes from.
class Checkpoints : public PointHook {
 public:
  using Snapshot = RisingReplays::Snapshot;
  using Clock = std::chrono::steady_clock;

  // `horizon`: where the runs before parted from their next (a computation).
  Checkpoints(const Engine& engine, const HeuristicPolicy& policy, int64_t horizon)
      : policy_(policy),
        hi_(engine.budget_hi()),
        every_(g_every_point.load(std::memory_order_relaxed)),
        dense_until_(2 * horizon + kDenseEvents),
        start_(Clock::now()) {}

  void AtPoint(const Engine& engine) override {
    Settle(engine);
    if (!every_ && latest_ && (++points_ % 16 != 0 || Clock::now() < due_)) return;
    const Clock::time_point now = Clock::now();
    latest_.reset();  // freed here unless it is the one to resume from: counted as copying
    latest_ = std::make_shared<Snapshot>(Snapshot{engine, policy_});
    const Clock::time_point copied = Clock::now();
    Clock::duration gap = kSpacing * (copied - now);
    if (engine.event() > dense_until_) gap = std::max(gap, (copied - start_) / 4);
    due_ = copied + gap;
  }

  // After the run: where the run at budget_hi + 1 starts (null: from
  // scratch), and the computation where budget_hi last dropped.
  std::pair<std::shared_ptr<Snapshot>, int64_t> Finish(const Engine& engine) {
    Settle(engine);
    return {std::move(resume_), dropped_at_};
  }

 private:
  // A drop of budget_hi seen now happened at the previous computation point
  // (or the last one, after the run), at or after the latest checkpoint.
  void Settle(const Engine& engine) {
    if (engine.budget_hi() < hi_) {
      hi_ = engine.budget_hi();
      resume_ = latest_;
      dropped_at_ = engine.event();
    }
  }

  const HeuristicPolicy& policy_;
  int64_t hi_;
  bool every_;
  int64_t dense_until_;
  Clock::time_point start_, due_{};
  int64_t points_ = 0;
  int64_t dropped_at_ = 0;
  std::shared_ptr<Snapshot> latest_, resume_;
};

}  // namespace

RisingReplays::RisingReplays(const Trace& trace, const ReplayConfig& config)
    : trace_(trace),
      config_(config),
      resumable_(config.heuristic && config.overrides.empty() && !config.script &&
                 !config.observer) {}

RisingReplays::~RisingReplays() = default;

void RisingReplays::set_checkpoint_every_point(bool every) { g_every_point = every; }
void RisingReplays::set_resuming(bool resuming) { g_resuming = resuming; }

RunResult RisingReplays::Run(int64_t budget) {
  ReplayConfig config = config_;
  config.budget = budget;
  if (!resumable_ || !g_resuming.load(std::memory_order_relaxed)) return Replay(trace_, config);
  std::shared_ptr<Snapshot> from = std::move(resume_);
  if (budget != resume_budget_) from.reset();
  resume_budget_ = -1;
  std::optional<Snapshot> run;
  if (from) {
    run.emplace(std::move(*from));  // its only holder
    from.reset();
    run->engine.ContinueUnder(budget);
    ++resumed_;
  } else {
    run.emplace(Snapshot{Engine(trace_, EngineOptionsFor(config)),
                         HeuristicPolicy(*config.heuristic, config.seed)});
  }
  Checkpoints checkpoints(run->engine, run->policy, horizon_);
  RunResult r = Drive(run->engine, run->policy, nullptr, &checkpoints);
  int64_t dropped_at;
  std::tie(resume_, dropped_at) = checkpoints.Finish(run->engine);
  horizon_ = std::max(dropped_at, horizon_ - horizon_ / 4);
  if (resume_ && r.budget_hi < kInfiniteBudget)
    resume_budget_ = r.budget_hi + 1;
  else
    resume_.reset();
  return r;
}

}  // namespace dtr
