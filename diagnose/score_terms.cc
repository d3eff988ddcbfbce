#include "diagnose/score_terms.h"

#include <limits>

#include "checker/engine/exact_divide.h"

namespace dtr {

double ScoreFromTerms(const HeuristicSpec& h, const ScoreTerms& t) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (h.cost == CostTerm::kRandom) return 0;
  if (h.cost == CostTerm::kLastAccess)
    return t.cost == INT64_MIN ? -kInf : static_cast<double>(t.cost);
  if (!h.divide_by_size && !h.divide_by_staleness) return static_cast<double>(t.cost);
  uint128 den = h.divide_by_size ? static_cast<uint128>(t.size) : 1;
  if (h.divide_by_staleness) {
    if (t.staleness < 0)
      return den == 0 ? kInf : 0.0;  // size * inf: nan for size 0 (score inf), else inf
    den *= static_cast<uint128>(t.staleness);
  }
  if (den == 0) return kInf;
  if (t.cost < 0) return -ExactDivide(static_cast<uint64_t>(-t.cost), den);
  return ExactDivide(static_cast<uint64_t>(t.cost), den);
}

std::string_view ScoreTermName(ScoreTerm term) {
  switch (term) {
    case ScoreTerm::kCost:
      return "cost";
    case ScoreTerm::kSize:
      return "size";
    case ScoreTerm::kStaleness:
      return "staleness";
  }
  return "?";
}

namespace {

int64_t ScoreTerms::*Member(ScoreTerm term) {
  switch (term) {
    case ScoreTerm::kCost:
      return &ScoreTerms::cost;
    case ScoreTerm::kSize:
      return &ScoreTerms::size;
    case ScoreTerm::kStaleness:
      return &ScoreTerms::staleness;
  }
  return &ScoreTerms::cost;
}

}  // namespace

RankFlip ExplainRankFlip(const HeuristicSpec& h, const ScoreTerms& x_in_a, const ScoreTerms& y_in_a,
                         const ScoreTerms& x_in_b, const ScoreTerms& y_in_b) {
  RankFlip f;
  f.x_in_a = x_in_a;
  f.y_in_a = y_in_a;
  f.x_in_b = x_in_b;
  f.y_in_b = y_in_b;
  f.x_score_a = ScoreFromTerms(h, x_in_a);
  f.y_score_a = ScoreFromTerms(h, y_in_a);
  f.x_score_b = ScoreFromTerms(h, x_in_b);
  f.y_score_b = ScoreFromTerms(h, y_in_b);
  f.tie_in_a = f.x_score_a == f.y_score_a;
  f.tie_in_b = f.x_score_b == f.y_score_b;
  const ScoreTerm all[] = {ScoreTerm::kCost, ScoreTerm::kSize, ScoreTerm::kStaleness};
  // Subsets of the three terms by size: 1, 2, 3.
  for (int size = 1; size <= 3 && f.flipping_terms.empty(); ++size) {
    for (unsigned mask = 1; mask < 8; ++mask) {
      if (__builtin_popcount(mask) != size) continue;
      ScoreTerms x = x_in_a, y = y_in_a;
      std::vector<ScoreTerm> moved;
      for (int i = 0; i < 3; ++i)
        if (mask & (1u << i)) {
          x.*Member(all[i]) = x_in_b.*Member(all[i]);
          y.*Member(all[i]) = y_in_b.*Member(all[i]);
          moved.push_back(all[i]);
        }
      if (ScoreFromTerms(h, y) < ScoreFromTerms(h, x)) f.flipping_terms.push_back(moved);
    }
  }
  return f;
}

}  // namespace dtr
