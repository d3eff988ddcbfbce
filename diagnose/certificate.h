// A certificate: the evidence behind a verdict about a budget, as data. It is
// what dtrcheck checked, in a form a reader can check again; renderers show
// it, nobody parses it back from text.
//
// Three kinds (DESIGN.md, "What the diagnoser proves"):
//  - kScript: an eviction script that completes within the budget. Checked by
//    the schedule checker, which replayed the script at `budget` and saw it
//    pass (checker/proofs/schedule_checker.h). Proves the budget feasible, so an OOM
//    of the heuristic there is policy-induced.
//  - kStaticBound: an operator (or the final pins) whose pinned inputs,
//    arguments and outputs alone need more than `budget`, whatever is
//    evicted (checker/proofs/memory_bound.h). Checked by that arithmetic. Proves the
//    budget infeasible for every schedule: an inherent OOM.
//  - kUnsatWindow: a Z3 encoding of a window of the program that
//    over-approximates every execution, UNSAT at `budget`
//    (checker/proofs/feasibility.h). Checked by Z3. Also proves an inherent OOM.
//  - kCut: the keep-or-recompute cut refutes `budget` at one operator's frame
//    (checker/proofs/cut_bound.h): what must stay material there, or be recomputed
//    at a cost above the budget, exceeds it. Checked by that argument (a
//    maximum flow and sums). Also proves an inherent OOM.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "checker/proofs/cut_bound.h"
#include "checker/proofs/feasibility.h"
#include "checker/proofs/memory_bound.h"
#include "diagnose/schedule_witness.h"

namespace dtr {

enum class CertificateKind { kScript, kStaticBound, kUnsatWindow, kCut };
std::string_view CertificateKindName(
    CertificateKind k);  // "script", "static-bound", "unsat-window", "cut"

enum class CheckedBy { kScheduleChecker, kMemoryBound, kZ3, kCutArgument };
// "schedule-checker", "memory-bound", "z3", "cut-argument"
std::string_view CheckedByName(CheckedBy c);

struct Certificate {
  CertificateKind kind = CertificateKind::kScript;
  int64_t budget = 0;  // the budget it speaks about
  CheckedBy checked_by = CheckedBy::kScheduleChecker;
  // kScript: the script, where it came from, and the schedule checker's run
  // of it at `budget`.
  std::optional<Witness> script;
  // kStaticBound: the bound and what needs it (OperatorNeed::op -1: the
  // storages pinned at the end of the program).
  int64_t bound = 0;
  OperatorNeed need;
  // kUnsatWindow: the query Z3 answered.
  std::optional<WindowQuery> window;
  // kCut: the frame whose cut (or kept storages) exceeds the budget.
  std::optional<CutArgument> cut;

  // Whether the recorded check establishes the claim at `budget`: the script
  // passed the checker at this very budget; the bound exceeds it; Z3 answered
  // UNSAT at it; the cut's sums exceed it. Reads the stored results, runs
  // nothing.
  bool Holds() const;
};

Certificate ScriptCertificate(int64_t budget, const Witness& witness);
Certificate StaticBoundCertificate(int64_t budget, const MemoryBound& bound);
Certificate UnsatWindowCertificate(int64_t budget, const WindowQuery& query);
Certificate CutCertificate(int64_t budget, const CutArgument& argument);

}  // namespace dtr
