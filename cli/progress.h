// Progress on stderr: a one-line bar redrawn in place when stderr is a
// terminal; else (a pipe, a log file, CI) a plain line every 30 seconds, or
// every DTRCHECK_PROGRESS_SECONDS, the first after that long, so quick
// commands print nothing there and long ones are not silent.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

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
  // else 30 s; a malformed value is reported once and ignored.
  static std::chrono::seconds PlainInterval();
  void Draw(size_t done, size_t total, const std::string& count);
  // Whether a line is due now (and, if so, notes that one is drawn).
  bool Due(bool finished);

  std::string label_;
  bool terminal_;
  std::chrono::milliseconds quiet_start_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  bool drawn_ = false;
};

}  // namespace dtr::cli
