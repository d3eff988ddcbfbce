#include "diagnose/divergence.h"

#include <fmt/core.h>

#include <map>
#include <thread>
#include <tuple>

#include "model/error.h"

namespace dtr {

namespace {

EvictionStats Stats(int64_t evictions, int32_t distinct) {
  return {evictions, distinct, distinct > 0 ? static_cast<double>(evictions) / distinct : 0.0};
}

// Everything that makes a decision point the same point in two runs, but the choice.
bool SamePoint(const DecisionPoint& x, const DecisionPoint& y) {
  return x.event == y.event && x.clock == y.clock && x.program_step == y.program_step &&
         x.remat_depth == y.remat_depth && x.tensor == y.tensor && x.request == y.request &&
         x.memory_usage == y.memory_usage && x.pool_size == y.pool_size;
}

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
  FirstDivergence f;
  const size_t na = a.decisions.size(), nb = b.decisions.size();
  size_t k = 0;
  while (k < na && k < nb && SamePoint(a.decisions[k], b.decisions[k]) &&
         a.decisions[k].chosen == b.decisions[k].chosen)
    ++k;
  f.index = static_cast<int64_t>(k);
  if (k < na) f.a = a.decisions[k];
  if (k < nb) f.b = b.decisions[k];
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
  // One run has a decision `k`, the other none: either that decision came
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

DecisionAlignment AlignDecisions(const DecisionLog& a, const DecisionLog& b, int64_t from) {
  DecisionAlignment al;
  const int64_t na = static_cast<int64_t>(a.decisions.size()),
                nb = static_cast<int64_t>(b.decisions.size());
  al.after_a = std::max<int64_t>(0, na - from);
  al.after_b = std::max<int64_t>(0, nb - from);
  using Key = std::tuple<int32_t, TensorId, int32_t, int64_t>;  // step, tensor, depth, request
  auto key = [](const DecisionPoint& d) {
    return Key{d.program_step, d.tensor, d.remat_depth, d.request};
  };
  // b's decisions by key, in order; each is used at most once.
  std::map<Key, std::vector<int64_t>> pending;
  for (int64_t j = from; j < nb; ++j) pending[key(b.decisions[j])].push_back(j);
  std::map<Key, size_t> used;
  for (int64_t i = from; i < na; ++i) {
    Key k = key(a.decisions[i]);
    auto it = pending.find(k);
    if (it == pending.end()) continue;
    size_t& next = used[k];
    if (next >= it->second.size()) continue;
    int64_t j = it->second[next++];
    ++al.aligned;
    if (a.decisions[i].chosen == b.decisions[j].chosen)
      ++al.aligned_same_choice;
    else
      al.differing_pairs.emplace_back(i, j);
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
  if (state.result.outcome != Outcome::kStopped) return std::nullopt;  // the run ended before that decision
  if (storage < 0 || storage >= static_cast<StorageId>(trace.storages.size()) || !state.engine.Evictable(storage))
    return std::nullopt;  // not in the pool then
  ConfiguredPolicy policy(c);
  return policy.Explain(state.engine, storage);
}

namespace {

// Run a evicted x at decision da, run b evicted y at db: the terms of each in
// the other run, found by replaying it up to that decision.
int64_t LastEvictionBefore(const DecisionLog& log, int64_t before, StorageId s) {
  for (int64_t i = before - 1; i >= 0; --i)
    if (log.decisions[i].chosen == s) return i;
  return -1;
}

RankFlipAt ExplainPair(const Trace& trace, const HeuristicSpec& h, const ReplayConfig& ca,
                       const DecisionLog& la, const DecisionPoint& da, const ReplayConfig& cb,
                       const DecisionLog& lb, const DecisionPoint& db) {
  RankFlipAt r;
  r.a = da;
  r.b = db;
  StorageId x = da.chosen, y = db.chosen;
  std::optional<ScoreTerms> y_in_a, x_in_b;
  if (da.runner_up == y) {
    y_in_a = da.runner_up_terms;
  } else if (auto t = TermsAtDecision(trace, ca, da.index, y)) {
    y_in_a = t->second;
  }
  if (db.runner_up == x) {
    x_in_b = db.runner_up_terms;
  } else if (auto t = TermsAtDecision(trace, cb, db.index, x)) {
    x_in_b = t->second;
  }
  r.y_evictable_in_a = y_in_a.has_value();
  r.x_evictable_in_b = x_in_b.has_value();
  if (!y_in_a) r.y_evicted_in_a_at = LastEvictionBefore(la, da.index, y);
  if (!x_in_b) r.x_evicted_in_b_at = LastEvictionBefore(lb, db.index, x);
  if (y_in_a && x_in_b) r.flip = ExplainRankFlip(h, da.terms, *y_in_a, *x_in_b, db.terms);
  return r;
}

}  // namespace

RunComparison CompareRuns(const Trace& trace, const Baseline& baseline, const RunSpec& a,
                          const RunSpec& b) {
  RunComparison cmp;
  ReplayConfig ca = ConfigFor(a, baseline), cb = ConfigFor(b, baseline);
  DecisionRecorder rec_a, rec_b;
  ca.observer = &rec_a;
  cb.observer = &rec_b;
  RunRecord run_a, run_b;
  run_a.spec = a;
  run_b.spec = b;
  {
    // The two runs are independent: replay them side by side.
    std::exception_ptr failure;
    std::thread other([&] {
      try {
        run_b.result = Replay(trace, cb);
      } catch (...) {
        failure = std::current_exception();
      }
    });
    run_a.result = Replay(trace, ca);
    other.join();
    if (failure) std::rethrow_exception(failure);
  }
  run_a.overhead = Overhead(run_a.result.clock, baseline.compute);
  run_b.overhead = Overhead(run_b.result.clock, baseline.compute);
  cmp.a = ProfileRun(run_a);
  cmp.b = ProfileRun(run_b);
  const DecisionLog& la = rec_a.log();
  const DecisionLog& lb = rec_b.log();
  cmp.first = FindFirstDivergence(la, run_a.result, lb, run_b.result);
  cmp.after = AlignDecisions(la, lb, cmp.first.index);
  cmp.jaccard_all = EvictedJaccard(run_a.result.evict_count, run_b.result.evict_count);
  cmp.jaccard_heuristic =
      EvictedJaccard(run_a.result.heuristic_evict_count, run_b.result.heuristic_evict_count);
  cmp.overhead_ratio = cmp.a.overhead > 0 ? cmp.b.overhead / cmp.a.overhead : 0;

  if (a.heuristic == b.heuristic && a.heuristic->cost != CostTerm::kRandom) {
    ca.observer = cb.observer = nullptr;
    const auto& pairs = cmp.after.differing_pairs;
    for (size_t k = 0; k < pairs.size() && k < static_cast<size_t>(kMaxRankFlipProbes); ++k) {
      RankFlipAt r = ExplainPair(trace, *a.heuristic, ca, la, la.decisions[pairs[k].first], cb, lb,
                                 lb.decisions[pairs[k].second]);
      if (k == 0) cmp.first_rank_flip = r;
      if (r.flip) {
        cmp.first_term_flip = r;
        break;
      }
    }
  }
  return cmp;
}

}  // namespace dtr
