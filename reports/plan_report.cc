#include "reports/plan_report.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <optional>

#include "diagnose/pinned_floor.h"
#include "model/attribution.h"
#include "reports/number_format.h"
#include "reports/pinned_floor_report.h"

namespace dtr {

namespace {

double RatioOf(int64_t bytes, const Baseline& b) {
  return b.memory > 0 ? static_cast<double>(bytes) / static_cast<double>(b.memory) : 0.0;
}

// Why no plan fits, in one sentence; "" when one does.
std::string WhyNoPlan(const Trace& trace, const CheckpointPlan& p) {
  switch (p.verdict) {
    case PlanVerdict::kFits: return "";
    case PlanVerdict::kBelowFloor:
      return fmt::format(
          "no plan fits: the budget is below the floor of {} bytes ({}), which no schedule "
          "goes under (the static bound: what is pinned, plus an operator's arguments and "
          "outputs; {} bytes stay pinned at the end: parameters, gradients, optimizer state "
          "and what the step keeps)",
          p.floor, HumanBytes(p.floor), p.final_pinned);
    case PlanVerdict::kBestReached:
      return fmt::format(
          "no plan fits: the best reached is {} bytes ({}), at {}, which requests {} with {} in "
          "use ({} of it pinned); no module left lowers it: what is live there is no module's "
          "internal activations, or comes back for that module's backward",
          p.predicted_peak, HumanBytes(p.predicted_peak), OperatorLabel(trace, p.peak_op),
          HumanBytes(p.peak_request), HumanBytes(p.peak_in_use), HumanBytes(p.peak_pinned));
  }
  return "";
}

}  // namespace

void PrintPlanText(std::ostream& out, const Trace& trace, const CheckpointPlan& p) {
  fmt::print(out, "trace {}\n", trace.source);
  fmt::print(out, "budget          {:>14} bytes ({}, ratio {:.4f})\n", p.budget, HumanBytes(p.budget),
             RatioOf(p.budget, p.baseline));
  fmt::print(out, "baseline peak   {:>14} bytes ({})\n", p.baseline.memory,
             HumanBytes(p.baseline.memory));
  fmt::print(out, "floor           {:>14} bytes ({}, ratio {:.4f})\n", p.floor, HumanBytes(p.floor),
             RatioOf(p.floor, p.baseline));
  if (std::optional<PinnedFloor> floor = ExplainPinnedFloor(trace))
    fmt::print(out, "  pinned at the end: {}\n", PinnedFloorLine(*floor));
  fmt::print(out, "candidates      {} modules (one contiguous forward call each)\n", p.candidates);
  if (p.modules.empty()) {
    fmt::print(out, "plan            no module\n");
  } else {
    fmt::print(out, "plan            {} module{} to wrap in torch.utils.checkpoint:\n",
               p.modules.size(), p.modules.size() == 1 ? "" : "s");
    for (const PlannedModule& m : p.modules)
      fmt::print(out, "  {:<32} {:>6} forward ops  {:>14} bytes freed ({})  forward compute {}\n",
                 m.module, m.forward_ops, m.bytes_freed, HumanBytes(m.bytes_freed),
                 m.forward_compute);
  }
  fmt::print(out, "predicted peak  {:>14} bytes ({}; {} without a plan)\n", p.predicted_peak,
             HumanBytes(p.predicted_peak), HumanBytes(p.unplanned_peak));
  fmt::print(out, "predicted overhead {:.4f} (torch recomputes each module's forward once)\n",
             p.predicted_overhead);
  if (!p.modules.empty())
    fmt::print(out, "  {:.4f} in the simulation, which recomputes on demand only what the backward reads\n",
               p.simulated_overhead);
  if (p.verdict == PlanVerdict::kFits)
    fmt::print(out, "verdict         fits: predicted peak {} <= budget {}\n", p.predicted_peak,
               p.budget);
  else
    fmt::print(out, "verdict         {}\n", WhyNoPlan(trace, p));
}

nlohmann::ordered_json PlanJson(const Trace& trace, const CheckpointPlan& p) {
  nlohmann::ordered_json modules = nlohmann::ordered_json::array();
  for (const PlannedModule& m : p.modules)
    modules.push_back(
        {{"module", m.module}, {"forward_ops", m.forward_ops}, {"bytes_freed", m.bytes_freed},
         {"forward_compute", m.forward_compute}});
  nlohmann::ordered_json j = {{"trace", trace.source},
                              {"budget", p.budget},
                              {"baseline_peak", p.baseline.memory},
                              {"baseline_compute", p.baseline.compute},
                              {"floor", p.floor},
                              {"pinned_at_end", p.final_pinned},
                              {"candidates", p.candidates},
                              {"modules", std::move(modules)},
                              {"unplanned_peak", p.unplanned_peak},
                              {"predicted_peak", p.predicted_peak},
                              {"predicted_overhead", p.predicted_overhead},
                              {"simulated_clock", p.simulated_clock},
                              {"simulated_overhead", p.simulated_overhead},
                              {"verdict", PlanVerdictName(p.verdict)},
                              {"why", WhyNoPlan(trace, p)}};
  if (p.verdict == PlanVerdict::kBestReached) {
    nlohmann::ordered_json at = {{"operator", p.peak_op}};
    AddOriginJson(at, trace, FindOperator(trace, p.peak_op));
    at["request"] = p.peak_request;
    at["in_use"] = p.peak_in_use;
    at["pinned"] = p.peak_pinned;
    j["peak_at"] = std::move(at);
  }
  if (std::optional<PinnedFloor> floor = ExplainPinnedFloor(trace))
    j["pinned_floor"] = PinnedFloorJson(trace, *floor, p.baseline);
  return j;
}

}  // namespace dtr
