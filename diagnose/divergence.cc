#include "diagnose/divergence.h"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <tuple>

#include "checker/farm/parallel.h"
#include "model/error.h"

namespace dtr {

namespace {

EvictionStats Stats(int64_t evictions, int32_t distinct) {
  return {evictions, distinct, distinct > 0 ? static_cast<double>(evictions) / distinct : 0.0};
}

// Everything that makes a decision point the same point in two runs, but the choice.
struct Place {
  int64_t event, clock, memory_usage, request;
  int32_t program_step, remat_depth;
  TensorId tensor;
  int32_t pool_size;
  bool operator==(const Place&) const = default;
};

Place PlaceOf(const DecisionPoint& d) {
  return {d.event,        d.clock,       d.memory_usage, d.request,
          d.program_step, d.remat_depth, d.tensor,       d.pool_size};
}

bool SamePoint(const DecisionPoint& x, const DecisionPoint& y) { return PlaceOf(x) == PlaceOf(y); }

}  // namespace

RunProfile ProfileRun(const RunRecord& run) {
  const RunResult& r = run.result;
  RunProfile p;
  p.spec = run.spec;
  p.budget = r.budget;
  p.outcome = r.outcome;
  p.overhead = run.overhead;
  p.clock = r.clock;
  p.events = r.events;
  p.all = Stats(r.evictions(), r.distinct_evicted);
  p.heuristic = Stats(r.heuristic_evictions, r.distinct_heuristic_evicted);
  p.decisions = r.heuristic_evictions;
  return p;
}

double EvictedJaccard(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  int64_t both = 0, either = 0;
  for (size_t s = 0; s < std::max(a.size(), b.size()); ++s) {
    bool in_a = s < a.size() && a[s] > 0, in_b = s < b.size() && b[s] > 0;
    both += in_a && in_b;
    either += in_a || in_b;
  }
  return either == 0 ? 1.0 : static_cast<double>(both) / static_cast<double>(either);
}

std::string_view DivergenceKindName(DivergenceKind kind) {
  switch (kind) {
    case DivergenceKind::kNone:
      return "none";
    case DivergenceKind::kExtraDecision:
      return "extra-decision";
    case DivergenceKind::kRankedDifferently:
      return "ranked-differently";
    case DivergenceKind::kRunEnded:
      return "run-ended";
  }
  return "?";
}

FirstDivergence FindFirstDivergence(const DecisionLog& a, const RunResult& ra, const DecisionLog& b,
                                    const RunResult& rb) {
  const size_t na = a.decisions.size(), nb = b.decisions.size();
  size_t k = 0;
  while (k < na && k < nb && SamePoint(a.decisions[k], b.decisions[k]) &&
         a.decisions[k].chosen == b.decisions[k].chosen)
    ++k;
  std::optional<DecisionPoint> da, db;
  if (k < na) da = a.decisions[k];
  if (k < nb) db = b.decisions[k];
  return ClassifyDivergence(static_cast<int64_t>(k), da, ra, db, rb);
}

FirstDivergence ClassifyDivergence(int64_t index, const std::optional<DecisionPoint>& a,
                                   const RunResult& ra, const std::optional<DecisionPoint>& b,
                                   const RunResult& rb) {
  FirstDivergence f;
  f.index = index;
  f.a = a;
  f.b = b;
  if (f.a && f.b) {
    if (SamePoint(*f.a, *f.b)) {
      f.kind = DivergenceKind::kRankedDifferently;
    } else {
      // The run whose decision comes first had it alone: the other fit there.
      bool a_first =
          std::tie(f.a->event, f.a->memory_usage) < std::tie(f.b->event, f.b->memory_usage);
      f.kind = DivergenceKind::kExtraDecision;
      f.in = a_first ? 'a' : 'b';
    }
    return f;
  }
  if (!f.a && !f.b) {
    // Same decisions; the runs can still end differently.
    if (ra.outcome != rb.outcome || ra.events != rb.events) {
      f.kind = DivergenceKind::kRunEnded;
      f.in = ra.events < rb.events ? 'a' : 'b';
    }
    return f;
  }
  // One run has a decision `index`, the other none: either that decision came
  // before the other run ended, or the other run ended (OOM) first.
  const DecisionPoint& d = f.a ? *f.a : *f.b;
  const RunResult& other = f.a ? rb : ra;
  char has = f.a ? 'a' : 'b', lacks = f.a ? 'b' : 'a';
  if (other.outcome != Outcome::kPass && other.events <= d.event) {
    f.kind = DivergenceKind::kRunEnded;
    f.in = lacks;
  } else {
    f.kind = DivergenceKind::kExtraDecision;
    f.in = has;
  }
  return f;
}

DecisionAlignment AlignDecisions(const DecisionTrail& a, const DecisionTrail& b, int64_t from) {
  DecisionAlignment al;
  const int64_t na = static_cast<int64_t>(a.size()), nb = static_cast<int64_t>(b.size());
  al.after_a = std::max<int64_t>(0, na - from);
  al.after_b = std::max<int64_t>(0, nb - from);
  // Program steps only grow along a run, so each step's decisions are
  // contiguous in each trail and pairs never cross steps: one step at a time,
  // each side's decisions sorted by (tensor, depth) and then by index, the
  // k-th of a key in a paired with the k-th of that key in b.
  using Keyed = std::pair<uint64_t, int64_t>;  // (tensor, depth), index
  auto key = [](const TrailStep& t) {
    return static_cast<uint64_t>(static_cast<uint32_t>(t.tensor)) << 32 |
           static_cast<uint32_t>(t.remat_depth);
  };
  // [i, end) of `trail`'s decisions at the step of decision i, keyed and sorted.
  auto step_of = [&](const DecisionTrail& trail, int64_t n, int64_t i, std::vector<Keyed>& out) {
    out.clear();
    const int32_t step = trail[i].program_step;
    for (; i < n && trail[i].program_step == step; ++i) out.emplace_back(key(trail[i]), i);
    if (i < n && trail[i].program_step < step)
      throw Error(fmt::format("decision {} is at program step {}, after step {}", i,
                              trail[i].program_step, step));
    std::sort(out.begin(), out.end());
    return i;
  };
  std::vector<Keyed> in_a, in_b;
  std::vector<std::pair<int64_t, int64_t>> differing;  // of one step
  int64_t i = from, j = from;
  while (i < na && j < nb) {
    const int32_t sa = a[i].program_step, sb = b[j].program_step;
    if (sa <= sb)
      i = step_of(a, na, i, in_a);
    else
      in_a.clear();
    if (sb <= sa)
      j = step_of(b, nb, j, in_b);
    else
      in_b.clear();
    differing.clear();
    for (size_t x = 0, y = 0; x < in_a.size() && y < in_b.size();) {
      if (in_a[x].first < in_b[y].first) {
        ++x;
      } else if (in_b[y].first < in_a[x].first) {
        ++y;
      } else {
        const int64_t pa = in_a[x++].second, pb = in_b[y++].second;
        ++al.aligned;
        if (a[pa].chosen == b[pb].chosen)
          ++al.aligned_same_choice;
        else
          differing.emplace_back(pa, pb);
      }
    }
    std::sort(differing.begin(), differing.end());
    for (const auto& p : differing) {
      if (al.differing_pairs.size() == static_cast<size_t>(kMaxRankFlipProbes)) break;
      al.differing_pairs.push_back(p);
    }
  }
  return al;
}

std::optional<std::pair<double, ScoreTerms>> TermsAtDecision(const Trace& trace,
                                                             const ReplayConfig& config,
                                                             int64_t index, StorageId storage) {
  ReplayConfig c = config;
  for (const auto& o : c.overrides)
    if (o.first >= index)
      throw Error("TermsAtDecision: the run already overrides that decision or a later one");
  ReplayState state = ReplayWithState(trace, c, index);
  if (state.result.outcome != Outcome::kStopped)
    return std::nullopt;  // the run ended before that decision
  if (storage < 0 || storage >= static_cast<StorageId>(trace.storages.size()) ||
      !state.engine.Evictable(storage))
    return std::nullopt;  // not in the pool then
  ConfiguredPolicy policy(c);
  return policy.Explain(state.engine, storage);
}

namespace {

// A decision as the first divergence compares it: where it was, and the choice.
struct PointKey {
  Place place;
  StorageId chosen;
  bool operator==(const PointKey&) const = default;
};

PointKey KeyOf(const DecisionPoint& d) { return {PlaceOf(d), d.chosen}; }

// The number of decisions two runs replayed side by side make alike, found
// while they run: each run hands over its decisions in batches, and the
// decisions both have made are compared and dropped, so only the lead of
// the faster run is held, and nothing once they differ.
class PrefixMatcher {
 public:
  // From run `side`'s thread only.
  void Add(int side, const DecisionPoint& d) {
    if (differ_.load(std::memory_order_relaxed)) return;
    std::vector<PointKey>& batch = batch_[side];
    batch.push_back(KeyOf(d));
    if (batch.size() == kBatch) Hand(side);
  }
  // From run `side`'s thread, when it has ended.
  void Finish(int side) { Hand(side); }
  // REQUIRES: both runs finished.
  int64_t alike() const { return alike_; }

 private:
  static constexpr size_t kBatch = 4096;

  void Hand(int side) {
    std::lock_guard<std::mutex> lock(mu_);
    std::deque<PointKey>& mine = held_[side];
    std::deque<PointKey>& theirs = held_[1 - side];
    if (!differ_) mine.insert(mine.end(), batch_[side].begin(), batch_[side].end());
    batch_[side].clear();
    while (!differ_ && !mine.empty() && !theirs.empty()) {
      if (!(mine.front() == theirs.front())) {
        differ_ = true;
        break;
      }
      mine.pop_front();
      theirs.pop_front();
      ++alike_;
    }
    if (differ_) mine.clear(), theirs.clear();
  }

  std::mutex mu_;
  std::atomic<bool> differ_{false};
  std::vector<PointKey> batch_[2];
  std::deque<PointKey> held_[2];
  int64_t alike_ = 0;
};

// One run's trail, and its decisions for the prefix match.
class TrailRecorder : public ReplayObserver {
 public:
  TrailRecorder(PrefixMatcher& matcher, int side, bool keep)
      : matcher_(matcher), side_(side), keep_(keep) {}
  Flow OnDecision(const DecisionPoint& d) override {
    if (keep_) trail_.push_back(StepOf(d));
    matcher_.Add(side_, d);
    return Flow::kContinue;
  }
  bool WantsScores() const override { return false; }
  DecisionTrail TakeTrail() { return std::move(trail_); }

 private:
  PrefixMatcher& matcher_;
  int side_;
  bool keep_;  // the trail: kept, or only matched
  DecisionTrail trail_;
};

// A run replayed again up to the last decision of interest: at each, the
// whole decision point (score, terms, runner-up) and, where asked, the score
// and terms another storage had there, read from the engine before the
// policy chooses (nullopt when that storage was not in the pool).
class Probe : public ReplayObserver {
 public:
  // `wanted`: decision index -> the storage to explain there, or -1.
  Probe(const Trace& trace, const ReplayConfig& config, std::map<int64_t, StorageId> wanted)
      : engine_(trace, EngineOptionsFor(WithoutObserver(config))),
        policy_(config),
        wanted_(std::move(wanted)),
        next_(wanted_.begin()) {}
  void Run() {
    if (!wanted_.empty()) Drive(engine_, policy_, this);
  }
  Flow OnDecisionDue(const DecisionPoint& d) override {
    if (Due(d.index) && next_->second >= 0 && engine_.Evictable(next_->second))
      terms_[d.index] = policy_.Explain(engine_, next_->second);
    return Flow::kContinue;
  }
  bool WantsScores() const override { return Due(engine_.decisions()); }
  Flow OnDecision(const DecisionPoint& d) override {
    if (!Due(d.index)) return Flow::kContinue;
    points_.emplace(d.index, d);
    return ++next_ == wanted_.end() ? Flow::kStop : Flow::kContinue;
  }
  std::optional<DecisionPoint> point(int64_t index) const {
    auto it = points_.find(index);
    return it == points_.end() ? std::nullopt : std::optional<DecisionPoint>(it->second);
  }
  const DecisionPoint& at(int64_t index) const { return points_.at(index); }
  std::optional<ScoreTerms> terms(int64_t index) const {
    auto it = terms_.find(index);
    if (it == terms_.end() || !it->second) return std::nullopt;
    return it->second->second;
  }

 private:
  static ReplayConfig WithoutObserver(ReplayConfig c) {
    c.observer = nullptr;
    return c;
  }
  bool Due(int64_t index) const { return next_ != wanted_.end() && next_->first == index; }

  Engine engine_;
  ConfiguredPolicy policy_;
  std::map<int64_t, StorageId> wanted_;
  std::map<int64_t, StorageId>::const_iterator next_;
  std::map<int64_t, DecisionPoint> points_;
  std::map<int64_t, std::optional<std::pair<double, ScoreTerms>>> terms_;
};

int64_t LastEvictionBefore(const DecisionTrail& trail, int64_t before, StorageId s) {
  for (int64_t i = before - 1; i >= 0; --i)
    if (trail[i].chosen == s) return i;
  return -1;
}

// Two runs replayed side by side, keeping their trails when asked; the
// decisions both made alike are compared as they come.
struct SideBySide {
  ReplayConfig ca, cb;
  RunRecord a, b;
  DecisionTrail la, lb;
  int64_t alike = 0;  // decisions both made alike, from the start
};

// `watchers` (may be null) watch the two runs (ReplayConfig::watcher).
SideBySide ReplaySideBySide(const Trace& trace, const Baseline& baseline, const RunSpec& a,
                            const RunSpec& b, bool keep_trails,
                            std::array<ReplayObserver*, 2> watchers = {}) {
  SideBySide out;
  out.ca = ConfigFor(a, baseline);
  out.cb = ConfigFor(b, baseline);
  PrefixMatcher matcher;
  TrailRecorder rec_a(matcher, 0, keep_trails), rec_b(matcher, 1, keep_trails);
  out.a.spec = a;
  out.b.spec = b;
  ReplayConfig ta = out.ca, tb = out.cb;
  ta.observer = &rec_a;
  tb.observer = &rec_b;
  ta.watcher = watchers[0];
  tb.watcher = watchers[1];
  // Side by side: the matcher holds only the lead of the faster run.
  ParallelFor(2, 2, [&](size_t k) {
    RunRecord& run = k == 0 ? out.a : out.b;
    run.result = Replay(trace, k == 0 ? ta : tb);
    matcher.Finish(static_cast<int>(k));
  });
  out.a.overhead = Overhead(out.a.result.clock, baseline.compute);
  out.b.overhead = Overhead(out.b.result.clock, baseline.compute);
  out.la = rec_a.TakeTrail();
  out.lb = rec_b.TakeTrail();
  out.alike = matcher.alike();
  return out;
}

// CompareRuns from the two runs, their trails and the decisions they made
// alike from the start.
RunComparison CompareMade(const Trace& trace, const ReplayConfig& ca, const ReplayConfig& cb,
                          const RunRecord& run_a, const RunRecord& run_b, const DecisionTrail& la,
                          const DecisionTrail& lb, int64_t first) {
  RunComparison cmp;
  cmp.a = ProfileRun(run_a);
  cmp.b = ProfileRun(run_b);
  cmp.after = AlignDecisions(la, lb, first);
  cmp.jaccard_all = EvictedJaccard(run_a.result.evict_count, run_b.result.evict_count);
  cmp.jaccard_heuristic =
      EvictedJaccard(run_a.result.heuristic_evict_count, run_b.result.heuristic_evict_count);
  cmp.overhead_ratio = cmp.a.overhead > 0 ? cmp.b.overhead / cmp.a.overhead : 0;

  // The decisions to see whole: the first divergence, and for each differing
  // pair the other run's choice as it stood in this run.
  const bool explain = ca.heuristic == cb.heuristic && ca.heuristic->cost != CostTerm::kRandom;
  std::map<int64_t, StorageId> want_a, want_b;
  const auto& pairs = cmp.after.differing_pairs;
  if (explain)
    for (const auto& [i, j] : pairs) {
      want_a[i] = lb[j].chosen;
      want_b[j] = la[i].chosen;
    }
  if (first < static_cast<int64_t>(la.size())) want_a.emplace(first, -1);
  if (first < static_cast<int64_t>(lb.size())) want_b.emplace(first, -1);
  Probe probe_a(trace, ca, std::move(want_a)), probe_b(trace, cb, std::move(want_b));
  ParallelFor(2, 2, [&](size_t k) { (k == 0 ? probe_a : probe_b).Run(); });
  cmp.first = ClassifyDivergence(first, probe_a.point(first), run_a.result, probe_b.point(first),
                                 run_b.result);

  if (!explain) return cmp;
  // Run a evicted x at decision i, run b evicted y at j: the terms of each
  // in the other run.
  for (size_t k = 0; k < pairs.size(); ++k) {
    const auto [i, j] = pairs[k];
    RankFlipAt r;
    r.a = probe_a.at(i);
    r.b = probe_b.at(j);
    const StorageId x = r.a.chosen, y = r.b.chosen;
    std::optional<ScoreTerms> y_in_a =
        r.a.runner_up == y ? std::optional<ScoreTerms>(r.a.runner_up_terms) : probe_a.terms(i);
    std::optional<ScoreTerms> x_in_b =
        r.b.runner_up == x ? std::optional<ScoreTerms>(r.b.runner_up_terms) : probe_b.terms(j);
    r.y_evictable_in_a = y_in_a.has_value();
    r.x_evictable_in_b = x_in_b.has_value();
    if (!y_in_a) r.y_evicted_in_a_at = LastEvictionBefore(la, i, y);
    if (!x_in_b) r.x_evicted_in_b_at = LastEvictionBefore(lb, j, x);
    if (y_in_a && x_in_b)
      r.flip = ExplainRankFlip(*ca.heuristic, r.a.terms, *y_in_a, *x_in_b, r.b.terms);
    if (k == 0) cmp.first_rank_flip = r;
    if (r.flip) {
      cmp.first_term_flip = r;
      break;
    }
  }
  return cmp;
}

}  // namespace

FirstDivergence FirstDivergenceOf(const Trace& trace, const Baseline& baseline, const RunSpec& a,
                                  const RunSpec& b, RunRecord* run_a, RunRecord* run_b) {
  SideBySide s = ReplaySideBySide(trace, baseline, a, b, /*keep_trails=*/false);
  const int64_t first = s.alike;
  std::map<int64_t, StorageId> want_a, want_b;
  if (first < s.a.result.heuristic_evictions) want_a.emplace(first, -1);
  if (first < s.b.result.heuristic_evictions) want_b.emplace(first, -1);
  Probe probe_a(trace, s.ca, std::move(want_a)), probe_b(trace, s.cb, std::move(want_b));
  ParallelFor(2, 2, [&](size_t k) { (k == 0 ? probe_a : probe_b).Run(); });
  FirstDivergence f =
      ClassifyDivergence(first, probe_a.point(first), s.a.result, probe_b.point(first), s.b.result);
  if (run_a) *run_a = std::move(s.a);
  if (run_b) *run_b = std::move(s.b);
  return f;
}

RunComparison CompareRuns(const Trace& trace, const Baseline& baseline, const RunSpec& a,
                          const RunSpec& b, std::array<ReplayObserver*, 2> watchers) {
  SideBySide s = ReplaySideBySide(trace, baseline, a, b, /*keep_trails=*/true, watchers);
  return CompareMade(trace, s.ca, s.cb, s.a, s.b, s.la, s.lb, s.alike);
}

RunComparison CompareRuns(const Trace& trace, const Baseline& baseline, const RunRecord& a,
                          const RunRecord& b) {
  const ReplayConfig ca = ConfigFor(a.spec, baseline), cb = ConfigFor(b.spec, baseline);
  // Runs that differ in budget alone.
  const std::optional<RunKey> key = KeyBesidesBudget(ca);
  if (!a.trail || !b.trail || !key || key != KeyBesidesBudget(cb))
    return CompareRuns(trace, baseline, a.spec, b.spec);
  const RunTrail& ta = *a.trail;
  const RunTrail& tb = *b.trail;
  const size_t n = std::min(ta.events.size(), tb.events.size());
  size_t first = 0;
  while (first < n && ta.events[first] == tb.events[first] &&
         ta.steps[first].chosen == tb.steps[first].chosen)
    ++first;
  return CompareMade(trace, ca, cb, a, b, ta.steps, tb.steps, static_cast<int64_t>(first));
}

}  // namespace dtr
