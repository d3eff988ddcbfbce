// The FarmCodec specializations of the diagnose layer's farm results,
// declared beside their types (diagnose/budget_curve.h).
#include "diagnose/budget_curve.h"

namespace dtr {

namespace {

// A field added to these types must be added to the codec below; the sizes
// (x86-64, libstdc++) are a reminder that fails the build until it is.
#if defined(__x86_64__) && defined(__GLIBCXX__)
static_assert(sizeof(ScanBoundary) == 296, "ScanBoundary changed: update FarmCodec<ScanBoundary>, then this size");
static_assert(sizeof(ScanPoint) == 128, "ScanPoint changed: update FarmCodec<ScanBoundary>, then this size");
#endif

void PutPoint(ByteWriter& w, const ScanPoint& p) {
  w.Put<uint8_t>(p.ratio.has_value());
  if (p.ratio) {
    w.Put<double>(p.ratio->value);
    w.PutString(p.ratio->text);
  }
  w.Put<int32_t>(static_cast<int32_t>(p.outcome));
  w.Put<double>(p.overhead);
  for (int64_t v : {p.budget, p.evictions, p.heuristic_evictions, p.budget_lo, p.budget_hi}) w.Put<int64_t>(v);
  for (int32_t v : {p.distinct_evicted, p.distinct_heuristic_evicted, static_cast<int32_t>(p.regime)})
    w.Put<int32_t>(v);
}

ScanPoint GetPoint(ByteReader& r) {
  ScanPoint p;
  if (r.Get<uint8_t>()) {
    double value = r.Get<double>();
    p.ratio = Ratio{value, r.GetString()};
  }
  p.outcome = static_cast<Outcome>(r.Get<int32_t>());
  p.overhead = r.Get<double>();
  for (int64_t* v : {&p.budget, &p.evictions, &p.heuristic_evictions, &p.budget_lo, &p.budget_hi})
    *v = r.Get<int64_t>();
  p.distinct_evicted = r.Get<int32_t>();
  p.distinct_heuristic_evicted = r.Get<int32_t>();
  p.regime = r.Get<int32_t>();
  return p;
}

}  // namespace

void FarmCodec<ScanBoundary>::Encode(const ScanBoundary& b, ByteWriter& w) {
  for (int64_t v : {b.last_byte, b.first_byte, b.lower_zone_to, b.upper_zone_from}) w.Put<int64_t>(v);
  PutPoint(w, b.below);
  PutPoint(w, b.above);
  w.Put<uint8_t>(b.lower_zone_maximal);
  w.Put<uint8_t>(b.upper_zone_maximal);
  w.Put<int32_t>(b.replays);
}

ScanBoundary FarmCodec<ScanBoundary>::Decode(ByteReader& r) {
  ScanBoundary b;
  for (int64_t* v : {&b.last_byte, &b.first_byte, &b.lower_zone_to, &b.upper_zone_from}) *v = r.Get<int64_t>();
  b.below = GetPoint(r);
  b.above = GetPoint(r);
  b.lower_zone_maximal = r.Get<uint8_t>() != 0;
  b.upper_zone_maximal = r.Get<uint8_t>() != 0;
  b.replays = r.Get<int32_t>();
  return b;
}

}  // namespace dtr
