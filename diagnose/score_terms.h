// Scores from their terms, and why two runs ranked two storages differently.
// A heuristic's score is cost / (size * staleness) with the factors it uses
// (checker/engine/heuristic.h); the replay reports the terms of the storages it
// compares (ScoreTerms), and this file recomputes and compares scores from
// them without replaying.
#pragma once

#include <string_view>
#include <vector>

#include "checker/engine/heuristic.h"
#include "checker/engine/replay.h"

namespace dtr {

// The score a heuristic gives to a storage with these terms, exactly as the
// replay computes it (checker/engine/replay.cc, Engine::Score): Python's correctly
// rounded integer quotient, +inf for a zero denominator, staleness -1 meaning
// +inf. RandomStorage / AbRandom have no score: 0.
double ScoreFromTerms(const HeuristicSpec& heuristic, const ScoreTerms& terms);

enum class ScoreTerm { kCost, kSize, kStaleness };
std::string_view ScoreTermName(ScoreTerm term);  // "cost", "size", "staleness"

// Two storages x and y were compared in run A and in run B under the same
// heuristic: A evicted x (x scored at most y), B evicted y. Which terms moved
// between the runs, and which of them carry the flip: a set of terms flips
// the order if A's terms, with those terms replaced by B's values (for both
// storages), make y score strictly below x. Size is a constant of a storage,
// so it never flips an order alone; it is reported for completeness.
struct RankFlip {
  ScoreTerms x_in_a, y_in_a, x_in_b, y_in_b;
  double x_score_a = 0, y_score_a = 0, x_score_b = 0, y_score_b = 0;
  bool tie_in_a = false;  // x and y scored equal in A: pool order, not a term, decided
  bool tie_in_b = false;
  // The smallest sets of terms that flip the order on their own (all sets of
  // that size which do); empty if even all terms together do not.
  std::vector<std::vector<ScoreTerm>> flipping_terms;
  bool operator==(const RankFlip&) const = default;
};

RankFlip ExplainRankFlip(const HeuristicSpec& heuristic, const ScoreTerms& x_in_a,
                         const ScoreTerms& y_in_a, const ScoreTerms& x_in_b,
                         const ScoreTerms& y_in_b);

}  // namespace dtr
