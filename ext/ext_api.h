// dtrcheck-ext.so: the code that needs Z3 (checker/proofs/feasibility.h), MPI
// (checker/farm/mpi_farm.h) or OpenSSL (checker/persist/file_digest.h). Loading those
// libraries costs about 3 ms of a 4 ms process start, so the dtrcheck
// executable loads this module (ext/loader.cc) only when a command first
// proves, hashes a trace or runs under an MPI launcher. Every other program
// (tests, benchmarks, the Python module) links the same sources directly.
// The module and the executable come from one build: kExtAbi, the table's
// size and the digest of the sources they share (ext/build_id.cmake, which
// sees a change to a type passed through the table, SolverLimits say, or to
// the code behind it) guard against pairing one with another build's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "checker/farm/mpi_farm.h"
#include "checker/proofs/feasibility.h"

namespace dtr {

inline constexpr int kExtAbi = 3;  // 2: SolverLimits::work_limit; 3: build_id

struct ExtApi {
  int abi;
  size_t size;           // sizeof(ExtApi)
  const char* build_id;  // kExtBuildId (ext/ext_build_id.h, generated)
  WindowQuery (*query_window)(const Trace&, OpWindow, int64_t, const SolverLimits&);
  WindowBound (*bound_window)(const Trace&, OpWindow, int64_t, int64_t, const SolverLimits&,
                              const SolverProgress&, int64_t);
  WindowPlan (*plan_window)(const Trace&, OpWindow, int64_t, const std::vector<uint8_t>&,
                            const SolverLimits&);
  std::string (*file_digest)(const std::string&);
  // The MPI session (one per process: see MpiSession) and the farm.
  void (*mpi_start)(int*, char***);
  void (*mpi_stop)();
  int (*mpi_finish)(int, const std::string&);
  std::string (*mpi_library_version)();
  int (*farm_ranks)();
  int (*farm_rank)();
  bool (*farm_collects_here)();
  bool (*farm_is_distributed)();
  size_t (*run_distributed_farm)(size_t, const std::function<std::string(size_t)>&,
                                 const std::function<bool(size_t, std::string_view)>&,
                                 const FarmProgressFn&,
                                 const std::function<void(size_t, std::string_view)>&);
  std::string (*share_from_collector)(const std::function<std::string()>&);
};

}  // namespace dtr

// The module's one exported symbol.
extern "C" const dtr::ExtApi* dtrcheck_ext_api();
