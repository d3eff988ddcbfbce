// FarmCodec<RunResult> (declared in checker/engine/run_result.h): how a run's
// result travels between MPI ranks (checker/farm/parallel.h), field by field
// as VisitFields lists them.
#include <string>
#include <type_traits>

#include "checker/engine/run_result.h"
#include "checker/engine/run_result_fields.h"

namespace dtr {

namespace {

void PutCounts(ByteWriter& w, const std::vector<int32_t>& counts) {
  w.Put<uint64_t>(counts.size());
  uint64_t nonzero = 0;
  for (int32_t c : counts) nonzero += c != 0;
  w.Put<uint64_t>(nonzero);
  for (size_t i = 0; i < counts.size(); ++i)
    if (counts[i] != 0) {
      w.Put<uint32_t>(static_cast<uint32_t>(i));
      w.Put<int32_t>(counts[i]);
    }
}

std::vector<int32_t> GetCounts(ByteReader& r) {
  uint64_t size = r.Get<uint64_t>(), nonzero = r.Get<uint64_t>();
  if (nonzero > size || size > (uint64_t{1} << 32)) throw Error("farm message: bad per-storage counts");
  std::vector<int32_t> counts(size, 0);
  for (uint64_t k = 0; k < nonzero; ++k) {
    uint32_t i = r.Get<uint32_t>();
    if (i >= size) throw Error("farm message: bad per-storage counts");
    counts[i] = r.Get<int32_t>();
  }
  return counts;
}

// The bytes of each field VisitFields lists (checker/engine/run_result_fields.h), in
// its order: numbers as they are, an enum as int32, a string or vector as its
// length and items, an optional record as a flag byte and then its fields,
// per-storage counts as their length and nonzero entries.
struct FieldEncoder {
  ByteWriter& w;
  template <typename T>
  void operator()(const char*, const T& v) {
    if constexpr (std::is_enum_v<T>) {
      w.Put<int32_t>(static_cast<int32_t>(v));
    } else if constexpr (std::is_arithmetic_v<T>) {
      w.Put<T>(v);
    } else if constexpr (std::is_same_v<T, std::string>) {
      w.PutString(v);
    } else if constexpr (kIsPerStorageCounts<T>) {
      PutCounts(w, v.counts);
    } else if constexpr (kIsOptionalRecord<T>) {
      w.Put<uint8_t>(v.has_value());
      if (v) VisitFields(*v, *this);
    } else {
      w.PutVector(v);
    }
  }
};

struct FieldDecoder {
  ByteReader& r;
  template <typename T>
  void operator()(const char*, T& v) {
    if constexpr (std::is_enum_v<T>) {
      v = static_cast<T>(r.Get<int32_t>());
    } else if constexpr (std::is_arithmetic_v<T>) {
      v = r.Get<T>();
    } else if constexpr (std::is_same_v<T, std::string>) {
      v = r.GetString();
    } else if constexpr (kIsOptionalRecord<T>) {
      if (r.Get<uint8_t>()) VisitFields(v.emplace(), *this);
    } else {
      v = r.GetVector<typename T::value_type>();
    }
  }
  template <typename Counts>
  void operator()(const char*, PerStorageCounts<Counts> c) {
    c.counts = GetCounts(r);
  }
};

}  // namespace

void FarmCodec<RunResult>::Encode(const RunResult& x, ByteWriter& w) { VisitFields(x, FieldEncoder{w}); }

RunResult FarmCodec<RunResult>::Decode(ByteReader& r) {
  RunResult x;
  VisitFields(x, FieldDecoder{r});
  return x;
}

}  // namespace dtr
