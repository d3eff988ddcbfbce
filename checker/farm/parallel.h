// The one parallel layer: a task farm. Tasks 0..n-1 are independent pure
// functions of their index (and of read-only shared input); workers take the
// next unstarted task as they become free (dynamic load balancing), and the
// results are handed to one collector strictly in task order
// (checker/farm/ordered_collector.h, shared by the threads and the MPI ranks). Whatever the
// number of workers and their timing, the collector sees the same results in
// the same order, so anything computed from them is identical for any `jobs`.
//
// The collector may stop the farm by returning false: no task after the one
// just collected is started, and results of tasks after it that were already
// running are discarded, exactly as if the farm had run them one by one and
// stopped there. A task that throws stops the farm at that task: every task
// before it is still collected, then its exception is rethrown (the lowest
// failing index wins, as with one worker).
//
// Workers are threads of this process, or, under an MPI launcher, the ranks
// of the job (checker/farm/mpi_farm.h): a farm whose Result has a FarmCodec
// (checker/farm/farm_codec.h) started on the main thread is spread over the ranks,
// every rank's collector sees the same results in the same order, and the
// answer is the same as with threads. Farms of other results (ParallelFor's
// tasks store their own) and farms started inside a task run on threads.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "checker/farm/farm_codec.h"
#include "checker/farm/mpi_farm.h"
#include "checker/farm/ordered_collector.h"

namespace dtr {

// Threads to use for `jobs` and `tasks` tasks. jobs <= 0: one per hardware
// thread, or one under MPI, where each rank is meant to have one core.
inline int WorkerCount(int jobs, size_t tasks) {
  if (jobs <= 0)
    jobs = FarmRanks() > 1 ? 1 : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return static_cast<int>(std::min<size_t>(static_cast<size_t>(jobs), std::max<size_t>(1, tasks)));
}

// The workers RunTaskFarm<Result> started here now would have: the ranks of
// the MPI job if it would be spread over them, else WorkerCount(jobs, tasks).
template <typename Result>
int FarmWorkers(int jobs, size_t tasks) {
  if constexpr (FarmEncodable<Result>) {
    if (FarmIsDistributed()) return FarmRanks();
  }
  return WorkerCount(jobs, tasks);
}

// Runs task(i) for i in 0..n-1 on WorkerCount(jobs, n) threads (the calling
// thread is one of them) and calls collect(i, result) for i = 0, 1, ... in
// order, serialized, until it returns false or all are collected. Returns
// the number of tasks collected.
template <typename Result>
size_t RunLocalTaskFarm(size_t n, int jobs, const std::function<Result(size_t)>& task,
                        const std::function<bool(size_t, Result&&)>& collect,
                        const FarmProgressFn& progress = nullptr) {
  struct Outcome {
    std::optional<Result> result;
    std::exception_ptr failure;
    bool failed() const { return failure != nullptr; }
  };
  std::mutex mu;
  OrderedCollector<Outcome> order(n);
  size_t finished = 0;
  bool collecting = false;     // a worker is in the collector
  std::exception_ptr failure;  // of the task that ended the farm, or of the collector

  // Under `lock`: hands ready results to the collector in order. One worker
  // collects at a time, with the lock released around the callback.
  auto drain = [&](std::unique_lock<std::mutex>& lock) {
    if (collecting) return;
    collecting = true;
    order.Drain(
        lock, [&](size_t i, Outcome& o) { return collect(i, std::move(*o.result)); },
        [&](Outcome& o) { failure = o.failure; }, [&](std::exception_ptr thrown) { failure = thrown; });
    collecting = false;
  };

  auto worker = [&] {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      std::optional<size_t> i = order.Start();
      if (!i) return;
      lock.unlock();
      Outcome o;
      try {
        FarmTaskScope scope;
        o.result.emplace(task(*i));
      } catch (...) {
        o.failure = std::current_exception();
      }
      lock.lock();
      ++finished;
      if (progress) progress(finished, n);
      // A failure stops the start of later tasks now; earlier ones still run.
      order.Finish(*i, std::move(o));
      drain(lock);
    }
  };
  // A thread the system refuses to start (a process limit, an address-space
  // limit) leaves the farm with fewer workers, which changes no result.
  const int workers = WorkerCount(jobs, n);
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(workers - 1));
  for (int w = 1; w < workers; ++w) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      break;
    } catch (const std::bad_alloc&) {
      break;
    }
  }
  worker();
  for (std::thread& t : pool) t.join();
  {
    // Every started task below `limit` has finished: collect what is left.
    std::unique_lock<std::mutex> lock(mu);
    drain(lock);
  }
  if (failure) std::rethrow_exception(failure);
  return order.collected();
}

// RunLocalTaskFarm's contract, on threads or spread over MPI ranks (see
// above). Under MPI, collect runs on every rank and progress on rank 0;
// remote(i, result), if given, is called on rank 0 for each result another
// rank computed, as it arrives (completion order), before it is collected:
// for side effects a task has on the collecting process only (a checkpoint
// line), which a task on another rank cannot have. A remote hook that throws
// fails task i. On threads, remote is never called.
template <typename Result>
size_t RunTaskFarm(size_t n, int jobs, const std::function<Result(size_t)>& task,
                   const std::function<bool(size_t, Result&&)>& collect,
                   const FarmProgressFn& progress = nullptr,
                   const std::function<void(size_t, const Result&)>& remote = nullptr) {
  if constexpr (FarmEncodable<Result>) {
    if (FarmIsDistributed()) {
      std::function<void(size_t, std::string_view)> remote_bytes;
      if (remote) remote_bytes = [&](size_t i, std::string_view bytes) { remote(i, DecodeForFarm<Result>(bytes)); };
      return RunDistributedFarm(
          n, [&](size_t i) { return EncodeForFarm<Result>(task(i)); },
          [&](size_t i, std::string_view bytes) { return collect(i, DecodeForFarm<Result>(bytes)); }, progress,
          remote_bytes);
    }
  }
  return RunLocalTaskFarm<Result>(n, jobs, task, collect, progress);
}

// The results of task(0..n-1), in task order.
template <typename Result>
std::vector<Result> ParallelMap(size_t n, int jobs, const std::function<Result(size_t)>& task,
                                const FarmProgressFn& progress = nullptr) {
  std::vector<Result> out;
  out.reserve(n);
  RunTaskFarm<Result>(
      n, jobs, task,
      [&](size_t, Result&& r) {
        out.push_back(std::move(r));
        return true;
      },
      progress);
  return out;
}

// task(i) for every i, for tasks that store their own results; done(k) is
// called after each finished task with the number finished so far. Always on
// this process's threads: under MPI every rank runs all of it.
inline void ParallelFor(size_t n, int jobs, const std::function<void(size_t)>& task,
                        const std::function<void(size_t)>& done = nullptr) {
  RunLocalTaskFarm<bool>(
      n, jobs,
      [&](size_t i) {
        task(i);
        return true;
      },
      [](size_t, bool&&) { return true; },
      done ? FarmProgressFn([&](size_t k, size_t) { done(k); }) : FarmProgressFn());
}

}  // namespace dtr
