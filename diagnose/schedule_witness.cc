#include "diagnose/schedule_witness.h"

#include <fmt/core.h>

#include <algorithm>
#include <future>
#include <thread>
#include <variant>

#include "checker/proofs/schedule_checker.h"
#include "checker/proofs/script_builder.h"
#include "diagnose/schedule_search.h"
#include "model/error.h"

namespace dtr {

namespace {

class Searcher {
 public:
  Searcher(const Trace& trace, int64_t baseline_memory, int64_t budget, const WitnessOptions& o,
           const WitnessProgress& progress)
      : trace_(trace),
        baseline_memory_(baseline_memory),
        budget_(budget),
        o_(o),
        progress_(progress) {
    if (o_.heuristics.empty()) o_.heuristics.push_back(&FindHeuristic("DTR"));
  }

  WitnessSearch Run() {
    if (o_.seconds > 0)
      deadline_ = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(o_.seconds));
    if (RunsAtBudget() || LowerBudgets() || Counterfactuals() || NextUse() || CheckpointPlans() ||
        Z3Plan() || RollingPlans()) {
    }
    return std::move(out_);
  }

 private:
  std::string RatioText(int64_t b) const {
    return fmt::format("{:.6f}", static_cast<double>(b) / baseline_memory_);
  }

  // A run and its script; a run that stops with a simrd assertion counts as a
  // failed attempt (its message is recorded), not as an error of the search.
  std::optional<ScriptedRun> RunScripted(const ReplayConfig& c, const std::string& source,
                                         const std::string& what) {
    try {
      return ScriptOfRun(trace_, c);
    } catch (const SimrdAssertionError& e) {
      Note(source, what, e.what());
      return std::nullopt;
    }
  }

  // True (once noted) when the search's time is up; else limits the next Z3
  // call, its encoding included, to the time left.
  bool TimeUp() {
    if (!deadline_) return false;
    o_.limits.deadline = deadline_;
    double left =
        std::chrono::duration<double>(*deadline_ - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      if (!timed_out_) Note("search", "all sources", "time limit");
      timed_out_ = true;
      return true;
    }
    o_.limits.timeout_seconds =
        o_.limits.timeout_seconds > 0 ? std::min(o_.limits.timeout_seconds, left) : left;
    return false;
  }

  ReplayConfig Config(const HeuristicSpec* h, int64_t budget) const {
    ReplayConfig c;
    c.runtime = o_.runtime;
    c.heuristic = h;
    c.budget = budget;
    return c;
  }

  void Note(const std::string& source, const std::string& description, const std::string& outcome) {
    out_.attempts.push_back({source, description, outcome});
    if (progress_) progress_(fmt::format("{}: {} -> {}", source, description, outcome));
  }

  // Checks a candidate at the budget; keeps it if it passes.
  bool Try(const std::string& source, const std::string& description, EvictionScript script) {
    ScheduleCheck check = CheckSchedule(trace_, budget_, script, o_.runtime);
    Note(source, description, "checker: " + DescribeScheduleCheck(check));
    if (!check.passed()) return false;
    out_.witness = Witness{source, description, std::move(script), std::move(check)};
    return true;
  }

  bool RunsAtBudget() {
    for (const HeuristicSpec* h : o_.heuristics) {
      if (TimeUp()) return false;
      std::string what = fmt::format("{} at budget {}", h->name, budget_);
      std::optional<ScriptedRun> run = RunScripted(Config(h, budget_), "run", what);
      if (!run) continue;
      ScriptedRun& sr = *run;
      if (h == o_.heuristics.front()) first_run_ = sr;
      if (sr.run.outcome != Outcome::kPass) {
        Note("run", what, std::string(OutcomeName(sr.run.outcome)));
        continue;
      }
      if (Try("run", what + fmt::format(" passes with peak {}", sr.run.max_memory),
              std::move(sr.script)))
        return true;
    }
    return false;
  }

  bool LowerBudgets() {
    for (const HeuristicSpec* h : o_.heuristics) {
      int64_t b = budget_ - 1;
      std::vector<int64_t> budgets;
      // Jumps: just below each run's interval of identical behaviour.
      for (int32_t i = 0; i < o_.jumps && b >= 0; ++i) {
        if (TimeUp()) return false;
        std::optional<ScriptedRun> sr = RunScripted(Config(h, b), "lower-budget run",
                                                    fmt::format("{} at budget {}", h->name, b));
        if (!sr) break;
        if (TryLowerRun(h, b, *sr)) return true;
        b = sr->run.budget_lo - 1;
      }
      for (int32_t i = 0; i < o_.descents; ++i) {
        if (TimeUp()) return false;
        int64_t d = static_cast<int64_t>(static_cast<double>(budget_) * (1.0 - 0.005 * (1 << i)));
        if (d < 0 || d >= b) continue;
        std::optional<ScriptedRun> sr = RunScripted(Config(h, d), "lower-budget run",
                                                    fmt::format("{} at budget {}", h->name, d));
        if (sr && TryLowerRun(h, d, *sr)) return true;
      }
    }
    return false;
  }

  bool TryLowerRun(const HeuristicSpec* h, int64_t b, ScriptedRun& sr) {
    std::string what = fmt::format("{} at budget {} (ratio {})", h->name, b, RatioText(b));
    if (sr.run.outcome != Outcome::kPass) {
      Note("lower-budget run", what, std::string(OutcomeName(sr.run.outcome)));
      return false;
    }
    return Try("lower-budget run", what + fmt::format(" passes with peak {}", sr.run.max_memory),
               std::move(sr.script));
  }

  // Records the decisions of the explained run, with their runner-ups.
  class DecisionLog : public ReplayObserver {
   public:
    Flow OnDecision(const DecisionPoint& d) override {
    decisions.push_back(d);
    return Flow::kContinue;
  }
    std::vector<DecisionPoint> decisions;
  };

  bool Counterfactuals() {
    if (!first_run_ || first_run_->run.outcome == Outcome::kPass || o_.counterfactuals <= 0)
      return false;
    const HeuristicSpec* h = o_.heuristics.front();
    DecisionLog log;
    ReplayConfig c = Config(h, budget_);
    c.observer = &log;
    try {
      Replay(trace_, c);
    } catch (const SimrdAssertionError& e) {
      Note("counterfactual", fmt::format("{} at budget {}", h->name, budget_), e.what());
      return false;
    }
    // The last decisions with a runner-up, from the last one back.
    std::vector<const DecisionPoint*> chosen;
    for (auto d = log.decisions.rbegin();
         d != log.decisions.rend() && chosen.size() < static_cast<size_t>(o_.counterfactuals); ++d)
      if (d->runner_up >= 0) chosen.push_back(&*d);
    // Replayed a batch at a time, one thread per core, and taken in the same
    // order as one at a time: the answer and the attempts are those of a
    // sequential search, at most a batch's replays later.
    const size_t batch = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
    using Result = std::variant<ScriptedRun, std::string>;  // the run, or simrd's assertion
    for (size_t first = 0; first < chosen.size(); first += batch) {
      if (TimeUp()) return false;
      const size_t last = std::min(chosen.size(), first + batch);
      std::vector<std::future<Result>> runs;
      for (size_t k = first; k < last; ++k) {
        ReplayConfig oc = Config(h, budget_);
        oc.overrides = {{chosen[k]->index, chosen[k]->runner_up}};
        runs.push_back(std::async(std::launch::async, [this, oc]() -> Result {
          try {
            return ScriptOfRun(trace_, oc);
          } catch (const SimrdAssertionError& e) {
            return std::string(e.what());
          }
        }));
      }
      bool found = false;
      for (size_t k = first; k < last; ++k) {
        Result out = runs[k - first].get();  // every replay of the batch ends before we return
        if (found) continue;
        const DecisionPoint& d = *chosen[k];
        std::string what =
            fmt::format("{} with decision {} (event {}) evicting {} instead of {}", h->name,
                        d.index, d.event, Name(d.runner_up), Name(d.chosen));
        if (const std::string* assertion = std::get_if<std::string>(&out)) {
          Note("counterfactual", what, *assertion);
          continue;
        }
        ScriptedRun& sr = std::get<ScriptedRun>(out);
        if (sr.run.outcome != Outcome::kPass) {
          Note("counterfactual", what, std::string(OutcomeName(sr.run.outcome)));
          continue;
        }
        found = Try("counterfactual", what, std::move(sr.script));
      }
      if (found) return true;
    }
    return false;
  }

  std::string Name(StorageId s) const { return trace_.tensors[trace_.storages[s].root].name; }

  bool NextUse() {
    if (!o_.next_use || TimeUp()) return false;
    ScriptBuilderOptions bo;
    bo.budget = budget_;
    bo.eager = EagerEvictions(o_.runtime);
    bo.max_events = o_.next_use_computations > 0 ? o_.next_use_computations : NextUseComputationsFor(trace_);
    BuiltScript b = BuildScript(trace_, bo);
    if (!b.completed) {
      Note("next-use", "offline next-use policy", b.stopped);
      return false;
    }
    return Try("next-use",
               fmt::format("offline next-use policy ({} evictions)", b.script.entries.size()),
               std::move(b.script));
  }

  bool Z3Plan() {
    if (!o_.use_z3 || TimeUp()) return false;
    const OpId nops = static_cast<OpId>(trace_.ops.size());
    if (nops == 0) return false;  // nothing to plan: the other witnesses answer
    if (nops <= o_.z3_whole_program_ops) {
      WindowPlan plan = PlanWindow(trace_, {0, nops - 1}, budget_,
                                   std::vector<uint8_t>(trace_.storages.size(), 0), o_.limits);
      std::string what = fmt::format("Z3 plan of the whole program (operators 0..{})", nops - 1);
      if (plan.answer != SolverAnswer::kSat) {
        Note("z3 plan", what,
             std::string(SolverAnswerName(plan.answer)) +
                 (plan.reason.empty() ? "" : ": " + plan.reason));
        return false;
      }
      ScriptBuilderOptions bo;
      bo.budget = budget_;
      bo.eager = EagerEvictions(o_.runtime);
      bo.plan = &plan;
      BuiltScript b = BuildScript(trace_, bo);
      if (!b.completed) {
        Note("z3 plan", what, "following the plan: " + b.stopped);
        return false;
      }
      return Try("z3 plan", what, std::move(b.script));
    }
    // A window before the failure of the explained run, entered in the run's
    // own state; the heuristic completes the run after the window.
    if (!first_run_ || !first_run_->run.oom) return false;
    const OomContext& oom = *first_run_->run.oom;
    const Step& failing = trace_.program[oom.program_step];
    OpId p = failing.kind == StepKind::kCompute ? failing.target : nops - 1;
    OpId first = std::max<OpId>(0, p - o_.z3_window_ops + 1);
    OpId last = std::min<OpId>(nops - 1, p + 2);
    int32_t first_step = -1, stop_step = -1;
    for (int32_t s = 0; s < static_cast<int32_t>(trace_.program.size()); ++s) {
      const Step& st = trace_.program[s];
      if (st.kind != StepKind::kCompute) continue;
      if (st.target == first) first_step = s;
      if (st.target == last + 1) stop_step = s;
    }
    // The run's state at the first computation of the window's first operator.
    Engine rt = ScriptedStateBeforeStep(trace_, o_.runtime, first_run_->script, first_step);
    std::vector<uint8_t> entry(trace_.storages.size(), 0);
    for (StorageId s = 0; s < static_cast<StorageId>(entry.size()); ++s) entry[s] = rt.material(s);
    std::string what =
        fmt::format("Z3 plan of operators {}..{} from {}'s state there, then {}", first, last,
                    o_.heuristics.front()->name, o_.heuristics.front()->name);
    WindowPlan plan = PlanWindow(trace_, {first, last}, budget_, entry, o_.limits);
    if (plan.answer != SolverAnswer::kSat) {
      Note("z3 plan", what,
           std::string(SolverAnswerName(plan.answer)) +
               (plan.reason.empty() ? "" : ": " + plan.reason));
      if (plan.answer == SolverAnswer::kUnsat)
        out_.notes.push_back(
            fmt::format("from {}'s state at operator {} ({}), no schedule of operators {}..{} fits "
                        "the budget (Z3: unsat)",
                        o_.heuristics.front()->name, first, trace_.ops[first].name, first, last));
      return false;
    }
    ScriptBuilderOptions bo;
    bo.budget = budget_;
    bo.eager = EagerEvictions(o_.runtime);
    bo.prefix = &first_run_->script;
    bo.prefix_events = rt.event();
    bo.plan = &plan;
    bo.stop_at_step = stop_step;
    BuiltScript b = BuildScript(trace_, bo);
    if (!b.completed) {
      Note("z3 plan", what, "following the plan: " + b.stopped);
      return false;
    }
    ReplayConfig hybrid = Config(o_.heuristics.front(), budget_);
    hybrid.script = &b.script.entries;
    std::optional<ScriptedRun> sr = RunScripted(hybrid, "z3 plan", what);
    if (!sr) return false;
    if (sr->run.outcome != Outcome::kPass) {
      Note("z3 plan", what, fmt::format("the heuristic's rest: {}", OutcomeName(sr->run.outcome)));
      return false;
    }
    return Try("z3 plan", what, std::move(sr->script));
  }

  bool RollingPlans() {
    if (!o_.use_z3 || o_.rolling_ops <= 0 || TimeUp()) return false;
    ScriptBuilderOptions bo;
    bo.budget = budget_;
    bo.eager = EagerEvictions(o_.runtime);
    bo.rolling_ops = o_.rolling_ops;
    bo.rolling_stride = std::max(1, o_.rolling_ops / 2);
    bo.limits = o_.limits;
    BuiltScript b = BuildScript(trace_, bo);
    std::string what = fmt::format("rolling Z3 plans of {} operators ({} plans, {} not sat)",
                                   o_.rolling_ops, b.plans, b.plans_failed);
    if (!b.completed) {
      Note("z3 rolling plans", what, b.stopped);
      return false;
    }
    return Try("z3 rolling plans", what, std::move(b.script));
  }

  bool CheckpointPlans() {
    if (o_.plan_seconds <= 0 || TimeUp()) return false;
    Baseline b;
    b.memory = baseline_memory_;
    for (const Operator& op : trace_.ops) b.compute += op.compute;  // every operator once
    ScheduleSearchOptions so;
    so.runtime = o_.runtime;
    so.seconds = o_.plan_seconds;
    if (deadline_)
      so.seconds =
          std::min(so.seconds, std::max(1e-3, std::chrono::duration<double>(
                                                  *deadline_ - std::chrono::steady_clock::now())
                                                  .count()));
    so.good_enough = budget_;
    ScheduleSearch s = SearchRetentionPlans(trace_, b, so);
    if (!s.best) {
      Note("checkpoint plan", fmt::format("{} plans", s.attempts.size()),
           s.timed_out ? "time limit" : "none completed");
      return false;
    }
    const std::string what = fmt::format("{} ({} plans followed, overhead {:.2f})",
                                         s.best->description, s.attempts.size(), s.best->overhead);
    if (s.best->peak > budget_) {
      Note("checkpoint plan", what,
           fmt::format("lowest peak {} is above the budget{}", s.best->peak,
                       s.timed_out ? " (time limit)" : ""));
      return false;
    }
    return Try("checkpoint plan", what, std::move(s.best->script));
  }

  const Trace& trace_;
  const int64_t baseline_memory_;
  const int64_t budget_;
  WitnessOptions o_;
  const WitnessProgress& progress_;
  std::optional<ScriptedRun> first_run_;
  WitnessSearch out_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  bool timed_out_ = false;
};

}  // namespace

int64_t NextUseComputationsFor(const Trace& trace) {
  constexpr int64_t kPerStep = 4, kAtLeast = 50'000;
  return std::max(kAtLeast, kPerStep * static_cast<int64_t>(trace.program.size()));
}

WitnessSearch FindScheduleWitness(const Trace& trace, int64_t baseline_memory, int64_t budget,
                                  const WitnessOptions& options, const WitnessProgress& progress) {
  RequireRuntimeV2(options.runtime, "witness search");
  return Searcher(trace, baseline_memory, budget, options, progress).Run();
}

}  // namespace dtr
