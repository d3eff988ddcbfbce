#include "diagnose/certificate_records.h"

#include <fmt/core.h>

#include "checker/schedule_checker.h"

namespace dtr {

namespace {

std::string CutDescription(const Trace& t, const CutArgument& a) {
  return fmt::format("{} at the frame of {}{}: need {} + kept {} + cut {} > budget {}",
                     CutKindName(a.kind), t.ops[a.op].name,
                     a.previous >= 0 ? " after " + t.ops[a.previous].name : std::string(), a.need,
                     a.carried, a.cut, a.budget);
}

std::string Changed(bool schedule, int64_t peak, bool bound, int64_t bytes) {
  std::string out;
  if (schedule) out = fmt::format("schedule with peak {}", peak);
  if (bound) out += fmt::format("{}lower bound {}", out.empty() ? "" : ", ", bytes);
  return out;
}

}  // namespace

std::string RecordBounds(CertificateStore& store, const Trace& trace, RuntimeKind runtime,
                         const BoundsReport& r) {
  bool schedule = false, bound = false;
  if (r.best && r.best->check.passed()) {
    StoredSchedule s;
    s.peak = r.best->budget;  // the budget at which its check passed
    s.source = r.best->source;
    s.description = r.best->description;
    s.found_by = "bounds";
    s.script = r.best->script;
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
  return Changed(schedule, r.best ? r.best->budget : 0, bound, b.bytes);
}

std::string RecordClassification(CertificateStore& store, const Trace& trace, RuntimeKind runtime,
                                 const Classification& c, const std::string& command) {
  if (c.from_store) return "";
  bool schedule = false, bound = false;
  int64_t peak = 0;
  StoredBound b;
  if (c.witness_search.witness) {
    const Witness& w = *c.witness_search.witness;
    peak = w.check.run.max_memory;
    // The claim stored is about the peak itself: check it there.
    if (CheckSchedule(trace, peak, w.script, runtime).passed()) {
      StoredSchedule s;
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
        return "";
    }
    bound = store.OfferBound(runtime, b);
  }
  return Changed(schedule, peak, bound, b.bytes);
}

}  // namespace dtr
