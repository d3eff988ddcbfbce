#include "diagnose/checkpoint_plan.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "checker/engine/engine.h"
#include "checker/engine/eviction_policy.h"
#include "checker/proofs/memory_bound.h"
#include "checker/proofs/schedule_checker.h"
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
// point after the forward is done with them, and writes down what it
// evicted as an eviction script. Never frees on demand: it runs with no
// budget. What the backward brings back of the modules' forward is freed
// again as soon as nothing needs it (no name holds it, no operator to come
// reads it, no computation has it locked), as torch frees the recomputed
// tensors; with no budget the runtime alone would keep them to the end.
class CheckpointEvictions : public EvictionPolicy {
 public:
  // Pointers must outlive the policy.
  CheckpointEvictions(const Trace& trace, const std::vector<const CheckpointCandidate*>& modules,
                      const std::vector<int32_t>& last_read_step)
      : freed_(modules.size(), 0) {
    for (size_t m = 0; m < modules.size(); ++m) {
      const CheckpointCandidate& c = *modules[m];
      for (size_t i = 0; i < c.internal.size(); ++i)
        due_.push_back({c.internal_free_step[i], c.internal[i], m});
      for (OpId op = c.first_op; op <= c.last_op; ++op) {
        const Operator& o = trace.ops[op];
        for (TensorId t = o.first_output; t < o.first_output + o.num_outputs; ++t) {
          const StorageId s = trace.tensors[t].storage;
          if (trace.tensors[t].is_alias || trace.storages[s].size == 0) continue;
          done_.push_back({last_read_step[s], s, m});
        }
      }
    }
    auto by_step = [](const Due& x, const Due& y) { return x.step < y.step; };
    std::stable_sort(due_.begin(), due_.end(), by_step);
    std::stable_sort(done_.begin(), done_.end(), by_step);
  }

  bool Prepare(Engine& engine) override {
    const int32_t step = engine.program_step();
    for (; next_due_ < due_.size() && step > due_[next_due_].step; ++next_due_) {
      const Due& d = due_[next_due_];
      if (!engine.Evictable(d.storage)) continue;  // freed already, pinned or locked
      freed_[d.module] += engine.trace().storages[d.storage].size;
      Evict(engine, d.storage);
    }
    for (; next_done_ < done_.size() && step > done_[next_done_].step; ++next_done_)
      finished_.push_back(done_[next_done_].storage);
    for (StorageId s : finished_)
      if (engine.Evictable(s) && engine.external_refs(s) == 0) Evict(engine, s);
    return true;
  }
  bool frees_on_demand() const override { return false; }
  StorageId Choose(Engine&, DecisionPoint*) override { return -1; }  // never asked

  EvictionScript script_;
  std::vector<int64_t> freed_;  // per module given: the checkpoint's own evictions

 private:
  struct Due {
    int32_t step;  // evicted at the first computation point after it
    StorageId storage;
    size_t module;
  };
  void Evict(Engine& engine, StorageId s) {
    script_.entries.push_back({engine.event(), s});
    engine.Evict(s);
  }

  std::vector<Due> due_;   // the checkpoints' evictions, by step
  std::vector<Due> done_;  // every storage of the modules' forward, by its last reader's step
  std::vector<StorageId> finished_;  // those past that step
  size_t next_due_ = 0, next_done_ = 0;
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
    for (OpId op = c.first_op; op <= c.last_op; ++op)
      if (position[op] >= 0) c.forward_compute += trace.ops[op].compute;
    for (OpId op = c.first_op; op <= c.last_op; ++op) {
      if (position[op] < 0) continue;
      const Operator& o = trace.ops[op];
      for (TensorId t = o.first_output; t < o.first_output + o.num_outputs; ++t) {
        if (trace.tensors[t].is_alias) continue;
        const StorageId s = trace.tensors[t].storage;
        if (trace.storages[s].size == 0) continue;
        // Internal: saved for the backward (read after the forward) and
        // read by no forward operator outside the module. One the backward
        // never reads is freed by the runtime once released, checkpoint or not.
        bool read_outside = false, read_later = false;
        int32_t free_step = step_of[op];
        for (TensorId member : trace.storages[s].tensors) {
          for (TensorId child : trace.tensors[member].children) {
            const OpId reader = trace.tensors[child].op;
            if (a->op_phase[reader] != Phase::kForward) {
              read_later = true;
              continue;
            }
            if (reader < c.first_op || reader > c.last_op) read_outside = true;
            free_step = std::max(free_step, step_of[reader]);
          }
        }
        if (read_later && !read_outside) {
          c.internal.push_back(s);
          c.internal_free_step.push_back(free_step);
        }
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
  std::vector<const CheckpointCandidate*> modules;
  for (int32_t i : chosen) modules.push_back(&candidates[i]);
  std::vector<int32_t> last_read_step(trace.storages.size(), -1);
  for (int32_t i = 0; i < static_cast<int32_t>(trace.program.size()); ++i) {
    const Step& st = trace.program[i];
    if (st.kind != StepKind::kCompute) continue;
    const Operator& o = trace.ops[st.target];
    for (TensorId arg : o.args) last_read_step[trace.tensors[arg].storage] = i;
  }
  CheckpointEvictions policy(trace, modules, last_read_step);
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
  sim.freed = std::move(policy.freed_);
  sim.peak = check.run.max_memory;
  sim.clock = check.run.clock;
  return sim;
}

namespace {

// What torch recomputes for a set of modules: each one's forward, once.
int64_t Recompute(const std::vector<CheckpointCandidate>& candidates, const std::vector<int32_t>& set) {
  int64_t sum = 0;
  for (int32_t j : set) sum += candidates[j].forward_compute;
  return sum;
}

struct Greedy {
  std::vector<int32_t> chosen;
  CheckpointSimulation sim;
};

// The greedy search from no module. With `reach_first`, a candidate that
// reaches the budget beats every one that does not (the least recompute among
// those); without, the best drop per unit of recompute is taken until the
// budget is reached.
Greedy GreedyPlan(const Trace& trace, const std::vector<CheckpointCandidate>& candidates,
                  int64_t budget, CheckpointSimulation start, bool reach_first) {
  std::vector<int32_t> chosen;
  CheckpointSimulation current = std::move(start);
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
      const __int128 cost = std::max<int64_t>(1, Recompute(candidates, with) - Recompute(candidates, chosen));
      // Among candidates that reach the budget (with reach_first), the least
      // added recompute; else drop / cost > best_drop / best_cost. Ties:
      // fewer operators, then program order (candidates are visited in it).
      const bool reaches = reach_first && sim.peak <= budget;
      const bool best_reaches = reach_first && best >= 0 && best_sim.peak <= budget;
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
  return {std::move(chosen), std::move(current)};
}

}  // namespace

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
    // Both rules; the plan that fits with the least recompute, else the lower peak.
    Greedy a = GreedyPlan(trace, candidates, budget, current, true);
    Greedy b = GreedyPlan(trace, candidates, budget, current, false);
    const bool a_fits = a.sim.peak <= budget, b_fits = b.sim.peak <= budget;
    const bool take_b = b_fits ? !a_fits || Recompute(candidates, b.chosen) < Recompute(candidates, a.chosen)
                               : !a_fits && b.sim.peak < a.sim.peak;
    Greedy& best = take_b ? b : a;
    chosen = std::move(best.chosen);
    current = std::move(best.sim);
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
    plan.modules.push_back({c.module, c.forward_ops, current.freed[k], c.forward_compute});
  }
  plan.predicted_peak = current.peak;
  plan.predicted_overhead =
      Overhead(plan.baseline.compute + Recompute(candidates, chosen), plan.baseline.compute);
  plan.simulated_clock = current.clock;
  plan.simulated_overhead = Overhead(current.clock, plan.baseline.compute);
  plan.script = std::move(current.script);
  return plan;
}

}  // namespace dtr
