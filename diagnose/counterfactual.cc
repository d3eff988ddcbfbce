#include "diagnose/counterfactual.h"

#include <fmt/core.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_set>
#include <utility>

#include "checker/drivers/budget_atlas.h"
#include "checker/farm/parallel.h"
#include "model/error.h"

namespace dtr {

std::string_view BlameGoalName(BlameGoal goal) {
  return goal == BlameGoal::kPass ? "pass" : "faster";
}

namespace {

// Candidates are replayed in batches of this many, whatever the thread count,
// so that which fixes are found does not depend on it.
constexpr size_t kBatch = 8;

struct Candidate {
  std::vector<DecisionOverride> overrides;  // sorted by index
};

struct Trial {
  Candidate candidate;
  Outcome outcome = Outcome::kPass;
  double overhead = 0;
  int64_t events = 0;
  bool success = false;
  size_t order = 0;  // position in the search
};

// What the search reads of each decision of a run, 24 bytes: a run of
// millions of decisions keeps these, not its decision log.
struct BlameStep {
  int64_t event = 0;
  int64_t clock = 0;
  StorageId chosen = -1;
  StorageId runner_up = -1;  // -1 if none was scored
};
using BlameSteps = std::vector<BlameStep>;

// Records a run's steps (scores wanted: the runner-up is the scan's).
class StepRecorder : public ReplayObserver {
 public:
  Flow OnDecision(const DecisionPoint& d) override {
    steps_.push_back({d.event, d.clock, d.chosen, d.runner_up});
    return Flow::kContinue;
  }
  BlameSteps Take() { return std::move(steps_); }

 private:
  BlameSteps steps_;
};

// Decision indices in [lo, n) in search order, made as they are asked for:
// the sequences taken round-robin (one index from each in turn), each index
// once. A sequence is a range walked forward or backward, or a list.
class DecisionOrder {
 public:
  DecisionOrder(int64_t lo, int64_t n) : lo_(lo), n_(n) {}
  // [from, n) forward.
  void Forward(int64_t from) { seqs_.push_back({std::max(from, lo_), n_, +1, false, {}}); }
  // n - 1 down to lo.
  void Backward() { seqs_.push_back({n_ - 1, lo_ - 1, -1, false, {}}); }
  void List(std::vector<int64_t> list) {
    const auto size = static_cast<int64_t>(list.size());
    seqs_.push_back({0, size, +1, true, std::move(list)});
  }
  std::optional<int64_t> Next() {
    for (;;) {
      if (k_ == seqs_.size()) {
        if (!more_) return std::nullopt;
        more_ = false;
        k_ = 0;
      }
      Sequence& q = seqs_[k_++];
      while (q.step > 0 ? q.at < q.end : q.at > q.end) {
        const int64_t i = q.is_list ? q.list[static_cast<size_t>(q.at)] : q.at;
        q.at += q.step;
        if (i < lo_ || i >= n_ || !seen_.insert(i).second) continue;
        more_ = true;
        return i;
      }
    }
  }

 private:
  // Positions at, at + step, ... before end: the indices themselves, or
  // positions in `list`.
  struct Sequence {
    int64_t at, end, step;
    bool is_list;
    std::vector<int64_t> list;
  };
  int64_t lo_, n_;
  std::vector<Sequence> seqs_;
  size_t k_ = 0;
  bool more_ = false;
  std::unordered_set<int64_t> seen_;  // what was yielded: a few per replay
};

// The decisions that last evicted the storages of the pending
// rematerializations at an OOM, innermost frame first: those evictions are
// what the failing recursion had to undo.
std::vector<int64_t> FrameEvictions(const Trace& trace, const BlameSteps& steps,
                                    const RunResult& run) {
  std::vector<int64_t> out;
  if (!run.oom) return out;
  std::vector<int64_t> last(trace.storages.size(), -1);
  for (size_t i = 0; i < steps.size(); ++i) last[steps[i].chosen] = static_cast<int64_t>(i);
  for (auto it = run.oom->frames.rbegin(); it != run.oom->frames.rend(); ++it) {
    int64_t i = last[trace.tensors[*it].storage];
    if (i >= 0 && std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
  }
  return out;
}

// Storages certainly in the pool at decision i: the runner-up, then what the
// same eviction loop (same event) chose next.
std::vector<StorageId> CandidatesAt(const BlameSteps& steps, int64_t i, int limit) {
  const BlameStep& d = steps[static_cast<size_t>(i)];
  std::vector<StorageId> out;
  auto add = [&](StorageId s) {
    if (s < 0 || s == d.chosen || static_cast<int>(out.size()) >= limit) return;
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  add(d.runner_up);
  for (size_t j = static_cast<size_t>(i) + 1; j < steps.size() && steps[j].event == d.event; ++j)
    add(steps[j].chosen);
  return out;
}

// Lazily yields candidates: for each decision in priority order, each of its
// candidate storages, appended to `base`.
class CandidateStream {
 public:
  CandidateStream(const BlameSteps& steps, DecisionOrder order, std::vector<DecisionOverride> base,
                  int limit)
      : steps_(steps), order_(std::move(order)), base_(std::move(base)), limit_(limit) {}

  std::optional<Candidate> Next() {
    while (!pending_.empty() || LoadNext()) {
      if (pending_.empty()) continue;
      StorageId s = pending_.back();
      pending_.pop_back();
      const BlameStep& d = steps_[static_cast<size_t>(at_)];
      Candidate c{base_};
      c.overrides.push_back({at_, d.event, d.clock, d.chosen, s});
      return c;
    }
    return std::nullopt;
  }

 private:
  // The next decision's candidates, last first; false when none is left.
  bool LoadNext() {
    std::optional<int64_t> i = order_.Next();
    if (!i) return false;
    at_ = *i;
    pending_ = CandidatesAt(steps_, at_, limit_);
    std::reverse(pending_.begin(), pending_.end());
    return true;
  }

  const BlameSteps& steps_;
  DecisionOrder order_;
  std::vector<DecisionOverride> base_;
  int limit_;
  int64_t at_ = 0;
  std::vector<StorageId> pending_;
};

// Checks, in a fix's verifying replay, that each override was taken where
// the search put it.
class OverrideCheck : public ReplayObserver {
 public:
  explicit OverrideCheck(const std::vector<DecisionOverride>& overrides) : overrides_(overrides) {}
  // The decision point in detail (which says whether it was overridden)
  // only where an override is due.
  Flow OnDecisionDue(const DecisionPoint& d) override {
    due_ = nullptr;
    for (const DecisionOverride& o : overrides_)
      if (o.index == d.index) due_ = &o;
    return Flow::kContinue;
  }
  bool WantsScores() const override { return due_ != nullptr; }
  Flow OnDecision(const DecisionPoint& d) override {
    if (due_)
      taken_ += d.overridden && d.chosen == due_->replacement && d.event == due_->event &&
                d.clock == due_->clock;
    due_ = nullptr;
    return Flow::kContinue;
  }
  bool all_taken() const { return taken_ == overrides_.size(); }

 private:
  const std::vector<DecisionOverride>& overrides_;
  const DecisionOverride* due_ = nullptr;
  size_t taken_ = 0;
};

ReplayConfig WithOverrides(ReplayConfig config, const std::vector<DecisionOverride>& overrides) {
  config.overrides.clear();
  for (const DecisionOverride& o : overrides) config.overrides.emplace_back(o.index, o.replacement);
  return config;
}

}  // namespace

BlameResult Blame(const Trace& trace, const Baseline& baseline, const RunSpec& spec,
                  const std::optional<RunSpec>& against, const BlameOptions& options,
                  const ProgressFn& progress) {
  if (spec.heuristic->cost == CostTerm::kRandom)
    throw Error(
        fmt::format("blame needs a scoring heuristic; {} has no runner-up", spec.heuristic->name));
  if (!(options.regime_factor > 1)) throw Error("the regime factor must be greater than 1");
  BlameResult out;
  const ReplayConfig config = ConfigFor(spec, baseline);

  StepRecorder recorder;
  ReplayConfig recorded = config;
  recorded.observer = &recorder;
  RunRecord run{spec, Replay(trace, recorded)};
  run.overhead = Overhead(run.result.clock, baseline.compute);
  out.run = ProfileRun(run);
  const BlameSteps steps = recorder.Take();
  out.decisions = static_cast<int64_t>(steps.size());

  std::optional<int64_t> forward_from;
  if (against) {
    RunRecord run_a;
    out.divergence = FirstDivergenceOf(trace, baseline, spec, *against, nullptr, &run_a);
    out.against = ProfileRun(run_a);
    if (out.divergence->kind != DivergenceKind::kNone) forward_from = out.divergence->index;
  }
  if (run.result.outcome != Outcome::kPass) {
    out.goal = BlameGoal::kPass;
  } else {
    out.goal = BlameGoal::kFaster;
    if (against) {
      if (out.against->outcome != Outcome::kPass)
        throw Error(
            "the run passes and the --against run does not: there is no faster regime to reach");
      out.overhead_goal = out.against->overhead * options.regime_factor;
      if (run.overhead <= out.overhead_goal)
        throw Error(fmt::format(
            "the run's overhead {:.4f} is already within {}x of the --against run's {:.4f}",
            run.overhead, options.regime_factor, out.against->overhead));
    } else {
      out.overhead_goal = run.overhead / options.regime_factor;
    }
  }
  auto succeeded = [&](Outcome o, double overhead) {
    return o == Outcome::kPass && (out.goal == BlameGoal::kPass || overhead <= out.overhead_goal);
  };
  const bool failed_run = out.goal == BlameGoal::kPass;

  // The same two caps as an atlas walk's: replays and their evaluations.
  const AtlasCap cap{.runs = static_cast<size_t>(options.max_replays),
                     .evals = std::max<int64_t>(options.max_evals, 0)};
  auto spent = [&] { return cap.Reached(static_cast<size_t>(out.replays), out.evals); };
  // The larger share of the caps spent, for the progress display, in thousandths.
  auto report_progress = [&] {
    if (!progress) return;
    const double part = cap.Spent(static_cast<size_t>(out.replays), out.evals);
    progress(static_cast<size_t>(std::min(part, 1.0) * 1000), 1000);
  };
  std::vector<Trial> trials;  // every candidate replayed, in search order
  auto evaluate = [&](std::vector<Candidate> batch) {
    size_t first = trials.size();
    trials.resize(first + batch.size());
    std::vector<int64_t> work(batch.size());
    ParallelFor(batch.size(), options.jobs, [&](size_t k) {
      Trial& t = trials[first + k];
      t.candidate = std::move(batch[k]);
      t.order = first + k;
      RunResult r = Replay(trace, WithOverrides(config, t.candidate.overrides));
      t.outcome = r.outcome;
      t.overhead = Overhead(r.clock, baseline.compute);
      t.events = r.events;
      t.success = succeeded(t.outcome, t.overhead);
      work[k] = r.heuristic_evals + r.events;
    });
    out.replays += static_cast<int64_t>(batch.size());
    for (int64_t w : work) out.evals += w;
    report_progress();
  };
  auto successes = [&](size_t from) {
    size_t n = 0;
    for (size_t i = from; i < trials.size(); ++i) n += trials[i].success;
    return n;
  };
  // Replays candidates from `next` in batches until enough fixes or no budget.
  auto search = [&](const std::function<std::optional<Candidate>()>& next, size_t level_start) {
    for (;;) {
      if (successes(level_start) >= static_cast<size_t>(options.max_fixes)) return;
      std::vector<Candidate> batch;
      while (!spent() && batch.size() < kBatch &&
             out.replays + static_cast<int64_t>(batch.size()) < options.max_replays) {
        std::optional<Candidate> c = next();
        if (!c) break;
        batch.push_back(std::move(*c));
      }
      if (batch.empty()) {
        if (spent()) out.budget_exhausted = true;
        return;
      }
      evaluate(std::move(batch));
    }
  };

  // Singles.
  {
    DecisionOrder order(0, out.decisions);
    if (forward_from) order.Forward(*forward_from);
    if (failed_run) order.List(FrameEvictions(trace, steps, run.result));
    order.Backward();
    if (!failed_run && !forward_from) order.Forward(0);
    CandidateStream stream(steps, std::move(order), {}, options.candidates_per_decision);
    search([&] { return stream.Next(); }, 0);
    out.singles_tried = static_cast<int64_t>(trials.size());
  }
  // Pairs, from the singles that came closest.
  if (successes(0) == 0 && !out.budget_exhausted && !trials.empty()) {
    std::vector<const Trial*> ranked;
    for (const Trial& t : trials) ranked.push_back(&t);
    std::stable_sort(ranked.begin(), ranked.end(), [&](const Trial* a, const Trial* b) {
      if (failed_run) return a->events > b->events;
      if ((a->outcome == Outcome::kPass) != (b->outcome == Outcome::kPass))
        return a->outcome == Outcome::kPass;
      return a->overhead < b->overhead;
    });
    ranked.resize(std::min<size_t>(ranked.size(), static_cast<size_t>(options.pair_bases)));
    std::vector<Candidate> bases;
    for (const Trial* t : ranked) bases.push_back(t->candidate);
    // Each base's own run, recorded (one replay each, counted).
    std::vector<BlameSteps> base_steps(bases.size());
    std::vector<RunResult> base_runs(bases.size());
    ParallelFor(bases.size(), options.jobs, [&](size_t k) {
      StepRecorder rec;
      ReplayConfig c = WithOverrides(config, bases[k].overrides);
      c.observer = &rec;
      base_runs[k] = Replay(trace, c);
      base_steps[k] = rec.Take();
    });
    out.replays += static_cast<int64_t>(bases.size());
    for (const RunResult& r : base_runs) out.evals += r.heuristic_evals + r.events;
    report_progress();
    std::vector<CandidateStream> streams;
    for (size_t k = 0; k < bases.size(); ++k) {
      const int64_t after = bases[k].overrides.back().index + 1;
      DecisionOrder order(after, static_cast<int64_t>(base_steps[k].size()));
      order.Forward(after);
      if (failed_run) order.List(FrameEvictions(trace, base_steps[k], base_runs[k]));
      order.Backward();
      streams.emplace_back(base_steps[k], std::move(order), bases[k].overrides,
                           options.candidates_per_decision);
    }
    size_t turn = 0, level_start = trials.size();
    std::vector<uint8_t> dry(streams.size(), 0);
    search(
        [&]() -> std::optional<Candidate> {
          for (size_t tries = 0; tries < streams.size(); ++tries) {
            size_t k = turn++ % streams.size();
            if (dry[k]) continue;
            if (auto c = streams[k].Next()) return c;
            dry[k] = 1;
          }
          return std::nullopt;
        },
        level_start);
    out.pairs_tried = static_cast<int64_t>(trials.size() - level_start);
  }

  // Fixes of the smallest size, in search order, each verified afresh.
  size_t smallest = SIZE_MAX;
  for (const Trial& t : trials)
    if (t.success) smallest = std::min(smallest, t.candidate.overrides.size());
  for (const Trial& t : trials) {
    if (!t.success || t.candidate.overrides.size() != smallest) continue;
    if (out.fixes.size() >= static_cast<size_t>(options.max_fixes)) break;
    BlameFix fix;
    fix.overrides = t.candidate.overrides;
    OverrideCheck check(fix.overrides);
    ReplayConfig c = WithOverrides(config, fix.overrides);
    c.observer = &check;
    RunResult r = Replay(trace, c);
    fix.outcome = r.outcome;
    fix.overhead = Overhead(r.clock, baseline.compute);
    fix.events = r.events;
    const bool taken = check.all_taken();
    fix.verified = taken && succeeded(fix.outcome, fix.overhead) && fix.outcome == t.outcome &&
                   fix.overhead == t.overhead;
    out.fixes.push_back(fix);
  }
  return out;
}

}  // namespace dtr
