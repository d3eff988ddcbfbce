// The ordering at the heart of both task farms (checker/farm/parallel.h on
// threads, checker/farm/mpi_farm.cc over MPI ranks): tasks 0..n-1 are started in
// index order and finish in any order; their outcomes reach the collector
// strictly in index order, and the farm stops exactly where running the
// tasks one by one would have stopped.
//
// Invariants:
//   - tasks are started in index order, and only below limit();
//   - limit() never rises: a task that fails lowers it to its index + 1 as
//     soon as it finishes (no later task starts), and to its index when it
//     is reached in order (it is not collected); a collector that returns
//     false or throws at task i lowers it to i + 1;
//   - every collected task was collected once, in order: collected() is the
//     number collected, the next index to collect;
//   - an outcome is kept from when its task finishes until it is collected,
//     unless its index is at or past limit() by then.
// The farm is decided when collected() reaches limit(): nothing more will be
// collected, and tasks still running are only waited for.
//
// Not synchronized: the caller holds its own lock around every call; Drain
// releases that lock around each call of the collector.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <map>
#include <optional>
#include <utility>

namespace dtr {

// Outcome: a task's result or its failure; bool failed() const.
template <typename Outcome>
class OrderedCollector {
 public:
  explicit OrderedCollector(size_t n) : limit_(n) {}

  // The next task to start, if one is left below the limit.
  std::optional<size_t> Start() {
    if (next_task_ >= limit_) return std::nullopt;
    return next_task_++;
  }
  // Whether task i's outcome may still be collected.
  bool Wanted(size_t i) const { return i < limit_; }
  // Task i finished with `o`; kept if it is still wanted.
  void Finish(size_t i, Outcome o) {
    if (i >= limit_) return;
    if (o.failed()) limit_ = std::min(limit_, i + 1);
    ready_.emplace(i, std::move(o));
  }

  // Hands the finished outcomes that are next in task order to
  // collect(i, Outcome&), which returns whether to go on, with `lock`
  // released around each call; stops at the first one not finished yet or at
  // the limit. A failed outcome is not collected: it goes to failed(Outcome&)
  // (under the lock) and ends the farm. A collector that throws ends the farm
  // after its task, and its exception goes to thrown(std::exception_ptr).
  template <typename Lock, typename Collect, typename Failed, typename Thrown>
  void Drain(Lock& lock, Collect&& collect, Failed&& failed, Thrown&& thrown) {
    while (next_collect_ < limit_) {
      auto it = ready_.find(next_collect_);
      if (it == ready_.end()) break;
      Outcome o = std::move(it->second);
      ready_.erase(it);
      if (o.failed()) {
        failed(o);
        limit_ = next_collect_;
        break;
      }
      const size_t i = next_collect_;
      lock.unlock();
      bool go_on = true;
      std::exception_ptr exception;
      try {
        go_on = collect(i, o);
      } catch (...) {
        exception = std::current_exception();
      }
      lock.lock();
      ++next_collect_;
      if (exception) thrown(exception);
      if (exception || !go_on) limit_ = next_collect_;
    }
  }

  size_t collected() const { return next_collect_; }
  bool decided() const { return next_collect_ >= limit_; }
  bool all_started() const { return next_task_ >= limit_; }

 private:
  size_t next_task_ = 0;     // the next task to start
  size_t limit_;             // tasks at or past it are neither started nor collected
  size_t next_collect_ = 0;  // the next task to collect
  std::map<size_t, Outcome> ready_;  // finished, not collected yet
};

}  // namespace dtr
