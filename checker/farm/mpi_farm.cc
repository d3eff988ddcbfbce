// The MPI task farm (see the header). Invariants of the protocol:
//   - Only the main thread calls MPI (MPI_THREAD_FUNNELED); tasks run on
//     other threads, and nothing blocks in MPI: waits poll with MPI_Iprobe
//     and sleep, because a blocking receive spins a core, and sends are
//     nonblocking (kept in an outbox until complete), so two ranks sending
//     each other large messages cannot deadlock.
//   - Every rank numbers its distributed farms 1, 2, ... in the same order;
//     every message of a farm carries that number. Rank 0 drops messages of
//     farms that are over (a result or heartbeat sent as the farm ended) and
//     keeps a request for the next farm that arrives early.
//   - Rank 0 sends a rank exactly one kTagEnd per farm, after which that rank
//     sends nothing more for the farm except what was already in flight.
//   - A rank's collector sees exactly the results rank 0's collector saw, in
//     the same order: those forwarded with its tasks, then those with the end.
#include "checker/farm/mpi_farm.h"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <future>
#include <list>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "checker/farm/farm_codec.h"
#include "checker/farm/ordered_collector.h"
#include "model/error.h"

#ifdef DTRCHECK_WITH_MPI
#include <mpi.h>
#endif

namespace dtr {

namespace {
thread_local int t_task_depth = 0;  // farm tasks running on this thread (nested)
}  // namespace

FarmTaskScope::FarmTaskScope() { ++t_task_depth; }
FarmTaskScope::~FarmTaskScope() { --t_task_depth; }

#ifndef DTRCHECK_WITH_MPI

MpiSession::MpiSession(int*, char***) {}
MpiSession::~MpiSession() = default;
int MpiSession::Finish(int status, const std::string&) { return status; }
std::string MpiLibraryVersion() { return ""; }
int FarmRanks() { return 1; }
int FarmRank() { return 0; }
bool FarmCollectsHere() { return true; }
bool FarmIsDistributed() { return false; }

size_t RunDistributedFarm(size_t, const std::function<std::string(size_t)>&,
                          const std::function<bool(size_t, std::string_view)>&, const FarmProgressFn&,
                          const std::function<void(size_t, std::string_view)>&) {
  throw std::logic_error("RunDistributedFarm: dtrcheck was built without MPI");
}

std::string ShareFromCollector(const std::function<std::string()>& produce) { return produce(); }

#else  // DTRCHECK_WITH_MPI

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::microseconds;
using std::chrono::milliseconds;

enum Tag : int {
  kTagRequest = 101,  // rank -> 0: [farm][n] ready for the farm's first task
  kTagResult,         // rank -> 0: [farm][task][failure][bytes]; ready for the next
  kTagHeartbeat,      // rank -> 0: [farm] a task still runs here
  kTagBye,            // rank -> 0: [farms][status][error] the command ended here
  kTagTask,           // 0 -> rank: [farm][task][forwarded results]
  kTagEnd,            // 0 -> rank: [farm][failure][forwarded results]
  kTagShare,          // 0 -> rank: [failure][bytes] ShareFromCollector
};

// The exit status of a job that rank 0 ends (cli/exit_status.h: kExitEnvironment).
constexpr int kExitJobFailed = 4;
constexpr auto kHeartbeat = std::chrono::seconds(1);

// A task's or collector's exception as it travels between ranks.
struct Failure {
  enum Kind : uint8_t { kNone, kUsage, kInput, kOther, kEnvironment } kind = kNone;
  std::string message;
  explicit operator bool() const { return kind != kNone; }
};

Failure FailureOf(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const Error& x) {
    switch (x.kind()) {
      case ErrorKind::kUsage: return {Failure::kUsage, x.what()};
      case ErrorKind::kInput: return {Failure::kInput, x.what()};
      case ErrorKind::kEnvironment: return {Failure::kEnvironment, x.what()};
    }
    return {Failure::kUsage, x.what()};
  } catch (const std::exception& x) {
    return {Failure::kOther, x.what()};
  } catch (...) {
    return {Failure::kOther, "unknown exception"};
  }
}

[[noreturn]] void Throw(const Failure& f) {
  if (f.kind == Failure::kInput) throw InputError(f.message);
  if (f.kind == Failure::kUsage) throw Error(f.message);
  if (f.kind == Failure::kEnvironment) throw Error(f.message, ErrorKind::kEnvironment);
  throw std::runtime_error(f.message);
}

void PutFailure(ByteWriter& w, const Failure& f) {
  w.Put<uint8_t>(f.kind);
  w.PutString(f.message);
}

Failure GetFailure(ByteReader& r) {
  Failure f;
  uint8_t kind = r.Get<uint8_t>();
  if (kind > Failure::kEnvironment) throw Error("farm message: bad failure kind");
  f.kind = static_cast<Failure::Kind>(kind);
  f.message = r.GetString();
  return f;
}

struct State {
  bool initialized = false;  // MPI_Init was called here
  int rank = 0, size = 1;
  std::thread::id main_thread;
  bool farm_running = false;  // a distributed farm runs here (its collector may not start one)
  uint64_t farms = 0;         // distributed farms started; the same count on every rank
  double timeout_seconds = 120;
  // Rank 0: per rank, the farm number and size of a request that arrived
  // before rank 0 started that farm (farm 0: none).
  std::vector<std::pair<uint64_t, uint64_t>> early_request;
  // Nonblocking sends not known to be complete, with their buffers.
  std::list<std::pair<MPI_Request, std::string>> outbox;
};
State g;

volatile std::sig_atomic_t g_signal = 0;  // rank 0, during a farm: a signal to end the job
extern "C" void OnTerminate(int sig) { g_signal = sig; }

// Rank 0 (or any rank, for a broken invariant): one line, then the job ends.
[[noreturn]] void AbortJob(const std::string& line) {
  std::fflush(stdout);
  std::fprintf(stderr, "dtrcheck: %s\n", line.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, kExitJobFailed);
  std::_Exit(kExitJobFailed);
}

void Check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  AbortJob(fmt::format("MPI rank {}: {} failed: {}", g.rank, what, std::string(text, len)));
}

void ProgressSends() {
  for (auto it = g.outbox.begin(); it != g.outbox.end();) {
    int done = 0;
    Check(MPI_Test(&it->first, &done, MPI_STATUS_IGNORE), "MPI_Test");
    it = done ? g.outbox.erase(it) : std::next(it);
  }
}

void Send(int dest, int tag, std::string bytes) {
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    AbortJob(fmt::format("MPI rank {}: a farm message of {} bytes is too large for one MPI message",
                         g.rank, bytes.size()));
  g.outbox.emplace_back(MPI_REQUEST_NULL, std::move(bytes));
  auto& [request, buffer] = g.outbox.back();
  Check(MPI_Isend(buffer.data(), static_cast<int>(buffer.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD,
                  &request),
        "MPI_Isend");
  ProgressSends();
}

// Waits until every send of this rank completed (its receivers poll).
void FlushSends() {
  auto pause = microseconds(20);
  while (!g.outbox.empty()) {
    ProgressSends();
    std::this_thread::sleep_for(pause);
    pause = std::min<microseconds>(pause * 2, milliseconds(2));
  }
}

struct Message {
  int source = -1;
  int tag = 0;
  std::string bytes;
};

// A message from `source` (or MPI_ANY_SOURCE) that has arrived, if any.
std::optional<Message> TryReceive(int source) {
  ProgressSends();
  int flag = 0;
  MPI_Status status;
  Check(MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status), "MPI_Iprobe");
  if (!flag) return std::nullopt;
  int count = 0;
  Check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
  Message m;
  m.source = status.MPI_SOURCE;
  m.tag = status.MPI_TAG;
  m.bytes.resize(static_cast<size_t>(count));
  Check(MPI_Recv(m.bytes.data(), count, MPI_BYTE, m.source, m.tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "MPI_Recv");
  return m;
}

// Waits for a message from `source`, sleeping between polls.
Message Receive(int source) {
  auto pause = microseconds(20);
  for (;;) {
    if (std::optional<Message> m = TryReceive(source)) return std::move(*m);
    std::this_thread::sleep_for(pause);
    pause = std::min<microseconds>(pause * 2, milliseconds(2));
  }
}

// The results [from, to) of `collected`, as a message part.
void PutResults(ByteWriter& w, const std::vector<std::string>& collected, size_t from) {
  w.Put<uint64_t>(from);
  w.Put<uint64_t>(collected.size() - from);
  for (size_t i = from; i < collected.size(); ++i) w.PutString(collected[i]);
}

// Rank 0's part of a farm: hand out tasks, run tasks on a thread of its own,
// collect in order, end the farm on every rank.
size_t RunMaster(size_t n, const std::function<std::string(size_t)>& task,
                 const std::function<bool(size_t, std::string_view)>& collect, const FarmProgressFn& progress,
                 const std::function<void(size_t, std::string_view)>& remote) {
  const uint64_t farm = ++g.farms;
  enum class Phase { kAway, kIdle, kBusy };  // not asked yet, waiting for a task, running one
  struct Peer {
    Phase phase = Phase::kAway;
    size_t task = 0;
    Clock::time_point heard;
    size_t forwarded = 0;  // collected results it has been sent
  };
  std::vector<Peer> peers(g.size);
  for (int r = 1; r < g.size; ++r) {
    auto [early_farm, early_n] = g.early_request[r];
    if (early_farm != farm) continue;
    g.early_request[r] = {0, 0};
    if (early_n != n)
      AbortJob(fmt::format("the MPI ranks disagree: rank {} has {} tasks in distributed step {}, rank 0 has {}", r,
                           early_n, farm, n));
    peers[r].phase = Phase::kIdle;
  }

  struct Outcome {
    std::string bytes;
    Failure failure;
    std::exception_ptr exception;  // when it failed on this rank
    bool failed() const { return static_cast<bool>(failure); }
  };
  std::mutex mu;
  std::condition_variable cv;
  OrderedCollector<Outcome> order(n);
  size_t finished = 0;
  std::vector<std::string> collected;  // bytes of each collected result, to forward
  Failure failure;                     // what ended the farm early, if anything
  std::exception_ptr failure_exception;
  std::optional<size_t> local_task;

  std::thread local([&] {
    FarmTaskScope scope;
    std::unique_lock<std::mutex> lock(mu);
    while (std::optional<size_t> next = order.Start()) {
      const size_t i = *next;
      local_task = i;
      lock.unlock();
      Outcome o;
      try {
        o.bytes = task(i);
      } catch (...) {
        o.exception = std::current_exception();
        o.failure = FailureOf(o.exception);
      }
      lock.lock();
      local_task.reset();
      ++finished;
      if (progress) progress(finished, n);
      order.Finish(i, std::move(o));
      cv.notify_all();
    }
  });

  struct sigaction terminate = {}, old_term = {}, old_int = {};
  terminate.sa_handler = OnTerminate;
  sigemptyset(&terminate.sa_mask);
  g_signal = 0;
  sigaction(SIGTERM, &terminate, &old_term);
  sigaction(SIGINT, &terminate, &old_int);

  // Under `lock`: what each rank is doing, for a line about a failure.
  auto running = [&] {
    std::string text;
    if (local_task) text += fmt::format("task {} on rank 0", *local_task);
    for (int r = 1; r < g.size; ++r)
      if (peers[r].phase == Phase::kBusy)
        text += fmt::format("{}task {} on rank {}", text.empty() ? "" : ", ", peers[r].task, r);
    return text.empty() ? std::string("none") : text;
  };

  std::unique_lock<std::mutex> lock(mu);
  auto handle = [&](Message& m) {
    ByteReader r(m.bytes);
    Peer& peer = peers[m.source];
    switch (m.tag) {
      case kTagRequest: {
        uint64_t its_farm = r.Get<uint64_t>(), its_n = r.Get<uint64_t>();
        if (its_farm < farm) return;  // it asked as that farm ended
        if (its_farm > farm) {
          g.early_request[m.source] = {its_farm, its_n};
          return;
        }
        if (its_n != n)
          AbortJob(fmt::format("the MPI ranks disagree: rank {} has {} tasks in distributed step {}, rank 0 has {}",
                               m.source, its_n, farm, n));
        peer.phase = Phase::kIdle;
        return;
      }
      case kTagResult: {
        if (r.Get<uint64_t>() != farm) return;  // sent as an earlier farm ended
        size_t i = r.Get<uint64_t>();
        Outcome o;
        o.failure = GetFailure(r);
        o.bytes = r.GetString();
        if (peer.phase != Phase::kBusy || peer.task != i)
          AbortJob(fmt::format("MPI rank {} sent the result of task {}, which it was not running", m.source, i));
        peer.phase = Phase::kIdle;
        peer.heard = Clock::now();
        ++finished;
        if (progress) progress(finished, n);
        if (!order.Wanted(i)) return;
        if (!o.failure && remote) {
          lock.unlock();
          try {
            remote(i, o.bytes);
          } catch (...) {
            o.exception = std::current_exception();
            o.failure = FailureOf(o.exception);
          }
          lock.lock();
        }
        order.Finish(i, std::move(o));
        return;
      }
      case kTagHeartbeat:
        if (r.Get<uint64_t>() == farm) peer.heard = Clock::now();
        return;
      case kTagBye: {
        r.Get<uint64_t>();
        int status = r.Get<int32_t>();
        std::string error = r.GetString();
        AbortJob(fmt::format("MPI rank {} ended its command (exit status {}{}) during distributed step {}", m.source,
                             status, error.empty() ? "" : ": " + error, farm));
      }
      default:
        AbortJob(fmt::format("MPI rank {} sent an unexpected message (tag {})", m.source, m.tag));
    }
  };

  auto pause = microseconds(20);
  Clock::time_point last_check = Clock::now();  // of signals and timeouts
  for (;;) {
    // Collect in task order, as the threaded farm does. A result goes to the
    // other ranks' collectors even if this one threw at it: they see what it saw.
    order.Drain(
        lock,
        [&](size_t i, Outcome& o) {
          bool go_on = true;
          try {
            go_on = collect(i, o.bytes);
          } catch (...) {
            collected.push_back(std::move(o.bytes));
            throw;
          }
          collected.push_back(std::move(o.bytes));
          return go_on;
        },
        [&](Outcome& o) {
          failure = o.failure;
          failure_exception = o.exception;
        },
        [&](std::exception_ptr thrown) {
          failure_exception = thrown;
          failure = FailureOf(thrown);
        });
    if (order.decided()) break;
    for (int r = 1; r < g.size; ++r) {
      Peer& peer = peers[r];
      if (peer.phase != Phase::kIdle || order.all_started()) continue;
      const size_t i = *order.Start();
      ByteWriter w;
      w.Put<uint64_t>(farm);
      w.Put<uint64_t>(i);
      PutResults(w, collected, peer.forwarded);
      peer.forwarded = collected.size();
      peer.phase = Phase::kBusy;
      peer.task = i;
      peer.heard = Clock::now();
      Send(r, kTagTask, std::move(w.bytes()));
    }
    lock.unlock();
    std::optional<Message> m = TryReceive(MPI_ANY_SOURCE);
    lock.lock();
    if (m) {
      handle(*m);
      pause = microseconds(20);
    }
    if (g_signal) {
      std::fflush(stdout);
      std::fprintf(stderr,
                   "dtrcheck: rank 0 received signal %d during distributed step %llu (the MPI launcher ends the job; "
                   "its message names the rank that failed); tasks running: %s\n",
                   static_cast<int>(g_signal), static_cast<unsigned long long>(farm), running().c_str());
      std::fflush(stderr);
      std::_Exit(128 + g_signal);
    }
    const Clock::time_point now = Clock::now();
    if (now - last_check < milliseconds(100)) {
      if (!m) {
        cv.wait_for(lock, pause);
        pause = std::min<microseconds>(pause * 2, milliseconds(2));
      }
      continue;
    }
    last_check = now;
    for (int r = 1; r < g.size; ++r) {
      const Peer& peer = peers[r];
      if (peer.phase == Phase::kBusy &&
          std::chrono::duration<double>(now - peer.heard).count() > g.timeout_seconds)
        AbortJob(fmt::format("MPI rank {} has sent nothing for {:g} s while running task {} of {} in distributed "
                             "step {} (stopped, hung, or its node is lost; DTRCHECK_MPI_TIMEOUT sets the limit); "
                             "tasks running: {}",
                             r, g.timeout_seconds, peer.task, n, farm, running()));
    }
  }
  // End the farm on every rank: the results it has not seen, and the failure.
  for (int r = 1; r < g.size; ++r) {
    ByteWriter w;
    w.Put<uint64_t>(farm);
    PutFailure(w, failure);
    PutResults(w, collected, peers[r].forwarded);
    Send(r, kTagEnd, std::move(w.bytes()));
  }
  lock.unlock();
  local.join();
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGINT, &old_int, nullptr);
  if (failure_exception) std::rethrow_exception(failure_exception);
  if (failure) Throw(failure);
  return order.collected();
}

// A rank's part of a farm: ask for tasks, run them, mirror rank 0's collector.
size_t RunWorker(size_t n, const std::function<std::string(size_t)>& task,
                 const std::function<bool(size_t, std::string_view)>& collect) {
  const uint64_t farm = ++g.farms;
  {
    ByteWriter w;
    w.Put<uint64_t>(farm);
    w.Put<uint64_t>(n);
    Send(0, kTagRequest, std::move(w.bytes()));
  }
  size_t collected = 0;
  bool stopped = false;            // this rank's collector returned false
  std::exception_ptr own_failure;  // ... or threw
  auto apply = [&](ByteReader& r) {
    uint64_t from = r.Get<uint64_t>(), count = r.Get<uint64_t>();
    if (from != collected) throw Error(fmt::format("farm message: results from {}, expected {}", from, collected));
    for (uint64_t k = 0; k < count; ++k) {
      std::string bytes = r.GetString();
      if (stopped || own_failure)
        throw Error(fmt::format("the MPI ranks disagree: rank {}'s collector stopped before task {}", g.rank,
                                collected));
      try {
        stopped = !collect(collected, bytes);
      } catch (...) {
        own_failure = std::current_exception();
      }
      ++collected;
    }
  };
  auto expect_farm = [&](ByteReader& r) {
    uint64_t its_farm = r.Get<uint64_t>();
    if (its_farm != farm)
      throw Error(fmt::format("the MPI ranks disagree: rank {} is in distributed step {}, rank 0 in {}", g.rank, farm,
                              its_farm));
  };
  Failure failure;
  bool ended = false;
  while (!ended) {
    Message m = Receive(0);
    ByteReader r(m.bytes);
    if (m.tag == kTagEnd) {
      expect_farm(r);
      failure = GetFailure(r);
      apply(r);
      break;
    }
    if (m.tag != kTagTask)
      throw Error(fmt::format("the MPI ranks disagree: rank {} expected a task of distributed step {} (tag {})",
                              g.rank, farm, m.tag));
    expect_farm(r);
    const size_t i = r.Get<uint64_t>();
    apply(r);
    std::string bytes;
    Failure task_failure;
    std::promise<void> done;
    std::future<void> finished = done.get_future();
    std::thread runner([&] {
      {
        FarmTaskScope scope;
        try {
          bytes = task(i);
        } catch (...) {
          task_failure = FailureOf(std::current_exception());
        }
      }
      done.set_value();
    });
    std::exception_ptr listen_failure;
    Clock::time_point beat = Clock::now();
    while (finished.wait_for(milliseconds(10)) != std::future_status::ready) {
      try {
        if (Clock::now() - beat >= kHeartbeat) {
          ByteWriter w;
          w.Put<uint64_t>(farm);
          Send(0, kTagHeartbeat, std::move(w.bytes()));
          beat = Clock::now();
        }
        if (ended || listen_failure) continue;
        // The farm may end while the task runs (a cap was reached, another
        // task failed): the collector then learns it, and may cancel the task.
        if (std::optional<Message> e = TryReceive(0)) {
          ByteReader er(e->bytes);
          if (e->tag != kTagEnd)
            throw Error(fmt::format("the MPI ranks disagree: rank {} got tag {} while running task {}", g.rank,
                                    e->tag, i));
          expect_farm(er);
          failure = GetFailure(er);
          apply(er);
          ended = true;
        }
      } catch (...) {
        listen_failure = std::current_exception();
      }
    }
    runner.join();
    if (listen_failure) std::rethrow_exception(listen_failure);
    if (ended) break;
    ByteWriter w;
    w.Put<uint64_t>(farm);
    w.Put<uint64_t>(i);
    PutFailure(w, task_failure);
    w.PutString(bytes);
    Send(0, kTagResult, std::move(w.bytes()));
  }
  if (own_failure) std::rethrow_exception(own_failure);
  if (failure) Throw(failure);
  return collected;
}

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  g.main_thread = std::this_thread::get_id();
  if (!LaunchedByMpi()) {
    RefuseSrunWithoutMpi();
    return;
  }
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "dtrcheck: MPI_Init_thread failed\n");
    std::exit(kExitJobFailed);
  }
  g.initialized = true;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g.size);
  if (provided < MPI_THREAD_FUNNELED)
    AbortJob("the MPI library does not support MPI_THREAD_FUNNELED (threads beside the one calling MPI)");
  if (const char* t = std::getenv("DTRCHECK_MPI_TIMEOUT")) {
    char* end = nullptr;
    double v = std::strtod(t, &end);
    if (end == t || *end != '\0' || !(v > 0))
      AbortJob(fmt::format("DTRCHECK_MPI_TIMEOUT must be a positive number of seconds, got '{}'", t));
    g.timeout_seconds = v;
  }
  g.early_request.assign(static_cast<size_t>(g.size), {0, 0});
}

MpiSession::~MpiSession() {
  if (!g.initialized) return;
  FlushSends();
  MPI_Finalize();
}

int MpiSession::Finish(int status, const std::string& error) {
  if (!g.initialized || g.size == 1) return status;
  if (g.rank != 0) {
    ByteWriter w;
    w.Put<uint64_t>(g.farms);
    w.Put<int32_t>(status);
    w.PutString(error);
    Send(0, kTagBye, std::move(w.bytes()));
    FlushSends();
    return status;
  }
  // Rank 0: every rank's end, dropping what is left of finished farms. A
  // rank that went on to a farm rank 0 never started would wait forever.
  auto went_on = [&](int r, uint64_t farm) {
    if (status != 0) {  // rank 0 failed, and said why; the others went on
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, status);
      std::_Exit(status);
    }
    AbortJob(fmt::format("the MPI ranks disagree: rank {} started distributed step {}, which rank 0 never reached", r,
                         farm));
  };
  for (int r = 1; r < g.size; ++r)
    if (g.early_request[r].first > g.farms) went_on(r, g.early_request[r].first);
  // Every rank runs the same command, so the others end about when rank 0
  // does; one silent for the timeout after that is stopped or lost.
  int job_status = status;
  std::vector<bool> ended(static_cast<size_t>(g.size), false);
  Clock::time_point heard = Clock::now();
  auto pause = microseconds(20);
  for (int left = g.size - 1; left > 0;) {
    std::optional<Message> got = TryReceive(MPI_ANY_SOURCE);
    if (!got) {
      if (std::chrono::duration<double>(Clock::now() - heard).count() > g.timeout_seconds) {
        std::string silent;
        for (int r = 1; r < g.size; ++r)
          if (!ended[r]) silent += fmt::format("{}{}", silent.empty() ? "" : ", ", r);
        AbortJob(fmt::format("MPI rank{} {} sent nothing for {:g} s after rank 0 finished its command (stopped, "
                             "hung, or its node is lost; DTRCHECK_MPI_TIMEOUT sets the limit)",
                             left > 1 ? "s" : "", silent, g.timeout_seconds));
      }
      std::this_thread::sleep_for(pause);
      pause = std::min<microseconds>(pause * 2, milliseconds(2));
      continue;
    }
    Message& m = *got;
    heard = Clock::now();
    pause = microseconds(20);
    ByteReader r(m.bytes);
    if (m.tag == kTagRequest) {
      uint64_t farm = r.Get<uint64_t>();
      if (farm > g.farms) went_on(m.source, farm);
      continue;
    }
    if (m.tag != kTagBye) continue;  // a result or heartbeat sent as a farm ended
    uint64_t farms = r.Get<uint64_t>();
    int its_status = r.Get<int32_t>();
    std::string its_error = r.GetString();
    ended[m.source] = true;
    --left;
    if (its_status != 0 && job_status == 0) {
      std::fprintf(stderr, "dtrcheck: MPI rank %d failed (exit status %d)%s%s\n", m.source, its_status,
                   its_error.empty() ? "" : ": ", its_error.c_str());
      job_status = its_status;
    } else if (status == 0 && its_status == 0 && farms != g.farms) {
      AbortJob(fmt::format("the MPI ranks disagree: rank {} ran {} distributed steps, rank 0 ran {}", m.source,
                           farms, g.farms));
    }
  }
  FlushSends();
  return job_status;
}

std::string MpiLibraryVersion() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string v(text, static_cast<size_t>(len));
  size_t end = v.find_first_of(",\n");
  return v.substr(0, end);
}

int FarmRanks() { return g.size; }
int FarmRank() { return g.rank; }
bool FarmCollectsHere() { return g.rank == 0; }

bool FarmIsDistributed() {
  return g.initialized && g.size > 1 && !g.farm_running && t_task_depth == 0 &&
         std::this_thread::get_id() == g.main_thread;
}

size_t RunDistributedFarm(size_t n, const std::function<std::string(size_t)>& task,
                          const std::function<bool(size_t, std::string_view)>& collect,
                          const FarmProgressFn& progress,
                          const std::function<void(size_t, std::string_view)>& remote) {
  if (!FarmIsDistributed()) throw std::logic_error("RunDistributedFarm: not on the main thread of an MPI job");
  if (n == 0) return 0;
  g.farm_running = true;
  struct Reset {
    ~Reset() { g.farm_running = false; }
  } reset;
  return g.rank == 0 ? RunMaster(n, task, collect, progress, remote) : RunWorker(n, task, collect);
}

std::string ShareFromCollector(const std::function<std::string()>& produce) {
  if (!FarmIsDistributed()) return produce();
  if (g.rank == 0) {
    std::string bytes;
    Failure failure;
    std::exception_ptr thrown;
    try {
      bytes = produce();
    } catch (...) {
      thrown = std::current_exception();
      failure = FailureOf(thrown);
    }
    ByteWriter w;
    PutFailure(w, failure);
    w.PutString(bytes);
    for (int r = 1; r < g.size; ++r) Send(r, kTagShare, w.bytes());
    if (thrown) std::rethrow_exception(thrown);
    return bytes;
  }
  Message m = Receive(0);
  if (m.tag != kTagShare)
    throw Error(fmt::format("the MPI ranks disagree: rank {} waited for shared state, got tag {}", g.rank, m.tag));
  ByteReader r(m.bytes);
  Failure failure = GetFailure(r);
  if (failure) Throw(failure);
  return r.GetString();
}

#endif  // DTRCHECK_WITH_MPI

}  // namespace dtr
