#include "reports/report_headline.h"

#include <fmt/core.h>

#include <algorithm>

#include "reports/number_format.h"

namespace dtr {

namespace {

// Bands named one by one before the rest are summed up.
constexpr size_t kBandsNamed = 3;

std::string Bytes(const BudgetHeadline& h, int64_t b) {
  return fmt::format("{} bytes (ratio {:.4f})", GroupedInt(b),
                     static_cast<double>(b) / static_cast<double>(h.baseline_memory));
}

// "policy-induced (5 verdicts)", "2 policy-induced, 1 undetermined", "no
// verdict" when the band holds no OOM row.
std::string Verdicts(const BudgetHeadline& h, int p, int i, int u) {
  if (!h.verdicts) return "verdicts not computed";
  std::vector<std::string> parts;
  if (p) parts.push_back(fmt::format("{} policy-induced", p));
  if (i) parts.push_back(fmt::format("{} inherent", i));
  if (u) parts.push_back(fmt::format("{} undetermined", u));
  if (parts.empty()) return "no verdict (no row in it)";
  if (parts.size() == 1) {
    const char* name = p ? "policy-induced" : i ? "inherent" : "undetermined";
    int n = p + i + u;
    return fmt::format("{} ({} verdict{})", name, n, n == 1 ? "" : "s");
  }
  std::string out;
  for (const std::string& s : parts) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string BandText(const BudgetHeadline& h, const FailingBand& b) {
  return fmt::format("{} ({} wide, ratios {:.4f} to {:.4f}): {}", ByteInterval(b.lo, b.hi),
                     HumanBytes(b.width()), static_cast<double>(b.lo) / static_cast<double>(h.baseline_memory),
                     static_cast<double>(b.hi) / static_cast<double>(h.baseline_memory),
                     Verdicts(h, b.policy_induced, b.inherent, b.undetermined));
}

}  // namespace

std::vector<HeadlineItem> HeadlineItems(const BudgetHeadline& h) {
  std::vector<HeadlineItem> out;
  if (!h.smallest_pass) {
    out.push_back({"passes from", fmt::format("{} passes at no budget run", h.heuristic)});
  } else if (h.smallest_pass_exact) {
    out.push_back({"passes from", fmt::format("{}: the smallest budget at which {} passes, exact "
                                              "(every budget from the proven floor up to it fails)",
                                              Bytes(h, *h.smallest_pass), h.heuristic)});
  } else {
    out.push_back({"passes from",
                   fmt::format("{}: the smallest budget at which {} passed; budgets {} were not run, "
                               "so a smaller one may pass",
                               Bytes(h, *h.smallest_pass), h.heuristic,
                               ByteInterval(h.unknown_lo, h.unknown_hi))});
  }
  // The stretches under the smallest pass, then those above it (feasibility
  // inversions when a pass is known above them too).
  std::vector<const FailingBand*> below, above;
  for (const FailingBand& b : h.bands)
    (!h.smallest_pass || b.hi < *h.smallest_pass ? below : above).push_back(&b);
  if (below.size() == 1) {
    out.push_back({"fails below", BandText(h, *below.front())});
  } else if (below.size() > 1) {
    int p = 0, in = 0, u = 0;
    for (const FailingBand* b : below) {
      p += b->policy_induced;
      in += b->inherent;
      u += b->undetermined;
    }
    out.push_back({"fails below", fmt::format("{} stretches known to fail in {}, the budgets between "
                                              "them not run: {}",
                                              below.size(), ByteInterval(below.front()->lo, below.back()->hi),
                                              Verdicts(h, p, in, u))});
  }
  if (!above.empty()) {
    std::vector<const FailingBand*> widest = above;
    std::stable_sort(widest.begin(), widest.end(),
                     [](const FailingBand* a, const FailingBand* b) { return a->width() > b->width(); });
    std::string text = fmt::format("{} stretch{} above the smallest pass", above.size(),
                                   above.size() == 1 ? "" : "es");
    for (size_t i = 0; i < widest.size() && i < kBandsNamed; ++i)
      text += (i ? "; " : ": ") + BandText(h, *widest[i]);
    if (widest.size() > kBandsNamed) {
      int p = 0, in = 0, u = 0;
      int64_t lo = widest[kBandsNamed]->lo, hi = widest[kBandsNamed]->hi, wmax = 0;
      for (size_t i = kBandsNamed; i < widest.size(); ++i) {
        p += widest[i]->policy_induced;
        in += widest[i]->inherent;
        u += widest[i]->undetermined;
        lo = std::min(lo, widest[i]->lo);
        hi = std::max(hi, widest[i]->hi);
        wmax = std::max(wmax, widest[i]->width());
      }
      text += fmt::format("; {} more, each at most {} wide, in {}: {}", widest.size() - kBandsNamed,
                          HumanBytes(wmax), ByteInterval(lo, hi), Verdicts(h, p, in, u));
    }
    out.push_back({"fails again", text});
  }
  out.push_back({"proven floor", fmt::format("{}: no eviction schedule fits below it ({})", Bytes(h, h.floor),
                                             h.floor_cause)});
  if (h.worst_cliff) {
    const HeadlineCliff& c = *h.worst_cliff;
    out.push_back({"worst cliff",
                   fmt::format("x{:.2f} at {}: overhead {:.3f} up to {} bytes, {:.3f} from {} bytes",
                               c.factor, Bytes(h, c.first_byte), c.overhead_below,
                               GroupedInt(c.last_byte), c.overhead_above, GroupedInt(c.first_byte))});
  } else {
    out.push_back({"worst cliff", fmt::format("none: no neighbouring budgets known to the byte differ "
                                              "in overhead by more than x{}",
                                              ShortDouble(h.cliff_factor))});
  }
  return out;
}

std::string HeadlineText(const BudgetHeadline& h, const std::string& indent) {
  std::string out;
  for (const HeadlineItem& item : HeadlineItems(h))
    out += fmt::format("{}{:<13} {}\n", indent, item.label + ":", item.text);
  return out;
}

nlohmann::ordered_json HeadlineJson(const BudgetHeadline& h) {
  nlohmann::ordered_json bands = nlohmann::ordered_json::array();
  for (const FailingBand& b : h.bands)
    bands.push_back({{"lo", b.lo},
                     {"hi", b.hi},
                     {"inversion", b.inversion},
                     {"policy_induced", b.policy_induced},
                     {"inherent", b.inherent},
                     {"undetermined", b.undetermined}});
  nlohmann::ordered_json cliff = nullptr;
  if (h.worst_cliff)
    cliff = {{"last_byte", h.worst_cliff->last_byte},
             {"first_byte", h.worst_cliff->first_byte},
             {"overhead_below", h.worst_cliff->overhead_below},
             {"overhead_above", h.worst_cliff->overhead_above},
             {"factor", h.worst_cliff->factor}};
  return {{"smallest_pass", h.smallest_pass ? nlohmann::ordered_json(*h.smallest_pass)
                                            : nlohmann::ordered_json(nullptr)},
          {"smallest_pass_exact", h.smallest_pass_exact},
          {"not_known", h.smallest_pass && !h.smallest_pass_exact
                            ? nlohmann::ordered_json::array({h.unknown_lo, h.unknown_hi})
                            : nlohmann::ordered_json(nullptr)},
          {"failing", bands},
          {"floor", h.floor},
          {"floor_cause", h.floor_cause},
          {"worst_cliff", cliff}};
}

}  // namespace dtr
