// A one-line progress bar on stderr, drawn only when stderr is a terminal.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace dtr::cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  ~ProgressBar();
  void Update(size_t done, size_t total);
  // One line of status text instead of a bar (long single steps, e.g. solver calls).
  void Status(const std::string& text);
  // Draws `done` of `total` as a percentage and `note` instead of "done/total"
  // (for progress counted in units a reader should not see, such as bytes).
  void UpdatePercent(size_t done, size_t total, const std::string& note);

 private:
  void Draw(size_t done, size_t total, const std::string& count);

  std::string label_;
  bool enabled_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  bool drawn_ = false;
};

}  // namespace dtr::cli
