// Progress on stderr: a one-line bar redrawn in place when stderr is a
// terminal; else (a pipe, a log file, CI) a plain line every 10 seconds, or
// every DTRCHECK_PROGRESS_SECONDS, the first after that long, so quick
// commands print nothing there and long ones are not silent.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "checker/drivers/sweep.h"
#include "checker/engine/run_result.h"
#include "cli/remaining_time.h"

namespace dtr::cli {

class ProgressBar {
 public:
  // On a terminal, nothing is drawn before `quiet_start` has passed (for
  // work that is mostly quick); in a pipe, lines come at the plain interval.
  explicit ProgressBar(std::string label,
                       std::chrono::milliseconds quiet_start = std::chrono::milliseconds(0));
  ~ProgressBar();
  void Update(size_t done, size_t total);
  // One line of status text instead of a bar (long single steps, e.g. solver calls).
  void Status(const std::string& text);
  // Draws `done` of `total` as a percentage and `note` instead of "done/total"
  // (for progress counted in units a reader should not see, such as bytes).
  void UpdatePercent(size_t done, size_t total, const std::string& note);

 private:
  // The plain lines' interval: DTRCHECK_PROGRESS_SECONDS (a whole number),
  // else 10 s; a malformed value is reported once and ignored.
  static std::chrono::seconds PlainInterval();
  void Draw(size_t done, size_t total, const std::string& count);
  // Whether a line is due now (and, if so, notes that one is drawn).
  bool Due(bool finished);

  std::string label_;
  bool terminal_;
  std::chrono::milliseconds quiet_start_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  bool drawn_ = false;
  RemainingTime remaining_;  // the "~N s left" of each line drawn
};

// What a progress display shows of a run under way: its program step and
// its overhead so far (clock over the model compute done), handed to
// `report` every 4,096 computations.
class RunGauge : public ReplayObserver {
 public:
  struct Seen {
    int32_t step = 0;
    double overhead = 1;
  };
  explicit RunGauge(std::function<void(Seen)> report) : report_(std::move(report)) {}
  Flow OnComputation(const Computation& c) override;

 private:
  std::function<void(Seen)> report_;
  int64_t computations_ = 0, clock_ = 1, remat_ = 0;
};

// The progress of replays that may be long (a thrashing run has no end in
// sight without --overhead-limit), drawn on `bar`: each run's program step
// and its overhead so far (clock over the model compute done), looked at
// every 4,096 computations; once an overhead passes 10, `thrash_hint` after
// them (if not empty: runs with an overhead limit end by themselves). Each
// run is watched by watcher(i) (ReplayConfig::watcher); runs may be on
// different threads.
class ReplayProgress {
 public:
  // The hint for commands that take --overhead-limit.
  static constexpr const char* kLimitHint = "(thrashing? --overhead-limit ends such a run)";
  ReplayProgress(ProgressBar& bar, size_t steps, std::string thrash_hint, int runs = 1);
  ReplayObserver& watcher(int run) { return *watchers_[run]; }

 private:
  void Report(int run, RunGauge::Seen seen);

  ProgressBar& bar_;
  size_t steps_;
  std::string thrash_hint_;
  std::vector<std::unique_ptr<RunGauge>> watchers_;
  std::mutex mu_;  // guards seen_ and bar_
  std::vector<RunGauge::Seen> seen_;
};

// The progress of a grid of replays (RunMany), some of which may be long:
// the runs done of the total, and each run under way's ratio (with
// `name_heuristics`, its heuristic too), program step and overhead so far,
// on the bar given by SetBar (none: nothing drawn). Watches the runs
// (RunWatch) and takes RunMany's (done, total) in Done().
class GridProgress : public RunWatch {
 public:
  GridProgress(size_t steps, std::string thrash_hint, bool name_heuristics = false)
      : steps_(steps), thrash_hint_(std::move(thrash_hint)), name_heuristics_(name_heuristics) {}
  // A new grid on `bar` (may be null); no run of the last one is under way.
  void SetBar(ProgressBar* bar);
  ReplayObserver* Begin(size_t point, const RunSpec& spec) override;
  void End(size_t point) override;
  void Done(size_t done, size_t total);

 private:
  void Draw();  // under mu_

  size_t steps_;
  std::string thrash_hint_;
  bool name_heuristics_;
  std::mutex mu_;  // guards what follows
  ProgressBar* bar_ = nullptr;
  size_t done_ = 0, total_ = 0;
  // The runs under way, by point: their gauges, and what was seen of each
  // with its label ("ratio 0.05", or "LRU 0.05").
  std::map<size_t, std::unique_ptr<RunGauge>> gauges_;
  std::map<size_t, std::pair<std::string, RunGauge::Seen>> seen_;
};

}  // namespace dtr::cli
