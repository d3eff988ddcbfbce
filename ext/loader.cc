// The executable's side of dtrcheck-ext.so (ext/ext_api.h): the functions of
// checker/proofs/feasibility.h, checker/persist/file_digest.h and checker/farm/mpi_farm.h, each
// loading the module on first use and calling its copy. Without an MPI
// launcher the farm functions answer as one process without loading it.
#include <dlfcn.h>
#include <fmt/core.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "checker/persist/file_digest.h"
#include "ext/ext_api.h"
#include "ext/ext_build_id.h"
#include "model/error.h"

namespace dtr {

namespace {

thread_local int t_task_depth = 0;  // farm tasks running on this thread (nested)
bool g_mpi = false;                 // an MPI launcher started us: the module runs the session

// The module beside the executable. A module that is missing or from another
// build is an Error of kind kEnvironment (exit status 4): the command cannot
// go on without what it holds.
const ExtApi& Ext() {
  static const ExtApi* api = [] {
    char exe[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    std::string path = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string();
    path = path.substr(0, path.rfind('/') + 1) + "dtrcheck-ext.so";
    auto fail = [&](const std::string& why) {
      throw Error(fmt::format("cannot load {} (Z3, MPI and OpenSSL, built beside dtrcheck: "
                              "ninja -C build dtrcheck): {}",
                              path, why),
                  ErrorKind::kEnvironment);
    };
    void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);  // RTLD_GLOBAL: MPI's plugins
    if (!module) fail(dlerror());
    auto get = reinterpret_cast<const ExtApi* (*)()>(dlsym(module, "dtrcheck_ext_api"));
    if (!get) fail(dlerror());
    const ExtApi* table = get();
    if (table->abi != kExtAbi || table->size != sizeof(ExtApi) ||
        std::strcmp(table->build_id, kExtBuildId) != 0)
      fail("it comes from another build");
    return table;
  }();
  return *api;
}

}  // namespace

WindowQuery QueryWindow(const Trace& trace, OpWindow window, int64_t budget,
                        const SolverLimits& limits) {
  return Ext().query_window(trace, window, budget, limits);
}

WindowBound BoundWindow(const Trace& trace, OpWindow window, int64_t lo, int64_t hi,
                        const SolverLimits& limits, const SolverProgress& progress,
                        int64_t resolution) {
  return Ext().bound_window(trace, window, lo, hi, limits, progress, resolution);
}

WindowPlan PlanWindow(const Trace& trace, OpWindow window, int64_t budget,
                      const std::vector<uint8_t>& entry_material, const SolverLimits& limits) {
  return Ext().plan_window(trace, window, budget, entry_material, limits);
}

std::string FileDigest(const std::string& path) { return Ext().file_digest(path); }

MpiSession::MpiSession(int* argc, char*** argv) {
  if (!LaunchedByMpi()) {
    RefuseSrunWithoutMpi();
    return;
  }
  try {
    Ext().mpi_start(argc, argv);
  } catch (const Error& e) {  // before any command runs
    std::fprintf(stderr, "dtrcheck: %s\n", e.what());
    std::exit(4);  // kExitEnvironment
  }
  g_mpi = true;
}

MpiSession::~MpiSession() {
  if (g_mpi) Ext().mpi_stop();
}

int MpiSession::Finish(int status, const std::string& error) {
  return g_mpi ? Ext().mpi_finish(status, error) : status;
}

std::string MpiLibraryVersion() { return Ext().mpi_library_version(); }
int FarmRanks() { return g_mpi ? Ext().farm_ranks() : 1; }
int FarmRank() { return g_mpi ? Ext().farm_rank() : 0; }
bool FarmCollectsHere() { return !g_mpi || Ext().farm_collects_here(); }
// Task scopes count on both sides: the executable's (parallel.h) here, the
// module's own (its farm's threads) there.
bool FarmIsDistributed() { return g_mpi && t_task_depth == 0 && Ext().farm_is_distributed(); }

FarmTaskScope::FarmTaskScope() { ++t_task_depth; }
FarmTaskScope::~FarmTaskScope() { --t_task_depth; }

size_t RunDistributedFarm(size_t n, const std::function<std::string(size_t)>& task,
                          const std::function<bool(size_t, std::string_view)>& collect,
                          const FarmProgressFn& progress,
                          const std::function<void(size_t, std::string_view)>& remote) {
  return Ext().run_distributed_farm(n, task, collect, progress, remote);
}

std::string ShareFromCollector(const std::function<std::string()>& produce) {
  return g_mpi ? Ext().share_from_collector(produce) : produce();
}

}  // namespace dtr
