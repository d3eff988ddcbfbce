// Runs independent tasks 0..n-1 on worker threads (the calling thread is one
// of them). The first exception thrown by a task stops handing out tasks and
// is rethrown once all workers have stopped. done(k) is called, serialized,
// after each finished task with the number finished so far.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace dtr {

inline void ParallelFor(size_t n, int jobs, const std::function<void(size_t)>& task,
                        const std::function<void(size_t)>& done = nullptr) {
  if (jobs <= 0) jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  jobs = static_cast<int>(std::min<size_t>(static_cast<size_t>(jobs), std::max<size_t>(1, n)));
  std::atomic<size_t> next{0};
  std::mutex mu;
  size_t finished = 0;
  std::exception_ptr failure;
  auto worker = [&] {
    for (size_t i; (i = next++) < n;) {
      try {
        task(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failure) failure = std::current_exception();
        next = n;
        return;
      }
      std::lock_guard<std::mutex> lock(mu);
      ++finished;
      if (done) done(finished);
    }
  };
  std::vector<std::thread> threads;
  for (int j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace dtr
