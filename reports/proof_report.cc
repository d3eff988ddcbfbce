#include "reports/proof_report.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <sstream>

#include "diagnose/pinned_floor.h"
#include "model/attribution.h"
#include "reports/lower_bound_report.h"
#include "reports/number_format.h"
#include "reports/pinned_floor_report.h"

namespace dtr {

namespace {

using nlohmann::ordered_json;

std::string StorageName(const Trace& t, StorageId s) { return t.tensors[t.storages[s].root].name; }
std::string OpName(const Trace& t, TensorId x) { return t.op_of(x).name; }
// The operator of tensor x as people read it (model/attribution.h).
std::string OpLabel(const Trace& t, TensorId x, std::string_view detail = "") {
  return OperatorLabel(t, t.tensors[x].op, detail);
}
// "  module 0.conv, model.py:18" after a row of a table, or nothing.
std::string OriginColumn(const std::string& origin) { return origin.empty() ? "" : "  " + origin; }
double RatioOf(int64_t bytes, const Baseline& b) {
  return static_cast<double>(bytes) / static_cast<double>(b.memory);
}

ordered_json HeaderJson(const char* kind, const ProofHeader& h) {
  ordered_json j;
  j["kind"] = kind;
  j["log"] = h.log;
  j["baseline_memory"] = h.baseline.memory;
  j["heuristic"] = h.heuristic.empty() ? ordered_json(nullptr) : ordered_json(h.heuristic);
  j["runtime"] = std::string(RuntimeName(h.runtime));
  j["ratio"] = h.ratio ? ordered_json(h.ratio->value) : ordered_json(nullptr);
  j["budget"] = h.budget;
  return j;
}

void PrintHeader(std::ostream& out, const ProofHeader& h) {
  std::string who = h.heuristic.empty()
                        ? std::string(RuntimeName(h.runtime))
                        : fmt::format("{} on {}", h.heuristic, RuntimeName(h.runtime));
  std::string ratio = h.ratio ? fmt::format("ratio {}", h.ratio->text)
                              : fmt::format("ratio {:.6f}", RatioOf(h.budget, h.baseline));
  fmt::print(out, "{}  {}, budget {} bytes ({})\n", h.log, who, h.budget, ratio);
}

ordered_json NeedJson(const Trace& t, const OperatorNeed& n) {
  ordered_json j;
  if (n.op >= 0) {
    j["op"] = t.ops[n.op].name;
    AddOriginJson(j, t, n.op);
    j["program_step"] = n.program_step;
    j["pinned"] = n.pinned;
    j["arguments"] = n.arguments;
    j["request"] = n.request;
  } else {
    j["op"] = nullptr;
    j["final_pinned"] = n.pinned;
  }
  j["total"] = n.total();
  return j;
}

std::string NeedText(const Trace& t, const OperatorNeed& n) {
  if (n.op < 0)
    return fmt::format("the storages pinned at the end of the program ({} bytes)", n.pinned);
  return OperatorLabel(t, n.op,
                       fmt::format("pinned {} + arguments {} + outputs {}", n.pinned, n.arguments, n.request));
}

ordered_json QueryJson(const WindowQuery& q) {
  return {{"first_op", q.window.first},
          {"last_op", q.window.last},
          {"reaches_end", q.reaches_end},
          {"budget", q.budget},
          {"answer", SolverAnswerName(q.answer)},
          {"reason", q.reason},
          {"storages", q.storages}};
}

}  // namespace

// ---------------------------------------------------------------- frontier

ordered_json FrontierJson(const Trace& t, const ProofHeader& h, const RematFrontier& f) {
  ordered_json j = HeaderJson("frontier", h);
  j.update(FrontierFieldsJson(t, f));
  return j;
}

ordered_json FrontierFieldsJson(const Trace& t, const RematFrontier& f) {
  ordered_json j;
  j["at"] = f.at_oom ? "oom" : "decision";
  j["decision"] = f.decision ? ordered_json(*f.decision) : ordered_json(nullptr);
  j["event"] = f.event;
  j["program_step"] = f.program_step;
  j["program_op"] = OpName(t, f.frames.front().tensor);
  AddOriginJson(j, t, t.tensors[f.frames.front().tensor].op, "program_op_");
  j["tensor"] = t.tensors[f.frames.back().tensor].name;
  j["op"] = OpName(t, f.frames.back().tensor);
  AddOriginJson(j, t, t.tensors[f.frames.back().tensor].op);
  j["remat_depth"] = static_cast<int64_t>(f.frames.size()) - 1;
  j["memory_usage"] = f.memory_usage;
  j["pinned_memory"] = f.pinned_bytes;
  j["pinned_storages"] = f.pinned_storages;
  j["locked_memory"] = f.locked_bytes;
  j["locked_storages"] = f.locked.size();
  j["evictable_memory"] = f.evictable_bytes;
  j["evictable_storages"] = f.evictable_storages;
  j["request"] = f.request;
  j["floor"] = f.floor();
  j["excess"] = f.floor() - f.budget;
  j["peak_completion_need"] = f.peak_completion_need;
  j["peak_frame"] = f.peak_frame;
  j["doomed"] = f.doomed();
  j["holders_consistent"] = f.holders_consistent;
  ordered_json frames = ordered_json::array();
  for (const FrontierFrame& fr : f.frames) {
    ordered_json locks = ordered_json::array(), missing = ordered_json::array(),
                 args = ordered_json::array();
    for (StorageId s : fr.locks) locks.push_back(StorageName(t, s));
    for (const FrontierArg& a : fr.args)
      args.push_back({{"tensor", t.tensors[a.tensor].name},
                      {"storage", StorageName(t, a.storage)},
                      {"size", t.storages[a.storage].size},
                      {"state", std::string(ArgStateName(a.state))}});
    for (TensorId m : fr.missing) missing.push_back(t.tensors[m].name);
    ordered_json frame;
    frame["depth"] = fr.depth;
    frame["tensor"] = t.tensors[fr.tensor].name;
    frame["op"] = OpName(t, fr.tensor);
    AddOriginJson(frame, t, t.tensors[fr.tensor].op);
    frame["remat"] = fr.remat;
    frame["request"] = fr.request;
    frame["locks"] = locks;
    frame["new_locked_memory"] = fr.new_locked_bytes;
    frame["completion_need"] = fr.completion_need;
    frame["missing"] = missing;
    frame["args"] = args;
    frames.push_back(std::move(frame));
  }
  j["frames"] = frames;
  ordered_json locked = ordered_json::array();
  for (const LockedStorage& l : f.locked) {
    ordered_json one = {{"storage", StorageName(t, l.storage)}, {"size", l.size}, {"holders", l.holders}};
    AddRoleJson(one, t, l.storage);
    AddOriginJson(one, t, t.tensors[t.storages[l.storage].root].op);
    locked.push_back(std::move(one));
  }
  j["locked"] = locked;
  j["evicted_region"] = {{"storages", f.evicted_region.size()}, {"memory", f.evicted_region_bytes}};
  j["region_border"] = {{"storages", f.region_border.size()}, {"memory", f.region_border_bytes}};
  j["predicted"] = {{"computations", f.predicted.size()}, {"peak_floor", f.predicted_peak_floor}};
  return j;
}

void PrintFrontierText(std::ostream& out, const Trace& t, const ProofHeader& h,
                       const RematFrontier& f) {
  PrintHeader(out, h);
  const FrontierFrame& inner = f.frames.back();
  if (f.at_oom)
    fmt::print(out, "frontier at the OOM: computation {} of the run, program step {} ({})\n",
               f.event, f.program_step, OpLabel(t, f.frames.front().tensor));
  else
    fmt::print(out, "frontier at decision {}: computation {} of the run, program step {} ({})\n",
               *f.decision, f.event, f.program_step, OpLabel(t, f.frames.front().tensor));
  fmt::print(out,
             "  {} pending frames: the program operator and {} rematerializations below it; "
             "innermost {}\n",
             f.frames.size(), f.frames.size() - 1, OpLabel(t, inner.tensor, t.tensors[inner.tensor].name));
  fmt::print(out, "  {:>5}  {:<28} {:<10} {:>12} {:>14} {:>14}\n", "depth", "operator", "tensor",
             "request", "locks (new)", "completion need");
  size_t hidden = 0;
  for (size_t k = 0; k < f.frames.size(); ++k) {
    const FrontierFrame& fr = f.frames[k];
    bool show =
        k == 0 || k + 1 == f.frames.size() || fr.new_locked_bytes > 0 || fr.depth == f.peak_frame;
    if (!show) {
      ++hidden;
      continue;
    }
    if (hidden)
      fmt::print(out, "  {:>5}  ({} frame{} locking nothing new)\n", "...", hidden, hidden == 1 ? "" : "s");
    hidden = 0;
    fmt::print(out, "  {:>5}  {:<28} {:<10} {:>12} {:>14} {:>14}{}\n", fr.depth, OpName(t, fr.tensor),
               t.tensors[fr.tensor].name, fr.request, fr.new_locked_bytes, fr.completion_need,
               OriginColumn(OperatorOrigin(t, t.tensors[fr.tensor].op)));
  }
  fmt::print(out, "  locked storages: {} ({} bytes)\n", f.locked.size(), f.locked_bytes);
  constexpr size_t kShownLocked = 12;
  for (size_t i = 0; i < f.locked.size(); ++i) {
    const LockedStorage& l = f.locked[i];
    if (i == kShownLocked) {
      int64_t rest = 0;
      for (size_t k = i; k < f.locked.size(); ++k) rest += f.locked[k].size;
      fmt::print(out, "    ... {} more ({} bytes; --json lists all)\n", f.locked.size() - i, rest);
      break;
    }
    std::string holders;
    for (int32_t d : l.holders) holders += (holders.empty() ? "" : ", ") + std::to_string(d);
    fmt::print(out, "    {:<10} {:>12} bytes  held by frame{} {}{}\n", StorageName(t, l.storage),
               l.size, l.holders.size() == 1 ? "" : "s", holders,
               OriginColumn(StorageOrigin(t, l.storage)));
  }
  fmt::print(out, "  arithmetic:\n");
  fmt::print(out, "      pinned   {:>14}  ({} storages)\n", f.pinned_bytes, f.pinned_storages);
  fmt::print(out, "    + locked   {:>14}  ({} storages)\n", f.locked_bytes, f.locked.size());
  fmt::print(out, "    + request  {:>14}  ({})\n", f.request, OpLabel(t, inner.tensor));
  int64_t floor = f.floor();
  fmt::print(out, "    = floor    {:>14}  {} budget {}{}\n", floor,
             floor > f.budget ? ">" : "<=", f.budget,
             floor > f.budget ? fmt::format(" by {}", floor - f.budget) : "");
  fmt::print(out, "    evictable  {:>14}  ({} storages){}\n", f.evictable_bytes,
             f.evictable_storages, f.evictable_bytes == 0 ? ": nothing left to evict" : "");
  if (f.doomed())
    fmt::print(out,
               "  doomed: frame {} needs {} bytes to complete (pinned, outer frames' locks, its "
               "arguments and "
               "request) > budget; no eviction from this state can fit\n",
               f.peak_frame, f.peak_completion_need);
  else
    fmt::print(out,
               "  every pending frame can still complete within the budget (largest completion "
               "need {} at frame "
               "{})\n",
               f.peak_completion_need, f.peak_frame);
  fmt::print(out,
             "  still to materialize: {} evicted storages ({} bytes) behind the missing arguments, "
             "bordered by {} "
             "material storages ({} bytes)\n",
             f.evicted_region.size(), f.evicted_region_bytes, f.region_border.size(),
             f.region_border_bytes);
  fmt::print(out,
             "  rest of the recursion if nothing more is evicted: {} computations, peak floor {}\n",
             f.predicted.size(), f.predicted_peak_floor);
  if (!f.holders_consistent)
    fmt::print(out, "  note: the frames' locks do not add up to the runtime's lock counts\n");
}

// ---------------------------------------------------------------- check

ordered_json ScheduleCheckJson(const Trace& t, const ProofHeader& h, const std::string& path,
                               size_t entries, const ScheduleCheck& c) {
  ordered_json j = HeaderJson("check", h);
  const RunResult& r = c.run;
  j["script"] = path;
  j["entries"] = entries;
  j["result"] = std::string(OutcomeName(c.outcome));
  j["max_memory"] = r.max_memory;
  j["events"] = r.events;
  j["clock"] = r.clock;
  j["remat_compute"] = r.remat_compute;
  j["scripted_evictions"] = r.heuristic_evictions;
  j["eager_evictions"] = r.eager_evictions;
  if (r.script_failure)
    j["failure"] = {{"entry", r.script_failure->entry < 0 ? ordered_json(nullptr)
                                                          : ordered_json(r.script_failure->entry)},
                    {"event", r.script_failure->event},
                    {"reason", r.script_failure->reason}};
  else
    j["failure"] = nullptr;
  if (r.oom) {
    ordered_json oom;
    oom["op"] = r.oom->op;
    AddOriginJson(oom, t, FindOperator(t, r.oom->op));
    oom["tensor"] = r.oom->tensor;
    oom["request"] = r.oom->request;
    oom["memory_usage"] = r.oom->memory_usage;
    oom["pinned_memory"] = r.oom->pinned_memory;
    oom["locked_memory"] = r.oom->locked_memory;
    oom["remat_depth"] = r.oom->remat_depth;
    oom["program_op"] = r.oom->program_op;
    AddOriginJson(oom, t, FindOperator(t, r.oom->program_op), "program_op_");
    j["oom"] = std::move(oom);
  }
  return j;
}

void PrintScheduleCheckText(std::ostream& out, const Trace& t, const ProofHeader& h,
                            const std::string& path, size_t entries, const ScheduleCheck& c) {
  PrintHeader(out, h);
  const RunResult& r = c.run;
  fmt::print(out, "  script      {} ({} evictions)\n", path, entries);
  fmt::print(out, "  result      {}\n", DescribeScheduleCheck(c));
  fmt::print(out,
             "  replayed    {} computations, clock {}, remat compute {}, {} scripted + {} eager "
             "evictions\n",
             r.events, r.clock, r.remat_compute, r.heuristic_evictions, r.eager_evictions);
  if (r.oom)
    fmt::print(
        out,
        "  at the failure: {} requests {} with {} in use (pinned {}, locked {}), {} pending "
        "rematerializations\n",
        OperatorLabel(t, r.oom->op, r.oom->tensor), r.oom->request, r.oom->memory_usage,
        r.oom->pinned_memory, r.oom->locked_memory, r.oom->remat_depth);
}

// ---------------------------------------------------------------- explain / prove

ordered_json CertificateJson(const Trace& t, const Certificate& c) {
  ordered_json j;
  j["type"] = std::string(CertificateKindName(c.kind));
  j["budget"] = c.budget;
  j["checked_by"] = std::string(CheckedByName(c.checked_by));
  j["checked"] = c.Holds();
  switch (c.kind) {
    case CertificateKind::kScript: {
      const Witness& w = *c.script;
      j["source"] = w.source;
      j["description"] = w.description;
      j["entries"] = w.script.entries.size();
      j["check"] = {{"budget", w.check.budget},
                    {"result", std::string(OutcomeName(w.check.outcome))},
                    {"max_memory", w.check.run.max_memory},
                    {"events", w.check.run.events},
                    {"clock", w.check.run.clock}};
      break;
    }
    case CertificateKind::kStaticBound:
      j["bound"] = c.bound;
      j["need"] = NeedJson(t, c.need);
      break;
    case CertificateKind::kUnsatWindow:
      j["window"] = QueryJson(*c.window);
      break;
    case CertificateKind::kCut:
      j["argument"] = CutArgumentJson(t, *c.cut);
      break;
  }
  return j;
}

namespace {

// The verdict fields of ClassificationJson, with the frontier (if any) right
// after the run's.
void WriteVerdictFields(ordered_json& j, const Trace& t, const Baseline& baseline,
                        const Classification& c, bool with_frontier) {
  j["verdict"] = std::string(VerdictName(c.verdict));
  if (c.run) {
    j["result"] = std::string(OutcomeName(c.run->outcome));
    j["oom_event"] = c.run->oom ? ordered_json(c.run->oom->event) : ordered_json(nullptr);
  }
  if (with_frontier && c.frontier) j["frontier"] = FrontierFieldsJson(t, *c.frontier);
  j["certificate"] = c.certificate ? CertificateJson(t, *c.certificate) : ordered_json(nullptr);
  if (c.certificate) j["certificate"]["from_store"] = c.from_store;
  j["store_notes"] = c.store_notes;
  j["static_bound"] = {{"bytes", c.static_bound.bytes},
                       {"ratio", RatioOf(c.static_bound.bytes, baseline)},
                       {"attained_by", NeedJson(t, c.static_bound.attained_by)}};
  if (c.static_bound.attained_by.op < 0)
    if (std::optional<PinnedFloor> floor = ExplainPinnedFloor(t))
      j["static_bound"]["pinned_floor"] = PinnedFloorJson(t, *floor, baseline);
  ordered_json attempts = ordered_json::array();
  for (const WitnessAttempt& a : c.witness_search.attempts)
    attempts.push_back(
        {{"source", a.source}, {"description", a.description}, {"outcome", a.outcome}});
  j["witness_attempts"] = attempts;
  ordered_json windows = ordered_json::array();
  for (const WindowQuery& q : c.window_queries) windows.push_back(QueryJson(q));
  j["windows"] = windows;
  j["notes"] = c.witness_search.notes;
}

}  // namespace

ordered_json ClassificationJson(const Trace& t, const ProofHeader& h, const std::string& kind,
                                const Classification& c) {
  ordered_json j = HeaderJson(kind.c_str(), h);
  WriteVerdictFields(j, t, h.baseline, c, true);
  return j;
}

ordered_json VerdictFieldsJson(const Trace& t, const Baseline& baseline, const Classification& c) {
  ordered_json j;
  WriteVerdictFields(j, t, baseline, c, false);
  return j;
}

void PrintClassificationText(std::ostream& out, const Trace& t, const ProofHeader& h,
                             const Classification& c, bool verbose) {
  if (c.frontier) {
    PrintFrontierText(out, t, h, *c.frontier);
  } else {
    PrintHeader(out, h);
  }
  PrintVerdictText(out, t, h, c, verbose);
}

void PrintCertificateText(std::ostream& out, const Trace& t, const Certificate& c) {
  switch (c.kind) {
    case CertificateKind::kScript: {
      const Witness& w = *c.script;
      fmt::print(out, "  certificate: a script of {} evictions from {}: {}\n",
                 w.script.entries.size(), w.source, w.description);
      fmt::print(out, "  schedule checker at budget {}: {}\n", w.check.budget,
                 DescribeScheduleCheck(w.check));
      break;
    }
    case CertificateKind::kStaticBound:
      fmt::print(out,
                 "  certificate: static bound {} bytes > budget: {} needs it whatever is evicted\n",
                 c.bound, NeedText(t, c.need));
      break;
    case CertificateKind::kUnsatWindow: {
      const WindowQuery& q = *c.window;
      fmt::print(out,
                 "  certificate: Z3 finds no execution of operators {}..{} ({} .. {}) within the "
                 "budget (unsat in "
                 "{:.1f}s, {} storages tracked); the encoding over-approximates every schedule\n",
                 q.window.first, q.window.last, OperatorLabel(t, q.window.first),
                 OperatorLabel(t, q.window.last), q.seconds, q.storages);
      break;
    }
    case CertificateKind::kCut:
      fmt::print(out, "  certificate: {}\n", CutArgumentText(t, *c.cut));
      break;
  }
}

std::string CertificateLine(const Trace& t, const Certificate& c) {
  std::ostringstream text;
  PrintCertificateText(text, t, c);
  std::string out, line;
  std::istringstream in(text.str());
  while (std::getline(in, line)) {
    size_t b = line.find_first_not_of(' ');
    if (b != std::string::npos) out += (out.empty() ? "" : "; ") + line.substr(b);
  }
  return out;
}

std::string UndeterminedLine(const Classification& c) {
  int unknown = 0;
  for (const WindowQuery& q : c.window_queries) unknown += q.answer == SolverAnswer::kUnknown;
  return fmt::format(
      "no verified script and no proof: {} witness attempts failed, {} Z3 windows were sat "
      "(the relaxation fits) and {} hit a limit",
      c.witness_search.attempts.size(), c.window_queries.size() - unknown, unknown);
}

void PrintVerdictText(std::ostream& out, const Trace& t, const ProofHeader& h,
                      const Classification& c, bool verbose) {
  fmt::print(out, "verdict: {}\n", VerdictName(c.verdict));
  if (c.verdict == Verdict::kPolicyInduced)
    fmt::print(out,
               "  the heuristic ran out of memory, but an eviction script fits this budget:\n");
  if (c.certificate)
    PrintCertificateText(out, t, *c.certificate);
  else
    fmt::print(out, "  {}\n", UndeterminedLine(c));
  if (c.from_store)
    fmt::print(out, "  (the certificate comes from the certificate store, checked again at this "
                    "budget)\n");
  for (const std::string& n : c.store_notes) fmt::print(out, "  store: {}\n", n);
  fmt::print(out, "  static bound: {} bytes (ratio {:.6f}), attained by {}\n", c.static_bound.bytes,
             RatioOf(c.static_bound.bytes, h.baseline), NeedText(t, c.static_bound.attained_by));
  if (c.static_bound.attained_by.op < 0)
    if (std::optional<PinnedFloor> floor = ExplainPinnedFloor(t))
      fmt::print(out, "  pinned at the end: {}; DTR evicts only the rest (dtrcheck info names the largest)\n",
                 PinnedFloorLine(*floor));
  for (const std::string& n : c.witness_search.notes) fmt::print(out, "  note: {}\n", n);
  if (verbose) {
    fmt::print(out, "  witness attempts:\n");
    for (const WitnessAttempt& a : c.witness_search.attempts)
      fmt::print(out, "    {}: {} -> {}\n", a.source, a.description, a.outcome);
    for (const WindowQuery& q : c.window_queries)
      fmt::print(out, "    Z3 window {}..{} ({} storages): {} after Z3 work {}, {:.1f}s{}\n",
                 q.window.first, q.window.last, q.storages, SolverAnswerName(q.answer),
                 GroupedInt(static_cast<int64_t>(q.work)), q.seconds,
                 q.reason.empty() ? "" : " (" + q.reason + ")");
  } else if (!c.witness_search.attempts.empty() || !c.window_queries.empty()) {
    fmt::print(out, "  ({} witness attempts, {} Z3 windows; --verbose lists them)\n",
               c.witness_search.attempts.size(), c.window_queries.size());
  }
}

// ---------------------------------------------------------------- bounds

namespace {

// The checkpoint plans of `bounds` (diagnose/schedule_search.h).
ordered_json PlanSearchJson(const ProofHeader& h, const std::optional<ScheduleSearch>& p) {
  if (!p) return nullptr;
  ordered_json best = nullptr;
  if (p->best) {
    const PlannedSchedule& b = *p->best;
    const PeakState& at = b.at_peak;
    best = {{"peak", b.peak},
            {"ratio", RatioOf(b.peak, h.baseline)},
            {"overhead", b.overhead},
            {"description", b.description},
            {"at_peak",
             {{"program_step", at.program_step},
              {"frames", at.frames},
              {"request", at.request},
              {"pinned", at.pinned},
              {"locked", at.locked},
              {"needed", at.needed},
              {"retained", at.retained}}}};
  }
  return {{"timed_out", p->timed_out},
          {"work", p->work},
          {"work_limited", p->work_limited},
          {"plans", p->attempts.size()},
          {"best", best}};
}

void PrintPlanSearchText(std::ostream& out, const ProofHeader& h,
                         const std::optional<ScheduleSearch>& p) {
  if (!p) return;
  // No seconds here (nor in --json): the output of a run bounded by counts
  // is the same on any machine and under any load.
  fmt::print(out, "  checkpoint plans: {} followed{}", p->attempts.size(),
             p->timed_out      ? " (stopped at the time limit)"
             : p->work_limited ? " (stopped at the work limit)"
                               : "");
  if (!p->best) {
    fmt::print(out, ", none completed\n");
    return;
  }
  const PlannedSchedule& b = *p->best;
  const PeakState& at = b.at_peak;
  auto r = [&](int64_t bytes) { return RatioOf(bytes, h.baseline); };
  fmt::print(out, "; lowest peak {} bytes = ratio {:.6f}, overhead {:.2f} ({})\n", b.peak, r(b.peak),
             b.overhead, b.description);
  fmt::print(out,
             "    at its peak (step {}, {} pending frames): pinned {:.6f} + locked {:.6f} + used "
             "later by the step {:.6f} + retained {:.6f} + request {:.6f}\n",
             at.program_step, at.frames, r(at.pinned), r(at.locked), r(at.needed), r(at.retained),
             r(at.request));
}

}  // namespace

ordered_json BoundsJson(const ProofHeader& h, const BoundsReport& r, const Trace* trace) {
  ordered_json j = HeaderJson("bounds", h);
  j.erase("ratio");
  j.erase("budget");
  j.erase("heuristic");
  j["grid"] = r.grid;
  j["fine_step"] = r.fine_step.empty() ? ordered_json(nullptr) : ordered_json(r.fine_step);
  ordered_json hs = ordered_json::array();
  for (const HeuristicBound& b : r.heuristics) {
    ordered_json above = ordered_json::array();
    for (const Ratio& x : b.oom_above) above.push_back(x.value);
    ordered_json stopped = ordered_json::array();
    for (const Ratio& x : b.stopped) stopped.push_back(x.value);
    hs.push_back(
        {{"heuristic", std::string(b.heuristic->name)},
         {"smallest_feasible_ratio",
          b.smallest_feasible ? ordered_json(b.smallest_feasible->value) : nullptr},
         {"budget", b.smallest_feasible ? ordered_json(b.smallest_feasible_budget) : nullptr},
         {"peak", b.smallest_feasible ? ordered_json(b.peak_there) : nullptr},
         {"oom_above", above},
         {"stopped", stopped},
         {"runs", b.runs},
         {"thrashed", b.thrashed},
         {"simrd_assertions", b.simrd_assertions},
         {"simrd_assertion",
          b.simrd_assertion_at ? ordered_json(fmt::format(
                                     "ratio {}: {}", b.simrd_assertion_at->text, b.simrd_assertion))
                               : ordered_json(nullptr)}});
  }
  j["heuristics"] = hs;
  auto schedule_json = [&](const std::optional<VerifiedSchedule>& v) -> ordered_json {
    if (!v) return nullptr;
    return {{"budget", v->budget},
            {"ratio", RatioOf(v->budget, h.baseline)},
            {"source", v->source},
            {"description", v->description},
            {"heuristic", v->heuristic ? ordered_json(std::string(v->heuristic->name)) : nullptr},
            {"run_ratio", v->heuristic ? ordered_json(v->ratio.value) : nullptr},
            {"asked_at", v->heuristic ? ordered_json(nullptr) : ordered_json(v->asked_at)},
            {"check", std::string(OutcomeName(v->check.outcome))}};
  };
  j["best_schedule"] = schedule_json(r.best);
  j["grid_best_schedule"] = schedule_json(r.grid_best);
  ordered_json steps = ordered_json::array();
  for (const WalkStep& s : r.walk)
    steps.push_back(
        {{"budget", s.budget},
         {"found", s.found},
         {"source", s.found ? ordered_json(s.source) : nullptr},
         {"description", s.found ? ordered_json(s.description) : nullptr},
         {"peak", s.found ? ordered_json(s.peak) : nullptr},
         {"attempts", s.attempts},
         {"last_outcome", s.found ? ordered_json(nullptr) : ordered_json(s.last_outcome)}});
  j["walk"] = {{"mode", std::string(WalkModeName(r.walk_mode))},
               {"timed_out", r.walk_timed_out},
               {"search_limited", r.walk_search_limited},
               {"skipped", r.walk_skipped},
               {"steps", steps}};
  j["plan_search"] = PlanSearchJson(h, r.plan_search);
  j["static_bound"] = {{"bytes", r.static_bound.bytes},
                       {"ratio", RatioOf(r.static_bound.bytes, h.baseline)}};
  j["lower_bound"] = {{"bytes", r.proven_infeasible_below},
                      {"ratio", RatioOf(r.proven_infeasible_below, h.baseline)},
                      {"argument", std::string(BoundArgumentName(r.lower_bound_argument))},
                      {"window", r.lower_bound_argument == BoundArgument::kWindow
                                     ? ordered_json{{"first_op", r.lower_bound_window.first},
                                                    {"last_op", r.lower_bound_window.last}}
                                     : ordered_json(nullptr)}};
  if (r.cut && trace)
    j["cut"] = CutBoundJson(*trace, *r.cut, h.baseline.memory);
  else if (r.cut)
    j["cut"] = {{"bytes", r.cut->bytes},
                {"tests", r.cut->tests},
                {"whole_walks", r.cut->whole_walks},
                {"timed_out", r.cut->timed_out}};
  else
    j["cut"] = nullptr;
  ordered_json ws = ordered_json::array();
  for (const WindowBound& w : r.windows)
    ws.push_back({{"first_op", w.window.first},
                  {"last_op", w.window.last},
                  {"infeasible_below", w.infeasible_below},
                  {"sat_from", w.sat_from},
                  {"queries", w.queries},
                  {"unknowns", w.unknowns},
                  {"skipped", w.skipped.empty() ? ordered_json(nullptr) : ordered_json(w.skipped)}});
  j["windows"] = ws;
  return j;
}

void PrintBoundsText(std::ostream& out, const ProofHeader& h, const BoundsReport& r,
                     const Trace* trace) {
  fmt::print(out, "{}  {}, baseline memory {} bytes\n", h.log, RuntimeName(h.runtime),
             h.baseline.memory);
  if (r.heuristics.empty()) {
    fmt::print(out, "grid: not run (checkpoint plans only)\n");
  } else {
    fmt::print(out, "grid: {} from the static bound up{}\n", r.grid,
               r.fine_step.empty()
                   ? ""
                   : fmt::format(", then step {} around each heuristic's first pass", r.fine_step));
    fmt::print(out, "{:<18} {:>17} {:>14} {:>14}  {}\n", "heuristic", "smallest feasible",
               "budget", "peak", "OOM above it (inversions)");
  }
  for (const HeuristicBound& b : r.heuristics) {
    std::string above;
    for (size_t i = 0; i < b.oom_above.size() && i < 6; ++i)
      above += (i ? " " : "") + b.oom_above[i].text;
    if (b.oom_above.size() > 6) above += fmt::format(" ... ({} in all)", b.oom_above.size());
    if (b.smallest_feasible)
      fmt::print(out, "{:<18} {:>17} {:>14} {:>14}  {}\n", b.heuristic->name,
                 b.smallest_feasible->text, b.smallest_feasible_budget, b.peak_there,
                 above.empty() ? "-" : above);
    else
      fmt::print(out, "{:<18} {:>17} {:>14} {:>14}  ({} runs{})\n", b.heuristic->name, "none", "-",
                 "-", b.runs, b.thrashed ? fmt::format(", {} thrashed", b.thrashed) : "");
    if (!b.stopped.empty())
      fmt::print(out,
                 "{:<18} {} of its runs stopped at --run-max-evals, unknown (ratios {} .. {}): "
                 "its smallest feasible ratio is of the runs that ended\n",
                 "", b.stopped.size(), b.stopped.front().text, b.stopped.back().text);
    if (b.simrd_assertion_at)
      fmt::print(out, "{:<18} {} of its runs stopped where simrd asserts (left out), from ratio {}: {}\n",
                 "", b.simrd_assertions, b.simrd_assertion_at->text, b.simrd_assertion);
  }
  auto describe = [&](const VerifiedSchedule& v) {
    if (v.heuristic) return fmt::format("{} at ratio {}", v.heuristic->name, v.ratio.text);
    if (v.source == "checkpoint plan")
      return fmt::format("checkpoint plan: {}, overhead {:.2f}", v.description,
                         Overhead(v.check.run.clock, h.baseline.compute));
    return fmt::format("walk-down, {}: {}, asked at budget {}", v.source, v.description,
                       v.asked_at);
  };
  if (r.best)
    fmt::print(out,
               "best verified schedule: {} bytes = ratio {:.6f} ({}; its script passes the "
               "checker at that budget)\n",
               r.best->budget, RatioOf(r.best->budget, h.baseline), describe(*r.best));
  else
    fmt::print(out, "best verified schedule: none (no run passed)\n");
  if (r.grid_best && r.walk.empty() && r.best && r.best->budget != r.grid_best->budget)
    fmt::print(out, "  best grid run:        {} bytes = ratio {:.6f} ({})\n", r.grid_best->budget,
               RatioOf(r.grid_best->budget, h.baseline), describe(*r.grid_best));
  if (r.walk_skipped)
    fmt::print(out,
               "  walk-down: skipped, a checkpoint plan is below the best grid run (the walk "
               "searches just below the run)\n");
  if (r.grid_best && !r.walk.empty()) {
    fmt::print(out, "  best grid run:        {} bytes = ratio {:.6f} ({})\n", r.grid_best->budget,
               RatioOf(r.grid_best->budget, h.baseline), describe(*r.grid_best));
    size_t found = 0;
    for (const WalkStep& s : r.walk) found += s.found;
    std::string stop;
    const WalkStep& last = r.walk.back();
    if (r.walk_timed_out)
      stop = "stopped at the time limit";
    else if (r.walk_search_limited)
      stop = "stopped at the limit of witness searches";
    else if (!last.found && r.walk_mode != WalkMode::kBisect)
      stop = "stopped: no script found one byte below the best";
    else if (r.walk_mode == WalkMode::kBisect)
      stop = "stopped: interval narrower than the resolution";
    else
      stop = "stopped: the best schedule meets the proven lower bound";
    fmt::print(out,
               "  walk-down ({}): {} witness searches, {} found a lower schedule, {:.1f}s; {}\n",
               WalkModeName(r.walk_mode), r.walk.size(), found, r.walk_seconds, stop);
    for (const WalkStep& s : r.walk) {
      if (s.found)
        fmt::print(out, "    budget {} (ratio {:.6f}): {} -> peak {} (ratio {:.6f}), {:.1f}s\n",
                   s.budget, RatioOf(s.budget, h.baseline), s.source, s.peak,
                   RatioOf(s.peak, h.baseline), s.seconds);
      else
        fmt::print(out, "    budget {} (ratio {:.6f}): none in {} attempts, {:.1f}s (last: {})\n",
                   s.budget, RatioOf(s.budget, h.baseline), s.attempts, s.seconds, s.last_outcome);
    }
  } else if (r.grid_best && r.walk_timed_out) {
    fmt::print(out, "  walk-down: no time left for a witness search\n");
  }
  PrintPlanSearchText(out, h, r.plan_search);
  fmt::print(out, "proven lower bound:     {} bytes = ratio {:.6f} (static bound {} = ratio {:.6f}",
             r.proven_infeasible_below, RatioOf(r.proven_infeasible_below, h.baseline),
             r.static_bound.bytes, RatioOf(r.static_bound.bytes, h.baseline));
  if (r.cut)
    fmt::print(out, "; keep-or-recompute cut {} = ratio {:.6f}", r.cut->bytes,
               RatioOf(r.cut->bytes, h.baseline));
  // Windows are bisected from the bound before them: only a window above it proves more.
  const int64_t before = std::max(r.static_bound.bytes, r.cut ? r.cut->bytes : int64_t{0});
  int64_t z3 = 0;
  for (const WindowBound& w : r.windows) z3 = std::max(z3, w.infeasible_below);
  if (!r.windows.empty()) {
    if (z3 > before)
      fmt::print(out, "; Z3 windows {} = ratio {:.6f}", z3, RatioOf(z3, h.baseline));
    else
      fmt::print(out, "; Z3 windows no higher");
  }
  fmt::print(out, ")\n");
  fmt::print(out, "  argument: {}\n",
             r.lower_bound_argument == BoundArgument::kWindow
                 ? fmt::format("Z3 window {}..{} (unsat below the bound)",
                               r.lower_bound_window.first, r.lower_bound_window.last)
             : r.lower_bound_argument == BoundArgument::kCut
                 ? std::string(r.cut && r.cut->attained_by.kind == CutArgument::Kind::kCheckpoints
                                   ? "keep-or-recompute cut (checkpoints)"
                                   : "keep-or-recompute cut")
                 : std::string("static bound"));
  if (r.cut) {
    fmt::print(out, "  cut: {} budgets tested, {} of them over the whole program{}{}\n",
               r.cut->tests, r.cut->whole_walks,
               r.cut->checkpoint_tests > 0
                   ? fmt::format(", {} with checkpoints alone", r.cut->checkpoint_tests)
                   : std::string(),
               r.cut->timed_out ? " (stopped at --cut-seconds: the bound proven so far)" : "");
    if (r.cut->raised && trace)
      fmt::print(out, "    at budget {}: {}\n", r.cut->attained_by.budget,
                 CutArgumentText(*trace, r.cut->attained_by));
  }
  for (const WindowBound& w : r.windows) {
    if (!w.skipped.empty()) {
      fmt::print(out, "  window {}..{}: skipped, {}\n", w.window.first, w.window.last, w.skipped);
      continue;
    }
    if (w.queries == 0) {
      fmt::print(out, "  window {}..{}: not asked (the bounds are closer than the resolution)\n",
                 w.window.first, w.window.last);
      continue;
    }
    fmt::print(out,
               "  window {}..{}: infeasible below {}, relaxation fits from {} ({} queries, {} "
               "unknown, {:.1f}s)\n",
               w.window.first, w.window.last, w.infeasible_below, w.sat_from, w.queries, w.unknowns,
               w.seconds);
  }
  if (r.best) {
    if (r.proven_infeasible_below >= r.best->budget)
      fmt::print(out, "gap: none: {} bytes (ratio {:.6f}) is the smallest budget any schedule fits\n",
                 r.best->budget, RatioOf(r.best->budget, h.baseline));
    else
      fmt::print(out, "gap: budgets in [{}, {}) (ratios {:.6f} .. {:.6f}) are undetermined\n",
                 r.proven_infeasible_below, r.best->budget,
                 RatioOf(r.proven_infeasible_below, h.baseline), RatioOf(r.best->budget, h.baseline));
    for (const HeuristicBound& b : r.heuristics)
      if (b.smallest_feasible)
        fmt::print(out,
                   "  {}: smallest feasible ratio {} is {:.6f} above the best verified schedule\n",
                   b.heuristic->name, b.smallest_feasible->text,
                   b.smallest_feasible->value - RatioOf(r.best->budget, h.baseline));
  }
}

}  // namespace dtr
