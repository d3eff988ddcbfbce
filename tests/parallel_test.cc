// The task farm (checker/farm/parallel.h): results reach the collector in task
// order whatever the workers' timing; a collector that stops, or a task that
// throws, ends the farm exactly where one worker would have ended it; and
// OrderedCollector, the ordering the threads and the MPI ranks share.
#include "checker/farm/parallel.h"

#include <doctest/doctest.h>

#include <chrono>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace dtr::testing {
namespace {

// A task that takes longer for low indices, so later tasks finish first.
size_t SlowSquare(size_t i, size_t n) {
  std::this_thread::sleep_for(std::chrono::microseconds(50 * (n - i)));
  return i * i;
}

TEST_CASE("RunTaskFarm collects results in task order for any number of workers") {
  const size_t n = 40;
  for (int jobs : {1, 2, 3, 8}) {
    INFO("jobs ", jobs);
    std::vector<size_t> order, values;
    size_t progress_calls = 0;
    size_t collected = RunTaskFarm<size_t>(
        n, jobs, [&](size_t i) { return SlowSquare(i, n); },
        [&](size_t i, size_t&& v) {
          order.push_back(i);
          values.push_back(v);
          return true;
        },
        [&](size_t done, size_t total) {
          CHECK(total == n);
          CHECK(done == ++progress_calls);
        });
    CHECK(collected == n);
    CHECK(progress_calls == n);
    REQUIRE(order.size() == n);
    for (size_t i = 0; i < n; ++i) {
      CHECK(order[i] == i);
      CHECK(values[i] == i * i);
    }
  }
}

TEST_CASE("RunTaskFarm: a collector that stops sees the same prefix for any number of workers") {
  for (int jobs : {1, 2, 4}) {
    INFO("jobs ", jobs);
    std::vector<size_t> seen;
    size_t collected = RunTaskFarm<size_t>(
        30, jobs, [&](size_t i) { return SlowSquare(i, 30); },
        [&](size_t i, size_t&&) {
          seen.push_back(i);
          return i < 11;  // stop after task 11
        });
    CHECK(collected == 12);
    REQUIRE(seen.size() == 12);
    CHECK(seen.back() == 11);
  }
}

TEST_CASE("RunTaskFarm: the lowest failing task's error is rethrown after every task before it is collected") {
  for (int jobs : {1, 2, 4}) {
    INFO("jobs ", jobs);
    std::vector<size_t> seen;
    auto task = [&](size_t i) -> size_t {
      if (i == 17) throw std::runtime_error("task 17");
      if (i == 9) {
        // Fails later in time than 17 may, but comes first in task order.
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        throw std::runtime_error("task 9");
      }
      return i;
    };
    CHECK_THROWS_WITH(RunTaskFarm<size_t>(
                          30, jobs, task,
                          [&](size_t i, size_t&&) {
                            seen.push_back(i);
                            return true;
                          }),
                      "task 9");
    REQUIRE(seen.size() == 9);
    for (size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == i);
  }
}

TEST_CASE("ParallelMap returns results in task order; no task is an empty result") {
  for (int jobs : {1, 2, 5}) {
    std::vector<std::string> out =
        ParallelMap<std::string>(12, jobs, [](size_t i) { return std::to_string(SlowSquare(i, 12)); });
    REQUIRE(out.size() == 12);
    for (size_t i = 0; i < out.size(); ++i) CHECK(out[i] == std::to_string(i * i));
  }
  CHECK(ParallelMap<int>(0, 4, [](size_t) { return 1; }).empty());
}

// The ordering both farms share, driven by hand: tasks finish out of order.
struct Piece {
  int value = 0;
  bool failure = false;
  bool failed() const { return failure; }
};

struct NoLock {
  void lock() {}
  void unlock() {}
};

TEST_CASE("OrderedCollector: out-of-order results are collected in order; a failure ends it at its task") {
  OrderedCollector<Piece> order(6);
  for (size_t i = 0; i < 4; ++i) CHECK(order.Start() == i);
  std::vector<size_t> seen;
  int failed_value = 0;
  NoLock lock;
  auto drain = [&] {
    order.Drain(
        lock,
        [&](size_t i, Piece& p) {
          seen.push_back(i);
          CHECK(p.value == static_cast<int>(i) * 10);
          return true;
        },
        [&](Piece& p) { failed_value = p.value; }, [](std::exception_ptr) { FAIL("no collector throws"); });
  };
  order.Finish(2, {20});
  drain();
  CHECK(seen.empty());  // task 0 is not done
  order.Finish(3, {30, true});  // no task after 3 starts now
  CHECK(!order.Start());
  CHECK(!order.Wanted(4));
  order.Finish(0, {0});
  drain();
  CHECK(seen == std::vector<size_t>{0});
  CHECK(!order.decided());
  order.Finish(1, {10});
  drain();
  CHECK(seen == std::vector<size_t>{0, 1, 2});
  CHECK(failed_value == 30);
  CHECK(order.decided());
  CHECK(order.collected() == 3);
}

TEST_CASE("OrderedCollector: a collector that stops or throws ends it after its task") {
  for (bool throws : {false, true}) {
    OrderedCollector<Piece> order(5);
    for (size_t i = 0; i < 5; ++i) REQUIRE(order.Start() == i);
    for (size_t i : {4, 3, 2, 1, 0}) order.Finish(i, {static_cast<int>(i) * 10});
    NoLock lock;
    std::vector<size_t> seen;
    bool caught = false;
    order.Drain(
        lock,
        [&](size_t i, Piece&) {
          seen.push_back(i);
          if (i == 1 && throws) throw std::runtime_error("collector");
          return i != 1;
        },
        [](Piece&) { FAIL("no task failed"); }, [&](std::exception_ptr) { caught = true; });
    CHECK(seen == std::vector<size_t>{0, 1});
    CHECK(caught == throws);
    CHECK(order.decided());
    CHECK(order.collected() == 2);
  }
}

}  // namespace
}  // namespace dtr::testing
