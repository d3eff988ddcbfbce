// What a replay reports: the runtimes it can reproduce, the events an
// observer sees while it runs, and the result at its end.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checker/farm/farm_codec.h"
#include "model/trace.h"

namespace dtr {

enum class RuntimeKind {
  kV1,                 // banishing (RuntimeV1); also computes the baseline
  kV2,                 // lazy, no incremental regions (RuntimeV2)
  kV2Eager,            // eager eviction, no incremental regions (RuntimeV2Eager)
  kV2Optimized,        // lazy, incremental regions and eq-classes (RuntimeV2Optimized)
  kV2EagerOptimized,   // the default (RuntimeV2EagerOptimized)
};

std::string_view RuntimeName(RuntimeKind kind);
RuntimeKind ParseRuntime(std::string_view name);  // throws Error for an unknown name
std::vector<std::string_view> RuntimeNames();
// Whether the runtime evicts a storage when its last external reference goes.
bool EagerEvictions(RuntimeKind runtime);
// Whether the runtime maintains evicted regions and equivalence classes.
bool OptimizedRuntime(RuntimeKind runtime);

constexpr int64_t kInfiniteBudget = std::numeric_limits<int64_t>::max();

enum class Outcome {
  kPass,
  kOom,            // the eviction pool ran empty (or, with a script, memory exceeded the budget)
  kThrash,         // remat compute passed the overhead limit
  kInvalidScript,  // a scripted eviction named a storage that could not be evicted then
  kStopped,        // an observer asked to stop; the run did not end
};
std::string_view OutcomeName(Outcome o);  // "pass", "oom", "thrash", "invalid-script", "stopped"

// What a score is made of, to explain a decision. staleness is -1 for +inf
// (never accessed); terms a heuristic does not use are still filled in.
// The last access of a storage never accessed (simrd's -math.inf): its
// staleness is +inf.
constexpr int64_t kNeverAccessed = std::numeric_limits<int64_t>::min();

struct ScoreTerms {
  int64_t cost = 0;  // the heuristic's cost term (compute, e*, eq-class, 1, or last access for LRU)
  int64_t size = 0;
  int64_t staleness = 0;
  bool operator==(const ScoreTerms&) const = default;
};

// A moment where the heuristic chose a storage to evict. An "event" counts
// operator computations (model and remat) from 0; the eviction makes room
// for computation number `event`.
struct DecisionPoint {
  int64_t index = 0;  // heuristic decisions before this one in the run
  int64_t event = 0;
  int64_t clock = 0;
  int32_t program_step = 0;  // index into Trace::program
  int32_t remat_depth = 0;   // pending materializations below the program operator
  TensorId tensor = 0;       // the tensor being materialized
  int64_t request = 0;       // its operator's total output size
  int64_t memory_usage = 0;
  int32_t pool_size = 0;
  StorageId chosen = -1;
  double score = 0;
  ScoreTerms terms;
  StorageId runner_up = -1;  // best of the rest by the same rule; -1 if none was scored
  double runner_up_score = 0;
  ScoreTerms runner_up_terms;
  bool overridden = false;   // chosen came from ReplayConfig::overrides
  bool operator==(const DecisionPoint&) const = default;
};

struct EagerEviction {
  StorageId storage = 0;
  int64_t event = 0;  // computations before it
  int64_t clock = 0;
  int32_t program_step = 0;
};

struct Computation {
  int64_t event = 0;
  TensorId tensor = 0;
  bool remat = false;
  int64_t clock = 0;         // after it
  int64_t memory_usage = 0;  // right after its outputs were allocated
  int32_t program_step = 0;
  int32_t remat_depth = 0;
};

// What an observer answers: go on, or stop the run where it is (the
// replay then ends with Outcome::kStopped and the engine stays at that point).
enum class Flow : bool { kContinue, kStop };

// Receives a run's events as they happen; all optional. A decision is
// announced twice: OnDecisionDue before the policy chooses (only where the
// decision is: `chosen` is -1; a stop here leaves the decision unmade), then
// OnDecision with the choice (a stop there comes after its eviction).
class ReplayObserver {
 public:
  virtual ~ReplayObserver() = default;
  virtual Flow OnDecisionDue(const DecisionPoint&) { return Flow::kContinue; }
  virtual Flow OnDecision(const DecisionPoint&) { return Flow::kContinue; }
  // Whether OnDecision() reads what the policy fills in beyond `chosen`
  // (score, terms, runner-up, overridden), which takes a scan of the pool;
  // without them `chosen` and the rest are still set.
  virtual bool WantsScores() const { return true; }
  virtual Flow OnEagerEviction(const EagerEviction&) { return Flow::kContinue; }
  virtual Flow OnComputation(const Computation&) { return Flow::kContinue; }
};

// Hands every event to two observers, first `a` then `b`, each whatever the
// other answers; the run stops if either asks. The policy fills in the
// scores if either wants them.
class TeeObserver : public ReplayObserver {
 public:
  TeeObserver(ReplayObserver& a, ReplayObserver& b) : a_(a), b_(b) {}
  Flow OnDecisionDue(const DecisionPoint& d) override {
    return Both(&ReplayObserver::OnDecisionDue, d);
  }
  Flow OnDecision(const DecisionPoint& d) override { return Both(&ReplayObserver::OnDecision, d); }
  bool WantsScores() const override { return a_.WantsScores() || b_.WantsScores(); }
  Flow OnEagerEviction(const EagerEviction& e) override {
    return Both(&ReplayObserver::OnEagerEviction, e);
  }
  Flow OnComputation(const Computation& c) override {
    return Both(&ReplayObserver::OnComputation, c);
  }

 private:
  template <class Event>
  Flow Both(Flow (ReplayObserver::*on)(const Event&), const Event& e) {
    const Flow x = (a_.*on)(e);
    const Flow y = (b_.*on)(e);
    return x == Flow::kStop || y == Flow::kStop ? Flow::kStop : Flow::kContinue;
  }
  ReplayObserver& a_;
  ReplayObserver& b_;
};

// An eviction script entry: before computation `event`, evict `storage`.
// Entries sorted by event; several may share one.
struct ScriptedEviction {
  int64_t event = 0;
  StorageId storage = 0;
};

struct ScriptFailure {
  int64_t entry = -1;  // index of the offending script entry, -1 if memory exceeded the budget
  int64_t event = 0;
  std::string reason;
};

// The state at an OOM: the pending materializations when the eviction pool ran empty.
struct OomContext {
  std::string program_op;  // the top-level program operator being computed
  std::string op;          // operator of the innermost pending materialization
  std::string tensor;      // its tensor
  int64_t request = 0;     // that operator's total output size
  int64_t memory_usage = 0;
  int64_t pinned_memory = 0;   // material pinned storages
  int64_t locked_memory = 0;   // material, unpinned storages holding locks
  int32_t locked_storages = 0;
  int32_t remat_depth = 0;     // pending materializations below the program operator
  int32_t program_step = 0;    // index into Trace::program
  int64_t event = 0;           // the computation that did not fit
  std::vector<TensorId> frames;  // pending materializations, outermost first
};

struct RunResult {
  Outcome outcome = Outcome::kPass;
  int64_t budget = 0;
  int64_t clock = 1;  // simrd's clock starts at 1
  int64_t remat_compute = 0;
  int64_t model_compute = 0;
  int64_t heuristic_evals = 0;
  int64_t max_memory = 0;
  int64_t bottleneck_memory = 0;
  int64_t const_memory = 0;
  int64_t heuristic_evictions = 0;
  int64_t eager_evictions = 0;  // eager (V2 Eager) or banishing (V1) evictions
  int32_t distinct_heuristic_evicted = 0;
  int32_t distinct_evicted = 0;
  std::vector<int32_t> evict_count;            // per storage, both kinds
  std::vector<int32_t> heuristic_evict_count;  // per storage
  int64_t events = 0;  // computations performed
  std::optional<OomContext> oom;
  std::optional<ScriptFailure> script_failure;
  // Every budget in [budget_lo, budget_hi] (bytes) makes every budget
  // comparison of this run come out the same, hence the same run.
  int64_t budget_lo = 0;
  int64_t budget_hi = kInfiniteBudget;

  int64_t evictions() const { return heuristic_evictions + eager_evictions; }
};

// Every field, the per-storage counts as (index, count) pairs of the storages
// evicted at least once (checker/engine/run_result_codec.cc), so that replays can be
// spread over MPI ranks (checker/farm/parallel.h).
template <>
struct FarmCodec<RunResult> {
  static void Encode(const RunResult& r, ByteWriter& w);
  static RunResult Decode(ByteReader& r);
};

}  // namespace dtr
