// The MPI backend of the task farm (checker/farm/parallel.h). The one place that
// knows about MPI; commands only see RunTaskFarm and, for files, whether this
// process is the one that collects (FarmCollectsHere).
//
// Under `mpirun -np N dtrcheck ...` (or `srun`), every rank runs the same
// command on the same trace and options, in lockstep. At each farm whose
// result type has a FarmCodec (checker/farm/farm_codec.h) the ranks meet:
//   - rank 0 hands out task indices one at a time to whichever rank asks
//     (dynamic load balancing), runs tasks on a thread of its own as well,
//     and collects the results in task order, exactly as the threaded farm;
//   - ranks 1..N-1 run the tasks they are given and send back the encoded
//     result; while a task runs they send a heartbeat every second;
//   - when the farm is decided, rank 0 sends every rank the results it
//     collected, and each rank calls its own collector on them in order, so
//     every rank leaves the farm with the same state and goes on to the same
//     next farm. (Results are also forwarded with each new task, so a rank's
//     collector sees a cap reached while its task still runs.)
// Work between farms (parsing, analysis, stages whose results are not
// encodable) is done by every rank. Only rank 0 prints and writes files
// (cli/main.cc sends the other ranks' output to /dev/null).
//
// Failures end the job with a line from rank 0 naming the rank: a task that
// throws is rethrown on every rank as the lowest failing task's error (as
// with threads); a rank that sends nothing for DTRCHECK_MPI_TIMEOUT seconds
// (default 120) while it runs a task or after rank 0 finished the command,
// or that ends its command early, makes rank 0 print which and abort the job
// (exit status 4). A rank killed by a
// signal is reported by the launcher (mpirun: "mpirun noticed that process
// rank 2 ... exited on signal 9"); rank 0 then adds which tasks were out.
// Ranks that disagree on the work (a farm of another size: a bug, or a stage
// that depends on timing) are detected and reported the same way.
//
// Without an MPI launcher (or built with -DDTRCHECK_MPI=OFF) nothing here
// does anything: one process, threads, as before.
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>

namespace dtr {

// Called after each finished task with the number finished so far and n,
// serialized, in completion order (for progress bars only: the order and
// the timing vary between runs).
using FarmProgressFn = std::function<void(size_t, size_t)>;

// Whether an MPI launcher started this process (its environment is set).
inline bool LaunchedByMpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(name)) return true;
  return false;
}

// Not launched by MPI: exits (status 2) if srun started this process as one
// of several tasks, each of which would run the whole command alone.
inline void RefuseSrunWithoutMpi() {
  const char* tasks = std::getenv("SLURM_STEP_NUM_TASKS");
  if (tasks && std::atoi(tasks) > 1) {
    std::fprintf(stderr,
                 "dtrcheck: started by srun as one of %s tasks but not as an MPI job; run srun --mpi=pmix "
                 "(docs/mpi.md), or one task\n",
                 tasks);
    std::exit(2);
  }
}

// Joins the MPI job this process was started in, if any (MPI_Init when an
// MPI launcher's environment is present), and leaves it on destruction.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  // Ends this rank's part of the command with `status` (and the error line
  // it printed, if any). Rank 0 waits for every other rank to finish and
  // returns the status the job should exit with: its own, or a failed
  // rank's if only that one failed. Without MPI, returns `status`.
  int Finish(int status, const std::string& error);
};

// Whether this binary has the MPI backend ("Open MPI 4.1.4"-like text, or "").
std::string MpiLibraryVersion();

int FarmRanks();          // ranks in the MPI job; 1 without one
int FarmRank();           // this process's rank; 0 without MPI
bool FarmCollectsHere();  // rank 0 (or no MPI): the process that prints and writes
// A farm started by this thread now would be spread over the ranks: MPI with
// more than one rank, on the main thread, outside any farm task or collector.
bool FarmIsDistributed();

// Marks the current thread as running a farm task while it lives: farms
// started inside a task run on threads of this process.
class FarmTaskScope {
 public:
  FarmTaskScope();
  ~FarmTaskScope();
  FarmTaskScope(const FarmTaskScope&) = delete;
  FarmTaskScope& operator=(const FarmTaskScope&) = delete;
};

// The distributed farm on encoded results; RunTaskFarm calls it when
// FarmIsDistributed(), on every rank with the same n. task(i) returns the
// encoded result; collect(i, bytes) is called in task order on every rank
// (see above); remote(i, bytes) is called on rank 0 for each result another
// rank computed, when it arrives (completion order), before it is collected
// (a remote hook that throws fails task i). progress as in RunTaskFarm, on
// rank 0. Returns the number of tasks collected.
size_t RunDistributedFarm(size_t n, const std::function<std::string(size_t)>& task,
                          const std::function<bool(size_t, std::string_view)>& collect,
                          const FarmProgressFn& progress,
                          const std::function<void(size_t, std::string_view)>& remote);

// Runs produce() on rank 0 and returns its bytes on every rank; if produce
// throws Error there, every rank throws that Error. For state every rank needs
// but only rank 0 may read (a checkpoint file that rank 0 also repairs). All
// ranks must call it at the same point. Without MPI, returns produce().
std::string ShareFromCollector(const std::function<std::string()>& produce);

}  // namespace dtr
