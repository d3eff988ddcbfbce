// OOM classification: why did this budget fail, and could any eviction
// order have fit it? Every verdict but "undetermined" carries a certificate
// (diagnose/certificate.h) checked here:
//  - policy-induced (explain) / feasible (prove): an eviction script the
//    schedule checker passed at the budget (diagnose/schedule_witness.h);
//  - inherent: the static memory bound exceeds the budget
//    (checker/proofs/memory_bound.h), or the keep-or-recompute cut refutes it
//    (checker/proofs/cut_bound.h), or a Z3 window encoding that over-approximates
//    every execution is UNSAT at the budget (checker/proofs/feasibility.h);
//  - undetermined: neither was found within the limits; the bounds found and
//    the limits hit are reported.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checker/engine/replay.h"
#include "checker/proofs/cut_bound.h"
#include "checker/proofs/feasibility.h"
#include "checker/proofs/memory_bound.h"
#include "diagnose/certificate.h"
#include "diagnose/certificate_store.h"
#include "diagnose/remat_frontier.h"
#include "diagnose/schedule_witness.h"
#include "model/trace.h"

namespace dtr {

enum class Verdict {
  kFeasible,       // prove: some script fits (verified)
  kPolicyInduced,  // explain: the heuristic OOMs, but some script fits (verified)
  kInherent,       // no script fits (proven)
  kUndetermined,
};
// "feasible", "policy-induced", "inherent", "undetermined"
std::string_view VerdictName(Verdict v);

struct ClassifyOptions {
  WitnessOptions witness;  // its heuristics: explain puts the run's heuristic first
  int32_t windows = 6;     // Z3 windows tried for an inherent proof
  int32_t window_ops = 6;  // operators per window
  bool cut = true;         // try the keep-or-recompute cut (checker/proofs/cut_bound.h)
  // Certificates stored for this trace and runtime (diagnose/certificate_store.h),
  // or null. A stored script is checked again at the budget; a stored bound
  // says which argument to run again there.
  const RuntimeCertificates* stored = nullptr;
};

struct Classification {
  int64_t budget = 0;
  Verdict verdict = Verdict::kUndetermined;
  std::optional<RunResult> run;           // explain: the heuristic's run
  std::optional<RematFrontier> frontier;  // explain: at its OOM
  MemoryBound static_bound;
  // What proves the verdict: kScript for feasible and policy-induced,
  // kStaticBound, kCut or kUnsatWindow for inherent; none when undetermined.
  std::optional<Certificate> certificate;
  WitnessSearch witness_search;             // its witness, if any, is the script certificate's
  std::vector<WindowQuery> window_queries;  // in the order asked
  int64_t proven_infeasible_below = 0;  // every budget below is proven infeasible (static bound)
  bool from_store = false;  // the certificate came from the certificate store (checked again here)
  std::vector<std::string> store_notes;  // stored certificates that did not apply, and why
  // A stored certificate refuted when checked again: a bound whose argument
  // does not refute a budget below it, a schedule that fails the checker at
  // its own stored peak. The store drops them (diagnose/certificate_records.h).
  bool stored_bound_refuted = false;
  bool stored_schedule_refuted = false;
};

using ClassifyProgress = std::function<void(const std::string&)>;

// The Z3 windows worth asking at `budget`: around the operators whose static
// need is closest to it (and `focus`, if >= 0), and the end of the program.
std::vector<OpWindow> InherentWindows(const Trace& trace, const MemoryBound& bound, int32_t count,
                                      int32_t ops, OpId focus = -1);

// Explains the OOM of the run `config` describes (throws Error if it passes).
Classification ExplainOom(const Trace& trace, const Baseline& baseline, const ReplayConfig& config,
                          const ClassifyOptions& options,
                          const ClassifyProgress& progress = nullptr);

// Whether any script fits `budget`, whatever the policy.
Classification ProveBudget(const Trace& trace, const Baseline& baseline, int64_t budget,
                           const ClassifyOptions& options,
                           const ClassifyProgress& progress = nullptr);

}  // namespace dtr
