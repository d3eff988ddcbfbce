// The Z3 window encoding and the only calls into Z3.
//
// Soundness. Take any run of the trace under some eviction script that
// completes within budget B. Map it to an assignment of the encoding:
//   m[j][x]   := storage x is material at time point j (the budget check of
//                window operator j, before its outputs are allocated; for the
//                end point, after the final pins);
//   c[j][x]   := x was computed (rematerialized) at least once in the
//                interval between points j-1 and j;
//   pos[j][x] := the rank of the time of x's last computation in interval j
//                (outputs of one computation share a time; break such ties
//                in any order; storages not computed in the interval get the
//                ranks after all others).
// Every constraint below then holds for that assignment, so if the encoding
// is UNSAT no such run exists: no script fits B.
//  (C1) the arguments of window operator j are locked, hence material, at M_j.
//  (C2) at M_j memory holds the storages pinned so far (constants are pinned
//       right after their creation and never evicted), every material tracked
//       storage, and the check adds the operator's output size; a passing run
//       has memory + request <= B there. Dropping untracked material storages
//       only lowers the left side. At the end point: memory <= B holds after
//       every checked computation, hence after the last one.
//  (C3) a storage becomes material only by a computation of its operator (in
//       the interval, or as an output of operator j-1 at M_{j-1}); so one
//       material at M_j was material at M_{j-1}, or was computed in between,
//       or was created at M_{j-1}.
//  (C4) at the last computation R of x in interval j: its operator's
//       arguments are material, and so is every tracked y material at M_j that
//       was not computed after R in the interval (y was material from its own
//       last computation before R, or throughout the interval, until M_j), and
//       the pinned storages; the check adds the operator's output size, and
//       memory + request <= B. Outputs of x's own operator are left out of the
//       sum (an output already material is counted twice by the runtime; we
//       count it not at all, which is weaker). Storages from before the window
//       are relaxed further: their operator's arguments are ignored and the
//       request is their own size only (the true request is at least that).
//  (C5) distinct ranks: last computations of different operators happen at
//       different times; ties between outputs of one operator are broken as
//       above, which no constraint can tell apart (siblings are excluded from
//       each other's sums).
// The entry point's state is left free (any material set within the budget),
// which covers every history before the window.
#include "checker/proofs/feasibility.h"

#include <fmt/core.h>
#include <z3++.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>

#include "model/error.h"

namespace dtr {

namespace {

// The window's storages and time points, before any Z3 object exists.
struct WindowModel {
  struct Point {
    OpId op = -1;  // -1: the end point
    int64_t pinned = 0;
    int64_t request = 0;
    std::vector<int32_t> args;     // tracked indices, distinct
    std::vector<int32_t> outputs;  // tracked indices of the operator's new storages
  };
  std::vector<StorageId> tracked;
  std::vector<int32_t>
      created_at;  // per tracked: the point whose operator makes it, -1 before the window
  std::vector<Point> points;
  bool reaches_end = false;

  bool Exists(int32_t x, size_t point) const { return created_at[x] < static_cast<int32_t>(point); }
};

WindowModel BuildWindow(const Trace& trace, OpWindow w) {
  const OpId nops = static_cast<OpId>(trace.ops.size());
  if (w.first < 0 || w.last < w.first || w.last >= nops)
    throw Error(fmt::format("window {}..{} is outside the program's operators 0..{}", w.first,
                            w.last, nops - 1));
  auto constant_storage = [&](StorageId s) {
    return trace.op_of(trace.storages[s].root).is_constant;
  };
  std::vector<int64_t> constants_before(nops + 1, 0);  // bytes of constant storages made by ops < o
  for (OpId o = 0; o < nops; ++o) {
    const Operator& op = trace.ops[o];
    constants_before[o + 1] = constants_before[o] + (op.is_constant ? op.total_size : 0);
  }
  WindowModel m;
  std::vector<int32_t> index(trace.storages.size(), -1);
  auto track = [&](StorageId s) {
    if (index[s] < 0) {
      index[s] = static_cast<int32_t>(m.tracked.size());
      m.tracked.push_back(s);
      OpId creator = trace.tensors[trace.storages[s].root].op;
      m.created_at.push_back(creator >= w.first && creator <= w.last ? creator - w.first : -1);
    }
    return index[s];
  };
  for (OpId o = w.first; o <= w.last; ++o) {
    const Operator& op = trace.ops[o];
    WindowModel::Point p;
    p.op = o;
    p.pinned = constants_before[o];
    p.request = op.total_size;
    for (TensorId a : op.args) {
      StorageId s = trace.tensors[a].storage;
      if (constant_storage(s)) {
        // A pinned argument: counted in `pinned` already (made by an op < o).
        continue;
      }
      int32_t x = track(s);
      if (std::find(p.args.begin(), p.args.end(), x) == p.args.end()) p.args.push_back(x);
    }
    if (!op.is_constant)
      for (int32_t i = 0; i < op.num_outputs; ++i) {
        const Tensor& t = trace.tensors[op.first_output + i];
        if (!t.is_alias) p.outputs.push_back(track(t.storage));
      }
    m.points.push_back(std::move(p));
  }
  m.reaches_end = w.last == nops - 1;
  if (m.reaches_end) {
    WindowModel::Point end;
    end.pinned = constants_before[nops];
    for (const Step& st : trace.program) {
      if (st.kind != StepKind::kPin) continue;
      StorageId s = trace.tensors[st.target].storage;
      if (constant_storage(s)) continue;
      int32_t x = track(s);
      if (std::find(end.args.begin(), end.args.end(), x) == end.args.end()) end.args.push_back(x);
    }
    m.points.push_back(std::move(end));
  }
  return m;
}

using Clock = std::chrono::steady_clock;

// Thrown where SolverLimits::deadline has passed, with the reason.
struct DeadlinePassed {
  std::string_view reason;
};

// Wraps one Z3 context holding the encoding of a window with a symbolic budget.
class WindowSolver {
 public:
  // Throws DeadlinePassed if `deadline` passes while encoding.
  WindowSolver(const Trace& trace, const WindowModel& model,
               const std::vector<uint8_t>* entry_material,
               std::optional<Clock::time_point> deadline)
      : trace_(trace), model_(model), solver_(ctx_), budget_(ctx_.int_const("budget")) {
    Encode(entry_material, deadline);
  }

  // Within the limits and before the deadline (else DeadlinePassed). The
  // first push() takes in the encoding (half a second on the demo's whole
  // program), which no Z3 limit bounds: its time counts against both time
  // limits. *work: Z3's resource count the call used.
  SolverAnswer Check(int64_t budget, const SolverLimits& limits, std::string* reason,
                     double* work = nullptr) {
    const Clock::time_point start = Clock::now();
    if (limits.deadline && start >= *limits.deadline) throw DeadlinePassed{kDeadlineBeforeCall};
    solver_.push();
    solver_.add(budget_ == ctx_.int_val(budget));
    const Clock::time_point now = Clock::now();
    // The time this call may take: none unless a time limit or a deadline is set.
    std::optional<double> timeout_seconds;
    if (limits.timeout_seconds > 0)
      timeout_seconds = limits.timeout_seconds - std::chrono::duration<double>(now - start).count();
    bool by_deadline = false;
    if (limits.deadline) {
      const double left = std::chrono::duration<double>(*limits.deadline - now).count();
      if (left <= 0) {
        solver_.pop();
        throw DeadlinePassed{kDeadlineBeforeCall};
      }
      by_deadline = !timeout_seconds || left < *timeout_seconds;
      timeout_seconds = timeout_seconds ? std::min(*timeout_seconds, left) : left;
    }
    z3::params p(ctx_);
    // Z3's "timeout" is in milliseconds; UINT_MAX is its own "none".
    p.set("timeout", timeout_seconds
                         ? static_cast<unsigned>(std::clamp(*timeout_seconds * 1000.0, 1.0, 4.0e9))
                         : std::numeric_limits<unsigned>::max());
    p.set("rlimit", static_cast<unsigned>(limits.work_limit));  // 0: none (Z3's default)
    solver_.set(p);
    const double work_before = WorkCount();
    z3::check_result r = solver_.check();
    const double work_used = WorkCount() - work_before;
    if (work) *work = work_used;
    SolverAnswer answer = SolverAnswer::kUnknown;
    if (r == z3::sat) {
      answer = SolverAnswer::kSat;
      z3::model model = solver_.get_model();
      keep_.assign(model_.points.size(), {});
      for (size_t j = 0; j < model_.points.size(); ++j)
        for (size_t x = 0; x < model_.tracked.size(); ++x)
          if (model_.Exists(static_cast<int32_t>(x), j) && model.eval(m_[j][x], true).is_true())
            keep_[j].push_back(model_.tracked[x]);
    } else if (r == z3::unsat) {
      answer = SolverAnswer::kUnsat;
    } else {
      const double seconds = std::chrono::duration<double>(Clock::now() - now).count();
      const bool ran_to_timeout = timeout_seconds && seconds >= 0.9 * *timeout_seconds;
      *reason = LimitReached(limits, work_used, ran_to_timeout, by_deadline);
    }
    solver_.pop();
    return answer;
  }

  const std::vector<std::vector<StorageId>>& keep() const { return keep_; }

 private:
  // Z3's resource count so far (0 before the first check), which its work
  // limit bounds per call.
  double WorkCount() const {
    const z3::stats stats = solver_.statistics();
    for (unsigned i = 0; i < stats.size(); ++i)
      if (stats.key(i) == "rlimit count")
        return stats.is_uint(i) ? stats.uint_value(i) : stats.double_value(i);
    return 0;
  }

  // Why the last check answered unknown. Z3 says "canceled" whichever of its
  // two limits cut the call: the work the call used tells its work limit
  // from its time limit (the call ran to it).
  std::string LimitReached(const SolverLimits& limits, double work_used, bool ran_to_timeout,
                           bool by_deadline) {
    std::string z3_reason = solver_.reason_unknown();
    if (z3_reason != "canceled" && z3_reason != "timeout") return z3_reason;
    if (limits.work_limit != 0 && work_used >= limits.work_limit)
      return fmt::format("work limit (Z3 rlimit {} per call)", limits.work_limit);
    if (!ran_to_timeout) return z3_reason;
    return by_deadline ? std::string(kDeadlineDuringCall)
                       : fmt::format("time limit ({:g} s per solver call)", limits.timeout_seconds);
  }

  int64_t size(int32_t x) const { return trace_.storages[model_.tracked[x]].size; }

  void Encode(const std::vector<uint8_t>* entry, std::optional<Clock::time_point> deadline) {
    const size_t n = model_.points.size(), v = model_.tracked.size();
    z3::expr no = ctx_.bool_val(false);
    m_.assign(n, std::vector<z3::expr>(v, no));
    std::vector<std::vector<z3::expr>> c(n, std::vector<z3::expr>(v, no));
    std::vector<std::vector<z3::expr>> pos(n, std::vector<z3::expr>(v, ctx_.int_val(0)));
    for (size_t j = 0; j < n; ++j)
      for (size_t x = 0; x < v; ++x) {
        if (!model_.Exists(static_cast<int32_t>(x), j)) continue;
        m_[j][x] = ctx_.bool_const(fmt::format("m_{}_{}", j, x).c_str());
        c[j][x] = ctx_.bool_const(fmt::format("c_{}_{}", j, x).c_str());
        pos[j][x] = ctx_.int_const(fmt::format("p_{}_{}", j, x).c_str());
      }
    for (size_t j = 0; j < n; ++j) {
      const WindowModel::Point& p = model_.points[j];
      // (C1) and (C2).
      z3::expr_vector terms(ctx_);
      for (int32_t a : p.args) solver_.add(m_[j][a]);
      for (size_t x = 0; x < v; ++x)
        if (model_.Exists(static_cast<int32_t>(x), j))
          terms.push_back(
              z3::ite(m_[j][x], ctx_.int_val(size(static_cast<int32_t>(x))), ctx_.int_val(0)));
      solver_.add(ctx_.int_val(p.pinned + p.request) + Sum(terms) <= budget_);
      // The interval before point j: (C3), (C4), (C5). The first interval
      // exists only with a fixed entry state (otherwise M_0 is free).
      if (j == 0 && !entry) continue;
      z3::expr_vector ranks(ctx_);
      for (size_t x = 0; x < v; ++x) {
        int32_t xi = static_cast<int32_t>(x);
        if (!model_.Exists(xi, j)) continue;
        if (deadline && Clock::now() > *deadline)  // each x adds v terms
          throw DeadlinePassed{kDeadlineWhileEncoding};
        ranks.push_back(pos[j][x]);
        z3::expr before = j == 0 ? ctx_.bool_val((*entry)[model_.tracked[x]] != 0) : m_[j - 1][x];
        if (model_.created_at[x] != static_cast<int32_t>(j) - 1 || j == 0)
          solver_.add(z3::implies(m_[j][x], before || c[j][x]));
        // Plans only (not a proof): a storage from before the window that is
        // material on entry is kept or lost, never reloaded; the runtime would
        // have to rematerialize its ancestors, which the relaxation ignores.
        if (entry && model_.created_at[x] < 0 && (*entry)[model_.tracked[x]]) solver_.add(!c[j][x]);
        // (C4) at x's last computation in the interval.
        std::vector<int32_t> args, siblings{xi};
        int64_t request = size(xi);
        if (model_.created_at[x] >= 0) {
          const WindowModel::Point& maker = model_.points[model_.created_at[x]];
          args = maker.args;
          siblings = maker.outputs;
          request = maker.request;
        }
        int64_t fixed = p.pinned + request;
        for (int32_t a : args) fixed += size(a);
        z3::expr_vector held(ctx_);
        for (size_t y = 0; y < v; ++y) {
          int32_t yi = static_cast<int32_t>(y);
          if (!model_.Exists(yi, j)) continue;
          if (std::find(siblings.begin(), siblings.end(), yi) != siblings.end()) continue;
          if (std::find(args.begin(), args.end(), yi) != args.end()) continue;
          held.push_back(z3::ite(m_[j][y] && (!c[j][y] || pos[j][y] < pos[j][x]),
                                 ctx_.int_val(size(yi)), ctx_.int_val(0)));
        }
        solver_.add(z3::implies(c[j][x], ctx_.int_val(fixed) + Sum(held) <= budget_));
      }
      if (ranks.size() > 1) solver_.add(z3::distinct(ranks));
    }
  }

  z3::expr Sum(const z3::expr_vector& terms) {
    if (terms.empty()) return ctx_.int_val(0);
    return z3::sum(terms);
  }

  const Trace& trace_;
  const WindowModel& model_;
  z3::context ctx_;
  z3::solver solver_;
  z3::expr budget_;
  std::vector<std::vector<z3::expr>> m_;
  std::vector<std::vector<StorageId>> keep_;
};

std::string TooLarge(const WindowModel& model, const SolverLimits& limits) {
  if (static_cast<int32_t>(model.tracked.size()) <= limits.max_storages) return "";
  return fmt::format("the window tracks {} storages, over the limit of {}", model.tracked.size(),
                     limits.max_storages);
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

WindowQuery QueryWindow(const Trace& trace, OpWindow window, int64_t budget,
                        const SolverLimits& limits) {
  WindowModel model = BuildWindow(trace, window);
  WindowQuery q;
  q.window = window;
  q.reaches_end = model.reaches_end;
  q.budget = budget;
  q.storages = static_cast<int32_t>(model.tracked.size());
  if (std::string why = TooLarge(model, limits); !why.empty()) {
    q.reason = why;
    return q;
  }
  auto start = std::chrono::steady_clock::now();
  try {
    WindowSolver solver(trace, model, nullptr, limits.deadline);
    q.answer = solver.Check(budget, limits, &q.reason, &q.work);
  } catch (const z3::exception& e) {
    q.answer = SolverAnswer::kUnknown;
    q.reason = fmt::format("z3 error: {}", e.msg());
  } catch (const DeadlinePassed& e) {
    q.answer = SolverAnswer::kUnknown;
    q.reason = e.reason;
  }
  q.seconds = SecondsSince(start);
  return q;
}

WindowBound BoundWindow(const Trace& trace, OpWindow window, int64_t lo, int64_t hi,
                        const SolverLimits& limits, const SolverProgress& progress,
                        int64_t resolution) {
  WindowModel model = BuildWindow(trace, window);
  WindowBound b;
  b.window = window;
  b.reaches_end = model.reaches_end;
  b.storages = static_cast<int32_t>(model.tracked.size());
  b.infeasible_below = lo + 1;
  b.sat_from = hi;
  if (std::string why = TooLarge(model, limits); !why.empty()) {
    b.skipped = why;
    return b;
  }
  auto start = std::chrono::steady_clock::now();
  try {
    WindowSolver solver(trace, model, nullptr, limits.deadline);
    // Invariant: lo is proven infeasible (or assumed so by the caller), and
    // the region between lo and hi is still to be decided.
    while (hi - lo > std::max<int64_t>(1, resolution)) {
      int64_t mid = lo + (hi - lo) / 2;
      WindowQuery q;
      q.window = window;
      q.reaches_end = model.reaches_end;
      q.budget = mid;
      q.storages = b.storages;
      auto t0 = std::chrono::steady_clock::now();
      q.answer = solver.Check(mid, limits, &q.reason, &q.work);
      q.seconds = SecondsSince(t0);
      ++b.queries;
      if (progress) progress(q);
      if (q.answer == SolverAnswer::kUnsat) {
        lo = mid;
        b.infeasible_below = mid + 1;
      } else {
        if (q.answer == SolverAnswer::kSat)
          b.sat_from = mid;
        else
          ++b.unknowns;
        hi = mid;  // with an unknown, keep proving what can be proven below it
      }
    }
  } catch (const z3::exception& e) {
    ++b.unknowns;
  } catch (const DeadlinePassed&) {
    ++b.unknowns;  // the interval left stays open
  }
  b.seconds = SecondsSince(start);
  return b;
}

WindowPlan PlanWindow(const Trace& trace, OpWindow window, int64_t budget,
                      const std::vector<uint8_t>& entry_material, const SolverLimits& limits) {
  WindowModel model = BuildWindow(trace, window);
  WindowPlan plan;
  plan.window = window;
  plan.reaches_end = model.reaches_end;
  if (std::string why = TooLarge(model, limits); !why.empty()) {
    plan.reason = why;
    return plan;
  }
  try {
    WindowSolver solver(trace, model, &entry_material, limits.deadline);
    plan.answer = solver.Check(budget, limits, &plan.reason);
    if (plan.answer == SolverAnswer::kSat) plan.keep = solver.keep();
  } catch (const z3::exception& e) {
    plan.answer = SolverAnswer::kUnknown;
    plan.reason = fmt::format("z3 error: {}", e.msg());
  } catch (const DeadlinePassed& e) {
    plan.answer = SolverAnswer::kUnknown;
    plan.reason = e.reason;
  }
  return plan;
}

}  // namespace dtr
