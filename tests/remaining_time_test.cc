// The time left on a progress line (cli/remaining_time.h): the rate of the
// last quarter of the run, so work that slows down is not promised to end
// soon. Times here are given, never measured.
#include "cli/remaining_time.h"

#include <doctest/doctest.h>

namespace dtr::testing {
namespace {

using cli::RemainingTime;

TEST_CASE("remaining time: nothing done, nothing to say; done, nothing left") {
  RemainingTime r;
  CHECK(r.Estimate(100) == 0);
  r.Add(5, 0);
  CHECK(r.Estimate(100) == 0);
  r.Add(10, 100);
  CHECK(r.Estimate(100) == 0);
}

TEST_CASE("remaining time: a steady rate gives the linear estimate") {
  RemainingTime r;
  for (int t = 1; t <= 40; ++t) r.Add(t, 25 * static_cast<size_t>(t));  // 25 a second
  CHECK(r.Estimate(2000) == doctest::Approx(40.0));                     // 1,000 left
}

TEST_CASE("remaining time: work that slows down is estimated at its recent rate") {
  // 900 units in the first 100 s, then 1 unit every 2 s: at 200 s, 950 of
  // 1,000 done. Since the start that is 4.75 units a second (10.5 s left);
  // the last quarter (from 150 s) did 25 units in 50 s: 100 s left.
  RemainingTime r;
  for (int t = 10; t <= 100; t += 10) r.Add(t, 9 * static_cast<size_t>(t));
  for (int t = 110; t <= 200; t += 10) r.Add(t, 900 + static_cast<size_t>(t - 100) / 2);
  CHECK(r.Estimate(1000) == doctest::Approx(100.0));
  // And work that speeds up: 100 units a second from 200 s to 300 s.
  for (int t = 210; t <= 300; t += 10) r.Add(t, 950 + 100 * static_cast<size_t>(t - 200));
  CHECK(r.Estimate(12000) == doctest::Approx(10.5));  // 1,050 left at 100 a second
}

TEST_CASE("remaining time: the window starts at the last sample before its quarter") {
  // Samples far apart (a plain line every 30 s): at 60 s the quarter starts
  // at 45 s, so the rate is that since the sample at 30 s.
  RemainingTime r;
  r.Add(30, 600);
  CHECK(r.Estimate(1000) == doctest::Approx(20.0));  // 20 a second since the start
  r.Add(60, 900);
  CHECK(r.Estimate(1000) == doctest::Approx(10.0));  // 10 a second since 30 s
}

TEST_CASE("remaining time: no progress in the last quarter falls back to the whole run") {
  RemainingTime r;
  r.Add(10, 500);
  r.Add(100, 500);  // stalled for 90 s: the window holds no progress
  CHECK(r.Estimate(1000) == doctest::Approx(100.0));  // 500 in 100 s since the start
}

TEST_CASE("remaining time: work that starts over is measured from the restart") {
  RemainingTime r;
  r.Add(10, 800);
  r.Add(20, 100);                // a new run: counted from here
  CHECK(r.Estimate(1000) == 0);  // nothing done since the restart yet
  r.Add(30, 300);
  CHECK(r.Estimate(1000) == doctest::Approx(35.0));  // 20 a second since 20 s
  r.Add(60, 300);  // stalled since 30 s: the rate since the restart
  CHECK(r.Estimate(1000) == doctest::Approx(140.0));
}

}  // namespace
}  // namespace dtr::testing
