// The optimized replay against the plain one (tests/naive_replay.cc) on many
// random small traces, for every heuristic and runtime and several budgets:
// every counter, the OOM context and the sequence of decisions must agree.
// A failure prints the seed; rerun one with DTRCHECK_SEED=<seed>.
#include <doctest/doctest.h>

#include <cstdlib>

#include "checker/engine/evicted_regions.h"
#include "checker/engine/heuristic.h"
#include "checker/engine/heuristic_policy.h"
#include "checker/engine/replay.h"
#include "checker/farm/farm_codec.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "tests/naive_replay.h"
#include "tests/random_trace.h"
#include "tests/test_paths.h"

namespace dtr::testing {
namespace {

struct DecisionRecorder : ReplayObserver {
  std::vector<StorageId> chosen;
  Flow OnDecision(const DecisionPoint& d) override {
    chosen.push_back(d.chosen);
    return Flow::kContinue;
  }
};

void ExpectSame(const RunResult& fast, const NaiveRun& naive,
                const std::vector<StorageId>& fast_decisions) {
  const RunResult& slow = naive.result;
  CHECK(OutcomeName(fast.outcome) == OutcomeName(slow.outcome));
  CHECK(fast.clock == slow.clock);
  CHECK(fast.remat_compute == slow.remat_compute);
  CHECK(fast.model_compute == slow.model_compute);
  CHECK(fast.heuristic_evals == slow.heuristic_evals);
  CHECK(fast.max_memory == slow.max_memory);
  CHECK(fast.bottleneck_memory == slow.bottleneck_memory);
  CHECK(fast.const_memory == slow.const_memory);
  CHECK(fast.heuristic_evictions == slow.heuristic_evictions);
  CHECK(fast.eager_evictions == slow.eager_evictions);
  CHECK(fast.distinct_evicted == slow.distinct_evicted);
  CHECK(fast.distinct_heuristic_evicted == slow.distinct_heuristic_evicted);
  CHECK(fast.evict_count == slow.evict_count);
  CHECK(fast_decisions == naive.decisions);
  REQUIRE(fast.oom.has_value() == slow.oom.has_value());
  if (fast.oom) {
    CHECK(fast.oom->program_op == slow.oom->program_op);
    CHECK(fast.oom->op == slow.oom->op);
    CHECK(fast.oom->tensor == slow.oom->tensor);
    CHECK(fast.oom->request == slow.oom->request);
    CHECK(fast.oom->memory_usage == slow.oom->memory_usage);
    CHECK(fast.oom->pinned_memory == slow.oom->pinned_memory);
    CHECK(fast.oom->locked_memory == slow.oom->locked_memory);
    CHECK(fast.oom->locked_storages == slow.oom->locked_storages);
    CHECK(fast.oom->remat_depth == slow.oom->remat_depth);
  }
}

// Every shrink compared with a rebuild while it lives (a difference throws).
struct VerifyShrinks {
  VerifyShrinks() { EvictedRegions::set_verify_shrinks(true); }
  ~VerifyShrinks() { EvictedRegions::set_verify_shrinks(false); }
  VerifyShrinks(const VerifyShrinks&) = delete;
  VerifyShrinks& operator=(const VerifyShrinks&) = delete;
};

// When forward walks are deferred, while it lives.
struct DeferWalks {
  explicit DeferWalks(EvictedRegions::DeferWalks when) { EvictedRegions::set_defer_walks(when); }
  ~DeferWalks() { EvictedRegions::set_defer_walks(EvictedRegions::DeferWalks::kWhenCheaper); }
  DeferWalks(const DeferWalks&) = delete;
  DeferWalks& operator=(const DeferWalks&) = delete;
};

// The largest walk Derive() counts as small, while it lives.
struct DeriveWalk {
  explicit DeriveWalk(size_t storages) { EvictedRegions::set_derive_walk(storages); }
  ~DeriveWalk() { EvictedRegions::set_derive_walk(EvictedRegions::kDefaultDeriveWalk); }
  DeriveWalk(const DeriveWalk&) = delete;
  DeriveWalk& operator=(const DeriveWalk&) = delete;
};

// From which pool size choices use the score index, while it lives; with
// `verify`, each indexed choice is checked against a scan (a difference throws).
struct IndexFromPool {
  IndexFromPool(int32_t pool_size, bool verify) { HeuristicPolicy::set_index_from_pool(pool_size, verify); }
  ~IndexFromPool() { HeuristicPolicy::set_index_from_pool(kDefault); }
  IndexFromPool(const IndexFromPool&) = delete;
  IndexFromPool& operator=(const IndexFromPool&) = delete;
  static constexpr int32_t kDefault = 1024;  // HeuristicPolicy's
};

bool Supported(const HeuristicSpec& h, RuntimeKind rt) {
  bool optimized = rt == RuntimeKind::kV2Optimized || rt == RuntimeKind::kV2EagerOptimized;
  return optimized || !(h.features & (kFeatureRegions | kFeatureEqClass));
}

TEST_CASE("optimized replay equals the plain replay on random traces") {
  uint64_t first = 1, last = 250;
  if (const char* env = std::getenv("DTRCHECK_SEED"))
    first = last = std::strtoull(env, nullptr, 10);
  size_t runs = 0, parsed = 0, oom = 0, evicting = 0, pinned_absorb = 0, ordered = 0;
  // Every region the optimized replay shrinks in place is also rebuilt from
  // scratch and compared (a throw fails the run). On odd seeds every forward
  // walk that can be deferred is, and the stale marks it leads to are
  // compared with its walk's frontier; on even seeds none is, and every
  // forward region taken from a neighbour's (Derive) is compared with a
  // walk, walks of one storage counting as large.
  const VerifyShrinks verify_shrinks;
  const DeriveWalk derive_walk(1);  // the random traces' regions are small
  const int64_t derived = EvictedRegions::verified_derived();
  // The plain fast path chooses with the score index at every decision (and
  // checks each choice and key against a scan); the observed path scans.
  const IndexFromPool index(0, /*verify=*/true);
  const int64_t indexed = HeuristicPolicy::indexed_choices();
  int64_t region_evals = 0, region_stale = 0;
  const int64_t growths = EvictedRegions::verified_growths();
  for (uint64_t seed = first; seed <= last; ++seed) {
    Trace trace = RandomTrace(seed, VariedOptions(seed));
    const DeferWalks defer_walks(seed % 2 ? EvictedRegions::DeferWalks::kAlways
                                          : EvictedRegions::DeferWalks::kNever);
    ++parsed;
    EvictedRegions regions;
    regions.Init(trace, false);
    ordered += regions.shrinks_in_place();
    Baseline baseline;
    try {
      baseline = ComputeBaseline(trace);
    } catch (const Error&) {
      continue;
    }
    for (const HeuristicSpec& h : AllHeuristics()) {
      if (h.cost == CostTerm::kRandom) continue;
      for (RuntimeKind rt : {RuntimeKind::kV1, RuntimeKind::kV2, RuntimeKind::kV2Eager,
                             RuntimeKind::kV2Optimized, RuntimeKind::kV2EagerOptimized}) {
        if (!Supported(h, rt)) continue;
        for (double ratio : {0.5, 0.7, 0.8, 0.9, 0.95}) {
          ReplayConfig config;
          config.runtime = rt;
          config.heuristic = &h;
          config.budget = BudgetForRatio(baseline.memory, ratio);
          INFO("seed ", seed, " heuristic ", h.name, " runtime ", RuntimeName(rt), " ratio ",
               ratio);
          NaiveRun naive;
          bool naive_failed = false;
          std::string naive_error;
          try {
            naive = NaiveReplay(trace, config);
          } catch (const Error& e) {
            naive_failed =
                true;  // a state where simrd itself asserts (RuntimeV1 pinning an evicted child)
            naive_error = e.what();
          }
          INFO("plain replay error: ", naive_error);
          // Twice: the plain fast path, and the observed path that also
          // reports each decision.
          DecisionRecorder recorder;
          RunResult fast, observed;
          bool fast_failed = false;
          try {
            fast = Replay(trace, config);
            config.observer = &recorder;
            observed = Replay(trace, config);
          } catch (const Error&) {
            fast_failed = true;
          }
          // std::logic_error from a shrink that differs from a rebuild is not an Error: it fails
          // the test.
          if (naive_error == kPinnedAbsorbAssertion && !fast_failed) {
            ++pinned_absorb;  // the documented departure from simrd (tests/naive_replay.h)
            continue;
          }
          REQUIRE(fast_failed == naive_failed);
          if (fast_failed) continue;
          ExpectSame(fast, naive, naive.decisions);
          ExpectSame(observed, naive, recorder.chosen);
          ++runs;
          region_evals += naive.region_evaluations;
          region_stale += naive.region_stale_evaluations;
          oom += fast.outcome == Outcome::kOom;
          evicting += fast.heuristic_evictions > 0;
        }
      }
    }
  }
  MESSAGE("compared ", runs, " runs on ", parsed, " random traces (", ordered,
          " whose regions shrink in place): ", oom, " OOM, ", evicting, " with evictions; ",
          pinned_absorb, " runs where simrd would stop in Region.absorb on a pinned region; ",
          region_stale, " of ", region_evals,
          " region-based scores differ from a from-scratch rebuild; ",
          EvictedRegions::verified_derived() - derived, " forward regions taken from neighbours");
  if (first != last) {
    CHECK(evicting > runs / 4);  // the budgets really make the heuristics work
    CHECK(oom > 0);
    CHECK(runs - oom > runs / 20);  // and many runs pass
    CHECK(pinned_absorb < runs / 100);
    CHECK(region_stale > 0);  // simrd's incremental numbers really differ from from-scratch ones
    CHECK(ordered > parsed / 4);  // shrinking in place is exercised, not only the walks
    CHECK(EvictedRegions::verified_growths() > growths);  // and so is growing after it
    CHECK(EvictedRegions::verified_derived() > derived);  // and taking regions from neighbours
    CHECK(HeuristicPolicy::indexed_choices() - indexed > runs);  // and the score index
  }
}

// The same check of shrinking in place on the public traces, whose regions
// are far larger than random ones: every shrink of every run is compared
// with a rebuild from scratch (a difference throws). Each run twice: every
// forward walk that can be deferred deferred, and none (so that every
// rematerialized storage's region is walked or taken from a neighbour's,
// each one taken compared with a walk).
TEST_CASE("regions shrunk in place equal rebuilt ones on the public traces") {
  using When = EvictedRegions::DeferWalks;
  const VerifyShrinks verify_shrinks;
  const int64_t before = EvictedRegions::verified_shrinks();
  const int64_t derived = EvictedRegions::verified_derived();
  const int64_t growths = EvictedRegions::verified_growths();
  const int64_t raced = EvictedRegions::verified_raced_walks();
  const int64_t lost = EvictedRegions::verified_lost_walks();
  struct Case {
    const char* trace;
    double ratio;
  };
  for (const Case& c : {Case{"resnet32", 0.1}, Case{"unet", 0.42}, Case{"lstm", 0.266},
                        Case{"treelstm", 0.2}, Case{"transformer", 0.2}, Case{"inceptionv4", 0.3},
                        Case{"unroll_gan", 0.3}, Case{"tv_densenet121", 0.2}}) {
    Trace trace = LoadTrace(TracePath(c.trace));
    const Baseline baseline = ComputeBaseline(trace);
    for (const char* name : {"DTR", "MSPS"}) {
      for (const When when : {When::kAlways, When::kNever}) {
        const DeferWalks defer_walks(when);
        ReplayConfig config;
        config.heuristic = &FindHeuristic(name);
        config.budget = BudgetForRatio(baseline.memory, c.ratio);
        INFO(c.trace, " ", c.ratio, " ", name, when == When::kNever ? " deferring none" : "");
        const int64_t shrinks = EvictedRegions::verified_shrinks();
        const RunResult result = Replay(trace, config);
        CHECK(result.heuristic_evictions > 0);
        CHECK(EvictedRegions::verified_shrinks() > shrinks);
      }
    }
  }
  MESSAGE((EvictedRegions::verified_shrinks() - before), " shrinks compared with rebuilds, ",
          (EvictedRegions::verified_growths() - growths), " of them grown after shrinking, ",
          (EvictedRegions::verified_raced_walks() - raced), " settled by a racing walk, ",
          (EvictedRegions::verified_lost_walks() - lost), " racing walks given up, ",
          (EvictedRegions::verified_derived() - derived), " forward regions taken from neighbours");
  CHECK(EvictedRegions::verified_growths() > growths);
  CHECK(EvictedRegions::verified_derived() > derived);
  // Both ends of the race: shrinks a walk settled, and shrinks that went on
  // after a walk was given up (a walk's marks must not disturb them).
  CHECK(EvictedRegions::verified_raced_walks() > raced);
  CHECK(EvictedRegions::verified_lost_walks() > lost);
}

// Deferring the forward walks of rematerialized storages (and scoring
// without them when a bound settles the comparison) against walking them at
// once, as simrd does: every field of the result, and with an observer every
// decision with its score and terms and its runner-up's, must be the same,
// whether every walk is deferred or only where that is cheaper.
TEST_CASE("deferred forward walks change no result or score on the public traces") {
  using When = EvictedRegions::DeferWalks;
  struct Log : ReplayObserver {
    std::vector<std::tuple<StorageId, double, int64_t, int64_t, StorageId, double, int64_t>> d;
    Flow OnDecision(const DecisionPoint& p) override {
      d.emplace_back(p.chosen, p.score, p.terms.cost, p.terms.staleness, p.runner_up,
                     p.runner_up_score, p.runner_up_terms.cost);
      return Flow::kContinue;
    }
  };
  auto encode = [](const RunResult& r) {
    ByteWriter w;
    FarmCodec<RunResult>::Encode(r, w);
    return w.bytes();
  };
  struct Case {
    const char* trace;
    double ratio;
  };
  int64_t decisions = 0;
  for (const Case& c : {Case{"treelstm", 0.2}, Case{"lstm", 0.3}, Case{"inceptionv4", 0.3},
                        Case{"resnet32", 0.1}, Case{"unroll_gan", 0.3}, Case{"transformer", 0.2}}) {
    Trace trace = LoadTrace(TracePath(c.trace));
    const Baseline baseline = ComputeBaseline(trace);
    for (const char* name : {"DTR", "MSPS", "AbESize"}) {
      ReplayConfig config;
      config.heuristic = &FindHeuristic(name);
      config.budget = BudgetForRatio(baseline.memory, c.ratio);
      INFO(c.trace, " ", c.ratio, " ", name);
      std::string eager;
      Log eager_log, deferred_log;
      {
        const DeferWalks walks(When::kNever);
        eager = encode(Replay(trace, config));
        config.observer = &eager_log;
        Replay(trace, config);
        config.observer = nullptr;
      }
      CHECK(encode(Replay(trace, config)) == eager);  // kWhenCheaper
      const DeferWalks walks(When::kAlways);
      CHECK(encode(Replay(trace, config)) == eager);
      config.observer = &deferred_log;
      CHECK(encode(Replay(trace, config)) == eager);
      CHECK(deferred_log.d == eager_log.d);
      decisions += static_cast<int64_t>(eager_log.d.size());
    }
  }
  CHECK(decisions > 100000);
  MESSAGE(decisions, " decisions compared");
}

// The score index against the scan it replaces, on the public traces: with
// the index at every decision (each choice and key also checked against a
// scan, which throws on a difference), and from its default pool size on,
// every field of the result must be the scan's.
TEST_CASE("the score index changes no result on the public traces") {
  auto encode = [](const RunResult& r) {
    ByteWriter w;
    FarmCodec<RunResult>::Encode(r, w);
    return w.bytes();
  };
  // The local and size-only scores thrash on the larger traces (minutes a
  // run): they run on the four smaller ones (`every`).
  struct Case {
    const char* trace;
    double ratio;
    bool every;
  };
  const int64_t before = HeuristicPolicy::indexed_choices();
  for (const Case& c : {Case{"treelstm", 0.2, false}, Case{"lstm", 0.3, false}, Case{"inceptionv4", 0.3, false},
                        Case{"unroll_gan", 0.3, false}, Case{"resnet32", 0.1, true}, Case{"transformer", 0.2, true},
                        Case{"unet", 0.42, true}, Case{"tv_densenet121", 0.2, true}}) {
    Trace trace = LoadTrace(TracePath(c.trace));
    const Baseline baseline = ComputeBaseline(trace);
    for (const char* name : {"DTR", "MSPS", "AbESize", "DTRLocal", "AbSizeStale", "LargestStorage"}) {
      if (!c.every && name == std::string_view("DTRLocal")) break;
      ReplayConfig config;
      config.heuristic = &FindHeuristic(name);
      config.budget = BudgetForRatio(baseline.memory, c.ratio);
      INFO(c.trace, " ", c.ratio, " ", name);
      std::string scanned;
      {
        const IndexFromPool never(HeuristicPolicy::kNever, false);
        scanned = encode(Replay(trace, config));
      }
      CHECK(encode(Replay(trace, config)) == scanned);
      const IndexFromPool always(0, /*verify=*/true);
      CHECK(encode(Replay(trace, config)) == scanned);
    }
  }
  const int64_t indexed = HeuristicPolicy::indexed_choices() - before;
  MESSAGE(indexed, " indexed choices");
  CHECK(indexed > 100000);
}

}  // namespace
}  // namespace dtr::testing
