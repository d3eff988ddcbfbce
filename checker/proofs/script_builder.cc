#include "checker/proofs/script_builder.h"

#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "checker/engine/engine.h"
#include "model/error.h"

namespace dtr {

namespace {

constexpr int32_t kNever = std::numeric_limits<int32_t>::max();

class Builder {
 public:
  Builder(const Trace& trace, const ScriptBuilderOptions& o)
      : trace_(trace), o_(o), uses_(trace.storages.size()) {
    // Program steps at which each storage is needed: as an argument of a
    // model computation, or by a pin.
    for (int32_t step = 0; step < static_cast<int32_t>(trace.program.size()); ++step) {
      const Step& st = trace.program[step];
      if (st.kind == StepKind::kCompute) {
        for (TensorId a : trace.ops[st.target].args)
          uses_[trace.tensors[a].storage].push_back(step);
      } else if (st.kind == StepKind::kPin) {
        uses_[trace.tensors[st.target].storage].push_back(step);
      }
    }
    last_compute_step_ = -1;
    for (int32_t step = 0; step < static_cast<int32_t>(trace.program.size()); ++step)
      if (trace.program[step].kind == StepKind::kCompute) last_compute_step_ = step;
    if (o.plan) {
      if (o.plan->answer != SolverAnswer::kSat)
        throw Error("BuildScript: the plan is not a SAT plan");
      Follow(*o.plan);
    }
  }

  void Follow(const WindowPlan& plan) {
    plan_ = &plan;
    keep_.assign(plan.keep.size(), std::vector<uint8_t>(trace_.storages.size(), 0));
    for (size_t j = 0; j < plan.keep.size(); ++j)
      for (StorageId s : plan.keep[j]) keep_[j][s] = 1;
  }

  // Rolling plans: a new plan at the first computation of every stride-th operator.
  void MaybeReplan(const Engine& rt, BuiltScript& out) {
    if (o_.rolling_ops <= 0) return;
    const Step& st = trace_.program[rt.program_step()];
    if (st.kind != StepKind::kCompute || st.target < next_plan_op_) return;
    const OpId nops = static_cast<OpId>(trace_.ops.size());
    OpId first = st.target, last = std::min<OpId>(nops - 1, first + o_.rolling_ops - 1);
    next_plan_op_ = first + std::max(1, o_.rolling_stride);
    std::vector<uint8_t> entry(trace_.storages.size(), 0);
    for (StorageId s = 0; s < static_cast<StorageId>(entry.size()); ++s) entry[s] = rt.material(s);
    rolling_ = PlanWindow(trace_, {first, last}, o_.budget, entry, o_.limits);
    ++out.plans;
    if (rolling_.answer == SolverAnswer::kSat) {
      Follow(rolling_);
    } else {
      ++out.plans_failed;
      plan_ = nullptr;
    }
  }

  BuiltScript Run() {
    BuiltScript out;
    EngineOptions eo;
    eo.runtime = o_.eager ? RuntimeKind::kV2Eager : RuntimeKind::kV2;
    Engine rt(trace_, eo);
    size_t prefix_next = 0;
    while (rt.Advance()) {
      if (o_.stop_at_step >= 0 && rt.program_step() >= o_.stop_at_step) break;
      if (rt.event() >= o_.max_events) {
        out.stopped = fmt::format("gave up after {} computations", o_.max_events);
        break;
      }
      if (rt.event() < o_.prefix_events) {
        const auto& entries = o_.prefix->entries;
        while (prefix_next < entries.size() && entries[prefix_next].event == rt.event()) {
          StorageId s = entries[prefix_next++].storage;
          if (!rt.Evictable(s)) {
            out.stopped = fmt::format("prefix entry {} cannot be applied", prefix_next - 1);
            return Finish(rt, out);
          }
          Evict(rt, s, out);
        }
      } else {
        MaybeReplan(rt, out);
        Choose(rt, out);
      }
      if (rt.memory() + rt.request() > o_.budget) {
        out.stopped =
            fmt::format("computation {} does not fit: {} in use + {} requested > budget {}",
                        rt.event(), rt.memory(), rt.request(), o_.budget);
        return Finish(rt, out);
      }
      rt.Compute();
    }
    if (out.stopped.empty()) out.completed = true;
    return Finish(rt, out);
  }

 private:
  BuiltScript& Finish(const Engine& rt, BuiltScript& out) {
    out.peak_memory = rt.peak_memory();
    out.events = rt.event();
    return out;
  }

  void Evict(Engine& rt, StorageId s, BuiltScript& out) {
    rt.Evict(s);
    out.script.entries.push_back({rt.event(), s});
  }

  // The plan's time point for the current program step, or -1 outside the window.
  int32_t PlanPoint(const Engine& rt) const {
    if (!plan_) return -1;
    const Step& st = trace_.program[rt.program_step()];
    const OpWindow& w = plan_->window;
    if (st.kind == StepKind::kCompute && st.target >= w.first && st.target <= w.last)
      return st.target - w.first;
    if (st.kind == StepKind::kPin && plan_->reaches_end && rt.program_step() > last_compute_step_)
      return static_cast<int32_t>(plan_->keep.size()) - 1;
    return -1;
  }

  // Storages the rest of the current program step uses as arguments if
  // nothing more is evicted (the pending frames' and their recursion's).
  void MarkNeededNow(const Engine& rt) {
    needed_.assign(trace_.storages.size(), 0);
    Engine rest = rt;
    for (;;) {
      for (TensorId a : trace_.op_of(rest.tensor()).args) needed_[trace_.tensors[a].storage] = 1;
      for (const auto& f : rest.frames())
        for (TensorId a : trace_.op_of(f.tensor).args) needed_[trace_.tensors[a].storage] = 1;
      rest.Compute();
      if (rest.frames().empty() || !rest.Advance()) break;
    }
  }

  int32_t NextUse(StorageId s, int32_t step) const {
    const std::vector<int32_t>& u = uses_[s];
    auto it = std::upper_bound(u.begin(), u.end(), step);
    return it == u.end() ? kNever : *it;
  }

  void Choose(Engine& rt, BuiltScript& out) {
    const int32_t point = PlanPoint(rt);
    const bool tight = rt.memory() + rt.request() > o_.budget;
    if (point < 0 && !tight) return;
    MarkNeededNow(rt);
    const StorageId ns = static_cast<StorageId>(trace_.storages.size());
    if (point >= 0)
      for (StorageId s = 0; s < ns; ++s)
        if (rt.Evictable(s) && !keep_[point][s] && !needed_[s]) Evict(rt, s, out);
    if (rt.memory() + rt.request() <= o_.budget) return;
    struct Candidate {
      StorageId s;
      bool needed;
      int32_t next_use;
      int64_t size;
    };
    std::vector<Candidate> candidates;
    for (StorageId s = 0; s < ns; ++s)
      if (rt.Evictable(s))
        candidates.push_back(
            {s, needed_[s] != 0, NextUse(s, rt.program_step()), trace_.storages[s].size});
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      if (a.needed != b.needed) return !a.needed;
      if (a.next_use != b.next_use) return a.next_use > b.next_use;
      if (a.size != b.size) return a.size > b.size;
      return a.s < b.s;
    });
    for (const Candidate& c : candidates) {
      if (rt.memory() + rt.request() <= o_.budget) break;
      Evict(rt, c.s, out);
    }
  }

  const Trace& trace_;
  const ScriptBuilderOptions& o_;
  std::vector<std::vector<int32_t>> uses_;
  const WindowPlan* plan_ = nullptr;  // the plan followed now
  WindowPlan rolling_;
  OpId next_plan_op_ = 0;
  std::vector<std::vector<uint8_t>> keep_;
  std::vector<uint8_t> needed_;
  int32_t last_compute_step_ = -1;
};

}  // namespace

BuiltScript BuildScript(const Trace& trace, const ScriptBuilderOptions& options) {
  if (options.prefix_events > 0 && !options.prefix)
    throw Error("BuildScript: prefix_events without a prefix");
  return Builder(trace, options).Run();
}

}  // namespace dtr
