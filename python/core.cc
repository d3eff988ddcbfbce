// dtrcheck._core: the C++ library behind `import dtrcheck` (pybind11).
//
// Each function fills the front door's request of the CLI command of the same
// name (api/front_door.h) from its keyword arguments, runs it, and returns
// what that command's --json prints, as Python dicts and lists: the field
// names are the JSON names and the numbers are the same numbers. Defaults and
// ranges are the request's, so a value the CLI refuses is refused here with
// the CLI's message; numbers arrive as Python objects and are read as the
// CLI reads its flags' text (api/option_ranges.h), so that 2**63 or -1 is
// refused with that message rather than a conversion error. The Python
// package (python/dtrcheck/api.py) wraps these results in objects. Long
// calls release the GIL. A dtr::Error becomes dtrcheck.Error carrying the
// message the CLI prints after "dtrcheck: ".
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/front_door.h"

namespace py = pybind11;
using nlohmann::ordered_json;

namespace dtr::python {
namespace {

using api::LoadedTrace;

std::shared_ptr<LoadedTrace> Load(const std::string& path) {
  py::gil_scoped_release release;
  return std::make_shared<LoadedTrace>(api::LoadTraceFile(path));
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

// A keyword's value as the CLI's flag text: str() of a Python int or float
// is what a user would type (repr-exact for floats), and bool, which Python
// counts as an int, is refused as the text the CLI would refuse.
std::string FlagText(const py::handle& value) { return py::str(value); }

int64_t Integer(const api::IntegerRange& range, const py::handle& value) {
  return api::IntegerOption(range, FlagText(value));
}
double Number(const api::NumberRange& range, const py::handle& value) {
  return api::NumberOption(range, FlagText(value));
}
std::optional<int64_t> OptionalInteger(const api::IntegerRange& range, const py::object& value) {
  if (value.is_none()) return std::nullopt;
  return Integer(range, value);
}
std::optional<double> OptionalNumber(const api::NumberRange& range, const py::object& value) {
  if (value.is_none()) return std::nullopt;
  return Number(range, value);
}
// jobs=None: one worker per core (the request's 0).
int Jobs(const py::object& jobs) { return static_cast<int>(OptionalInteger(api::kJobs, jobs).value_or(0)); }

api::ReplayChoice Settings(std::vector<std::string> heuristics, const std::string& runtime,
                           const py::object& overhead_limit, const py::object& seed) {
  api::ReplayChoice c;
  c.heuristics = std::move(heuristics);
  c.runtime = runtime;
  c.overhead_limit = OptionalNumber(api::kOverheadLimit, overhead_limit);
  c.seed = api::SeedOption(FlagText(seed));
  return c;
}

BudgetChoice Budget(const std::optional<std::string>& ratio, const py::object& budget, const std::string& command) {
  return api::ChooseBudget(ratio, OptionalInteger(api::kBudget, budget), command);
}

py::object Info(const LoadedTrace& t) { return ToPython(api::InfoJson(t)); }

py::object Replay(const LoadedTrace& t, std::optional<std::string> ratio, const py::object& budget,
                  const std::string& heuristic, const std::string& runtime, const py::object& overhead_limit,
                  const py::object& seed) {
  api::ReplayRequest r;
  r.budget = Budget(ratio, budget, "replay");
  r.settings = Settings({heuristic}, runtime, overhead_limit, seed);
  api::Validate(r);
  ordered_json j;
  {
    py::gil_scoped_release release;
    j = api::RunJson(t, api::Replay(t, r));
  }
  return ToPython(j);
}

py::object Sweep(const LoadedTrace& t, const std::string& ratios, const std::vector<std::string>& heuristics,
                 const std::string& runtime, const py::object& overhead_limit, const py::object& seed,
                 const py::object& jobs) {
  api::SweepRequest r;
  r.ratios = ratios;
  r.settings = Settings(heuristics, runtime, overhead_limit, seed);
  r.jobs = Jobs(jobs);
  api::Validate(r);
  ordered_json runs = ordered_json::array();
  {
    py::gil_scoped_release release;
    for (const RunRecord& run : api::Sweep(t, r)) runs.push_back(api::RunJson(t, run));
  }
  return ToPython(runs);
}

py::object Atlas(const LoadedTrace& t, const std::optional<std::string>& ratios,
                 const std::optional<std::string>& budgets, const std::string& heuristic,
                 const std::string& runtime, const py::object& overhead_limit,
                 const py::object& seed, const py::object& jobs, const py::object& max_runs,
                 const py::object& max_evals) {
  api::AtlasRequest r;
  r.ratios = ratios.value_or("");
  r.budgets = budgets.value_or("");
  r.settings = Settings({heuristic}, runtime, overhead_limit, seed);
  r.jobs = Jobs(jobs);
  r.max_runs = static_cast<size_t>(Integer(api::kMaxRuns, max_runs));
  r.max_evals = OptionalInteger(api::kMaxEvals, max_evals).value_or(r.max_evals);
  api::Validate(r);
  ordered_json j;
  {
    py::gil_scoped_release release;
    j = api::AtlasJson(t, api::Atlas(t, r));
  }
  return ToPython(j);
}

py::object Scan(const LoadedTrace& t, const std::string& ratios, const std::string& heuristic,
                const std::string& runtime, const py::object& overhead_limit, const py::object& seed,
                const py::object& cliff_factor, bool refine, bool exact, const py::object& max_walk,
                const py::object& jobs) {
  api::ScanRequest r;
  r.ratios = ratios;
  r.settings = Settings({heuristic}, runtime, overhead_limit, seed);
  r.cliff_factor = OptionalNumber(api::kCliffFactor, cliff_factor).value_or(r.cliff_factor);
  r.refine = refine;
  r.exact = exact;
  r.max_walk = static_cast<int>(OptionalInteger(api::kMaxWalk, max_walk).value_or(r.max_walk));
  r.jobs = Jobs(jobs);
  api::Validate(r);
  ordered_json j;
  {
    py::gil_scoped_release release;
    j = api::ScanJson(t, api::Scan(t, r));
  }
  return ToPython(j);
}

// explain (kind "explain") or prove ("prove").
py::object Classify(const LoadedTrace& t, const std::string& kind, std::optional<std::string> ratio,
                    const py::object& budget, const std::string& heuristic, const std::string& runtime, bool z3,
                    const py::object& timeout, const py::object& work_limit, const py::object& windows,
                    const py::object& window_ops, bool cut, const std::vector<std::string>& witness_heuristics,
                    const py::object& next_use_computations, const std::optional<std::string>& store) {
  api::ProofRequest r;
  r.kind = kind == "explain" ? api::ProofKind::kExplain : api::ProofKind::kProve;
  r.budget = Budget(ratio, budget, kind);
  r.settings.heuristics = {heuristic};
  r.settings.runtime = runtime;
  r.z3 = z3;
  r.timeout = OptionalNumber(api::kTimeout, timeout).value_or(r.timeout);
  r.work_limit = static_cast<uint32_t>(OptionalInteger(api::kWorkLimit, work_limit).value_or(r.work_limit));
  r.windows = static_cast<int32_t>(OptionalInteger(api::kWindows, windows).value_or(r.windows));
  r.window_ops = static_cast<int32_t>(OptionalInteger(api::kWindowOps, window_ops).value_or(r.window_ops));
  r.cut = cut;
  r.witness_heuristics = witness_heuristics;
  r.next_use_computations =
      OptionalInteger(api::kNextUseComputations, next_use_computations).value_or(r.next_use_computations);
  r.store = store;
  api::Validate(r);
  ordered_json j;
  std::string store_error;  // a store that cannot be written keeps no answer from the caller
  {
    py::gil_scoped_release release;
    api::ProofAnswer a = api::Prove(t, r);
    j = api::ProofJson(t, a);
    try {
      api::SaveProofStore(a);
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

py::object Report(const LoadedTrace& t, const std::string& ratios,
                  const std::optional<std::string>& out, const std::vector<std::string>& heuristics,
                  const std::string& runtime, const py::object& overhead_limit,
                  std::optional<std::string> timeline_ratio, const py::object& cliff_factor,
                  const py::object& jobs, bool atlas, const py::object& atlas_max_runs,
                  const py::object& atlas_max_evals, const py::object& max_verdicts, bool proofs,
                  bool divergence, bool z3, const py::object& timeout, const py::object& work_limit,
                  const py::object& windows, const py::object& window_ops, bool cut,
                  const std::optional<std::string>& store) {
  api::ReportRequest r;
  r.ratios = ratios;
  r.out = out.value_or("");
  r.settings = Settings(heuristics, runtime, overhead_limit, py::int_(0));
  r.timeline_ratio = timeline_ratio.value_or("");
  r.cliff_factor = OptionalNumber(api::kCliffFactor, cliff_factor).value_or(r.cliff_factor);
  r.jobs = Jobs(jobs);
  r.atlas = atlas;
  if (std::optional<int64_t> runs = OptionalInteger(api::kAtlasMaxRuns, atlas_max_runs))
    r.atlas_max_runs = static_cast<size_t>(*runs);
  r.atlas_max_evals = OptionalInteger(api::kAtlasMaxEvals, atlas_max_evals);
  r.max_verdicts =
      static_cast<size_t>(OptionalInteger(api::kMaxVerdicts, max_verdicts).value_or(r.max_verdicts));
  r.proofs = proofs;
  r.divergence = divergence;
  r.z3 = z3;
  r.timeout = OptionalNumber(api::kTimeout, timeout);
  if (std::optional<int64_t> w = OptionalInteger(api::kWorkLimit, work_limit)) r.work_limit = static_cast<uint32_t>(*w);
  if (std::optional<int64_t> w = OptionalInteger(api::kWindows, windows)) r.windows = static_cast<int32_t>(*w);
  if (std::optional<int64_t> w = OptionalInteger(api::kWindowOps, window_ops)) r.window_ops = static_cast<int32_t>(*w);
  r.cut = cut;
  r.store = store;
  api::Validate(r);
  ordered_json j;
  std::vector<std::string> files;
  {
    py::gil_scoped_release release;
    api::ReportAnswer a = api::Report(t, r);
    files = a.files;
    j = api::ReportJson(t, a);
  }
  py::dict result;
  result["files"] = py::cast(files);
  result["report"] = ToPython(j);
  return result;
}

py::object Plan(const LoadedTrace& t, const std::optional<std::string>& ratio, const py::object& budget) {
  api::PlanRequest r;
  r.budget = Budget(ratio, budget, "plan");
  api::Validate(r);
  ordered_json j;
  {
    py::gil_scoped_release release;
    j = api::PlanJson(t, api::Plan(t, r));
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
  m.def("replay", &dp::Replay, py::arg("trace"), py::arg("ratio"), py::arg("budget"), py::arg("heuristic"),
        py::arg("runtime"), py::arg("overhead_limit"), py::arg("seed"));
  m.def("sweep", &Sweep, py::arg("trace"), py::arg("ratios"), py::arg("heuristics"), py::arg("runtime"),
        py::arg("overhead_limit"), py::arg("seed"), py::arg("jobs"));
  m.def("atlas", &dp::Atlas, py::arg("trace"), py::arg("ratios"), py::arg("budgets"),
        py::arg("heuristic"), py::arg("runtime"), py::arg("overhead_limit"), py::arg("seed"),
        py::arg("jobs"), py::arg("max_runs"), py::arg("max_evals"));
  m.def("scan", &Scan, py::arg("trace"), py::arg("ratios"), py::arg("heuristic"), py::arg("runtime"),
        py::arg("overhead_limit"), py::arg("seed"), py::arg("cliff_factor"), py::arg("refine"),
        py::arg("exact"), py::arg("max_walk"), py::arg("jobs"));
  m.def("classify", &Classify, py::arg("trace"), py::arg("kind"), py::arg("ratio"), py::arg("budget"),
        py::arg("heuristic"), py::arg("runtime"), py::arg("z3"), py::arg("timeout"), py::arg("work_limit"),
        py::arg("windows"), py::arg("window_ops"), py::arg("cut"), py::arg("witness_heuristics"),
        py::arg("next_use_computations"), py::arg("store"));
  m.def("report", &dp::Report, py::arg("trace"), py::arg("ratios"), py::arg("out"),
        py::arg("heuristics"), py::arg("runtime"), py::arg("overhead_limit"),
        py::arg("timeline_ratio"), py::arg("cliff_factor"), py::arg("jobs"), py::arg("atlas"),
        py::arg("atlas_max_runs"), py::arg("atlas_max_evals"), py::arg("max_verdicts"),
        py::arg("proofs"), py::arg("divergence"), py::arg("z3"), py::arg("timeout"),
        py::arg("work_limit"), py::arg("windows"), py::arg("window_ops"), py::arg("cut"),
        py::arg("store"));
  m.def("plan", &dp::Plan, py::arg("trace"), py::arg("ratio"), py::arg("budget"));
}
