#include "diagnose/oom_classification.h"

#include <fmt/core.h>

#include <algorithm>

#include "checker/proofs/schedule_checker.h"
#include "model/error.h"

namespace dtr {

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kFeasible:
      return "feasible";
    case Verdict::kPolicyInduced:
      return "policy-induced";
    case Verdict::kInherent:
      return "inherent";
    case Verdict::kUndetermined:
      return "undetermined";
  }
  return "?";
}

std::vector<OpWindow> InherentWindows(const Trace& trace, const MemoryBound& bound, int32_t count,
                                      int32_t ops, OpId focus) {
  const OpId nops = static_cast<OpId>(trace.ops.size());
  std::vector<OpWindow> out;
  if (nops == 0) return out;  // a program without operators has no window
  ops = std::max(1, std::min<int32_t>(ops, nops));
  auto centered = [&](OpId o) {
    OpId first = std::clamp<OpId>(o - ops / 2, 0, nops - ops);
    return OpWindow{first, first + ops - 1};
  };
  auto add = [&](OpWindow w) {
    if (static_cast<int32_t>(out.size()) >= count) return;
    for (const OpWindow& v : out)
      if (v.first == w.first && v.last == w.last) return;
    out.push_back(w);
  };
  if (focus >= 0) add(centered(focus));
  std::vector<OpId> order(nops);
  for (OpId o = 0; o < nops; ++o) order[o] = o;
  std::stable_sort(order.begin(), order.end(), [&](OpId a, OpId b) {
    return bound.per_op[a].total() > bound.per_op[b].total();
  });
  // The end of the program first if the final pins are what binds.
  if (bound.attained_by.op < 0) add({nops - ops, nops - 1});
  for (OpId o : order) {
    if (static_cast<int32_t>(out.size()) >= count) break;
    bool covered = false;
    for (const OpWindow& v : out) covered |= o >= v.first && o <= v.last;
    if (!covered) add(centered(o));
  }
  add({nops - ops, nops - 1});
  return out;
}

namespace {

// The checks shared by explain and prove, in order of cost.
class Classifier {
 public:
  Classifier(const Trace& trace, const Baseline& baseline, const ClassifyOptions& o,
             const ClassifyProgress& p)
      : trace_(trace), baseline_(baseline), o_(o), progress_(p) {}

  void Classify(Classification& c, Verdict if_witness, OpId focus) {
    c.static_bound = ComputeMemoryBound(trace_);
    c.proven_infeasible_below = c.static_bound.bytes;
    if (c.budget < c.static_bound.bytes) {
      c.verdict = Verdict::kInherent;
      c.certificate = StaticBoundCertificate(c.budget, c.static_bound);
      Progress(
          fmt::format("static bound {} > budget {}: inherent", c.static_bound.bytes, c.budget));
      return;
    }
    if (FromStore(c, if_witness)) return;
    if (TryCut(c)) return;
    Progress(fmt::format("static bound {} <= budget {}; searching for a schedule",
                         c.static_bound.bytes, c.budget));
    c.witness_search =
        FindScheduleWitness(trace_, baseline_.memory, c.budget, o_.witness, progress_);
    if (c.witness_search.witness) {
      c.verdict = if_witness;
      c.certificate = ScriptCertificate(c.budget, *c.witness_search.witness);
      return;
    }
    for (const OpWindow& w :
         InherentWindows(trace_, c.static_bound, o_.windows, o_.window_ops, focus)) {
      WindowQuery q = QueryWindow(trace_, w, c.budget, o_.witness.limits);
      Progress(
          fmt::format("Z3 window {}..{} ({} storages) at {}: {} after Z3 work {:.0f}, {:.1f}s{}",
                      w.first, w.last, q.storages, c.budget, SolverAnswerName(q.answer), q.work,
                      q.seconds, q.reason.empty() ? "" : " (" + q.reason + ")"));
      c.window_queries.push_back(q);
      if (q.answer == SolverAnswer::kUnsat) {
        c.verdict = Verdict::kInherent;
        c.certificate = UnsatWindowCertificate(c.budget, q);
        return;
      }
    }
    c.verdict = Verdict::kUndetermined;
  }

 private:
  void Progress(const std::string& s) {
    if (progress_) progress_(s);
  }

  // The keep-or-recompute cut at the budget (checker/proofs/cut_bound.h).
  bool TryCut(Classification& c) {
    if (!o_.cut) return false;
    // Run even when a stored cut bound lies at or below the budget: a stored
    // bound may be partial (prove stores budget + 1 for the budget it
    // refuted; bounds stops its bisection at a resolution or a time limit),
    // so it never says the cut does not refute a higher budget. A store may
    // only add answers.
    if (cut_tried_) return false;  // FromStore ran it at this budget already
    CutOptions co = CutOptionsFor(o_.witness.runtime);
    CutArgument arg;
    Progress(fmt::format("keep-or-recompute cut at {}", c.budget));
    if (!RefuteByCut(trace_, c.static_bound, c.budget, co, &arg)) return false;
    c.verdict = Verdict::kInherent;
    c.certificate = CutCertificate(c.budget, arg);
    Progress(fmt::format("the cut refutes budget {}: inherent", c.budget));
    return true;
  }

  // Certificates from the store, each checked again at the budget.
  bool FromStore(Classification& c, Verdict if_witness) {
    const RuntimeCertificates* st = o_.stored;
    if (!st) return false;
    if (st->bound && c.budget < st->bound->bytes) {
      const StoredBound& b = *st->bound;
      if (b.argument == BoundArgument::kCut && o_.cut) {
        CutOptions co = CutOptionsFor(o_.witness.runtime);
        CutArgument arg;
        cut_tried_ = true;
        if (RefuteByCut(trace_, c.static_bound, c.budget, co, &arg)) {
          c.verdict = Verdict::kInherent;
          c.certificate = CutCertificate(c.budget, arg);
          c.from_store = true;
          return true;
        }
        // The walk's test is monotone in the budget; the checkpoints' search
        // need not be, but spans it finds at a budget are spans at every
        // lower one (cut_bound.h), so its certificate one byte below the
        // stored bound holds here too.
        if (RefuteByCut(trace_, c.static_bound, b.bytes - 1, co, &arg) &&
            arg.kind == CutArgument::Kind::kCheckpoints) {
          arg.budget = c.budget;
          c.verdict = Verdict::kInherent;
          c.certificate = CutCertificate(c.budget, arg);
          c.from_store = true;
          return true;
        }
        c.store_notes.push_back(fmt::format(
            "the stored lower bound {} (cut) does not refute budget {} when run again", b.bytes,
            c.budget));
        c.stored_bound_refuted = true;
      } else if (b.argument == BoundArgument::kStatic) {
        // Reached only at or above the static bound just computed.
        c.store_notes.push_back(fmt::format(
            "the stored lower bound {} (static) is above the static bound {}", b.bytes,
            c.static_bound.bytes));
        c.stored_bound_refuted = true;
      } else if (b.argument == BoundArgument::kWindow) {
        WindowQuery q = QueryWindow(trace_, b.window, c.budget, o_.witness.limits);
        c.window_queries.push_back(q);
        if (q.answer == SolverAnswer::kUnsat) {
          c.verdict = Verdict::kInherent;
          c.certificate = UnsatWindowCertificate(c.budget, q);
          c.from_store = true;
          return true;
        }
        c.store_notes.push_back(fmt::format(
            "the stored lower bound {} (Z3 window {}..{}) is {} at budget {} when asked again",
            b.bytes, b.window.first, b.window.last, SolverAnswerName(q.answer), c.budget));
        c.stored_bound_refuted = q.answer == SolverAnswer::kSat;  // unknown refutes nothing
      }
    }
    if (st->schedule && c.budget >= st->schedule->peak) {
      const StoredSchedule& s = *st->schedule;
      ScheduleCheck check = CheckSchedule(trace_, c.budget, s.script, o_.witness.runtime);
      if (check.passed()) {
        Witness w;
        w.source = "certificate store";
        w.description = fmt::format("the stored schedule with peak {} ({}: {}; stored by {})",
                                    s.peak, s.source, s.description, s.found_by);
        w.script = s.script;
        w.check = std::move(check);
        c.witness_search.witness = std::move(w);
        c.witness_search.attempts.push_back(
            {"certificate store", "the stored schedule", "pass"});
        c.certificate = ScriptCertificate(c.budget, *c.witness_search.witness);
        c.verdict = if_witness;
        c.from_store = true;
        return true;
      }
      c.store_notes.push_back(fmt::format(
          "the stored schedule (peak {}) fails the schedule checker at budget {}: {}", s.peak,
          c.budget, DescribeScheduleCheck(check)));
      c.stored_schedule_refuted =
          !CheckSchedule(trace_, s.peak, s.script, o_.witness.runtime).passed();
    }
    return false;
  }

  const Trace& trace_;
  const Baseline& baseline_;
  const ClassifyOptions& o_;
  const ClassifyProgress& progress_;
  bool cut_tried_ = false;  // the cut was run at the budget (and did not refute it)
};

}  // namespace

Classification ExplainOom(const Trace& trace, const Baseline& baseline, const ReplayConfig& config,
                          const ClassifyOptions& options, const ClassifyProgress& progress) {
  if (!config.heuristic) throw Error("explain needs a heuristic run");
  Classification c;
  c.budget = config.budget;
  c.run = Replay(trace, config);
  if (c.run->outcome != Outcome::kOom)
    throw Error(fmt::format(
        "{} at budget {} does not run out of memory (result: {}); explain needs an OOM run, "
        "prove answers for any budget",
        config.heuristic->name, config.budget, OutcomeName(c.run->outcome)));
  c.frontier = FrontierAtOom(trace, config);
  ClassifyOptions o = options;
  o.witness.runtime = config.runtime;
  auto& hs = o.witness.heuristics;
  // The witness heuristics' default (DTR) holds beside the heuristic explained.
  if (hs.empty()) hs.push_back(&FindHeuristic("DTR"));
  hs.erase(std::remove(hs.begin(), hs.end(), config.heuristic), hs.end());
  hs.insert(hs.begin(), config.heuristic);
  const Step& failing = trace.program[c.run->oom->program_step];
  OpId focus = failing.kind == StepKind::kCompute ? failing.target : -1;
  Classifier(trace, baseline, o, progress).Classify(c, Verdict::kPolicyInduced, focus);
  return c;
}

Classification ProveBudget(const Trace& trace, const Baseline& baseline, int64_t budget,
                           const ClassifyOptions& options, const ClassifyProgress& progress) {
  if (budget < 0) throw Error("the budget must not be negative");
  Classification c;
  c.budget = budget;
  Classifier(trace, baseline, options, progress).Classify(c, Verdict::kFeasible, -1);
  return c;
}

}  // namespace dtr
