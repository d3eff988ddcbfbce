#include "checker/atlas_checkpoint.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "checker/farm_codec.h"
#include "checker/mpi_farm.h"
#include "model/error.h"

namespace dtr {

namespace {

using nlohmann::ordered_json;

constexpr const char* kFormat = "dtrcheck-atlas-checkpoint";
constexpr int kVersion = 2;  // 2: every interval line carries "check"

// FNV-1a, 64 bits: not a defence against forgery, but any edit of a line's
// text (a digit, a key, the order of keys) changes it.
std::string Checksum(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

// An interval line: its fields, then "check", the checksum of the fields as
// dumped without it.
std::string SignedLine(const ordered_json& fields) {
  ordered_json j = fields;
  j["check"] = Checksum(fields.dump());
  return j.dump();
}

// The fields of a signed line; Error if "check" is missing or does not match.
ordered_json VerifiedFields(const std::string& line) {
  ordered_json j = ordered_json::parse(line);
  if (!j.is_object() || !j.contains("check") || !j["check"].is_string())
    throw InputError("interval line without a \"check\" checksum");
  std::string check = j["check"].get<std::string>();
  j.erase("check");
  if (Checksum(j.dump()) != check)
    throw InputError("the line does not match its checksum (edited after it was written?); delete the "
                "checkpoint to start the walk over");
  return j;
}

ordered_json HeaderJson(const AtlasWalkKey& k) {
  ordered_json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["log"] = k.log;
  j["baseline_memory"] = k.baseline_memory;
  j["baseline_compute"] = k.baseline_compute;
  j["operators"] = k.operators;
  j["tensors"] = k.tensors;
  j["storages"] = k.storages;
  j["program_steps"] = k.program_steps;
  j["heuristic"] = k.heuristic;
  j["runtime"] = k.runtime;
  j["overhead_limit"] = k.overhead_limit ? ordered_json(*k.overhead_limit) : ordered_json(nullptr);
  j["seed"] = k.seed;
  j["budget_lo"] = k.budget_lo;
  j["budget_hi"] = k.budget_hi;
  return j;
}

ordered_json IntervalJson(const AtlasInterval& iv) {
  ordered_json j;
  j["lo"] = iv.lo;
  j["hi"] = iv.hi;
  j["run_lo"] = iv.run_lo;
  j["run_hi"] = iv.run_hi;
  j["result"] = std::string(OutcomeName(iv.behaviour.outcome));
  j["clock"] = iv.behaviour.clock;
  j["heuristic_evictions"] = iv.behaviour.heuristic_evictions;
  j["evictions"] = iv.behaviour.evictions;
  j["distinct_evicted"] = iv.behaviour.distinct_evicted;
  j["distinct_heuristic_evicted"] = iv.distinct_heuristic_evicted;
  j["remat_compute"] = iv.remat_compute;
  j["heuristic_evals"] = iv.heuristic_evals;
  return j;
}

Outcome ParseOutcome(const std::string& s) {
  for (Outcome o : {Outcome::kPass, Outcome::kOom, Outcome::kThrash})
    if (OutcomeName(o) == s) return o;
  throw InputError(fmt::format("unknown result '{}'", s));
}

AtlasInterval IntervalFromJson(const ordered_json& j, const Baseline& baseline) {
  AtlasInterval iv;
  iv.lo = j.at("lo").get<int64_t>();
  iv.hi = j.at("hi").get<int64_t>();
  iv.run_lo = j.at("run_lo").get<int64_t>();
  iv.run_hi = j.at("run_hi").get<int64_t>();
  iv.behaviour.outcome = ParseOutcome(j.at("result").get<std::string>());
  iv.behaviour.clock = j.at("clock").get<int64_t>();
  iv.behaviour.heuristic_evictions = j.at("heuristic_evictions").get<int64_t>();
  iv.behaviour.evictions = j.at("evictions").get<int64_t>();
  iv.behaviour.distinct_evicted = j.at("distinct_evicted").get<int32_t>();
  iv.distinct_heuristic_evicted = j.at("distinct_heuristic_evicted").get<int32_t>();
  iv.remat_compute = j.at("remat_compute").get<int64_t>();
  iv.heuristic_evals = j.at("heuristic_evals").get<int64_t>();
  // As BuildAtlas computes them from the run.
  iv.overhead = Overhead(iv.behaviour.clock, baseline.compute);
  iv.evictions_per_evicted =
      iv.behaviour.distinct_evicted > 0
          ? static_cast<double>(iv.behaviour.evictions) / iv.behaviour.distinct_evicted
          : 0;
  if (iv.hi < iv.lo || iv.lo < iv.run_lo || iv.hi > iv.run_hi)
    throw InputError(fmt::format("interval [{}, {}] is not inside its run's [{}, {}]", iv.lo, iv.hi,
                            iv.run_lo, iv.run_hi));
  return iv;
}

}  // namespace

AtlasWalkKey WalkKeyOf(const Trace& trace, const std::string& log, const Baseline& baseline,
                       const RunSpec& spec, int64_t lo_bytes, int64_t hi_bytes) {
  AtlasWalkKey k;
  k.log = log;
  k.baseline_memory = baseline.memory;
  k.baseline_compute = baseline.compute;
  k.operators = static_cast<int64_t>(trace.ops.size());
  k.tensors = static_cast<int64_t>(trace.tensors.size());
  k.storages = static_cast<int64_t>(trace.storages.size());
  k.program_steps = static_cast<int64_t>(trace.program.size());
  k.heuristic = std::string(spec.heuristic->name);
  k.runtime = std::string(RuntimeName(spec.runtime));
  k.overhead_limit = spec.overhead_limit;
  k.seed = spec.seed;
  k.budget_lo = lo_bytes;
  k.budget_hi = hi_bytes;
  return k;
}

AtlasCheckpoint::AtlasCheckpoint(const std::string& path, const AtlasWalkKey& key,
                                 const Baseline& baseline)
    : path_(path) {
  // Under MPI only rank 0 reads, repairs and appends to the file; every rank
  // gets the intervals it read (they decide how the walk is cut).
  std::string shared = ShareFromCollector([&] {
    Open(key, baseline);
    ByteWriter w;
    w.PutVector(finished_);
    return std::move(w.bytes());
  });
  if (!FarmCollectsHere()) {
    ByteReader r(shared);
    finished_ = r.GetVector<AtlasInterval>();
  }
}

void AtlasCheckpoint::Open(const AtlasWalkKey& key, const Baseline& baseline) {
  const std::string& path = path_;
  const ordered_json want = HeaderJson(key);
  std::string text;
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      text = ss.str();
    }
  }
  bool fresh = text.empty();
  if (!fresh) {
    // The header first: nothing is cut from a file that is not a checkpoint.
    size_t header_end = text.find('\n');
    ordered_json header;
    try {
      header = ordered_json::parse(text.substr(0, header_end));
    } catch (const nlohmann::json::exception&) {
    }
    if (header_end == std::string::npos || !header.is_object() ||
        header.value("format", "") != kFormat)
      throw InputError(fmt::format(
          "{}: not an atlas checkpoint (its first line is not a \"format\":\"{}\" header)", path,
          kFormat));
    for (const auto& [field, value] : want.items())
      if (!header.contains(field) || header[field] != value)
        throw InputError(fmt::format("{}: checkpoint of another walk: {} is {} here, {} in the file",
                                path, field, value.dump(),
                                header.contains(field) ? header[field].dump() : "missing"));
    // A torn last line (the walk died mid-write) is dropped and cut off.
    size_t complete = text.rfind('\n') + 1;
    if (complete < text.size()) {
      text.resize(complete);
      std::filesystem::resize_file(path, complete);
    }
    std::istringstream lines(text.substr(header_end + 1));
    std::string line;
    std::map<int64_t, std::pair<int64_t, int>> seen;  // lo -> (hi, line) of the lines read
    for (int line_no = 2; std::getline(lines, line); ++line_no) {
      try {
        finished_.push_back(IntervalFromJson(VerifiedFields(line), baseline));
      } catch (const nlohmann::json::exception& e) {
        throw InputError(fmt::format("{}:{}: not an interval line ({})", path, line_no, e.what()));
      } catch (const Error& e) {
        throw InputError(fmt::format("{}:{}: {}", path, line_no, e.what()));
      }
      const AtlasInterval& iv = finished_.back();
      if (iv.lo < key.budget_lo || iv.hi > key.budget_hi)
        throw InputError(fmt::format("{}:{}: interval [{}, {}] is outside the range [{}, {}]", path,
                                line_no, iv.lo, iv.hi, key.budget_lo, key.budget_hi));
      // Intervals of one walk never overlap: an overlap is a duplicated or edited line.
      auto next = seen.upper_bound(iv.lo);
      for (auto it : {next == seen.begin() ? seen.end() : std::prev(next), next})
        if (it != seen.end() && it->first <= iv.hi && iv.lo <= it->second.first)
          throw InputError(fmt::format("{}:{}: interval [{}, {}] overlaps [{}, {}] on line {}",
                                       path, line_no, iv.lo, iv.hi, it->first, it->second.first,
                                       it->second.second));
      seen[iv.lo] = {iv.hi, line_no};
    }
  }
  out_.open(path, std::ios::binary | std::ios::app);
  if (!out_) throw InputError(SystemErrorMessage(path, "cannot open the checkpoint for writing"));
  if (fresh) {
    out_ << want.dump() << "\n";
    out_.flush();
    if (!out_) throw InputError(SystemErrorMessage(path, "cannot write the checkpoint"));
  }
}

void AtlasCheckpoint::Append(const AtlasInterval& interval) {
  if (!out_.is_open()) return;  // another MPI rank than 0
  out_ << SignedLine(IntervalJson(interval)) << "\n";
  out_.flush();
  if (!out_) throw InputError(SystemErrorMessage(path_, "cannot write the checkpoint"));
}

}  // namespace dtr
