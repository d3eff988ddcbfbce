#include "diagnose/counterfactual.h"

#include <fmt/core.h>

#include <algorithm>
#include <functional>

#include "checker/parallel.h"
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

// Decision indices in [lo, n): the sequences taken round-robin, each index once.
std::vector<int64_t> Interleave(int64_t lo, int64_t n,
                                const std::vector<std::vector<int64_t>>& sequences) {
  std::vector<int64_t> out;
  if (lo >= n) return out;
  std::vector<uint8_t> seen(static_cast<size_t>(n - lo), 0);
  std::vector<size_t> pos(sequences.size(), 0);
  for (bool more = true; more;) {
    more = false;
    for (size_t k = 0; k < sequences.size(); ++k) {
      const std::vector<int64_t>& seq = sequences[k];
      while (pos[k] < seq.size()) {
        int64_t i = seq[pos[k]++];
        if (i < lo || i >= n || seen[i - lo]) continue;
        seen[i - lo] = 1;
        out.push_back(i);
        more = true;
        break;
      }
    }
  }
  return out;
}

std::vector<int64_t> Forward(int64_t from, int64_t n) {
  std::vector<int64_t> v;
  for (int64_t i = std::max<int64_t>(from, 0); i < n; ++i) v.push_back(i);
  return v;
}

std::vector<int64_t> Backward(int64_t lo, int64_t n) {
  std::vector<int64_t> v;
  for (int64_t i = n - 1; i >= lo; --i) v.push_back(i);
  return v;
}

// The decisions that last evicted the storages of the pending
// rematerializations at an OOM, innermost frame first: those evictions are
// what the failing recursion had to undo.
std::vector<int64_t> FrameEvictions(const Trace& trace, const DecisionLog& log,
                                    const RunResult& run) {
  std::vector<int64_t> out;
  if (!run.oom) return out;
  std::vector<int64_t> last(trace.storages.size(), -1);
  for (const DecisionPoint& d : log.decisions) last[d.chosen] = d.index;
  for (auto it = run.oom->frames.rbegin(); it != run.oom->frames.rend(); ++it) {
    int64_t i = last[trace.tensors[*it].storage];
    if (i >= 0 && std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
  }
  return out;
}

// Storages certainly in the pool at decision i: the runner-up, then what the
// same eviction loop (same event) chose next.
std::vector<StorageId> CandidatesAt(const DecisionLog& log, int64_t i, int limit) {
  const DecisionPoint& d = log.decisions[i];
  std::vector<StorageId> out;
  auto add = [&](StorageId s) {
    if (s < 0 || s == d.chosen || static_cast<int>(out.size()) >= limit) return;
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  add(d.runner_up);
  for (size_t j = i + 1; j < log.decisions.size() && log.decisions[j].event == d.event; ++j)
    add(log.decisions[j].chosen);
  return out;
}

// Lazily yields candidates: for each decision in priority order, each of its
// candidate storages, appended to `base`.
class CandidateStream {
 public:
  CandidateStream(const DecisionLog& log, std::vector<int64_t> order,
                  std::vector<DecisionOverride> base, int limit)
      : log_(log), order_(std::move(order)), base_(std::move(base)), limit_(limit) {}

  std::optional<Candidate> Next() {
    while (pos_ < order_.size()) {
      if (pending_.empty() && !loaded_) {
        pending_ = CandidatesAt(log_, order_[pos_], limit_);
        std::reverse(pending_.begin(), pending_.end());
        loaded_ = true;
      }
      if (pending_.empty()) {
        ++pos_;
        loaded_ = false;
        continue;
      }
      StorageId s = pending_.back();
      pending_.pop_back();
      const DecisionPoint& d = log_.decisions[order_[pos_]];
      Candidate c{base_};
      c.overrides.push_back({d.index, d.event, d.clock, d.chosen, s});
      return c;
    }
    return std::nullopt;
  }

 private:
  const DecisionLog& log_;
  std::vector<int64_t> order_;
  std::vector<DecisionOverride> base_;
  int limit_;
  size_t pos_ = 0;
  bool loaded_ = false;
  std::vector<StorageId> pending_;
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

  DecisionRecorder recorder;
  ReplayConfig recorded = config;
  recorded.observer = &recorder;
  RunRecord run{spec, Replay(trace, recorded)};
  run.overhead = Overhead(run.result.clock, baseline.compute);
  out.run = ProfileRun(run);
  out.decisions = static_cast<int64_t>(recorder.log().decisions.size());
  const DecisionLog& log = recorder.log();

  std::optional<int64_t> forward_from;
  if (against) {
    DecisionRecorder rec_a;
    ReplayConfig ca = ConfigFor(*against, baseline);
    ca.observer = &rec_a;
    RunRecord run_a{*against, Replay(trace, ca)};
    run_a.overhead = Overhead(run_a.result.clock, baseline.compute);
    out.against = ProfileRun(run_a);
    out.divergence = FindFirstDivergence(log, run.result, rec_a.log(), run_a.result);
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

  std::vector<Trial> trials;  // every candidate replayed, in search order
  auto evaluate = [&](std::vector<Candidate> batch) {
    size_t first = trials.size();
    trials.resize(first + batch.size());
    ParallelFor(batch.size(), options.jobs, [&](size_t k) {
      Trial& t = trials[first + k];
      t.candidate = std::move(batch[k]);
      t.order = first + k;
      RunResult r = Replay(trace, WithOverrides(config, t.candidate.overrides));
      t.outcome = r.outcome;
      t.overhead = Overhead(r.clock, baseline.compute);
      t.events = r.events;
      t.success = succeeded(t.outcome, t.overhead);
    });
    out.replays += static_cast<int64_t>(batch.size());
    if (progress)
      progress(static_cast<size_t>(out.replays), static_cast<size_t>(options.max_replays));
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
      while (batch.size() < kBatch &&
             out.replays + static_cast<int64_t>(batch.size()) < options.max_replays) {
        std::optional<Candidate> c = next();
        if (!c) break;
        batch.push_back(std::move(*c));
      }
      if (batch.empty()) {
        if (out.replays >= options.max_replays) out.budget_exhausted = true;
        return;
      }
      evaluate(std::move(batch));
    }
  };

  // Singles.
  {
    std::vector<std::vector<int64_t>> sequences;
    if (forward_from) sequences.push_back(Forward(*forward_from, out.decisions));
    if (failed_run) sequences.push_back(FrameEvictions(trace, log, run.result));
    sequences.push_back(Backward(0, out.decisions));
    if (!failed_run && !forward_from) sequences.push_back(Forward(0, out.decisions));
    std::vector<int64_t> order = Interleave(0, out.decisions, sequences);
    CandidateStream stream(log, std::move(order), {}, options.candidates_per_decision);
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
    std::vector<DecisionLog> base_logs(bases.size());
    std::vector<RunResult> base_runs(bases.size());
    ParallelFor(bases.size(), options.jobs, [&](size_t k) {
      DecisionRecorder rec;
      ReplayConfig c = WithOverrides(config, bases[k].overrides);
      c.observer = &rec;
      base_runs[k] = Replay(trace, c);
      base_logs[k] = std::move(rec.log());
    });
    out.replays += static_cast<int64_t>(bases.size());
    std::vector<CandidateStream> streams;
    for (size_t k = 0; k < bases.size(); ++k) {
      int64_t after = bases[k].overrides.back().index + 1;
      int64_t n = static_cast<int64_t>(base_logs[k].decisions.size());
      std::vector<std::vector<int64_t>> sequences{Forward(after, n)};
      if (failed_run) sequences.push_back(FrameEvictions(trace, base_logs[k], base_runs[k]));
      sequences.push_back(Backward(after, n));
      streams.emplace_back(base_logs[k], Interleave(after, n, sequences), bases[k].overrides,
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
    DecisionRecorder rec;
    ReplayConfig c = WithOverrides(config, fix.overrides);
    c.observer = &rec;
    RunResult r = Replay(trace, c);
    fix.outcome = r.outcome;
    fix.overhead = Overhead(r.clock, baseline.compute);
    fix.events = r.events;
    bool taken = true;
    for (const DecisionOverride& o : fix.overrides) {
      const auto& ds = rec.log().decisions;
      taken = taken && o.index < static_cast<int64_t>(ds.size()) && ds[o.index].overridden &&
              ds[o.index].chosen == o.replacement && ds[o.index].event == o.event &&
              ds[o.index].clock == o.clock;
    }
    fix.verified = taken && succeeded(fix.outcome, fix.overhead) && fix.outcome == t.outcome &&
                   fix.overhead == t.overhead;
    out.fixes.push_back(fix);
  }
  return out;
}

}  // namespace dtr
