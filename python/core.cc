// dtrcheck._core: the C++ library behind `import dtrcheck` (pybind11).
//
// Each function calls the library functions the CLI command of the same name
// calls, and returns what that command's --json prints, as Python dicts and
// lists: the field names are the JSON names and the numbers are the same
// numbers. The Python package (python/dtrcheck/api.py) wraps these results in
// objects; keep this file a thin layer over the library. Long calls release
// the GIL. A dtr::Error becomes dtrcheck.Error carrying the message the CLI
// prints after "dtrcheck: ".
//
// Bound library entry points: LoadTrace, ComputeBaseline, Summarize,
// TraceInfoJson; RunOne, RunMany, RunJson (checker/sweep.h); BuildAtlas,
// AtlasJson; ScanInstability, ScanJson; ExplainOom, ProveBudget,
// ClassificationJson; BuildReport, WriteReportFiles, ReportJson;
// PlanCheckpoints, PlanJson.
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checker/budget_atlas.h"
#include "checker/heuristic.h"
#include "checker/ratio_grid.h"
#include "checker/replay.h"
#include "checker/sweep.h"
#include "diagnose/certificate_records.h"
#include "diagnose/certificate_store.h"
#include "diagnose/checkpoint_plan.h"
#include "diagnose/instability_scan.h"
#include "diagnose/oom_classification.h"
#include "diagnose/report_model.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "reports/atlas_report.h"
#include "reports/instability_report.h"
#include "reports/plan_report.h"
#include "reports/proof_report.h"
#include "reports/report_files.h"
#include "reports/report_json.h"
#include "reports/run_report.h"

namespace py = pybind11;
using nlohmann::ordered_json;

namespace dtr::python {
namespace {

// A parsed trace with its simrd baseline, computed once.
struct LoadedTrace {
  std::string path;
  Trace trace;
  Baseline baseline;
  TraceSummary summary;
};

std::shared_ptr<LoadedTrace> Load(const std::string& path) {
  auto t = std::make_shared<LoadedTrace>();
  py::gil_scoped_release release;
  t->path = path;
  t->trace = LoadTrace(path);
  t->baseline = ComputeBaseline(t->trace);
  t->summary = Summarize(path, t->baseline);
  return t;
}

py::object ToPython(const ordered_json& j) {
  switch (j.type()) {
    case ordered_json::value_t::null:
      return py::none();
    case ordered_json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case ordered_json::value_t::number_integer:
      return py::int_(j.get<int64_t>());
    case ordered_json::value_t::number_unsigned:
      return py::int_(j.get<uint64_t>());
    case ordered_json::value_t::number_float:
      return py::float_(j.get<double>());
    case ordered_json::value_t::string:
      return py::str(j.get_ref<const std::string&>());
    case ordered_json::value_t::array: {
      py::list l;
      for (const ordered_json& e : j) l.append(ToPython(e));
      return l;
    }
    case ordered_json::value_t::object: {
      py::dict d;
      for (auto it = j.begin(); it != j.end(); ++it) d[py::str(it.key())] = ToPython(it.value());
      return d;
    }
    default:
      throw Error("unexpected JSON value");
  }
}

// What the CLI's SpecFrom (cli/replay_flags.cc) builds from the shared flags.
// A ratio or grid argument parsed as the CLI's flag of that name parses it
// (its validator, cli/flag_ranges.h), failing with the line the CLI prints:
// "--ratios: bad ratio grid '0.2:0.1:0.01': STOP is below START (see --help)".
template <typename Parse>
auto AsFlag(const char* flag, Parse parse) {
  try {
    return parse();
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {} (see --help)", flag, e.what()));
  }
}
Ratio RatioFlag(const char* flag, const std::string& text) {
  return AsFlag(flag, [&] { return ParseRatio(text); });
}
std::vector<Ratio> GridFlag(const char* flag, const std::string& text) {
  return AsFlag(flag, [&] { return ParseRatios(text); });
}

RunSpec Spec(const std::string& heuristic, const std::string& runtime,
             std::optional<double> overhead_limit, uint64_t seed) {
  RunSpec s;
  s.heuristic = &FindHeuristic(heuristic);
  s.runtime = ParseRuntime(runtime);
  if (overhead_limit && !(*overhead_limit >= 1))
    throw Error(fmt::format("overhead_limit must be at least 1, got {}", *overhead_limit));
  s.overhead_limit = overhead_limit;
  s.seed = seed;
  return s;
}

// The cliff factor scan and report take, checked before any replay runs.
double CliffFactor(double cliff_factor) {
  if (!(cliff_factor > 1))
    throw Error(fmt::format("cliff_factor must be greater than 1, got {}", cliff_factor));
  return cliff_factor;
}

// One budget, as the ratio text (a decimal, "0.101") or bytes; exactly one.
void SetBudget(RunSpec& s, const std::optional<std::string>& ratio, std::optional<int64_t> budget,
               const char* command) {
  if (ratio.has_value() == budget.has_value())
    throw Error(std::string(command) + " needs ratio= or budget= (one of them)");
  if (ratio) s.ratio = RatioFlag("--ratio", *ratio);
  if (budget) {
    if (*budget < 0) throw Error("budget must not be negative");
    s.budget = *budget;
  }
}

py::object Info(const LoadedTrace& t) { return ToPython(TraceInfoJson(t.trace, t.summary)); }

py::object ReplayOne(const LoadedTrace& t, std::optional<std::string> ratio,
                     std::optional<int64_t> budget, const std::string& heuristic,
                     const std::string& runtime, std::optional<double> overhead_limit,
                     uint64_t seed) {
  RunSpec spec = Spec(heuristic, runtime, overhead_limit, seed);
  SetBudget(spec, ratio, budget, "replay");
  ordered_json j;
  {
    py::gil_scoped_release release;
    j = RunJson(t.summary, RunOne(t.trace, t.baseline, spec), &t.trace);
  }
  return ToPython(j);
}

py::object Sweep(const LoadedTrace& t, const std::string& ratios,
                 const std::vector<std::string>& heuristics, const std::string& runtime,
                 std::optional<double> overhead_limit, uint64_t seed, int jobs) {
  std::vector<Ratio> grid = GridFlag("--ratios", ratios);
  std::vector<RunSpec> specs;
  for (const std::string& h : heuristics) {
    RunSpec base = Spec(h, runtime, overhead_limit, seed);
    for (const Ratio& r : grid) {
      RunSpec s = base;
      s.ratio = r;
      specs.push_back(s);
    }
  }
  ordered_json runs = ordered_json::array();
  {
    py::gil_scoped_release release;
    for (const RunRecord& r : RunMany(t.trace, t.baseline, specs, jobs))
      runs.push_back(RunJson(t.summary, r, &t.trace));
  }
  return ToPython(runs);
}

py::object Atlas(const LoadedTrace& t, std::optional<std::pair<std::string, std::string>> ratios,
                 std::optional<std::pair<int64_t, int64_t>> budgets, const std::string& heuristic,
                 const std::string& runtime, std::optional<double> overhead_limit, uint64_t seed,
                 int jobs, size_t max_runs) {
  if (ratios.has_value() == budgets.has_value())
    throw Error("atlas needs ratios=(lo, hi) or budgets=(lo, hi)");
  RunSpec spec = Spec(heuristic, runtime, overhead_limit, seed);
  std::pair<int64_t, int64_t> bytes;
  if (ratios)
    bytes = {BudgetForRatio(t.baseline.memory, ParseRatio(ratios->first).value),
             BudgetForRatio(t.baseline.memory, ParseRatio(ratios->second).value)};
  else
    bytes = *budgets;
  ordered_json j;
  {
    py::gil_scoped_release release;
    BudgetAtlas atlas =
        BuildAtlas(t.trace, t.baseline, spec, bytes.first, bytes.second, jobs, nullptr, max_runs);
    j = AtlasJson(t.summary, spec, atlas);
  }
  return ToPython(j);
}

py::object Scan(const LoadedTrace& t, const std::string& ratios, const std::string& heuristic,
                const std::string& runtime, std::optional<double> overhead_limit, uint64_t seed,
                double cliff_factor, bool refine, bool exact, int max_walk, int jobs) {
  RunSpec spec = Spec(heuristic, runtime, overhead_limit, seed);
  ScanOptions o;
  o.heuristic = spec.heuristic;
  o.runtime = spec.runtime;
  o.overhead_limit = spec.overhead_limit;
  o.seed = spec.seed;
  o.jobs = jobs;
  o.cliff_factor = CliffFactor(cliff_factor);
  o.refine = refine;
  o.exact = exact;
  o.max_walk = max_walk;
  std::vector<Ratio> grid = GridFlag("--ratios", ratios);
  ordered_json j;
  {
    py::gil_scoped_release release;
    j = ScanJson(t.summary, ScanInstability(t.trace, t.baseline, grid, o));
  }
  return ToPython(j);
}

// Z3's resource limit per call (--work-limit): 0 (none) to 2^32-1.
uint32_t WorkLimit(int64_t limit) {
  if (limit < 0 || limit > UINT32_MAX)
    throw Error(fmt::format("work_limit must be in 0..{}, got {}", UINT32_MAX, limit));
  return static_cast<uint32_t>(limit);
}

// Z3's time limit per call (--timeout): positive seconds.
double Timeout(double seconds) {
  if (!(seconds > 0)) throw Error(fmt::format("timeout must be positive, got {}", seconds));
  return seconds;
}

// store=: None is the CLI's default ($DTRCHECK_STORE), "" no store.
std::string PythonStoreDirectory(const std::optional<std::string>& store) {
  return store ? *store : StoreDirectory("");
}

// explain (heuristic set) or prove (heuristic empty), as the CLI's Load() and
// OptionsFrom() in cli/proof_commands.cc set them up.
py::object Classify(const LoadedTrace& t, const std::string& kind, std::optional<std::string> ratio,
                    std::optional<int64_t> budget, const std::string& heuristic,
                    const std::string& runtime, bool z3, double timeout, int64_t work_limit,
                    int32_t windows, int32_t window_ops, bool cut,
                    const std::vector<std::string>& witness_heuristics,
                    const std::optional<std::string>& store_dir) {
  if (ratio.has_value() == budget.has_value())
    throw Error(kind + " needs ratio= or budget= (one of them)");
  ProofHeader h;
  h.log = t.summary.log;
  h.baseline = t.baseline;
  h.runtime = ParseRuntime(runtime);
  if (h.runtime == RuntimeKind::kV1)
    throw Error(kind + " needs a RuntimeV2 runtime, not RuntimeV1");
  if (ratio) {
    h.ratio = RatioFlag("--ratio", *ratio);
    h.budget = BudgetForRatio(t.baseline.memory, h.ratio->value);
  } else {
    h.budget = *budget;
  }
  ClassifyOptions o =
      ClassifyOptionsFor({z3, Timeout(timeout), WorkLimit(work_limit), windows, window_ops, cut});
  o.witness.runtime = h.runtime;
  for (const std::string& w : witness_heuristics) o.witness.heuristics.push_back(&FindHeuristic(w));
  // As the CLI's --store: the stored certificates are used, and what this
  // run finds is added.
  std::unique_ptr<CertificateStore> store =
      OpenStore(PythonStoreDirectory(store_dir), t.path, t.trace, t.baseline.memory);
  if (store) o.stored = store->Find(h.runtime);
  ordered_json j;
  std::string store_error;  // a store that cannot be written keeps no answer from the caller
  {
    py::gil_scoped_release release;
    Classification c;
    if (kind == "explain") {
      h.heuristic = heuristic;
      ReplayConfig config;
      config.runtime = h.runtime;
      config.heuristic = &FindHeuristic(heuristic);
      config.budget = h.budget;
      c = ExplainOom(t.trace, t.baseline, config, o);
    } else {
      c = ProveBudget(t.trace, t.baseline, h.budget, o);
    }
    j = ClassificationJson(t.trace, h, kind, c);
    try {
      if (store && !RecordClassification(*store, t.trace, h.runtime, c, kind).empty()) store->Save();
    } catch (const Error& e) {
      store_error = e.what();
    }
  }
  // As the CLI prints the answer before it reports the store: the result is
  // returned, the store's failure is a RuntimeWarning (an error under -W error).
  if (!store_error.empty() && PyErr_WarnEx(PyExc_RuntimeWarning, store_error.c_str(), 1) != 0)
    throw py::error_already_set();
  return ToPython(j);
}

py::object Report(const LoadedTrace& t, const std::string& ratios, const std::string& out,
                  const std::string& heuristic, const std::string& runtime,
                  std::optional<double> overhead_limit, std::optional<std::string> timeline_ratio,
                  double cliff_factor, int jobs, bool atlas, size_t atlas_max_runs, bool proofs,
                  bool divergence, bool z3, std::optional<double> timeout,
                  std::optional<int64_t> work_limit, std::optional<int32_t> windows,
                  std::optional<int32_t> window_ops, bool cut,
                  const std::optional<std::string>& store_dir) {
  // Z3's limits need z3, as the CLI's --timeout, --work-limit, --windows and
  // --window-ops need --z3; those not given keep VerdictOptions' defaults.
  std::vector<std::string> given;
  for (const auto& [name, set] : {std::pair{"timeout", timeout.has_value()},
                                  {"work_limit", work_limit.has_value()},
                                  {"windows", windows.has_value()},
                                  {"window_ops", window_ops.has_value()}})
    if (set) given.emplace_back(name);
  if (!given.empty() && !z3)
    throw Error(fmt::format("report: {} set Z3's limits and need z3=True", fmt::join(given, ", ")));
  VerdictOptions verdict{.z3 = z3, .cut = cut};
  if (timeout) verdict.timeout_seconds = Timeout(*timeout);
  if (work_limit) verdict.work_limit = WorkLimit(*work_limit);
  if (windows) verdict.windows = *windows;
  if (window_ops) verdict.window_ops = *window_ops;
  const RunSpec spec = Spec(heuristic, runtime, overhead_limit, 0);
  ReportOptions o;
  o.heuristic = spec.heuristic;
  o.runtime = spec.runtime;
  o.overhead_limit = spec.overhead_limit;
  o.cliff_factor = CliffFactor(cliff_factor);
  o.jobs = jobs;
  o.atlas = atlas;
  o.atlas_max_runs = atlas_max_runs;
  o.verdicts = proofs;
  o.divergence = divergence;
  o.verdict_options = verdict;
  o.trace_name = std::filesystem::path(t.path).filename().string();
  o.trace_source = t.path;
  o.ratios_text = ratios;
  o.ratios = GridFlag("--ratios", ratios);
  if (timeline_ratio) o.timeline_ratio = RatioFlag("--timeline-ratio", *timeline_ratio);
  // Read only, as the CLI's; report.json's explain commands name the directory.
  const std::string dir = PythonStoreDirectory(store_dir);
  std::unique_ptr<CertificateStore> store = OpenStore(dir, t.path, t.trace, t.baseline.memory);
  if (store) {
    o.stored = store->Find(o.runtime);
    o.store_path = dir;
  }
  ordered_json j;
  std::vector<std::string> files;
  {
    py::gil_scoped_release release;
    ReportModel model = BuildReport(t.trace, o);
    files = WriteReportFiles(t.trace, model, out);
    j = ReportJson(t.trace, model);
  }
  py::dict result;
  result["files"] = py::cast(files);
  result["report"] = ToPython(j);
  return result;
}

py::object Plan(const LoadedTrace& t, const std::optional<std::string>& ratio,
                std::optional<int64_t> budget) {
  RunSpec spec;
  SetBudget(spec, ratio, budget, "plan");
  const int64_t bytes = spec.ratio ? BudgetForRatio(t.baseline.memory, spec.ratio->value) : *spec.budget;
  ordered_json j;
  {
    py::gil_scoped_release release;
    j = PlanJson(t.trace, PlanCheckpoints(t.trace, bytes));
  }
  return ToPython(j);
}

}  // namespace
}  // namespace dtr::python

PYBIND11_MODULE(_core, m) {
  using namespace dtr::python;
  namespace dp = dtr::python;
  m.doc() = "dtrcheck's C++ library; use the dtrcheck package, not this module";

  // dtrcheck.Error is defined in Python (dtrcheck/errors.py) so that it exists
  // even where this module is not built.
  // Kept for the life of the process (never decref'd at exit).
  static PyObject* error_type =
      py::object(py::module_::import("dtrcheck.errors").attr("Error")).release().ptr();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const dtr::Error& e) {
      PyErr_SetString(error_type, e.what());
    }
  });

  py::class_<LoadedTrace, std::shared_ptr<LoadedTrace>>(m, "LoadedTrace")
      .def_readonly("path", &LoadedTrace::path)
      .def_property_readonly("log", [](const LoadedTrace& t) { return t.summary.log; });

  m.def("load", &Load, py::arg("path"));
  m.def("info", &Info, py::arg("trace"));
  m.def("replay", &ReplayOne, py::arg("trace"), py::arg("ratio"), py::arg("budget"),
        py::arg("heuristic"), py::arg("runtime"), py::arg("overhead_limit"), py::arg("seed"));
  m.def("sweep", &Sweep, py::arg("trace"), py::arg("ratios"), py::arg("heuristics"),
        py::arg("runtime"), py::arg("overhead_limit"), py::arg("seed"), py::arg("jobs"));
  m.def("atlas", &dp::Atlas, py::arg("trace"), py::arg("ratios"), py::arg("budgets"),
        py::arg("heuristic"), py::arg("runtime"), py::arg("overhead_limit"), py::arg("seed"),
        py::arg("jobs"), py::arg("max_runs"));
  m.def("scan", &Scan, py::arg("trace"), py::arg("ratios"), py::arg("heuristic"),
        py::arg("runtime"), py::arg("overhead_limit"), py::arg("seed"), py::arg("cliff_factor"),
        py::arg("refine"), py::arg("exact"), py::arg("max_walk"), py::arg("jobs"));
  m.def("classify", &Classify, py::arg("trace"), py::arg("kind"), py::arg("ratio"),
        py::arg("budget"), py::arg("heuristic"), py::arg("runtime"), py::arg("z3"),
        py::arg("timeout"), py::arg("work_limit"), py::arg("windows"), py::arg("window_ops"),
        py::arg("cut"), py::arg("witness_heuristics"), py::arg("store"));
  m.def("report", &Report, py::arg("trace"), py::arg("ratios"), py::arg("out"),
        py::arg("heuristic"), py::arg("runtime"), py::arg("overhead_limit"),
        py::arg("timeline_ratio"), py::arg("cliff_factor"), py::arg("jobs"), py::arg("atlas"),
        py::arg("atlas_max_runs"), py::arg("proofs"), py::arg("divergence"), py::arg("z3"),
        py::arg("timeout"), py::arg("work_limit"), py::arg("windows"), py::arg("window_ops"),
        py::arg("cut"), py::arg("store"));
  m.def("plan", &Plan, py::arg("trace"), py::arg("ratio"), py::arg("budget"));
}
