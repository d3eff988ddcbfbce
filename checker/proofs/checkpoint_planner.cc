#include "checker/proofs/checkpoint_planner.h"

#include <fmt/core.h>

#include <algorithm>
#include <functional>
#include <queue>

#include "checker/engine/engine.h"
#include "model/error.h"

namespace dtr {

ProgramFacts::ProgramFacts(const Trace& trace)
    : uses_(trace.storages.size()),
      last_need_(trace.storages.size(), -1),
      release_(trace.storages.size(), kNoStep),
      created_(trace.storages.size(), -1),
      steps_(static_cast<int32_t>(trace.program.size())),
      compute_(trace.storages.size(), 0),
      constant_(trace.storages.size(), 0) {
  const StorageId ns = static_cast<StorageId>(trace.storages.size());
  std::vector<int32_t> refs(ns, 0);
  for (int32_t step = 0; step < static_cast<int32_t>(trace.program.size()); ++step) {
    const Step& st = trace.program[step];
    switch (st.kind) {
      case StepKind::kCompute: {
        const Operator& op = trace.ops[st.target];
        for (TensorId a : op.args) uses_[trace.tensors[a].storage].push_back(step);
        for (int32_t i = 0; i < op.num_outputs; ++i) {
          StorageId s = trace.tensors[op.first_output + i].storage;
          ++refs[s];
          release_[s] = kNoStep;
          if (created_[s] < 0) created_[s] = step;
        }
        break;
      }
      case StepKind::kGet: {
        StorageId s = trace.tensors[st.target].storage;
        ++refs[s];
        release_[s] = kNoStep;
        break;
      }
      case StepKind::kRelease: {
        StorageId s = trace.tensors[st.target].storage;
        if (--refs[s] == 0) release_[s] = step;
        break;
      }
      case StepKind::kPin:
        uses_[trace.tensors[st.target].storage].push_back(step);
        break;
    }
  }
  for (std::vector<int32_t>& u : uses_) u.erase(std::unique(u.begin(), u.end()), u.end());
  // Children are created after their parents: one pass backwards.
  for (StorageId s = ns - 1; s >= 0; --s) {
    last_need_[s] = last_use(s);
    for (const StorageEdge* e = trace.storage_children.begin(s); e != trace.storage_children.end(s);
         ++e)
      if (e->storage != s) last_need_[s] = std::max(last_need_[s], last_need_[e->storage]);
  }
  for (StorageId s = 0; s < ns; ++s) {
    const Operator& op = trace.op_of(trace.storages[s].root);
    compute_[s] = op.compute;
    constant_[s] = op.is_constant;
  }
  for (const Operator& op : trace.ops) total_compute_ += op.compute;
}

int32_t ProgramFacts::NextUseAfter(StorageId s, int32_t step) const {
  const std::vector<int32_t>& u = uses_[s];
  auto it = std::upper_bound(u.begin(), u.end(), step);
  return it == u.end() ? kNoStep : *it;
}

void RetentionPlan::Override(StorageId s, int32_t first, int32_t last, bool retain) {
  if (overrides.empty()) overrides.resize(keep_until.size());
  std::vector<RetentionOverride>& v = overrides[s];
  std::vector<RetentionOverride> out;
  for (const RetentionOverride& o : v) {
    if (o.last < first || o.first > last) {
      out.push_back(o);
      continue;
    }
    if (o.first < first) out.push_back({o.first, first - 1, o.retain});
    if (o.last > last) out.push_back({last + 1, o.last, o.retain});
  }
  out.push_back({first, last, retain});
  std::sort(out.begin(), out.end(), [](const RetentionOverride& a, const RetentionOverride& b) {
    return a.first < b.first;
  });
  v = std::move(out);
}

size_t RetentionPlan::override_count() const {
  size_t n = 0;
  for (const auto& v : overrides) n += v.size();
  return n;
}

RetentionPlan PlanRetainingNothing(const Trace& trace, int32_t horizon) {
  RetentionPlan p;
  p.keep_until.assign(trace.storages.size(), -1);
  p.horizon = horizon;
  p.description = fmt::format("retain nothing, horizon {}", horizon);
  return p;
}

RetentionPlan PlanByRecomputeCost(const Trace& trace, const ProgramFacts& facts,
                                  const CostRule& rule) {
  const StorageId ns = static_cast<StorageId>(trace.storages.size());
  RetentionPlan p;
  p.keep_until.assign(ns, -1);
  p.horizon = rule.horizon;
  p.description = fmt::format(
      "retain what costs more than {:.4g}{}{} of the compute to recompute ({}){}{}, horizon {}",
      rule.fraction, rule.tilt != 0 ? fmt::format(" (tilted by {})", rule.tilt) : std::string(),
      rule.hold_bytes > 0 ? fmt::format(" (held under {} bytes)", rule.hold_bytes) : std::string(),
      rule.stop_at_retained ? "from retained storages" : "from constants",
      rule.small_bytes >= 0 ? fmt::format(" and storages of at most {} bytes", rule.small_bytes)
                            : std::string(),
      rule.to_last_need ? " to their last need" : "", rule.horizon);
  const double base_cap = rule.fraction * static_cast<double>(facts.total_compute());
  const double steps = std::max(1, facts.steps());
  std::vector<StorageId> seen(ns, -1);
  std::vector<StorageId> stack;
  // With hold_bytes: the retained storages by the step of their last need
  // (a min-heap), and the sum of their sizes.
  std::priority_queue<std::pair<int32_t, int64_t>, std::vector<std::pair<int32_t, int64_t>>,
                      std::greater<>>
      held;
  int64_t held_bytes = 0;
  for (StorageId s = 0; s < ns; ++s) {
    if (facts.constant(s) || facts.last_need(s) < 0) continue;
    const int32_t when = facts.last_use(s) < 0 ? kNoStep : facts.last_use(s);
    if (trace.storages[s].size <= rule.small_bytes) {
      p.keep_until[s] = facts.last_need(s);
      continue;
    }
    double cap =
        rule.tilt == 0
            ? base_cap
            : base_cap *
                  std::max(0.05, 1 + rule.tilt * (0.5 - std::max(0, facts.created(s)) / steps));
    if (rule.hold_bytes > 0) {
      while (!held.empty() && held.top().first < facts.created(s)) {
        held_bytes -= held.top().second;
        held.pop();
      }
      cap *= std::max(0.05,
                      1 - static_cast<double>(held_bytes) / static_cast<double>(rule.hold_bytes));
    }
    double cost = static_cast<double>(facts.compute(s));
    stack.assign(1, s);
    seen[s] = s;
    while (!stack.empty() && cost <= cap) {
      StorageId x = stack.back();
      stack.pop_back();
      for (const StorageEdge* e = trace.storage_parents.begin(x); e != trace.storage_parents.end(x);
           ++e) {
        StorageId q = e->storage;
        if (seen[q] == s) continue;
        seen[q] = s;
        if (facts.constant(q)) continue;
        if (rule.stop_at_retained && p.keep_until[q] >= 0 && facts.release(q) > when) continue;
        cost += static_cast<double>(facts.compute(q));
        stack.push_back(q);
      }
    }
    if (cost > cap) {
      p.keep_until[s] = facts.last_need(s);
      if (rule.hold_bytes > 0) {
        held.push({facts.last_need(s), trace.storages[s].size});
        held_bytes += trace.storages[s].size;
      }
    }
  }
  // How long to retain: until the last step at which s itself, or a storage
  // that may have to be recomputed from it, is used. A retained storage held
  // through its own last need (not evicted before by its release) is never
  // recomputed, so it asks nothing of its ancestors beyond its creation.
  std::vector<int32_t> need(ns, -1);
  for (StorageId s = ns - 1; s >= 0; --s) {
    need[s] = facts.last_use(s);
    for (const StorageEdge* e = trace.storage_children.begin(s); e != trace.storage_children.end(s);
         ++e) {
      const StorageId c = e->storage;
      if (c == s) continue;
      const bool held_through = p.keep_until[c] >= 0 && facts.release(c) >= need[c];
      if (!held_through) need[s] = std::max(need[s], need[c]);
    }
    if (p.keep_until[s] >= 0 && !rule.to_last_need) p.keep_until[s] = need[s];
  }
  return p;
}

namespace {

// The engine of a scripted run: no heuristic, no regions or classes to keep.
EngineOptions EngineFor(RuntimeKind runtime) {
  if (runtime == RuntimeKind::kV1)
    throw Error("FollowRetentionPlan needs a RuntimeV2 runtime, not RuntimeV1");
  EngineOptions eo;
  eo.runtime = runtime;
  return eo;
}

// The follower's bookkeeping. Each material, unpinned storage the follower
// knows about is in exactly one place: `active_` (looked at every
// computation point), or asleep in `sleep_[step]` (retained by the plan until
// that step at least). Entries of storages evicted or pinned meanwhile are
// dropped when met.
//
// Going on from a snapshot (ResumeRetentionPlan). The new plan differs from
// the one the snapshot was taken with only in storage m's overrides at steps
// >= first, and the snapshot is at a step <= first. RetainedUntil(s, t) for
// t < first then says the same of every storage, but for m the step it
// returns is cut at first when an override of the new plan begins there
// (Override() cuts older ones at first, so the first override after t
// starts at first or earlier): min(old, first). Only asleep storages carry
// that step, so moving m, if asleep in a later slot, into slot `first`, at
// the place in that slot's list where the new run would have put it (lists
// are in the order storages fell asleep: `slept_`), gives the state the new
// plan's run has there. Several moves in a row compose: the slot is the
// least of their firsts.
class Follower {
 public:
  Follower(const Trace& trace, const ProgramFacts& facts, const RetentionPlan& plan,
           const FollowOptions& o)
      : trace_(trace),
        facts_(facts),
        plan_(&plan),
        o_(&o),
        rt_(trace, EngineFor(o.runtime)),
        last_use_event_(trace.storages.size(), -1),
        dropped_at_(trace.storages.size(), -1),
        computed_in_step_(trace.storages.size(), -1),
        use_step_(trace.storages.size(), -1),
        tracked_(trace.storages.size(), 0),
        slot_(trace.storages.size(), -1),
        slept_(trace.storages.size(), 0),
        sleep_(trace.program.size() + 1) {
    if (plan.keep_until.size() != trace.storages.size() ||
        (!plan.overrides.empty() && plan.overrides.size() != trace.storages.size()))
      throw Error("FollowRetentionPlan: the plan does not match the trace");
    if (o.record_steps) step_peaks_.assign(trace.program.size(), 0);
  }

  // A copy of a snapshot's follower, to go on with `plan` after `fixes`
  // (storage, first step its overrides changed) as explained above.
  Follower(const Follower& from, const FollowedPlan& base, const RetentionPlan& plan,
           const FollowOptions& o, const std::vector<std::pair<StorageId, int32_t>>& fixes)
      : Follower(from) {
    plan_ = &plan;
    o_ = &o;
    resumed_ = true;
    out_.resumed_at = rt_.event();
    out_.script.entries.assign(
        base.script.entries.begin(),
        base.script.entries.begin() + static_cast<std::ptrdiff_t>(script_size_));
    if (o.record_steps) {
      if (base.step_peaks.size() != trace_.program.size())
        throw Error("ResumeRetentionPlan: the base run did not record its step peaks");
      step_peaks_.assign(trace_.program.size(), 0);
      std::copy(base.step_peaks.begin(), base.step_peaks.begin() + (step_ + 1),
                step_peaks_.begin());
    }
    for (auto [m, first] : fixes) Refile(m, first);
  }

  FollowedPlan Run(const std::vector<std::shared_ptr<const FollowSnapshot>>* earlier = nullptr,
                   const std::vector<std::pair<StorageId, int32_t>>* fixes = nullptr);

 private:
  void TakeSnapshot();

  // Moves m, asleep in a slot after `first`, into slot `first` (see above).
  void Refile(StorageId m, int32_t first) {
    const int32_t from = slot_[m];
    if (!tracked_[m] || from < woken_ || from <= first) return;
    std::vector<StorageId>& old = sleep_[from];
    auto at = std::find(old.begin(), old.end(), m);
    if (at == old.end()) throw Error("internal error: a storage asleep is not in its slot");
    old.erase(at);
    std::vector<StorageId>& to = sleep_[first];
    to.insert(std::upper_bound(to.begin(), to.end(), m,
                               [&](StorageId a, StorageId b) { return slept_[a] < slept_[b]; }),
              m);
    slot_[m] = first;
  }

  // Storages the rest of program step `step` uses as arguments, with the
  // event of their last such use (a copy of the runtime run on without
  // evictions: what the policy does not evict cannot change that recursion).
  void MarkStepUses(int32_t step) {
    auto mark = [&](TensorId t, int64_t event) {
      for (TensorId a : trace_.op_of(t).args) {
        StorageId s = trace_.tensors[a].storage;
        use_step_[s] = step;
        last_use_event_[s] = event;
      }
    };
    if (rt_.frames().size() == 1) {  // the program operator alone: no recursion pending
      mark(rt_.tensor(), rt_.event());
      return;
    }
    lookahead_.ForEach(rt_, mark);
  }

  bool NeededLater(StorageId s, int32_t step) const {
    return use_step_[s] == step && last_use_event_[s] >= rt_.event();
  }

  // The first step >= `step` at which the plan no longer retains s, or -1 if
  // it does not retain s at `step`.
  int32_t RetainedUntil(StorageId s, int32_t step) const {
    const RetentionOverride* later = nullptr;  // the first override after `step`
    if (!plan_->overrides.empty()) {
      for (const RetentionOverride& o : plan_->overrides[s]) {
        if (o.last < step) continue;
        if (o.first <= step) return o.retain ? o.last + 1 : -1;
        later = &o;
        break;
      }
    }
    int32_t until = -1;
    if (plan_->keep_until[s] >= step) until = plan_->keep_until[s] + 1;
    int32_t next = facts_.NextUseAfter(s, step);
    if (next != kNoStep &&
        static_cast<int64_t>(next) <= static_cast<int64_t>(step) + plan_->horizon)
      until = std::max(until, next);  // looked at again when that use is due
    if (later && until > later->first) until = later->first;
    return until;
  }

  void Track(StorageId s) {
    if (tracked_[s] || !rt_.material(s) || rt_.pinned(s)) return;
    tracked_[s] = 1;
    active_.push_back(s);
  }

  void Wake(int32_t step) {
    for (int32_t t = std::max(0, woken_); t <= step && t < static_cast<int32_t>(sleep_.size());
         ++t) {
      for (StorageId s : sleep_[t]) active_.push_back(s);
      sleep_[t].clear();
    }
    woken_ = step + 1;
  }

  void DropUnretained(int32_t step, EvictionScript& script) {
    size_t kept = 0;
    for (size_t i = 0; i < active_.size(); ++i) {
      StorageId s = active_[i];
      if (!rt_.material(s) || rt_.pinned(s)) {
        tracked_[s] = 0;
        continue;
      }
      const int32_t until = RetainedUntil(s, step);
      if (until > step) {
        const int32_t slot = std::min<int32_t>(until, static_cast<int32_t>(sleep_.size()) - 1);
        sleep_[slot].push_back(s);
        slot_[s] = slot;
        slept_[s] = ++sleeps_;
        continue;
      }
      if (rt_.Evictable(s) && !NeededLater(s, step)) {
        rt_.Evict(s);
        script.entries.push_back({rt_.event(), s});
        dropped_at_[s] = step;
        tracked_[s] = 0;
        continue;
      }
      active_[kept++] = s;  // locked or needed by this step: look again at the next point
    }
    active_.resize(kept);
  }

  void RecordPeak(int32_t step, FollowedPlan& out) const {
    PeakState& p = out.peak;
    out.retained_at_peak.clear();
    out.recomputed_at_peak.clear();
    for (StorageId s : recomputed_)
      if (rt_.material(s) && (rt_.locks(s) > 0 || NeededLater(s, step)))
        out.recomputed_at_peak.push_back({s, dropped_at_[s]});
    for (const auto& f : rt_.frames()) {
      StorageId s = trace_.tensors[f.tensor].storage;
      if (f.remat && dropped_at_[s] >= 0) out.recomputed_at_peak.push_back({s, dropped_at_[s]});
    }
    p.event = rt_.event();
    p.program_step = step;
    p.tensor = rt_.tensor();
    p.frames = static_cast<int32_t>(rt_.frames().size());
    p.request = rt_.request();
    p.pinned = p.locked = p.needed = p.retained = 0;
    for (StorageId s = 0; s < static_cast<StorageId>(trace_.storages.size()); ++s) {
      if (!rt_.material(s)) continue;
      const int64_t size = trace_.storages[s].size;
      if (rt_.pinned(s))
        p.pinned += size;
      else if (rt_.locks(s) > 0)
        p.locked += size;
      else if (NeededLater(s, step))
        p.needed += size;
      else {
        p.retained += size;
        out.retained_at_peak.push_back(s);
      }
    }
  }

  const Trace& trace_;
  const ProgramFacts& facts_;
  const RetentionPlan* plan_;
  const FollowOptions* o_;
  Engine rt_;
  StepLookahead lookahead_;
  std::vector<int64_t> last_use_event_;
  std::vector<int32_t> dropped_at_;        // step where the plan last dropped each storage, or -1
  std::vector<int32_t> computed_in_step_;  // step where it was last recomputed, or -1
  std::vector<StorageId> recomputed_;      // recomputed by the current step
  std::vector<int64_t> step_peaks_;
  std::vector<int32_t> use_step_;
  std::vector<uint8_t> tracked_;
  std::vector<int32_t> slot_;    // per storage: the slot it last fell asleep in
  std::vector<uint64_t> slept_;  // per storage: when it last fell asleep (sleeps_ then)
  uint64_t sleeps_ = 0;
  std::vector<StorageId> active_;
  std::vector<std::vector<StorageId>> sleep_;
  int32_t woken_ = 0;
  int32_t step_ = -1;            // the program step of the last computation point
  bool resumed_ = false;         // the engine is at a point the loop has not looked at yet
  FollowedPlan out_;             // so far (a snapshot keeps neither script nor step peaks)
  size_t script_size_ = 0;       // in a snapshot: the script's entries so far
  int32_t snapshot_after_ = -1;  // the step of the last snapshot taken
};

}  // namespace

struct FollowSnapshot {
  int32_t step = 0;
  int64_t event = 0;
  std::shared_ptr<const Follower> state;
  // Storages whose overrides changed after it was taken, with the first
  // step changed: applied when going on from it.
  std::vector<std::pair<StorageId, int32_t>> fixes;
};

namespace {

void Follower::TakeSnapshot() {
  // The script and the step peaks so far are the base run's when going on
  // (its prefix), so the copy leaves them out.
  EvictionScript script = std::move(out_.script);
  std::vector<int64_t> peaks = std::move(step_peaks_);
  std::vector<std::shared_ptr<const FollowSnapshot>> snaps = std::move(out_.snapshots);
  out_.script = {};
  step_peaks_ = {};
  out_.snapshots = {};
  script_size_ = script.entries.size();
  auto snap = std::make_shared<FollowSnapshot>();
  snap->step = rt_.program_step();
  snap->event = rt_.event();
  snap->state = std::make_shared<const Follower>(*this);
  out_.script = std::move(script);
  step_peaks_ = std::move(peaks);
  out_.snapshots = std::move(snaps);
  out_.snapshots.push_back(std::move(snap));
}

FollowedPlan Follower::Run(const std::vector<std::shared_ptr<const FollowSnapshot>>* earlier,
                           const std::vector<std::pair<StorageId, int32_t>>* fixes) {
  FollowedPlan& out = out_;
  out.snapshots.clear();
  if (earlier) {
    // The base run's states before this one stand for this run's as well,
    // with one more fix each.
    for (const auto& e : *earlier) {
      auto snap = std::make_shared<FollowSnapshot>(*e);
      snap->fixes.insert(snap->fixes.end(), fixes->begin(), fixes->end());
      out.snapshots.push_back(std::move(snap));
    }
  }
  const int32_t every =
      o_->snapshots > 0
          ? std::max<int32_t>(1, static_cast<int32_t>(trace_.program.size()) / o_->snapshots)
          : 0;
  auto finish = [&]() -> FollowedPlan {
    out.events = rt_.event();
    out.step_peaks = std::move(step_peaks_);
    return std::move(out);
  };
  // A resumed follower starts at the point its snapshot was taken at.
  for (bool at_point = resumed_; at_point || rt_.Advance(); at_point = false) {
    resumed_ = false;
    const int32_t due = snapshot_after_ < 0 ? every : snapshot_after_ + every;
    if (every > 0 && !at_point && rt_.program_step() != step_ && rt_.program_step() >= due) {
      snapshot_after_ = rt_.program_step();
      TakeSnapshot();
    }
    if (rt_.event() >= o_->max_events) {
      out.stopped = fmt::format("gave up after {} computations", o_->max_events);
      return finish();
    }
    if (o_->deadline && (rt_.event() & 1023) == 0 &&
        std::chrono::steady_clock::now() > *o_->deadline) {
      out.stopped = "time limit";
      return finish();
    }
    const int32_t step = rt_.program_step();
    if (step != step_) {
      step_ = step;
      recomputed_.clear();
      MarkStepUses(step);
      Wake(step);
    }
    DropUnretained(step, out.script);
    const int64_t need = rt_.memory() + rt_.request();
    if (o_->record_steps) step_peaks_[step] = std::max(step_peaks_[step], need);
    if (need > out.peak_memory) {
      out.peak_memory = need;
      RecordPeak(step, out);
    }
    if (need > o_->budget) {
      out.stopped = fmt::format("computation {} does not fit: {} in use + {} requested > {}",
                                rt_.event(), rt_.memory(), rt_.request(), o_->budget);
      return finish();
    }
    const Operator& op = trace_.op_of(rt_.tensor());
    out.compute += op.compute;
    rt_.Compute();
    for (int32_t i = 0; i < op.num_outputs; ++i) {
      StorageId s = trace_.tensors[op.first_output + i].storage;
      if (dropped_at_[s] >= 0 && computed_in_step_[s] != step) {
        computed_in_step_[s] = step;
        recomputed_.push_back(s);
      }
      Track(s);
    }
  }
  out.completed = true;
  return finish();
}

}  // namespace

FollowedPlan FollowRetentionPlan(const Trace& trace, const ProgramFacts& facts,
                                 const RetentionPlan& plan, const FollowOptions& options) {
  return Follower(trace, facts, plan, options).Run();
}

namespace {

// The snapshots of `base` after the last one at a step <= first.
std::vector<std::shared_ptr<const FollowSnapshot>>::const_iterator SnapshotsAfter(
    const FollowedPlan& base, int32_t first) {
  return std::upper_bound(
      base.snapshots.begin(), base.snapshots.end(), first,
      [](int32_t f, const std::shared_ptr<const FollowSnapshot>& s) { return f < s->step; });
}

}  // namespace

int64_t ResumePoint(const FollowedPlan& base, int32_t first) {
  auto after = SnapshotsAfter(base, first);
  return after == base.snapshots.begin() ? 0 : (*std::prev(after))->event;
}

FollowedPlan ResumeRetentionPlan(const Trace& trace, const ProgramFacts& facts,
                                 const RetentionPlan& plan, const FollowedPlan& base,
                                 StorageId moved, int32_t first, const FollowOptions& options) {
  auto after = SnapshotsAfter(base, first);
  if (after == base.snapshots.begin()) return FollowRetentionPlan(trace, facts, plan, options);
  const FollowSnapshot& from = **std::prev(after);
  std::vector<std::pair<StorageId, int32_t>> fixes = from.fixes;
  fixes.emplace_back(moved, first);
  const std::vector<std::shared_ptr<const FollowSnapshot>> earlier(base.snapshots.begin(), after);
  const std::vector<std::pair<StorageId, int32_t>> mine{{moved, first}};
  return Follower(*from.state, base, plan, options, fixes).Run(&earlier, &mine);
}

}  // namespace dtr
