// What `bounds`, `explain` and `prove` found, offered to the certificate
// store (diagnose/certificate_store.h): a verified schedule (checked again at
// its own peak before it is stored) and a proven lower bound with the name of
// its argument. The store keeps the lower schedule and the higher bound.
#pragma once

#include <string>

#include "diagnose/certificate_store.h"
#include "diagnose/feasibility_bounds.h"
#include "diagnose/oom_classification.h"
#include "model/trace.h"

namespace dtr {

// Each returns what changed in the store, for people ("" if nothing); call
// store.Save() afterwards.
std::string RecordBounds(CertificateStore& store, const Trace& trace, RuntimeKind runtime,
                         const BoundsReport& report);
std::string RecordClassification(CertificateStore& store, const Trace& trace, RuntimeKind runtime,
                                 const Classification& c, const std::string& command);

}  // namespace dtr
