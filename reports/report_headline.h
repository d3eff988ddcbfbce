// The headline of a report (diagnose/budget_headline.h) as a few labelled
// sentences: the same items, in the same order, first in the console
// summary, report.md and report.html.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diagnose/budget_headline.h"

namespace dtr {

struct HeadlineItem {
  std::string label;  // "passes from", "fails", "proven floor", "worst cliff"
  std::string text;   // one sentence, plain text
};

// The headline as JSON: report.json's `headline` (docs/report_json.md), and
// the same object in `scan --json`.
nlohmann::ordered_json HeadlineJson(const BudgetHeadline& headline);

std::vector<HeadlineItem> HeadlineItems(const BudgetHeadline& headline);

// The items as aligned lines, each starting with `indent`.
std::string HeadlineText(const BudgetHeadline& headline, const std::string& indent);

}  // namespace dtr
