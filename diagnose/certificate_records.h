// What `bounds`, `explain` and `prove` found, offered to the certificate
// store (diagnose/certificate_store.h): a verified schedule (checked again at
// its own peak before it is stored) and a proven lower bound with the name of
// its argument. The store keeps the lower schedule and the higher bound.
// A stored certificate this run refutes is dropped from the store: one that
// did not hold when prove or explain checked it again, or, for bounds, a
// stored bound above the one bounds proved whose argument does not refute
// the budget just below it, and a stored schedule below the best one that
// fails the checker at its own peak. So a tampered or wrong certificate is
// replaced, not kept forever.
#pragma once

#include <string>

#include "diagnose/certificate_store.h"
#include "diagnose/feasibility_bounds.h"
#include "diagnose/oom_classification.h"
#include "model/trace.h"

namespace dtr {

// Each returns what changed in the store, for people ("" if nothing); call
// store.Save() afterwards. `limits`: for a stored Z3 window checked again.
std::string RecordBounds(CertificateStore& store, const Trace& trace, RuntimeKind runtime,
                         const BoundsReport& report, const SolverLimits& limits = {});
std::string RecordClassification(CertificateStore& store, const Trace& trace, RuntimeKind runtime,
                                 const Classification& c, const std::string& command);

}  // namespace dtr
