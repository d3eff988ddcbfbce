#include "diagnose/certificate_store.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "checker/persist/file_digest.h"
#include "model/error.h"
#include "model/file_lock.h"
#include "model/output_file.h"

namespace dtr {

namespace {

using nlohmann::ordered_json;
namespace fs = std::filesystem;

constexpr const char* kFormat = "dtrcheck certificate store";
constexpr int kVersion = 1;

}  // namespace

std::string_view BoundArgumentName(BoundArgument a) {
  switch (a) {
    case BoundArgument::kStatic:
      return "static";
    case BoundArgument::kCut:
      return "cut";
    case BoundArgument::kWindow:
      return "window";
  }
  return "?";
}

BoundArgument ParseBoundArgument(const std::string& name) {
  for (BoundArgument a : {BoundArgument::kStatic, BoundArgument::kCut, BoundArgument::kWindow})
    if (BoundArgumentName(a) == name) return a;
  throw Error(fmt::format("unknown lower-bound argument '{}' (expected static, cut or window)", name));
}

std::string CertificateFileText(const Trace& trace, const CertificateFile& file) {
  ordered_json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["trace"] = {{"sha256", file.sha256},
                {"file", file.trace_name},
                {"operators", file.operators},
                {"tensors", file.tensors},
                {"storages", file.storages},
                {"baseline_memory", file.baseline_memory}};
  ordered_json runtimes = ordered_json::object();
  for (const auto& [name, c] : file.runtimes) {
    ordered_json r = ordered_json::object();
    if (c.schedule) {
      std::ostringstream script;
      WriteEvictionScript(script, trace, c.schedule->script);
      r["schedule"] = {{"peak", c.schedule->peak},
                       {"source", c.schedule->source},
                       {"description", c.schedule->description},
                       {"found_by", c.schedule->found_by},
                       {"evictions", c.schedule->script.entries.size()},
                       {"script", script.str()}};
      if (c.schedule->clock) r["schedule"]["clock"] = *c.schedule->clock;
    }
    if (c.bound) {
      ordered_json b = {{"bytes", c.bound->bytes},
                        {"argument", std::string(BoundArgumentName(c.bound->argument))}};
      if (c.bound->argument == BoundArgument::kWindow)
        b["window"] = {{"first_op", c.bound->window.first}, {"last_op", c.bound->window.last}};
      b["description"] = c.bound->description;
      b["found_by"] = c.bound->found_by;
      r["lower_bound"] = b;
    }
    runtimes[name] = r;
  }
  j["runtimes"] = runtimes;
  return j.dump(2) + "\n";
}

CertificateFile ParseCertificateFile(const std::string& text, const std::string& path,
                                     const Trace& trace) {
  auto fail = [&](const std::string& what) -> InputError {
    return InputError(fmt::format("{}: not a certificate store file: {}", path, what));
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw fail(fmt::format("invalid JSON ({})", e.what()));
  }
  CertificateFile f;
  try {
    if (j.value("format", "") != kFormat) throw fail(fmt::format("\"format\" is not \"{}\"", kFormat));
    if (j.value("version", 0) != kVersion)
      throw fail(fmt::format("version {} (this dtrcheck reads version {})", j.value("version", 0),
                             kVersion));
    const nlohmann::json& t = j.at("trace");
    f.sha256 = t.at("sha256").get<std::string>();
    f.trace_name = t.value("file", "");
    f.operators = t.at("operators").get<int32_t>();
    f.tensors = t.at("tensors").get<int32_t>();
    f.storages = t.at("storages").get<int32_t>();
    f.baseline_memory = t.at("baseline_memory").get<int64_t>();
    for (const auto& [name, r] : j.at("runtimes").items()) {
      ParseRuntime(name);  // an unknown runtime is an error
      RuntimeCertificates c;
      if (r.contains("schedule")) {
        const nlohmann::json& s = r.at("schedule");
        StoredSchedule sc;
        sc.peak = s.at("peak").get<int64_t>();
        sc.source = s.value("source", "");
        sc.description = s.value("description", "");
        sc.found_by = s.value("found_by", "");
        sc.script = ParseEvictionScriptString(s.at("script").get<std::string>(),
                                              fmt::format("{} ({} schedule)", path, name), trace);
        if (s.contains("clock")) sc.clock = s.at("clock").get<int64_t>();
        c.schedule = std::move(sc);
      }
      if (r.contains("lower_bound")) {
        const nlohmann::json& b = r.at("lower_bound");
        StoredBound sb;
        sb.bytes = b.at("bytes").get<int64_t>();
        sb.argument = ParseBoundArgument(b.at("argument").get<std::string>());
        if (sb.argument == BoundArgument::kWindow) {
          sb.window.first = b.at("window").at("first_op").get<OpId>();
          sb.window.last = b.at("window").at("last_op").get<OpId>();
        }
        sb.description = b.value("description", "");
        sb.found_by = b.value("found_by", "");
        c.bound = std::move(sb);
      }
      f.runtimes[name] = std::move(c);
    }
  } catch (const nlohmann::json::exception& e) {
    throw fail(e.what());
  } catch (const Error& e) {
    const std::string message = e.what();
    if (message.rfind(path, 0) == 0) throw InputError(message);  // names the file already
    throw fail(message);
  }
  return f;
}

bool BetterSchedule(const StoredSchedule& a, const StoredSchedule& b) {
  if (a.peak != b.peak) return a.peak < b.peak;
  return a.clock && (!b.clock || *a.clock < *b.clock);
}

bool SameSchedule(const StoredSchedule& a, const StoredSchedule& b) {
  if (a.peak != b.peak || a.source != b.source || a.description != b.description ||
      a.found_by != b.found_by || a.script.entries.size() != b.script.entries.size())
    return false;
  for (size_t i = 0; i < a.script.entries.size(); ++i)
    if (a.script.entries[i].event != b.script.entries[i].event ||
        a.script.entries[i].storage != b.script.entries[i].storage)
      return false;
  return true;
}

bool SameBound(const StoredBound& a, const StoredBound& b) {
  return a.bytes == b.bytes && a.argument == b.argument &&
         (a.argument != BoundArgument::kWindow ||
          (a.window.first == b.window.first && a.window.last == b.window.last)) &&
         a.description == b.description && a.found_by == b.found_by;
}

CertificateStore::CertificateStore(const std::string& store, const std::string& trace_path,
                                   const Trace& trace, int64_t baseline_memory)
    : trace_(trace), trace_path_(trace_path), baseline_memory_(baseline_memory) {
  const std::string digest = FileDigest(trace_path);
  std::error_code ec;
  const bool is_file = fs::is_regular_file(store, ec);
  path_ = is_file ? store : (fs::path(store) / (digest + ".json")).string();
  file_.sha256 = digest;
  if (std::optional<CertificateFile> f = ReadFile()) file_ = std::move(*f);
  file_.trace_name = fs::path(trace_path).filename().string();
  file_.operators = static_cast<int32_t>(trace.ops.size());
  file_.tensors = static_cast<int32_t>(trace.tensors.size());
  file_.storages = static_cast<int32_t>(trace.storages.size());
  file_.baseline_memory = baseline_memory;
  offered_ = dropped_ = file_;
  offered_.runtimes.clear();
  dropped_.runtimes.clear();
}

std::optional<CertificateFile> CertificateStore::ReadFile() const {
  const std::string& digest = file_.sha256;
  std::string text;
  {
    int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return std::nullopt;  // a store directory without this trace yet
      throw InputError(SystemErrorMessage(path_, "cannot read the certificate store"));
    }
    char buffer[1 << 16];
    while (true) {
      ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int err = errno;
        ::close(fd);
        errno = err;
        throw InputError(SystemErrorMessage(path_, "cannot read the certificate store"));
      }
      if (n == 0) break;
      text.append(buffer, static_cast<size_t>(n));
    }
    ::close(fd);
  }
  // The digest is checked before the scripts are parsed against the trace.
  nlohmann::json head = nlohmann::json::parse(text, nullptr, false);
  if (!head.is_discarded() && head.is_object() && head.contains("trace") &&
      head["trace"].is_object() && head["trace"].contains("sha256") &&
      head["trace"]["sha256"].is_string() && head["trace"]["sha256"] != digest)
    throw InputError(fmt::format(
        "{}: the certificate store belongs to another trace ({}, sha256 {}), not to {} (sha256 "
        "{})",
        path_, head["trace"].value("file", "?"), head["trace"]["sha256"].get<std::string>(),
        trace_path_, digest));
  CertificateFile f = ParseCertificateFile(text, path_, trace_);
  if (f.operators != static_cast<int32_t>(trace_.ops.size()) ||
      f.tensors != static_cast<int32_t>(trace_.tensors.size()) ||
      f.storages != static_cast<int32_t>(trace_.storages.size()) ||
      f.baseline_memory != baseline_memory_)
    throw InputError(fmt::format("{}: the certificate store's trace summary does not match {}",
                                 path_, trace_path_));
  return f;
}

const RuntimeCertificates* CertificateStore::Find(RuntimeKind runtime) const {
  auto it = file_.runtimes.find(std::string(RuntimeName(runtime)));
  return it == file_.runtimes.end() ? nullptr : &it->second;
}

bool CertificateStore::OfferSchedule(RuntimeKind runtime, const StoredSchedule& schedule) {
  const std::string name(RuntimeName(runtime));
  RuntimeCertificates& c = file_.runtimes[name];
  if (c.schedule && !BetterSchedule(schedule, *c.schedule)) return false;
  c.schedule = schedule;
  offered_.runtimes[name].schedule = schedule;
  dirty_ = true;
  return true;
}

bool CertificateStore::OfferBound(RuntimeKind runtime, const StoredBound& bound) {
  const std::string name(RuntimeName(runtime));
  RuntimeCertificates& c = file_.runtimes[name];
  if (c.bound && c.bound->bytes >= bound.bytes) return false;
  c.bound = bound;
  offered_.runtimes[name].bound = bound;
  dirty_ = true;
  return true;
}

bool CertificateStore::DropSchedule(RuntimeKind runtime, const StoredSchedule& schedule) {
  const std::string name(RuntimeName(runtime));
  RuntimeCertificates& c = file_.runtimes[name];
  if (!c.schedule || !SameSchedule(*c.schedule, schedule)) return false;
  c.schedule.reset();
  dropped_.runtimes[name].schedule = schedule;
  std::optional<StoredSchedule>& ours = offered_.runtimes[name].schedule;
  if (ours && SameSchedule(*ours, schedule)) ours.reset();
  dirty_ = true;
  return true;
}

bool CertificateStore::DropBound(RuntimeKind runtime, const StoredBound& bound) {
  const std::string name(RuntimeName(runtime));
  RuntimeCertificates& c = file_.runtimes[name];
  if (!c.bound || !SameBound(*c.bound, bound)) return false;
  c.bound.reset();
  dropped_.runtimes[name].bound = bound;
  std::optional<StoredBound>& ours = offered_.runtimes[name].bound;
  if (ours && SameBound(*ours, bound)) ours.reset();
  dirty_ = true;
  return true;
}

bool CertificateStore::Save() {
  if (!dirty_) return false;
  if (OutputFilesDiscarded()) return false;  // an MPI rank other than 0: rank 0 writes
  const fs::path target(path_);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  if (ec) throw InputError(fmt::format("{}: cannot write ({})", path_, ec.message()));
  // Under the lock, the file read again is the latest: no other writer's
  // certificates are lost between reading and renaming.
  FileLock lock;
  const fs::path lock_path = target.parent_path() / ("." + target.filename().string() + ".lock");
  if (int err = lock.LockTransient(lock_path.string()))
    throw InputError(fmt::format("{}: cannot write (lock file {}: {})", path_, lock_path.string(),
                                 std::error_code(err, std::generic_category()).message()));
  const std::optional<CertificateFile> disk = ReadFile();
  CertificateFile merged = disk ? *disk : file_;
  if (!disk) merged.runtimes.clear();
  for (const auto& [name, gone] : dropped_.runtimes) {
    auto it = merged.runtimes.find(name);
    if (it == merged.runtimes.end()) continue;
    RuntimeCertificates& c = it->second;
    if (gone.schedule && c.schedule && SameSchedule(*c.schedule, *gone.schedule)) c.schedule.reset();
    if (gone.bound && c.bound && SameBound(*c.bound, *gone.bound)) c.bound.reset();
  }
  for (const auto& [name, ours] : offered_.runtimes) {
    RuntimeCertificates& c = merged.runtimes[name];
    if (ours.schedule && (!c.schedule || BetterSchedule(*ours.schedule, *c.schedule)))
      c.schedule = ours.schedule;
    if (ours.bound && (!c.bound || ours.bound->bytes > c.bound->bytes)) c.bound = ours.bound;
  }
  for (auto it = merged.runtimes.begin(); it != merged.runtimes.end();)
    it = it->second.schedule || it->second.bound ? std::next(it) : merged.runtimes.erase(it);
  dirty_ = false;
  offered_.runtimes.clear();
  dropped_.runtimes.clear();
  if (disk && CertificateFileText(trace_, merged) == CertificateFileText(trace_, *disk))
    return false;  // another writer stored as good or better already
  merged.trace_name = file_.trace_name;
  WriteFileAtomically(path_, CertificateFileText(trace_, merged));  // "PATH: cannot write (REASON)"
  return true;
}

std::string StoreDirectory(const std::string& given) {
  if (!given.empty()) return given;
  const char* env = std::getenv("DTRCHECK_STORE");
  return env ? env : "";
}

std::unique_ptr<CertificateStore> OpenStore(const std::string& dir, const std::string& trace_path,
                                            const Trace& trace, int64_t baseline_memory) {
  if (dir.empty()) return nullptr;
  return std::make_unique<CertificateStore>(dir, trace_path, trace, baseline_memory);
}

}  // namespace dtr
