// Formal feasibility queries (Z3) over a window of program operators.
//
// The encoding over-approximates every execution of the window, whatever the
// eviction choices, so that UNSAT proves that no eviction script fits the
// budget (an inherent OOM). It is a pebble game on the window's storages:
//  - time points: the budget check M_j of each window operator's model
//    computation (and, if the window reaches the end, one more point after
//    the final pins), and between two of them an interval in which any
//    number of rematerializations may happen;
//  - the entry state is free (any set of storages may be material at the
//    first point, within the budget);
//  - storages from before the window may be reloaded at any time needing only
//    their own size; storages made in the window are recomputed by their
//    operator, which needs its arguments material.
// See feasibility.cc for each constraint and why every real execution
// satisfies it. This file is the only one that talks to Z3: every call is
// wrapped, z3::exception becomes an "unknown" answer with Z3's message, and
// every solver call has a time limit.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/trace.h"

namespace dtr {

enum class SolverAnswer {
  kSat,      // the relaxation has a solution (proves nothing about the trace)
  kUnsat,    // no execution of the window fits the budget: inherent
  kUnknown,  // a limit or a solver error (see reason)
};
// "sat", "unsat", "unknown"
inline std::string_view SolverAnswerName(SolverAnswer a) {
  switch (a) {
    case SolverAnswer::kSat: return "sat";
    case SolverAnswer::kUnsat: return "unsat";
    case SolverAnswer::kUnknown: return "unknown";
  }
  return "?";
}

// Z3's default resource limit per call (its "rlimit"): on this project's
// 2-core machine, about seven CPU seconds of a hard call (1.2 to 1.5 million
// units per second on ResNet-32's 52-storage windows; docs/commands/explain.md).
inline constexpr uint32_t kDefaultZ3WorkLimit = 10'000'000;

struct SolverLimits {
  // Seconds per solver call (0: none). Off by default: a time limit cuts
  // wherever the clock says, so the answer would depend on the machine and
  // its load.
  double timeout_seconds = 0;
  // Z3's resource limit per call (its "rlimit"; 0: none): a cut at the same
  // point of the search on any machine and under any load. Both apply when
  // both are set.
  uint32_t work_limit = kDefaultZ3WorkLimit;
  // A window tracking more storages is not encoded (the encoding grows with
  // points x storages^2); the answer is kUnknown with the reason.
  int32_t max_storages = 120;
  // If set, nothing runs past it: neither a solver call nor the encoding
  // before it (seconds on a window of 120 storages, which the call's own
  // limit does not count; the call's limit counts Z3 taking in the
  // encoding, which no Z3 limit bounds). Past it, the answer is kUnknown
  // with one of the reasons below. For searches with a time limit of their
  // own.
  std::optional<std::chrono::steady_clock::time_point> deadline;
};
inline constexpr std::string_view kDeadlineWhileEncoding =
    "time limit (the deadline passed while encoding the window)";
inline constexpr std::string_view kDeadlineBeforeCall =
    "time limit (the deadline passed before the solver's check)";
inline constexpr std::string_view kDeadlineDuringCall =
    "time limit (the deadline passed during the solver's check)";

// Program operators first..last (op ids; the program computes them in id order).
struct OpWindow {
  OpId first = 0;
  OpId last = 0;
};

struct WindowQuery {
  OpWindow window;
  bool reaches_end = false;  // the window includes the final pins
  int64_t budget = 0;
  SolverAnswer answer = SolverAnswer::kUnknown;
  std::string reason;  // for kUnknown
  double seconds = 0;
  double work = 0;       // Z3's resource count the call used (what work_limit bounds)
  int32_t storages = 0;  // storages the encoding tracks
};

// Throws Error for a window outside the program.
WindowQuery QueryWindow(const Trace& trace, OpWindow window, int64_t budget,
                        const SolverLimits& limits);

// The smallest budget at which the window's relaxation is satisfiable, by
// bisection on [lo, hi] (lo: a budget known infeasible or the static bound
// minus one; hi: a budget known feasible). Every budget below
// `infeasible_below` is proven infeasible (UNSAT, or below lo + 1).
struct WindowBound {
  OpWindow window;
  bool reaches_end = false;
  int64_t infeasible_below = 0;
  int64_t sat_from = 0;  // smallest budget answered SAT (hi if none)
  int32_t queries = 0;
  int32_t unknowns = 0;  // answers that hit a limit (the interval between stays open)
  std::string skipped;   // why the window was not encoded at all, if it was not
  double seconds = 0;
  int32_t storages = 0;
};
using SolverProgress = std::function<void(const WindowQuery&)>;
// Bisection stops once the open interval is at most `resolution` bytes wide.
WindowBound BoundWindow(const Trace& trace, OpWindow window, int64_t lo, int64_t hi,
                        const SolverLimits& limits, const SolverProgress& progress = nullptr,
                        int64_t resolution = 1);

// Witness planning: the same encoding with the entry state fixed to
// `entry_material` (per storage; for a window starting at operator 0 every
// storage is immaterial), and storages from before the window that are
// material on entry never reloaded once evicted (plans are followed by a real
// runtime, which would rematerialize their ancestors). A plan proves nothing:
// only the script built from it, once checked, is evidence.
// When SAT, the storages the model keeps material at
// each time point of the window; a script builder follows them, and the
// schedule checker decides whether that script really fits.
struct WindowPlan {
  SolverAnswer answer = SolverAnswer::kUnknown;
  std::string reason;
  OpWindow window;
  bool reaches_end = false;
  // keep[j]: storages material at time point j (j = 0.. window ops - 1, then
  // the end point if reaches_end).
  std::vector<std::vector<StorageId>> keep;
};
WindowPlan PlanWindow(const Trace& trace, OpWindow window, int64_t budget,
                      const std::vector<uint8_t>& entry_material, const SolverLimits& limits);

}  // namespace dtr
