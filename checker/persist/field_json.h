// The JSON form of a record whose fields are listed by a visit-fields
// function (RunResult: checker/engine/run_result_fields.h; AtlasInterval:
// checker/persist/atlas_checkpoint.cc), as the checkpoint lines store it
// (docs/checkpoint.md). visit(key, field) writes or reads one field under
// its key: an Outcome by its name, an optional record as an object of its
// fields or null, per-storage counts as their length and [index, count]
// pairs of the nonzero ones, anything else as nlohmann writes it. Reading
// throws nlohmann::json::exception for a missing key or a wrong type and
// InputError for a bad outcome name or bad counts.
#pragma once

#include <fmt/core.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "checker/engine/run_result_fields.h"
#include "checker/persist/checkpoint_journal.h"
#include "model/error.h"

namespace dtr {

inline nlohmann::ordered_json PerStorageCountsJson(const std::vector<int32_t>& counts) {
  nlohmann::ordered_json nonzero = nlohmann::ordered_json::array();
  for (size_t i = 0; i < counts.size(); ++i)
    if (counts[i] != 0) nonzero.push_back({i, counts[i]});
  return {{"size", counts.size()}, {"nonzero", std::move(nonzero)}};
}

inline std::vector<int32_t> PerStorageCountsFromJson(const nlohmann::ordered_json& j) {
  size_t size = j.at("size").get<size_t>();
  if (size > (size_t{1} << 32)) throw InputError("per-storage counts longer than 2^32");
  std::vector<int32_t> counts(size, 0);
  for (const nlohmann::ordered_json& pair : j.at("nonzero")) {
    size_t i = pair.at(0).get<size_t>();
    if (i >= size) throw InputError(fmt::format("per-storage count at {} of {}", i, size));
    counts[i] = pair.at(1).get<int32_t>();
  }
  return counts;
}

// Writes each visited field into `j`, in visiting order.
struct FieldToJson {
  nlohmann::ordered_json& j;
  template <typename T>
  void operator()(const char* key, const T& v) {
    if constexpr (std::is_same_v<T, Outcome>) {
      j[key] = std::string(OutcomeName(v));
    } else if constexpr (kIsPerStorageCounts<T>) {
      j[key] = PerStorageCountsJson(v.counts);
    } else if constexpr (kIsOptionalRecord<T>) {
      if (v) {
        nlohmann::ordered_json record;
        VisitFields(*v, FieldToJson{record});
        j[key] = std::move(record);
      } else {
        j[key] = nullptr;
      }
    } else {
      j[key] = v;
    }
  }
};

// Reads each visited field from `j`, in visiting order (so the first missing
// key is the one named).
struct FieldFromJson {
  const nlohmann::ordered_json& j;
  template <typename T>
  void operator()(const char* key, T& v) {
    const nlohmann::ordered_json& x = j.at(key);
    if constexpr (std::is_same_v<T, Outcome>) {
      v = OutcomeOfLine(x.get<std::string>());
    } else if constexpr (kIsOptionalRecord<T>) {
      if (!x.is_null()) VisitFields(v.emplace(), FieldFromJson{x});
    } else {
      v = x.get<T>();
    }
  }
  template <typename Counts>
  void operator()(const char* key, PerStorageCounts<Counts> c) {
    c.counts = PerStorageCountsFromJson(j.at(key));
  }
};

}  // namespace dtr
