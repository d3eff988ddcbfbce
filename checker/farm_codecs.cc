// The FarmCodec specializations of the checker's farm results, declared
// beside their types (checker/run_result.h, checker/atlas_walk.h) so that
// every farm of those types sees them.
#include "checker/atlas_walk.h"
#include "checker/run_result.h"

#include <type_traits>

namespace dtr {

namespace {

// A field added to these types must be added to their codecs below; the sizes
// (x86-64, libstdc++) are a reminder that fails the build until it is.
#if defined(__x86_64__) && defined(__GLIBCXX__)
static_assert(sizeof(RunResult) == 408, "RunResult changed: update FarmCodec<RunResult>, then this size");
static_assert(sizeof(OomContext) == 176, "OomContext changed: update FarmCodec<RunResult>, then this size");
static_assert(sizeof(ScriptFailure) == 48, "ScriptFailure changed: update FarmCodec<RunResult>, then this size");
#endif
// Atlas intervals travel as their bytes.
static_assert(std::is_trivially_copyable_v<AtlasInterval>);

// Counts per storage, mostly zero: the length, then the nonzero entries.
void PutCounts(ByteWriter& w, const std::vector<int32_t>& counts) {
  w.Put<uint64_t>(counts.size());
  uint64_t nonzero = 0;
  for (int32_t c : counts) nonzero += c != 0;
  w.Put<uint64_t>(nonzero);
  for (size_t i = 0; i < counts.size(); ++i)
    if (counts[i] != 0) {
      w.Put<uint32_t>(static_cast<uint32_t>(i));
      w.Put<int32_t>(counts[i]);
    }
}

std::vector<int32_t> GetCounts(ByteReader& r) {
  uint64_t size = r.Get<uint64_t>(), nonzero = r.Get<uint64_t>();
  if (nonzero > size || size > (uint64_t{1} << 32)) throw Error("farm message: bad per-storage counts");
  std::vector<int32_t> counts(size, 0);
  for (uint64_t k = 0; k < nonzero; ++k) {
    uint32_t i = r.Get<uint32_t>();
    if (i >= size) throw Error("farm message: bad per-storage counts");
    counts[i] = r.Get<int32_t>();
  }
  return counts;
}

}  // namespace

void FarmCodec<RunResult>::Encode(const RunResult& x, ByteWriter& w) {
  w.Put<int32_t>(static_cast<int32_t>(x.outcome));
  for (int64_t v : {x.budget, x.clock, x.remat_compute, x.model_compute, x.heuristic_evals, x.max_memory,
                    x.bottleneck_memory, x.const_memory, x.heuristic_evictions, x.eager_evictions, x.events,
                    x.budget_lo, x.budget_hi})
    w.Put<int64_t>(v);
  w.Put<int32_t>(x.distinct_heuristic_evicted);
  w.Put<int32_t>(x.distinct_evicted);
  PutCounts(w, x.evict_count);
  PutCounts(w, x.heuristic_evict_count);
  w.Put<uint8_t>(x.oom.has_value());
  if (x.oom) {
    const OomContext& o = *x.oom;
    w.PutString(o.program_op);
    w.PutString(o.op);
    w.PutString(o.tensor);
    for (int64_t v : {o.request, o.memory_usage, o.pinned_memory, o.locked_memory, o.event}) w.Put<int64_t>(v);
    for (int32_t v : {o.locked_storages, o.remat_depth, o.program_step}) w.Put<int32_t>(v);
    w.PutVector(o.frames);
  }
  w.Put<uint8_t>(x.script_failure.has_value());
  if (x.script_failure) {
    w.Put<int64_t>(x.script_failure->entry);
    w.Put<int64_t>(x.script_failure->event);
    w.PutString(x.script_failure->reason);
  }
}

RunResult FarmCodec<RunResult>::Decode(ByteReader& r) {
  RunResult x;
  x.outcome = static_cast<Outcome>(r.Get<int32_t>());
  for (int64_t* v : {&x.budget, &x.clock, &x.remat_compute, &x.model_compute, &x.heuristic_evals, &x.max_memory,
                     &x.bottleneck_memory, &x.const_memory, &x.heuristic_evictions, &x.eager_evictions, &x.events,
                     &x.budget_lo, &x.budget_hi})
    *v = r.Get<int64_t>();
  x.distinct_heuristic_evicted = r.Get<int32_t>();
  x.distinct_evicted = r.Get<int32_t>();
  x.evict_count = GetCounts(r);
  x.heuristic_evict_count = GetCounts(r);
  if (r.Get<uint8_t>()) {
    OomContext& o = x.oom.emplace();
    o.program_op = r.GetString();
    o.op = r.GetString();
    o.tensor = r.GetString();
    for (int64_t* v : {&o.request, &o.memory_usage, &o.pinned_memory, &o.locked_memory, &o.event})
      *v = r.Get<int64_t>();
    for (int32_t* v : {&o.locked_storages, &o.remat_depth, &o.program_step}) *v = r.Get<int32_t>();
    o.frames = r.GetVector<TensorId>();
  }
  if (r.Get<uint8_t>()) {
    ScriptFailure& f = x.script_failure.emplace();
    f.entry = r.Get<int64_t>();
    f.event = r.Get<int64_t>();
    f.reason = r.GetString();
  }
  return x;
}

void FarmCodec<AtlasPartWalk>::Encode(const AtlasPartWalk& walk, ByteWriter& w) {
  w.PutVector(walk.pieces);
  w.Put<uint8_t>(walk.complete);
}

AtlasPartWalk FarmCodec<AtlasPartWalk>::Decode(ByteReader& r) {
  AtlasPartWalk walk;
  walk.pieces = r.GetVector<AtlasInterval>();
  walk.complete = r.Get<uint8_t>() != 0;
  return walk;
}

}  // namespace dtr
