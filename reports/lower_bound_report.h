// Rendering of the lower-bound arguments beyond the static bound: the
// keep-or-recompute cut (checker/proofs/cut_bound.h), as JSON (docs/proof_json.md)
// and as text for people.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "checker/proofs/cut_bound.h"
#include "diagnose/certificate_store.h"
#include "model/trace.h"

namespace dtr {

nlohmann::ordered_json CutArgumentJson(const Trace& trace, const CutArgument& a);
// One sentence: why the budget a.budget fails.
std::string CutArgumentText(const Trace& trace, const CutArgument& a);

nlohmann::ordered_json CutBoundJson(const Trace& trace, const CutBound& b, int64_t baseline_memory);

}  // namespace dtr
