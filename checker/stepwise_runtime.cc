#include "checker/stepwise_runtime.h"

#include <fmt/core.h>

#include <algorithm>

#include "model/error.h"

namespace dtr {

StepwiseRuntime::StepwiseRuntime(const Trace& trace, bool eager)
    : trace_(&trace),
      eager_(eager),
      defined_(trace.tensors.size(), 0),
      material_(trace.storages.size(), 0),
      pinned_(trace.storages.size(), 0),
      locks_(trace.storages.size(), 0),
      external_refs_(trace.storages.size(), 0) {}

int64_t StepwiseRuntime::request() const { return trace_->op_of(tensor()).total_size; }

void StepwiseRuntime::StartFrame(TensorId t, bool remat) {
  Frame f;
  f.tensor = t;
  f.remat = remat;
  for (TensorId p : trace_->op_of(t).args) {
    if (defined_[p])
      Lock(storage(p));
    else
      f.undefined_args.push_back(p);
  }
  frames_.push_back(std::move(f));
}

void StepwiseRuntime::Pin(TensorId t) {
  StorageId s = storage(t);
  if (!material_[s])
    throw Error(fmt::format(
        "{}:{}: cannot pin '{}', whose storage is evicted (simrd stops with an assertion here)",
        trace_->source, trace_->program[step_].line, trace_->tensors[t].name));
  if (pinned_[s]) return;
  Lock(s);
  pinned_[s] = 1;
}

bool StepwiseRuntime::Advance() {
  if (at_computation_) return true;
  const std::vector<Step>& program = trace_->program;
  for (;;) {
    if (frames_.empty()) {
      if (step_ >= static_cast<int32_t>(program.size())) return false;
      const Step& st = program[step_];
      switch (st.kind) {
        case StepKind::kCompute: {
          const Operator& op = trace_->ops[st.target];
          for (int32_t i = 0; i < op.num_outputs; ++i)
            ++external_refs_[storage(op.first_output + i)];
          StartFrame(op.first_output, false);
          break;
        }
        case StepKind::kGet:
          ++external_refs_[storage(st.target)];
          ++step_;
          break;
        case StepKind::kRelease: {
          StorageId s = storage(st.target);
          --external_refs_[s];
          if (eager_ && external_refs_[s] == 0 && material_[s] && !pinned_[s]) Evict(s);
          ++step_;
          break;
        }
        case StepKind::kPin:
          if (defined_[st.target]) {
            Pin(st.target);
            ++step_;
          } else {
            StartFrame(st.target, true);
          }
          break;
      }
      continue;
    }
    Frame& top = frames_.back();
    if (top.next < static_cast<int32_t>(top.undefined_args.size())) {
      TensorId p = top.undefined_args[top.next];
      if (!top.awaiting && !defined_[p]) {  // a sibling may have defined it meanwhile
        top.awaiting = true;
        StartFrame(p, true);  // invalidates `top`
        continue;
      }
      top.awaiting = false;
      Lock(storage(p));
      ++top.next;
      continue;
    }
    at_computation_ = true;
    return true;
  }
}

void StepwiseRuntime::Evict(StorageId s) {
  material_[s] = 0;
  memory_ -= trace_->storages[s].size;
  for (TensorId t : trace_->storages[s].tensors) defined_[t] = 0;
}

void StepwiseRuntime::Compute() {
  if (!at_computation_) throw Error("StepwiseRuntime::Compute() outside a computation point");
  at_computation_ = false;
  const TensorId t = frames_.back().tensor;
  const Operator& op = trace_->op_of(t);
  memory_ += op.total_size;
  peak_ = std::max(peak_, memory_);
  ++events_;
  // Outputs already defined were computed twice: their copies are freed. The
  // others (t included) become defined, and their storages material.
  for (int32_t i = 0; i < op.num_outputs; ++i) {
    TensorId u = op.first_output + i;
    if (u != t && defined_[u]) {
      memory_ -= trace_->tensors[u].size;
    } else {
      defined_[u] = 1;
      material_[storage(u)] = 1;
    }
  }
  for (TensorId p : op.args) --locks_[storage(p)];
  frames_.pop_back();
  if (frames_.empty()) {
    const Step& st = trace_->program[step_];
    if (st.kind == StepKind::kPin) Pin(st.target);
    ++step_;
  }
}

void StepwiseRuntime::AppendKey(std::string& key) const {
  auto put = [&key](int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(step_);
  put(static_cast<int64_t>(frames_.size()));
  for (const Frame& f : frames_) {
    put(f.tensor);
    put(f.next * 2 + f.awaiting);
    put(static_cast<int64_t>(f.undefined_args.size()));
    for (TensorId p : f.undefined_args) put(p);
  }
  auto bits = [&key](const std::vector<uint8_t>& v) {
    uint8_t acc = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      acc |= static_cast<uint8_t>((v[i] ? 1 : 0) << (i % 8));
      if (i % 8 == 7 || i + 1 == v.size()) {
        key.push_back(static_cast<char>(acc));
        acc = 0;
      }
    }
  };
  bits(defined_);
  bits(material_);
}

bool EagerEvictions(RuntimeKind runtime) {
  return runtime == RuntimeKind::kV2Eager || runtime == RuntimeKind::kV2EagerOptimized;
}

namespace {

// Applies the entries from `next` (below `entries`) scheduled for the
// current event of rt, at a computation point.
void ApplyEntries(StepwiseRuntime& rt, const EvictionScript& script, size_t entries, size_t& next) {
  const Trace& trace = rt.trace();
  while (next < entries && script.entries[next].event == rt.event()) {
    StorageId s = script.entries[next].storage;
    if (!rt.Evictable(s))
      throw Error(fmt::format("script entry {} (event {}): storage {} cannot be evicted then", next,
                              rt.event(), trace.tensors[trace.storages[s].root].name));
    rt.Evict(s);
    ++next;
  }
}

// Before leaving the current event: no entry below `entries` may be left behind.
void CheckNonePassed(const StepwiseRuntime& rt, const EvictionScript& script, size_t entries,
                     size_t next) {
  if (next < entries && script.entries[next].event < rt.event())
    throw Error(fmt::format("script entry {} names event {}, which has passed", next,
                            script.entries[next].event));
}

}  // namespace

StepwiseRuntime StateAtEvent(const Trace& trace, bool eager, const EvictionScript& script,
                             size_t entries, int64_t event) {
  StepwiseRuntime rt(trace, eager);
  size_t next = 0;
  entries = std::min(entries, script.entries.size());
  for (;;) {
    if (!rt.Advance()) throw Error(fmt::format("the run ends before event {}", event));
    ApplyEntries(rt, script, entries, next);
    if (rt.event() == event) return rt;
    CheckNonePassed(rt, script, entries, next);
    rt.Compute();
  }
}

StepwiseRuntime StateBeforeStep(const Trace& trace, bool eager, const EvictionScript& script,
                                int32_t step) {
  StepwiseRuntime rt(trace, eager);
  size_t next = 0;
  while (rt.Advance() && rt.program_step() < step) {
    ApplyEntries(rt, script, script.entries.size(), next);
    CheckNonePassed(rt, script, script.entries.size(), next);
    rt.Compute();
  }
  return rt;
}

}  // namespace dtr
