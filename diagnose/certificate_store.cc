#include "diagnose/certificate_store.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "checker/file_digest.h"
#include "model/error.h"

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
  auto fail = [&](const std::string& what) -> Error {
    return Error(fmt::format("{}: not a certificate store file: {}", path, what));
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
    if (message.rfind(path, 0) == 0) throw;  // names the file already
    throw fail(message);
  }
  return f;
}

CertificateStore::CertificateStore(const std::string& store, const std::string& trace_path,
                                   const Trace& trace, int64_t baseline_memory)
    : trace_(trace) {
  const std::string digest = FileDigest(trace_path);
  std::error_code ec;
  const bool is_file = fs::is_regular_file(store, ec);
  path_ = is_file ? store : (fs::path(store) / (digest + ".json")).string();
  std::ifstream in(path_);
  if (in) {
    std::ostringstream text;
    text << in.rdbuf();
    // The digest is checked before the scripts are parsed against the trace.
    nlohmann::json head = nlohmann::json::parse(text.str(), nullptr, false);
    if (!head.is_discarded() && head.contains("trace") && head["trace"].contains("sha256") &&
        head["trace"]["sha256"].is_string() && head["trace"]["sha256"] != digest)
      throw Error(fmt::format(
          "{}: the certificate store belongs to another trace ({}, sha256 {}), not to {} (sha256 "
          "{})",
          path_, head["trace"].value("file", "?"), head["trace"]["sha256"].get<std::string>(),
          trace_path, digest));
    file_ = ParseCertificateFile(text.str(), path_, trace);
    if (file_.operators != static_cast<int32_t>(trace.ops.size()) ||
        file_.tensors != static_cast<int32_t>(trace.tensors.size()) ||
        file_.storages != static_cast<int32_t>(trace.storages.size()) ||
        file_.baseline_memory != baseline_memory)
      throw Error(fmt::format("{}: the certificate store's trace summary does not match {}", path_,
                              trace_path));
  } else if (is_file) {
    throw Error(fmt::format("{}: cannot read the certificate store", path_));
  } else {
    file_.sha256 = digest;
  }
  file_.trace_name = fs::path(trace_path).filename().string();
  file_.operators = static_cast<int32_t>(trace.ops.size());
  file_.tensors = static_cast<int32_t>(trace.tensors.size());
  file_.storages = static_cast<int32_t>(trace.storages.size());
  file_.baseline_memory = baseline_memory;
}

const RuntimeCertificates* CertificateStore::Find(RuntimeKind runtime) const {
  auto it = file_.runtimes.find(std::string(RuntimeName(runtime)));
  return it == file_.runtimes.end() ? nullptr : &it->second;
}

bool CertificateStore::OfferSchedule(RuntimeKind runtime, const StoredSchedule& schedule) {
  RuntimeCertificates& c = file_.runtimes[std::string(RuntimeName(runtime))];
  if (c.schedule && c.schedule->peak <= schedule.peak) return false;
  c.schedule = schedule;
  dirty_ = true;
  return true;
}

bool CertificateStore::OfferBound(RuntimeKind runtime, const StoredBound& bound) {
  RuntimeCertificates& c = file_.runtimes[std::string(RuntimeName(runtime))];
  if (c.bound && c.bound->bytes >= bound.bytes) return false;
  c.bound = bound;
  dirty_ = true;
  return true;
}

void CertificateStore::Save() {
  if (!dirty_) return;
  const fs::path target(path_);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  if (ec)
    throw Error(fmt::format("{}: cannot create the certificate store directory: {}",
                            target.parent_path().string(), ec.message()));
  const fs::path temp = target.string() + fmt::format(".tmp.{}", getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out || !(out << CertificateFileText(trace_, file_)) || !out.flush()) {
      fs::remove(temp, ec);
      throw Error(fmt::format("{}: cannot write the certificate store", temp.string()));
    }
  }
  fs::rename(temp, target, ec);
  if (ec) {
    std::error_code ignore;
    fs::remove(temp, ignore);
    throw Error(fmt::format("{}: cannot replace the certificate store: {}", path_, ec.message()));
  }
  dirty_ = false;
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
