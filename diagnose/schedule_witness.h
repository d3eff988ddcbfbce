// The search for a witness that a budget is feasible: an eviction script that
// the schedule checker passes at that budget. Sources, in order:
//  1. heuristic runs at the budget itself (a passing run's script);
//  2. heuristic runs at lower budgets: a run that passes at B' < B never had
//     more than B' in use, so its script is a candidate at B. Each run's
//     exact budget interval (RunResult::budget_lo) lets the search jump to the
//     next distinct behaviour below, then it descends in growing steps;
//  3. counterfactual replays at the budget: one decision near the failure
//     takes the runner-up instead of the heuristic's choice;
//  4. an offline next-use (Belady-like) policy that knows the whole program;
//  5. optionally (WitnessOptions::plan_seconds), checkpoint plans
//     (diagnose/schedule_search.h): low-memory scripts built from the top,
//     independent of any heuristic;
//  6. Z3: a plan of the window around the failure (or the whole program when
//     it is small) with the entry state fixed to the run's state there,
//     turned into script entries and completed by the heuristic;
//  7. optionally, rolling Z3 plans over the whole program.
// Every candidate is replayed by the schedule checker at the budget; only a
// passing one is returned. Nothing else is trusted.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "checker/engine/replay.h"
#include "checker/proofs/eviction_script.h"
#include "checker/proofs/feasibility.h"
#include "checker/proofs/schedule_checker.h"
#include "model/trace.h"

namespace dtr {

struct WitnessOptions {
  RuntimeKind runtime = RuntimeKind::kV2EagerOptimized;
  std::vector<const HeuristicSpec*> heuristics;  // the first is the run being explained; empty: DTR
  int32_t jumps = 4;                             // interval jumps below the budget, per heuristic
  int32_t descents = 6;                          // then budgets 0.5%, 1%, 2%, ... lower
  int32_t counterfactuals = 24;  // single overrides among the last decisions before the failure
  bool next_use = true;
  // The next-use policy gives up after this many computations (0: sized to
  // the trace, NextUseComputationsFor). Where no schedule fits it thrashes
  // and, uncapped, ran for many minutes on the Unrolled GAN; a count, not a
  // time, so the answer is the same at any load.
  int64_t next_use_computations = 0;
  bool use_z3 = true;
  SolverLimits limits;
  int32_t z3_whole_program_ops = 80;  // plan the whole program up to this many operators
  int32_t z3_window_ops =
      8;  // else a window of this many operators before the failure (and 2 after)
  // 7. (off by default: one Z3 call per few operators) rolling Z3 plans over
  //    the whole program, each from the state the previous ones led to.
  int32_t rolling_ops = 0;  // operators per rolling plan; 0: off
  // 5. (off by default) checkpoint plans (diagnose/schedule_search.h) for at
  //    most this many seconds, stopped at the first whose peak fits.
  double plan_seconds = 0;
  // Wall seconds for the whole search (0: no limit). Checked before each
  // candidate; a Z3 call gets at most the time left. A search that runs out
  // records an attempt "time limit" and returns without a witness.
  double seconds = 0;
};

// The next-use policy's default cap: 4 computations per program step (a
// run that fits makes about one per step, and 1.1 per step at the
// Unrolled GAN's lowest passing grid ratio), at least 50,000.
int64_t NextUseComputationsFor(const Trace& trace);

struct Witness {
  std::string source;  // "run", "lower-budget run", "counterfactual", "next-use", "z3 plan", ...
  std::string description;  // what produced the script, for people
  EvictionScript script;
  ScheduleCheck check;  // passed at the budget
};

struct WitnessAttempt {
  std::string source;
  std::string description;
  std::string outcome;  // what the replay or the checker said
};

struct WitnessSearch {
  std::optional<Witness> witness;
  std::vector<WitnessAttempt> attempts;  // in order, the successful one last
  std::vector<std::string>
      notes;  // facts learnt on the way (e.g. a Z3 plan that is UNSAT from the run's state)
};

using WitnessProgress = std::function<void(const std::string&)>;

// budget_memory: the baseline peak memory (to print ratios).
WitnessSearch FindScheduleWitness(const Trace& trace, int64_t baseline_memory, int64_t budget,
                                  const WitnessOptions& options,
                                  const WitnessProgress& progress = nullptr);

}  // namespace dtr
