#include "diagnose/certificate_records.h"

#include <fmt/core.h>

#include "checker/proofs/cut_bound.h"
#include "checker/proofs/feasibility.h"
#include "checker/proofs/schedule_checker.h"

namespace dtr {

namespace {

std::string CutDescription(const Trace& t, const CutArgument& a) {
  if (a.kind == CutArgument::Kind::kCheckpoints)
    return fmt::format("checkpoints at {}: need {} + {} spans {} > budget {}", t.ops[a.op].name,
                       a.need, a.spans.size(), a.cut, a.budget);
  return fmt::format("{} at the frame of {}{}: need {} + kept {} + cut {} > budget {}",
                     CutKindName(a.kind), a.op == kFinalPins ? "the final pins" : t.ops[a.op].name,
                     a.previous >= 0 ? " after " + t.ops[a.previous].name : std::string(), a.need,
                     a.carried, a.cut, a.budget);
}

std::string Changed(bool schedule, int64_t peak, bool bound, int64_t bytes) {
  std::string out;
  if (schedule) out = fmt::format("schedule with peak {}", peak);
  if (bound) out += fmt::format("{}lower bound {}", out.empty() ? "" : ", ", bytes);
  return out;
}

// Drops the stored certificates `c` found refuted; what was dropped, for people.
std::string DropRefuted(CertificateStore& store, RuntimeKind runtime, bool schedule, bool bound) {
  const RuntimeCertificates* st = store.Find(runtime);
  if (!st) return "";
  std::string out;
  if (schedule && st->schedule) {
    const StoredSchedule s = *st->schedule;
    if (store.DropSchedule(runtime, s))
      out = fmt::format("dropped the schedule with peak {} (fails the checker there)", s.peak);
  }
  if (bound && st->bound) {
    const StoredBound b = *st->bound;
    if (store.DropBound(runtime, b))
      out += fmt::format("{}dropped the lower bound {} ({}: not confirmed)", out.empty() ? "" : "; ",
                         b.bytes, BoundArgumentName(b.argument));
  }
  return out;
}

std::string Joined(std::string a, const std::string& b) {
  if (a.empty()) return b;
  if (!b.empty()) a += "; " + b;
  return a;
}

// Whether the stored bound `b` holds: its argument refutes the budget just below it.
bool StoredBoundHolds(const Trace& trace, RuntimeKind runtime, const MemoryBound& static_bound,
                      const StoredBound& b, const SolverLimits& limits) {
  if (b.bytes <= static_bound.bytes) return true;
  switch (b.argument) {
    case BoundArgument::kStatic:
      return false;  // the static bound is recomputed: it is lower
    case BoundArgument::kCut: {
      CutArgument arg;
      return RefuteByCut(trace, static_bound, b.bytes - 1, CutOptionsFor(runtime), &arg);
    }
    case BoundArgument::kWindow:  // an unknown answer refutes nothing
      return QueryWindow(trace, b.window, b.bytes - 1, limits).answer != SolverAnswer::kSat;
  }
  return true;
}

}  // namespace

std::string RecordBounds(CertificateStore& store, const Trace& trace, RuntimeKind runtime,
                         const BoundsReport& r, const SolverLimits& limits) {
  bool schedule = false, bound = false;
  // Stored certificates better than this run's: checked, and dropped if wrong.
  bool bad_schedule = false, bad_bound = false;
  if (const RuntimeCertificates* st = store.Find(runtime)) {
    if (st->schedule && (!r.best || st->schedule->peak < r.best->budget))
      bad_schedule = !CheckSchedule(trace, st->schedule->peak, st->schedule->script, runtime).passed();
    if (st->bound && st->bound->bytes > r.proven_infeasible_below)
      bad_bound = !StoredBoundHolds(trace, runtime, r.static_bound, *st->bound, limits);
  }
  const std::string dropped = DropRefuted(store, runtime, bad_schedule, bad_bound);
  if (r.best && r.best->check.passed()) {
    StoredSchedule s;
    s.peak = r.best->budget;  // the budget at which its check passed
    s.source = r.best->source;
    s.description = r.best->description;
    s.found_by = "bounds";
    s.script = r.best->script;
    s.clock = r.best->check.run.clock;
    schedule = store.OfferSchedule(runtime, s);
  }
  StoredBound b;
  b.bytes = r.proven_infeasible_below;
  b.argument = r.lower_bound_argument;
  b.window = r.lower_bound_window;
  b.found_by = "bounds";
  switch (b.argument) {
    case BoundArgument::kStatic:
      b.description = "static bound";
      break;
    case BoundArgument::kCut:
      b.description = r.cut && r.cut->raised ? CutDescription(trace, r.cut->attained_by)
                                             : "keep-or-recompute cut";
      break;
    case BoundArgument::kWindow:
      b.description = fmt::format("Z3 window {}..{} unsat", b.window.first, b.window.last);
      break;
  }
  bound = store.OfferBound(runtime, b);
  return Joined(dropped, Changed(schedule, r.best ? r.best->budget : 0, bound, b.bytes));
}

std::string RecordClassification(CertificateStore& store, const Trace& trace, RuntimeKind runtime,
                                 const Classification& c, const std::string& command) {
  const std::string dropped =
      DropRefuted(store, runtime, c.stored_schedule_refuted, c.stored_bound_refuted);
  if (c.from_store) return dropped;
  bool schedule = false, bound = false;
  int64_t peak = 0;
  StoredBound b;
  if (c.witness_search.witness) {
    const Witness& w = *c.witness_search.witness;
    peak = w.check.run.max_memory;
    // The claim stored is about the peak itself: check it there.
    const ScheduleCheck check = CheckSchedule(trace, peak, w.script, runtime);
    if (check.passed()) {
      StoredSchedule s;
      s.clock = check.run.clock;
      s.peak = peak;
      s.source = w.source;
      s.description = w.description;
      s.found_by = command;
      s.script = w.script;
      schedule = store.OfferSchedule(runtime, s);
    }
  } else if (c.verdict == Verdict::kInherent && c.certificate) {
    const Certificate& cert = *c.certificate;
    b.found_by = command;
    switch (cert.kind) {
      case CertificateKind::kStaticBound:
        b.bytes = c.static_bound.bytes;
        b.argument = BoundArgument::kStatic;
        b.description = "static bound";
        break;
      case CertificateKind::kCut:
        b.bytes = c.budget + 1;
        b.argument = BoundArgument::kCut;
        b.description = CutDescription(trace, *cert.cut);
        break;
      case CertificateKind::kUnsatWindow:
        b.bytes = c.budget + 1;
        b.argument = BoundArgument::kWindow;
        b.window = cert.window->window;
        b.description = fmt::format("Z3 window {}..{} unsat at budget {}", b.window.first,
                                    b.window.last, c.budget);
        break;
      case CertificateKind::kScript:
        return dropped;
    }
    bound = store.OfferBound(runtime, b);
  }
  return Joined(dropped, Changed(schedule, peak, bound, b.bytes));
}

}  // namespace dtr
