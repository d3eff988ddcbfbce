#include "diagnose/checkpoint_plan.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "checker/engine.h"
#include "checker/eviction_policy.h"
#include "checker/memory_bound.h"
#include "checker/schedule_checker.h"
#include "model/attribution.h"
#include "model/error.h"

namespace dtr {

namespace {

// Whether `outer` is `inner` or one of its ancestors in the module tree.
bool Encloses(const std::string& outer, const std::string& inner) {
  return inner.size() >= outer.size() && inner.compare(0, outer.size(), outer) == 0 &&
         (inner.size() == outer.size() || inner[outer.size()] == '.');
}

// Evicts each chosen module's internal storages at the first computation
// point after its last forward operator, and writes down what it evicted as
// an eviction script. Never frees on demand: it runs with no budget.
class CheckpointEvictions : public EvictionPolicy {
 public:
  // `modules` sorted by last_step; pointers must outlive the policy.
  explicit CheckpointEvictions(std::vector<const CheckpointCandidate*> modules)
      : modules_(std::move(modules)), freed_(modules_.size(), 0) {}

  bool Prepare(Engine& engine) override {
    for (; next_ < modules_.size() && engine.program_step() > modules_[next_]->last_step; ++next_) {
      for (StorageId s : modules_[next_]->internal) {
        if (!engine.Evictable(s)) continue;  // freed already, pinned or locked
        script_.entries.push_back({engine.event(), s});
        freed_[next_] += engine.trace().storages[s].size;
        engine.Evict(s);
      }
    }
    return true;
  }
  bool frees_on_demand() const override { return false; }
  StorageId Choose(Engine&, DecisionPoint*) override { return -1; }  // never asked

  EvictionScript script_;
  std::vector<const CheckpointCandidate*> modules_;
  std::vector<int64_t> freed_;

 private:
  size_t next_ = 0;
};

}  // namespace

const char* PlanVerdictName(PlanVerdict v) {
  switch (v) {
    case PlanVerdict::kFits: return "fits";
    case PlanVerdict::kBelowFloor: return "below-floor";
    case PlanVerdict::kBestReached: return "best-reached";
  }
  return "";
}

std::vector<CheckpointCandidate> CheckpointCandidates(const Trace& trace) {
  const Attribution* a = trace.attribution.get();
  const std::string needs =
      "plan needs a captured trace with module attribution (MODULE and PHASE keys: "
      "python -m dtrcheck.capture, docs/trace_format.md)";
  if (!a) throw Error(fmt::format("{}: {} has none", needs, trace.source));

  // Forward operators in program (= id) order, and each one's position.
  std::vector<OpId> forward;
  std::vector<int32_t> position(trace.ops.size(), -1);
  for (OpId op = 0; op < static_cast<OpId>(trace.ops.size()); ++op) {
    if (trace.ops[op].is_constant || a->op_phase[op] != Phase::kForward) continue;
    position[op] = static_cast<int32_t>(forward.size());
    forward.push_back(op);
  }
  std::vector<int32_t> step_of(trace.ops.size(), 0);
  for (int32_t i = 0; i < static_cast<int32_t>(trace.program.size()); ++i)
    if (trace.program[i].kind == StepKind::kCompute) step_of[trace.program[i].target] = i;

  struct Span {
    int32_t first = 0, last = 0, count = 0;
  };
  std::map<std::string, Span> spans;  // by path: its forward operators' positions
  for (int32_t p = 0; p < static_cast<int32_t>(forward.size()); ++p) {
    const int32_t m = a->op_module[forward[p]];
    if (m < 0) continue;
    const std::string& path = a->modules[m];
    for (size_t end = 0; end != std::string::npos && !path.empty();) {
      end = path.find('.', end + 1);
      const std::string prefix = path.substr(0, end);
      auto [it, added] = spans.try_emplace(prefix, Span{p, p, 0});
      it->second.last = p;
      ++it->second.count;
    }
  }
  if (spans.empty())
    throw Error(fmt::format("{}: {} has no forward operator of a named module", needs,
                            trace.source));

  // With ENTER keys, a candidate is a module called exactly once, its call
  // starting at its first forward operator: wrapping a module called twice
  // checkpoints both calls, and one never called (a ModuleList) cannot be
  // wrapped at all. Without them, one contiguous run is the best evidence.
  std::map<std::string, std::vector<OpId>> calls;
  for (const Attribution::ModuleCall& call : a->module_calls)
    calls[a->modules[call.module]].push_back(call.first_op);

  std::vector<CheckpointCandidate> out;
  for (const auto& [path, span] : spans) {
    if (span.last - span.first + 1 != span.count) continue;  // not one module call
    if (!a->module_calls.empty()) {
      auto it = calls.find(path);
      if (it == calls.end() || it->second.size() != 1 || it->second[0] != forward[span.first])
        continue;
    }
    CheckpointCandidate c;
    c.module = path;
    c.first_op = forward[span.first];
    c.last_op = forward[span.last];
    c.forward_ops = span.count;
    c.last_step = step_of[c.last_op];
    for (OpId op = c.first_op; op <= c.last_op; ++op) {
      if (position[op] < 0) continue;
      const Operator& o = trace.ops[op];
      for (TensorId t = o.first_output; t < o.first_output + o.num_outputs; ++t) {
        if (trace.tensors[t].is_alias) continue;
        const StorageId s = trace.tensors[t].storage;
        if (trace.storages[s].size == 0) continue;
        bool read_outside = false;
        for (TensorId member : trace.storages[s].tensors) {
          for (TensorId child : trace.tensors[member].children) {
            const OpId reader = trace.tensors[child].op;
            if (a->op_phase[reader] == Phase::kForward &&
                (reader < c.first_op || reader > c.last_op))
              read_outside = true;
          }
        }
        if (!read_outside) c.internal.push_back(s);
      }
    }
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const CheckpointCandidate& x, const CheckpointCandidate& y) {
    if (x.first_op != y.first_op) return x.first_op < y.first_op;
    return x.module.size() < y.module.size();  // an ancestor first
  });
  return out;
}

CheckpointSimulation SimulateCheckpoints(const Trace& trace,
                                         const std::vector<CheckpointCandidate>& candidates,
                                         const std::vector<int32_t>& chosen) {
  std::vector<int32_t> order = chosen;
  std::sort(order.begin(), order.end(), [&](int32_t x, int32_t y) {
    return candidates[x].last_step < candidates[y].last_step;
  });
  std::vector<const CheckpointCandidate*> modules;
  for (int32_t i : order) modules.push_back(&candidates[i]);
  CheckpointEvictions policy(modules);
  EngineOptions options;
  options.runtime = RuntimeKind::kV2EagerOptimized;
  Engine engine(trace, options);
  Drive(engine, policy, nullptr);

  const ScheduleCheck check = CheckSchedule(trace, kInfiniteBudget, policy.script_);
  if (!check.passed())
    throw Error(fmt::format("checkpoint simulation: the schedule checker refused its script: {}",
                            DescribeScheduleCheck(check)));
  CheckpointSimulation sim;
  sim.script = std::move(policy.script_);
  sim.freed.assign(chosen.size(), 0);
  for (size_t k = 0; k < chosen.size(); ++k)
    for (size_t j = 0; j < order.size(); ++j)
      if (order[j] == chosen[k]) sim.freed[k] = policy.freed_[j];
  sim.peak = check.run.max_memory;
  sim.clock = check.run.clock;
  return sim;
}

CheckpointPlan PlanCheckpoints(const Trace& trace, int64_t budget) {
  const std::vector<CheckpointCandidate> candidates = CheckpointCandidates(trace);
  CheckpointPlan plan;
  plan.budget = budget;
  plan.baseline = ComputeBaseline(trace);
  const MemoryBound bound = ComputeMemoryBound(trace);
  plan.floor = bound.bytes;
  plan.final_pinned = bound.final_pinned;
  plan.candidates = static_cast<int32_t>(candidates.size());

  std::vector<int32_t> chosen;
  CheckpointSimulation current = SimulateCheckpoints(trace, candidates, chosen);
  plan.unplanned_peak = current.peak;
  plan.unplanned_clock = current.clock;
  if (budget < plan.floor) {
    plan.verdict = PlanVerdict::kBelowFloor;
  } else {
    while (current.peak > budget) {
      int32_t best = -1;
      CheckpointSimulation best_sim;
      __int128 best_drop = 0, best_cost = 1;
      for (int32_t i = 0; i < static_cast<int32_t>(candidates.size()); ++i) {
        if (candidates[i].internal.empty()) continue;
        // Inside a chosen module: nothing to add. Around chosen modules: it
        // replaces them (torch.utils.checkpoint of the outer call).
        bool inside = false;
        std::vector<int32_t> with;
        for (int32_t j : chosen) {
          if (Encloses(candidates[j].module, candidates[i].module)) inside = true;
          if (!Encloses(candidates[i].module, candidates[j].module)) with.push_back(j);
        }
        if (inside) continue;
        with.push_back(i);
        CheckpointSimulation sim = SimulateCheckpoints(trace, candidates, with);
        if (sim.peak >= current.peak) continue;
        const __int128 drop = current.peak - sim.peak;
        const __int128 cost = std::max<int64_t>(1, sim.clock - current.clock);
        // Among candidates that reach the budget, the least added clock;
        // else drop / cost > best_drop / best_cost. Ties: fewer operators,
        // then program order (candidates are visited in it).
        const bool reaches = sim.peak <= budget;
        const bool best_reaches = best >= 0 && best_sim.peak <= budget;
        const __int128 lhs = reaches ? best_cost : drop * best_cost;
        const __int128 rhs = reaches ? cost : best_drop * cost;
        if (best < 0 || (reaches && !best_reaches) ||
            (reaches == best_reaches &&
             (lhs > rhs ||
              (lhs == rhs && candidates[i].forward_ops < candidates[best].forward_ops)))) {
          best = i;
          best_sim = std::move(sim);
          best_drop = drop;
          best_cost = cost;
        }
      }
      if (best < 0) break;
      std::vector<int32_t> kept;
      for (int32_t j : chosen)
        if (!Encloses(candidates[best].module, candidates[j].module)) kept.push_back(j);
      kept.push_back(best);
      chosen = std::move(kept);
      current = std::move(best_sim);
    }
    plan.verdict = current.peak <= budget ? PlanVerdict::kFits : PlanVerdict::kBestReached;
    if (plan.verdict == PlanVerdict::kBestReached) {
      // One byte less stops the same run where it first reaches its peak.
      const ScheduleCheck at_peak = CheckSchedule(trace, current.peak - 1, current.script);
      if (at_peak.run.oom) {
        plan.peak_op = at_peak.run.oom->program_op;
        plan.peak_in_use = at_peak.run.oom->memory_usage;
        plan.peak_pinned = at_peak.run.oom->pinned_memory;
        plan.peak_request = at_peak.run.oom->request;
      }
    }
  }

  std::vector<size_t> by_program(chosen.size());
  for (size_t k = 0; k < chosen.size(); ++k) by_program[k] = k;
  std::sort(by_program.begin(), by_program.end(),
            [&](size_t x, size_t y) { return chosen[x] < chosen[y]; });
  for (size_t k : by_program) {
    const CheckpointCandidate& c = candidates[chosen[k]];
    int64_t forward_compute = 0;
    for (OpId op = c.first_op; op <= c.last_op; ++op)
      if (trace.attribution->op_phase[op] == Phase::kForward) forward_compute += trace.ops[op].compute;
    plan.modules.push_back({c.module, c.forward_ops, current.freed[k], forward_compute});
  }
  int64_t recompute = 0;
  for (const PlannedModule& m : plan.modules) recompute += m.forward_compute;
  plan.whole_module_overhead = Overhead(plan.baseline.compute + recompute, plan.baseline.compute);
  plan.predicted_peak = current.peak;
  plan.predicted_clock = current.clock;
  plan.predicted_overhead = Overhead(current.clock, plan.baseline.compute);
  plan.script = std::move(current.script);
  return plan;
}

}  // namespace dtr
