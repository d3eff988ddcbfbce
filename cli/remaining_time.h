// How long work has left, from its rate over the last quarter of the time it
// has run rather than since its start: a replay's steps get slower as its
// evicted regions grow, and a sweep's points differ in cost. On the
// generated rnn of 10^6 operators at 0.5 (a 2,363 s run), the rate since the
// start said 187 s were left when 1,256 s were; the last quarter's rate said
// 1,192 s.
#pragma once

#include <cstddef>
#include <deque>

namespace dtr::cli {

class RemainingTime {
 public:
  // `done` units are finished `secs` after the start (secs never less than
  // at the last call). Work that starts over (done below the last call's)
  // is measured afresh from here.
  void Add(double secs, size_t done) {
    if (done < samples_.back().done) {
      samples_.clear();
      from_ = {secs, done};
    }
    samples_.push_back({secs, done});
    // Keep the last sample at or before three quarters of `secs` first.
    while (samples_.size() > 2 && samples_[1].secs <= 0.75 * secs) samples_.pop_front();
  }

  // Seconds until `total` units are done, at the rate of the last quarter
  // (at the rate since the start or restart if nothing was done in it; 0 if
  // nothing was done at all).
  double Estimate(size_t total) const {
    const Sample& now = samples_.back();
    if (now.done >= total) return 0;
    const Sample& from = now.done > samples_.front().done ? samples_.front() : from_;
    if (now.done <= from.done) return 0;
    return (now.secs - from.secs) * static_cast<double>(total - now.done) /
           static_cast<double>(now.done - from.done);
  }

 private:
  struct Sample {
    double secs = 0;
    size_t done = 0;
  };
  Sample from_;                        // the start, or the last restart
  std::deque<Sample> samples_{from_};  // oldest first; the first begins the window
};

}  // namespace dtr::cli
