#include "diagnose/remat_frontier.h"

#include <fmt/core.h>

#include <algorithm>
#include <span>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/reverse_graph.hpp>

#include "checker/proofs/eviction_script.h"
#include "checker/proofs/schedule_checker.h"
#include "model/error.h"

namespace dtr {

namespace {

// Storages as vertices, an edge from each storage to the storages made from it.
using StorageGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

StorageGraph BuildStorageGraph(const Trace& trace) {
  StorageGraph g(trace.storages.size());
  for (StorageId s = 0; s < static_cast<StorageId>(trace.storages.size()); ++s)
    for (const StorageEdge* e = trace.storage_parents.begin(s); e != trace.storage_parents.end(s);
         ++e)
      boost::add_edge(e->storage, s, g);
  return g;
}

// Keeps the evicted storages only.
struct Evicted {
  const Engine* state = nullptr;
  bool operator()(StorageGraph::vertex_descriptor v) const {
    return !state->material(static_cast<StorageId>(v));
  }
};

void CheckFrontierConfig(const ReplayConfig& config) {
  RequireRuntimeV2(config.runtime, "the frontier");
  if (config.script) throw Error("the frontier analyses a heuristic run, not a scripted one");
}

}  // namespace

std::string_view ArgStateName(ArgState s) {
  switch (s) {
    case ArgState::kPinned:
      return "pinned";
    case ArgState::kLocked:
      return "locked";
    case ArgState::kHeldAbove:
      return "held-above";
    case ArgState::kEvicted:
      return "evicted";
    case ArgState::kUnlocked:
      return "unlocked";
  }
  return "?";
}

RematFrontier AnalyzeFrontier(const Engine& state, int64_t budget) {
  const Trace& trace = state.trace();
  const size_t ns = trace.storages.size();
  auto size = [&](StorageId s) { return trace.storages[s].size; };
  RematFrontier f;
  f.budget = budget;
  f.event = state.event();
  f.program_step = state.program_step();
  f.memory_usage = state.memory();
  f.request = state.request();
  for (StorageId s = 0; s < static_cast<StorageId>(ns); ++s) {
    if (!state.material(s)) continue;
    if (state.pinned(s)) {
      f.pinned_bytes += size(s);
      ++f.pinned_storages;
    } else if (state.locks(s) > 0) {
      f.locked_bytes += size(s);
      f.locked.push_back({s, size(s), {}});
    } else {
      f.evictable_bytes += size(s);
      ++f.evictable_storages;
    }
  }

  // Each frame's locks: the arguments defined when it started, then the
  // undefined ones it has materialized so far (the one it awaits is not
  // locked yet). The innermost frame is at its budget check: all locked.
  const auto& frames = state.frames();
  std::vector<int32_t> occurrences(ns, 0);
  std::vector<uint8_t> held_outside(ns, 0);  // locked by an outer frame
  std::vector<uint8_t> mark(ns, 0);
  for (size_t k = 0; k < frames.size(); ++k) {
    const Engine::Frame& sf = frames[k];
    const std::span<const TensorId> undefined_args = state.frame_args(sf);
    const Operator& op = trace.op_of(sf.tensor);
    FrontierFrame fr;
    fr.depth = static_cast<int32_t>(k);
    fr.tensor = sf.tensor;
    fr.remat = sf.remat;
    fr.request = op.total_size;
    std::vector<TensorId> locked_args = op.args;
    for (TensorId u : undefined_args)
      locked_args.erase(std::find(locked_args.begin(), locked_args.end(), u));
    locked_args.insert(locked_args.end(), undefined_args.begin(), undefined_args.begin() + sf.next);
    for (TensorId a : locked_args) {
      StorageId s = trace.tensors[a].storage;
      ++occurrences[s];
      if (state.pinned(s) || mark[s]) continue;
      mark[s] = 1;
      fr.locks.push_back(s);
      if (!held_outside[s]) fr.new_locked_bytes += size(s);
    }
    for (TensorId a : op.args) {
      StorageId s = trace.tensors[a].storage;
      if (std::any_of(fr.args.begin(), fr.args.end(),
                      [&](const FrontierArg& x) { return x.storage == s; }))
        continue;  // duplicates name one storage
      ArgState st = state.pinned(s)      ? ArgState::kPinned
                    : !state.material(s) ? ArgState::kEvicted
                    : held_outside[s]    ? ArgState::kHeldAbove
                    : mark[s]            ? ArgState::kLocked
                                         : ArgState::kUnlocked;
      fr.args.push_back({a, s, st});
    }
    for (StorageId s : fr.locks) mark[s] = 0;
    for (size_t i = sf.next + (sf.awaiting ? 1 : 0); i < undefined_args.size(); ++i)
      if (!state.defined(undefined_args[i])) fr.missing.push_back(undefined_args[i]);
    // Completion need: pinned, what the outer frames hold now, all of this
    // frame's (unpinned) arguments, and its request.
    int64_t need = f.pinned_bytes + fr.request;
    for (StorageId s = 0; s < static_cast<StorageId>(ns); ++s)
      if (held_outside[s]) need += size(s);
    for (TensorId a : op.args) {
      StorageId s = trace.tensors[a].storage;
      if (state.pinned(s) || held_outside[s] || mark[s]) continue;
      mark[s] = 1;
      need += size(s);
    }
    for (TensorId a : op.args) mark[trace.tensors[a].storage] = 0;
    fr.completion_need = need;
    if (need > f.peak_completion_need) {
      f.peak_completion_need = need;
      f.peak_frame = fr.depth;
    }
    for (StorageId s : fr.locks) held_outside[s] = 1;
    f.frames.push_back(std::move(fr));
  }
  for (StorageId s = 0; s < static_cast<StorageId>(ns); ++s)
    if (state.locks(s) != occurrences[s] + (state.pinned(s) ? 1 : 0)) f.holders_consistent = false;
  for (LockedStorage& l : f.locked)
    for (const FrontierFrame& fr : f.frames)
      if (std::find(fr.locks.begin(), fr.locks.end(), l.storage) != fr.locks.end())
        l.holders.push_back(fr.depth);
  std::stable_sort(f.locked.begin(), f.locked.end(),
                   [](const LockedStorage& a, const LockedStorage& b) { return a.size > b.size; });

  // The evicted region behind the missing arguments: evicted ancestors,
  // reached from child to parent through evicted storages only.
  StorageGraph g = BuildStorageGraph(trace);
  auto reversed = boost::make_reverse_graph(g);
  boost::filtered_graph<decltype(reversed), boost::keep_all, Evicted> evicted(
      reversed, boost::keep_all(), Evicted{&state});
  std::vector<boost::default_color_type> color(ns, boost::white_color);
  auto color_map =
      boost::make_iterator_property_map(color.begin(), boost::get(boost::vertex_index, evicted));
  for (const FrontierFrame& fr : f.frames)
    for (TensorId t : fr.missing) {
      StorageId s = trace.tensors[t].storage;
      if (state.material(s) || color[s] != boost::white_color) continue;
      boost::queue<StorageGraph::vertex_descriptor> queue;
      boost::breadth_first_visit(evicted, s, queue, boost::default_bfs_visitor(), color_map);
    }
  std::vector<uint8_t> border(ns, 0);
  for (StorageId s = 0; s < static_cast<StorageId>(ns); ++s) {
    if (color[s] == boost::white_color) continue;
    f.evicted_region.push_back(s);
    f.evicted_region_bytes += size(s);
    for (auto [e, end] = boost::in_edges(s, g); e != end; ++e) {
      StorageId p = static_cast<StorageId>(boost::source(*e, g));
      if (state.material(p) && !border[p]) {
        border[p] = 1;
        f.region_border.push_back(p);
        f.region_border_bytes += size(p);
      }
    }
  }

  // The rest of this program step's recursion, evicting nothing.
  Engine rest = state;
  for (int64_t guard = 0; guard < 1'000'000; ++guard) {
    PredictedComputation pc;
    pc.tensor = rest.tensor();
    pc.depth = static_cast<int32_t>(rest.frames().size()) - 1;
    pc.floor = rest.request();
    for (StorageId s = 0; s < static_cast<StorageId>(ns); ++s)
      if (rest.material(s) && (rest.pinned(s) || rest.locks(s) > 0)) pc.floor += size(s);
    f.predicted_peak_floor = std::max(f.predicted_peak_floor, pc.floor);
    f.predicted.push_back(pc);
    rest.Compute();
    if (rest.frames().empty() || !rest.Advance()) break;
  }
  return f;
}

RematFrontier FrontierAtOom(const Trace& trace, const ReplayConfig& config) {
  CheckFrontierConfig(config);
  ReplayState run = ReplayWithState(trace, config);
  if (run.result.outcome != Outcome::kOom || !run.result.oom)
    throw Error(fmt::format(
        "the run does not end in an OOM (result: {}); a decision point can be given instead",
        OutcomeName(run.result.outcome)));
  const OomContext& oom = *run.result.oom;
  RematFrontier f = AnalyzeFrontier(run.engine, config.budget);
  f.at_oom = true;
  if (f.memory_usage != oom.memory_usage || f.pinned_bytes != oom.pinned_memory ||
      f.locked_bytes != oom.locked_memory || f.request != oom.request ||
      static_cast<int32_t>(f.frames.size()) != oom.remat_depth + 1)
    throw Error(fmt::format(
        "internal error: the frontier's OOM state (memory {}, pinned {}, locked {}, depth {}) "
        "differs from the run's (memory {}, pinned {}, locked {}, depth {})",
        f.memory_usage, f.pinned_bytes, f.locked_bytes, f.frames.size() - 1, oom.memory_usage,
        oom.pinned_memory, oom.locked_memory, oom.remat_depth));
  return f;
}

RematFrontier FrontierAtDecision(const Trace& trace, const ReplayConfig& config, int64_t decision) {
  CheckFrontierConfig(config);
  if (decision < 0) throw Error(fmt::format("decision {} does not exist: decisions count from 0", decision));
  ReplayState run = ReplayWithState(trace, config, decision);
  if (run.result.outcome != Outcome::kStopped) {
    const int64_t decisions = run.engine.decisions();
    throw Error(fmt::format("decision {} does not exist: the run has {} decisions (0..{})", decision,
                            decisions, decisions - 1));
  }
  RematFrontier f = AnalyzeFrontier(run.engine, config.budget);
  f.decision = decision;
  return f;
}

}  // namespace dtr
