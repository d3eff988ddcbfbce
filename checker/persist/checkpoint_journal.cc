#include "checker/persist/checkpoint_journal.h"

#include <fmt/core.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <utility>

#include "checker/farm/farm_codec.h"
#include "checker/farm/mpi_farm.h"
#include "model/error.h"

namespace dtr {

namespace {

using nlohmann::ordered_json;

// One format for every command's checkpoint. Version 1 replaced the atlas's
// own "dtrcheck-atlas-checkpoint" (versions 1 and 2), which such files are
// refused for ("format is ... here, ... in the file").
constexpr const char* kFormat = "dtrcheck-checkpoint";
constexpr int kVersion = 1;

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

// The fields of a signed line; InputError if "check" is missing or does not match.
ordered_json VerifiedFields(const std::string& line) {
  ordered_json j = ordered_json::parse(line);
  if (!j.is_object() || !j.contains("check") || !j["check"].is_string())
    throw InputError("a line without a \"check\" checksum");
  std::string check = j["check"].get<std::string>();
  j.erase("check");
  if (Checksum(j.dump()) != check)
    throw InputError(
        "the line does not match its checksum (edited after it was written?); delete the checkpoint to start "
        "over");
  return j;
}

}  // namespace

TraceFingerprint FingerprintOf(const Trace& trace, const Baseline& baseline, std::string sha256, std::string log) {
  TraceFingerprint f;
  f.sha256 = std::move(sha256);
  f.log = std::move(log);
  f.baseline_memory = baseline.memory;
  f.baseline_compute = baseline.compute;
  f.operators = static_cast<int64_t>(trace.ops.size());
  f.tensors = static_cast<int64_t>(trace.tensors.size());
  f.storages = static_cast<int64_t>(trace.storages.size());
  f.program_steps = static_cast<int64_t>(trace.program.size());
  return f;
}

ordered_json CheckpointHeader(std::string_view command, const TraceFingerprint& trace) {
  ordered_json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["command"] = command;
  j["trace_sha256"] = trace.sha256;
  j["log"] = trace.log;
  j["baseline_memory"] = trace.baseline_memory;
  j["baseline_compute"] = trace.baseline_compute;
  j["operators"] = trace.operators;
  j["tensors"] = trace.tensors;
  j["storages"] = trace.storages;
  j["program_steps"] = trace.program_steps;
  return j;
}

ReplayKey ReplayKeyOf(const ReplaySettings& settings) {
  return {std::string(RuntimeName(settings.runtime)), settings.overhead_limit, settings.seed};
}

void AddReplayKey(ordered_json& header, const ReplayKey& key) {
  header["runtime"] = key.runtime;
  header["overhead_limit"] = key.overhead_limit ? ordered_json(*key.overhead_limit) : ordered_json(nullptr);
  header["seed"] = key.seed;
}

Outcome OutcomeOfLine(const std::string& name) {
  for (Outcome o : {Outcome::kPass, Outcome::kOom, Outcome::kThrash, Outcome::kInvalidScript, Outcome::kStopped})
    if (OutcomeName(o) == name) return o;
  throw InputError(fmt::format("unknown result '{}'", name));
}

CheckpointJournal::CheckpointJournal(std::string path, const ordered_json& header, std::string_view work)
    : path_(std::move(path)) {
  // Under MPI only rank 0 reads, repairs and appends to the file; every rank
  // gets the lines it read (they decide which work is left).
  std::string shared = ShareFromCollector([&] { return Open(header, work); });
  if (!FarmCollectsHere()) {
    ByteReader r(shared);
    for (uint64_t n = r.Get<uint64_t>(); n > 0; --n) {
      Entry e;
      e.line = r.Get<int32_t>();
      e.fields = ordered_json::parse(r.GetString());
      entries_.push_back(std::move(e));
    }
  }
}

std::string CheckpointJournal::Open(const ordered_json& header, std::string_view work) {
  // Before anything is read: a second writer would interleave its lines with
  // the first's, or cut a line the first is writing as if it were torn.
  if (int err = lock_.TryLock(path_)) {
    if (err != EWOULDBLOCK) {
      errno = err;
      throw InputError(SystemErrorMessage(path_, "cannot open the checkpoint for writing"));
    }
    const int holder = LockHolder(path_);
    throw InputError(fmt::format("{}: in use by another dtrcheck run{}", path_,
                                 holder > 0 ? fmt::format(" (pid {})", holder) : ""));
  }
  std::string text;
  {
    std::ifstream in(path_, std::ios::binary);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      text = ss.str();
    }
  }
  const bool fresh = text.empty();
  if (!fresh) {
    // The header first: nothing is cut from a file that is not a checkpoint.
    size_t header_end = text.find('\n');
    ordered_json found;
    try {
      found = ordered_json::parse(text.substr(0, header_end));
    } catch (const nlohmann::json::exception&) {
    }
    if (header_end == std::string::npos || !found.is_object() || !found.contains("format"))
      throw InputError(fmt::format("{}: not a dtrcheck checkpoint (its first line is not a \"format\" header)",
                                   path_));
    for (const auto& [key, value] : header.items())
      if (!found.contains(key) || found[key] != value)
        throw InputError(fmt::format("{}: checkpoint of another {}: {} is {} here, {} in the file", path_, work, key,
                                     value.dump(), found.contains(key) ? found[key].dump() : "missing"));
    // A torn last line (the writer died mid-line) is dropped and cut off.
    size_t complete = text.rfind('\n') + 1;
    if (complete < text.size()) {
      text.resize(complete);
      std::filesystem::resize_file(path_, complete);
    }
    std::istringstream lines(text.substr(header_end + 1));
    std::string line;
    for (int line_no = 2; std::getline(lines, line); ++line_no) {
      try {
        entries_.push_back({line_no, VerifiedFields(line)});
      } catch (const nlohmann::json::exception& e) {
        FailAt(line_no, fmt::format("not a JSON line ({})", e.what()));
      } catch (const Error& e) {
        FailAt(line_no, e.what());
      }
    }
  }
  out_.open(path_, std::ios::binary | std::ios::app);
  if (!out_) throw InputError(SystemErrorMessage(path_, "cannot open the checkpoint for writing"));
  if (fresh) {
    out_ << header.dump() << "\n";
    out_.flush();
    if (!out_) throw InputError(SystemErrorMessage(path_, "cannot write the checkpoint"));
  }
  ByteWriter w;
  w.Put<uint64_t>(entries_.size());
  for (const Entry& e : entries_) {
    w.Put<int32_t>(e.line);
    w.PutString(e.fields.dump());
  }
  return std::move(w.bytes());
}

void CheckpointJournal::Append(const ordered_json& fields) {
  if (!out_.is_open()) return;  // another MPI rank than 0
  ordered_json line = fields;
  line["check"] = Checksum(fields.dump());
  out_ << line.dump() << "\n";
  out_.flush();
  if (!out_) throw InputError(SystemErrorMessage(path_, "cannot write the checkpoint"));
}

void CheckpointJournal::FailAt(int line, std::string_view what) const {
  throw InputError(fmt::format("{}:{}: {}", path_, line, what));
}

}  // namespace dtr
