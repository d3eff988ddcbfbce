#include "checker/drivers/sweep.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <tuple>
#include <utility>

#include "checker/farm/parallel.h"
#include "model/error.h"

namespace dtr {

ReplayConfig ConfigFor(const RunSpec& spec, const Baseline& baseline) {
  ReplayConfig c;
  c.runtime = spec.runtime;
  c.heuristic = spec.heuristic;
  c.budget = spec.Bytes(baseline.memory);
  if (spec.overhead_limit) c.remat_limit = RematLimit(baseline.compute, *spec.overhead_limit);
  c.seed = spec.seed;
  if (spec.work_limit) c.work_limit = *spec.work_limit;
  c.overrides = spec.overrides;
  return c;
}

RunRecord RecordOf(const RunSpec& spec, const Baseline& baseline, RunResult result) {
  RunRecord r;
  r.spec = spec;
  r.result = std::move(result);
  r.overhead = Overhead(r.result.clock, baseline.compute);
  return r;
}

RunRecord RunOne(const Trace& trace, const Baseline& baseline, const RunSpec& spec) {
  return RecordOf(spec, baseline, Replay(trace, ConfigFor(spec, baseline)));
}

namespace {

std::atomic<int64_t> g_runs_reused{0};

// A run made here: its result and, when kept, its trail.
struct MadeRun {
  RunResult result;
  std::shared_ptr<const RunTrail> trail;
};

// Keeps a run's trail while it has made at most `cap` decisions.
class TrailKeeper : public ReplayObserver {
 public:
  explicit TrailKeeper(int64_t cap) : cap_(cap) {}
  Flow OnDecision(const DecisionPoint& d) override {
    if (over_) return Flow::kContinue;
    if (static_cast<int64_t>(trail_.events.size()) == cap_) {
      over_ = true;
      trail_ = RunTrail();
      return Flow::kContinue;
    }
    trail_.steps.push_back(StepOf(d));
    trail_.events.push_back(d.event);
    return Flow::kContinue;
  }
  bool WantsScores() const override { return false; }
  std::shared_ptr<const RunTrail> Take() {
    return over_ ? nullptr : std::make_shared<const RunTrail>(std::move(trail_));
  }

 private:
  int64_t cap_;
  bool over_ = false;
  RunTrail trail_;
};

// Runs this process made in one RunMany call, for the points after them: a
// point whose budget lies in a run's [budget_lo, budget_hi] takes that run's
// result, since every budget comparison, hence every decision and count,
// comes out the same. The workers walk separate parts of the grid (see
// RunMany), each up in budget, so the run to look at for a point is the
// latest of its part with the same heuristic, runtime, limit and seed; then
// the runs an earlier, interrupted RunMany finished (the journal's).
class ReusedRuns {
 public:
  // The run at config.budget, if one kept covers it.
  std::optional<MadeRun> Find(const ReplayConfig& config, size_t part) {
    const std::optional<RunKey> key = KeyBesidesBudget(config);
    if (!key) return std::nullopt;
    std::lock_guard<std::mutex> lock(mu_);
    auto covers = [&](const RunResult* r) {
      return r->budget_lo <= config.budget && config.budget <= r->budget_hi;
    };
    std::optional<MadeRun> found;
    if (auto it = latest_.find({*key, part}); it != latest_.end() && covers(&it->second->result))
      found = *it->second;
    if (auto it = finished_.find(*key); !found && it != finished_.end())
      if (auto at = std::find_if(it->second.begin(), it->second.end(), covers);
          at != it->second.end())
        found = MadeRun{**at, nullptr};
    if (!found) return std::nullopt;
    found->result.budget = config.budget;
    ++g_runs_reused;
    return found;
  }
  // A run this process made for a point of `part`.
  void Keep(const ReplayConfig& config, size_t part, const MadeRun& r) {
    const std::optional<RunKey> key = KeyBesidesBudget(config);
    if (!key || r.result.outcome == Outcome::kStopped) return;
    auto kept = std::make_shared<const MadeRun>(r);
    std::lock_guard<std::mutex> lock(mu_);
    latest_[{*key, part}] = std::move(kept);
  }
  // A run an earlier RunMany finished (r outlives this object).
  void KeepFinished(const ReplayConfig& config, const RunResult* r) {
    const std::optional<RunKey> key = KeyBesidesBudget(config);
    if (key && r->outcome != Outcome::kStopped) finished_[*key].push_back(r);
  }

 private:
  // Runs without a key (an observer, a script, overrides) are not kept nor taken.
  std::mutex mu_;
  std::map<std::pair<RunKey, size_t>, std::shared_ptr<const MadeRun>> latest_;
  std::map<RunKey, std::vector<const RunResult*>> finished_;
};

}  // namespace

std::optional<RunKey> KeyBesidesBudget(const ReplayConfig& c) {
  if (c.observer != nullptr || c.script != nullptr || !c.overrides.empty() ||
      c.heuristic == nullptr)
    return std::nullopt;
  return RunKey{c.heuristic, c.runtime, c.remat_limit, c.seed, c.work_limit};
}

int64_t RunsReused() { return g_runs_reused.load(); }

std::vector<RunRecord> RunMany(const Trace& trace, const Baseline& baseline,
                               const std::vector<RunSpec>& specs, int jobs,
                               const ProgressFn& progress, const GridJournal* journal,
                               int64_t trail_decisions, RunWatch* watch) {
  std::vector<std::optional<RunResult>> results(specs.size());
  // Each spec's trail, from the worker that replayed it in this process.
  std::vector<std::shared_ptr<const RunTrail>> trails(specs.size());
  ReusedRuns reused_runs;  // on each MPI rank: the journal's, then the replays made there
  // The specs replayed here, one per point not finished yet (all of them
  // without a journal); `same_as[i]`: the spec whose result spec i takes.
  std::vector<size_t> todo;
  std::vector<size_t> same_as(specs.size());
  size_t known = 0;
  if (!journal) {
    for (size_t i = 0; i < specs.size(); ++i) todo.push_back(same_as[i] = i);
  } else {
    using Point = std::pair<std::string_view, int64_t>;  // heuristic, budget
    std::map<Point, const RunResult*> finished;
    for (const GridPointResult& p : journal->finished) finished.emplace(Point{p.heuristic, p.result.budget}, &p.result);
    std::map<Point, size_t> first;  // of the points replayed here
    for (size_t i = 0; i < specs.size(); ++i) {
      if (!specs[i].overrides.empty()) throw Error("a journaled grid cannot have overrides");
      const ReplayConfig config = ConfigFor(specs[i], baseline);
      Point point{specs[i].heuristic->name, config.budget};
      same_as[i] = i;
      if (auto it = finished.find(point); it != finished.end()) {
        results[i] = *it->second;
        reused_runs.KeepFinished(config, it->second);
        ++known;
      } else if (auto [at, fresh] = first.emplace(point, i); fresh) {
        todo.push_back(i);
      } else {
        same_as[i] = at->second;
      }
    }
  }
  // The workers walk separate parts of the grid, each in input order (up in
  // budget, for a grid), so that the point below one is mostly done when it
  // starts: the todo list is reordered to take the next point of each part in
  // turn. More parts than workers, as the parts low in budget replay slower.
  std::vector<size_t> part_of(todo.size());
  {
    const size_t n = todo.size(), workers = static_cast<size_t>(FarmWorkers<RunResult>(jobs, n));
    const size_t parts = workers == 1 ? 1 : 4 * workers;
    std::vector<size_t> order;
    order.reserve(n);
    for (size_t at = 0; order.size() < n; ++at)
      for (size_t p = 0; p < parts; ++p)
        if (p * n / parts + at < (p + 1) * n / parts) {
          part_of[order.size()] = p;
          order.push_back(todo[p * n / parts + at]);
        }
    todo = std::move(order);
  }
  if (progress) progress(known, known + todo.size());  // the total, before the first run ends
  std::mutex mu;  // serializes journal records
  auto record = [&](size_t t, const RunResult& r) {
    if (!journal || !journal->record) return;
    std::lock_guard<std::mutex> lock(mu);
    journal->record({std::string(specs[todo[t]].heuristic->name), r});
  };
  // The farm returns the results alone (what travels between MPI ranks);
  // every rank has the specs. A replay on another MPI rank is recorded here
  // when it arrives.
  RunTaskFarm<RunResult>(
      todo.size(), jobs,
      [&](size_t t) {
        const ReplayConfig config = ConfigFor(specs[todo[t]], baseline);
        std::optional<MadeRun> made = reused_runs.Find(config, part_of[t]);
        if (!made) {
          made.emplace();
          const bool here = FarmCollectsHere();
          ReplayConfig observed = config;
          TrailKeeper keeper(trail_decisions);
          if (trail_decisions > 0 && here) observed.observer = &keeper;
          if (watch && here) observed.watcher = watch->Begin(todo[t], specs[todo[t]]);
          struct Ended {  // End() also when the replay throws
            RunWatch* watch;
            size_t point;
            ~Ended() {
              if (watch) watch->End(point);
            }
          } ended{watch && here ? watch : nullptr, todo[t]};
          made->result = Replay(trace, observed);
          if (observed.observer) made->trail = keeper.Take();
          reused_runs.Keep(config, part_of[t], *made);
        }
        if (FarmCollectsHere()) {
          record(t, made->result);
          trails[todo[t]] = std::move(made->trail);  // one worker per spec
        }
        return std::move(made->result);
      },
      [&](size_t t, RunResult&& r) {
        results[todo[t]] = std::move(r);
        return true;
      },
      progress ? FarmProgressFn(
                     [&](size_t done, size_t) { progress(known + done, known + todo.size()); })
               : FarmProgressFn(),
      [&](size_t t, const RunResult& r) { record(t, r); });
  std::vector<RunRecord> runs(specs.size());
  // Backwards, so that a result is copied to the specs that repeat its point
  // (same_as[i] < i) before it is moved to its own.
  for (size_t i = specs.size(); i-- > 0;) {
    runs[i].spec = specs[i];
    runs[i].result = same_as[i] == i ? std::move(*results[i]) : *results[same_as[i]];
    runs[i].trail = trails[same_as[i]];
    runs[i].overhead = Overhead(runs[i].result.clock, baseline.compute);
  }
  return runs;
}

}  // namespace dtr
