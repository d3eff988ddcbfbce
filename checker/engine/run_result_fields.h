// RunResult's fields, listed once. Every exact form of a run is derived from
// this list: the grid checkpoint's JSON lines (checker/persist/grid_checkpoint.cc)
// and the bytes a result travels in between MPI ranks
// (checker/engine/run_result_codec.cc). A field added to RunResult, OomContext or
// ScriptFailure is one line here, and both forms carry it.
//
// VisitFields(x, visit) calls visit(name, field) for each field of x in
// order: name is the field's JSON key; field is a reference to the member
// (const if x is), an optional nested record (visit it with VisitFields in
// turn), or a PerStorageCounts wrapping a per-storage count vector, which
// the codecs store sparsely. The order is the checkpoint's key order.
#pragma once

#include <optional>
#include <type_traits>
#include <vector>

#include "checker/engine/run_result.h"

namespace dtr {

// A count per storage, mostly zero: the codecs store its length and its
// nonzero entries.
template <typename Counts>
struct PerStorageCounts {
  Counts& counts;  // std::vector<int32_t>, const or not
};
template <typename Counts>
PerStorageCounts(Counts&) -> PerStorageCounts<Counts>;

template <typename T>
inline constexpr bool kIsPerStorageCounts = false;
template <typename Counts>
inline constexpr bool kIsPerStorageCounts<PerStorageCounts<Counts>> = true;

template <typename T>
inline constexpr bool kIsOptionalRecord = false;
template <typename Record>
inline constexpr bool kIsOptionalRecord<std::optional<Record>> = true;

template <typename T, typename Record>
concept MaybeConst = std::is_same_v<std::remove_const_t<T>, Record>;

template <MaybeConst<OomContext> O, typename Visit>
void VisitFields(O& o, Visit&& visit) {
  visit("program_op", o.program_op);
  visit("op", o.op);
  visit("tensor", o.tensor);
  visit("request", o.request);
  visit("memory_usage", o.memory_usage);
  visit("pinned_memory", o.pinned_memory);
  visit("locked_memory", o.locked_memory);
  visit("locked_storages", o.locked_storages);
  visit("remat_depth", o.remat_depth);
  visit("program_step", o.program_step);
  visit("event", o.event);
  visit("frames", o.frames);
}

template <MaybeConst<ScriptFailure> F, typename Visit>
void VisitFields(F& f, Visit&& visit) {
  visit("entry", f.entry);
  visit("event", f.event);
  visit("reason", f.reason);
}

template <MaybeConst<RunResult> R, typename Visit>
void VisitFields(R& r, Visit&& visit) {
  visit("result", r.outcome);
  visit("budget", r.budget);
  visit("clock", r.clock);
  visit("remat_compute", r.remat_compute);
  visit("model_compute", r.model_compute);
  visit("heuristic_evals", r.heuristic_evals);
  visit("max_memory", r.max_memory);
  visit("bottleneck_memory", r.bottleneck_memory);
  visit("const_memory", r.const_memory);
  visit("heuristic_evictions", r.heuristic_evictions);
  visit("eager_evictions", r.eager_evictions);
  visit("distinct_heuristic_evicted", r.distinct_heuristic_evicted);
  visit("distinct_evicted", r.distinct_evicted);
  visit("evict_count", PerStorageCounts{r.evict_count});
  visit("heuristic_evict_count", PerStorageCounts{r.heuristic_evict_count});
  visit("events", r.events);
  visit("budget_lo", r.budget_lo);
  visit("budget_hi", r.budget_hi);
  visit("oom", r.oom);
  visit("script_failure", r.script_failure);
}

// A reminder that fails the build when a member is added to these types
// without a line above (sizes on x86-64 with libstdc++): add the line, then
// update the size.
#if defined(__x86_64__) && defined(__GLIBCXX__)
static_assert(sizeof(RunResult) == 408, "RunResult changed: list the field in VisitFields, then update this size");
static_assert(sizeof(OomContext) == 176, "OomContext changed: list the field in VisitFields, then update this size");
static_assert(sizeof(ScriptFailure) == 48, "ScriptFailure changed: list the field in VisitFields, then update this size");
#endif

}  // namespace dtr
