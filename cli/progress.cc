#include "cli/progress.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "checker/engine/replay.h"

namespace dtr::cli {

ProgressBar::ProgressBar(std::string label, std::chrono::milliseconds quiet_start)
    : label_(std::move(label)),
      terminal_(isatty(STDERR_FILENO)),
      quiet_start_(quiet_start),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

ProgressBar::~ProgressBar() {
  if (drawn_ && terminal_) fmt::print(stderr, "\r\033[K");
}

std::chrono::seconds ProgressBar::PlainInterval() {
  static const std::chrono::seconds interval = [] {
    constexpr std::chrono::seconds kDefault{10};
    const char* text = std::getenv("DTRCHECK_PROGRESS_SECONDS");
    if (text == nullptr || *text == '\0') return kDefault;
    int64_t secs = 0;
    const char* end = text + std::strlen(text);
    auto [p, ec] = std::from_chars(text, end, secs);
    if (ec != std::errc() || p != end || secs < 0) {
      fmt::print(stderr,
                 "dtrcheck: DTRCHECK_PROGRESS_SECONDS='{}' is not a whole number of seconds; "
                 "progress lines every {} s\n",
                 text, kDefault.count());
      return kDefault;
    }
    return std::chrono::seconds(secs);
  }();
  return interval;
}

bool ProgressBar::Due(bool finished) {
  const auto now = std::chrono::steady_clock::now();
  if (terminal_) {
    if (!drawn_ && now - start_ < quiet_start_) return false;
    if (drawn_ && !finished && now - last_draw_ < std::chrono::milliseconds(100)) return false;
  } else if (now - last_draw_ < PlainInterval()) {
    return false;
  }
  last_draw_ = now;
  drawn_ = true;
  return true;
}

void ProgressBar::Update(size_t done, size_t total) { Draw(done, total, fmt::format("{}/{}", done, total)); }

void ProgressBar::UpdatePercent(size_t done, size_t total, const std::string& note) {
  Draw(done, total, fmt::format("{:.1f}% {}", total ? 100.0 * done / total : 0.0, note));
}

void ProgressBar::Draw(size_t done, size_t total, const std::string& count) {
  if (total == 0 || !Due(done >= total)) return;
  double secs = std::chrono::duration<double>(last_draw_ - start_).count();
  remaining_.Add(secs, done);
  double eta = remaining_.Estimate(total);
  if (!terminal_) {
    fmt::print(stderr, "{} {}  {:.0f}s elapsed, ~{:.0f}s left\n", label_, count, secs, eta);
    std::fflush(stderr);
    return;
  }
  constexpr int kWidth = 30;
  int filled = static_cast<int>(kWidth * done / total);
  std::string bar(filled, '#');
  bar.resize(kWidth, '.');
  fmt::print(stderr, "\r{} [{}] {}  {:.1f}s elapsed, ~{:.0f}s left\033[K", label_, bar, count, secs, eta);
  std::fflush(stderr);
}

void ProgressBar::Status(const std::string& text) {
  // A status line is drawn as it comes on a terminal (each may stand for a
  // long step), at the plain interval elsewhere.
  if (terminal_) {
    drawn_ = true;
    last_draw_ = std::chrono::steady_clock::now();
  } else if (!Due(false)) {
    return;
  }
  double secs = std::chrono::duration<double>(last_draw_ - start_).count();
  std::string line = fmt::format("{} {:.1f}s: {}", label_, secs, text);
  if (line.size() > 118) line = line.substr(0, 115) + "...";
  if (terminal_)
    fmt::print(stderr, "\r{}\033[K", line);
  else
    fmt::print(stderr, "{}\n", line);
  std::fflush(stderr);
}

Flow RunGauge::OnComputation(const Computation& c) {
  // A new run (explain: the run, then its frontier).
  if (c.event == 0) computations_ = 0, clock_ = 1, remat_ = 0;
  if (c.remat) remat_ += c.clock - clock_;
  clock_ = c.clock;
  if ((++computations_ & 4095) == 0) {
    const int64_t model = clock_ - 1 - remat_;  // simrd's clock starts at 1
    report_({c.program_step, model > 0 ? Overhead(clock_, model) : 1});
  }
  return Flow::kContinue;
}

ReplayProgress::ReplayProgress(ProgressBar& bar, size_t steps, std::string thrash_hint, int runs)
    : bar_(bar), steps_(steps), thrash_hint_(std::move(thrash_hint)), seen_(runs) {
  watchers_.reserve(runs);
  for (int i = 0; i < runs; ++i)
    watchers_.push_back(
        std::make_unique<RunGauge>([this, i](RunGauge::Seen seen) { Report(i, seen); }));
}

void ReplayProgress::Report(int run, RunGauge::Seen seen) {
  std::lock_guard<std::mutex> lock(mu_);
  seen_[run] = seen;
  size_t done = 0;
  double worst = 1;
  std::string note;
  for (size_t i = 0; i < seen_.size(); ++i) {
    done += static_cast<size_t>(seen_[i].step);
    worst = std::max(worst, seen_[i].overhead);
    if (seen_.size() > 1) note += fmt::format("{}{}: ", i ? "; " : "", static_cast<char>('A' + i));
    note +=
        fmt::format("step {}/{}, overhead {:.2f} so far", seen_[i].step, steps_, seen_[i].overhead);
  }
  if (worst > 10 && !thrash_hint_.empty()) note += " " + thrash_hint_;
  bar_.UpdatePercent(done, steps_ * seen_.size(), note);
}

void GridProgress::SetBar(ProgressBar* bar) {
  std::lock_guard<std::mutex> lock(mu_);
  bar_ = bar;
  done_ = total_ = 0;
  gauges_.clear();
  seen_.clear();
}

ReplayObserver* GridProgress::Begin(size_t point, const RunSpec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!bar_) return nullptr;
  std::string label =
      spec.ratio ? spec.ratio->text : fmt::format("{} bytes", spec.budget.value_or(0));
  if (name_heuristics_ && spec.heuristic)
    label = fmt::format("{} {}", spec.heuristic->name, label);
  else if (spec.ratio)
    label = "ratio " + label;
  seen_[point] = {std::move(label), {}};
  auto& gauge = gauges_[point];
  gauge = std::make_unique<RunGauge>([this, point](RunGauge::Seen seen) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = seen_.find(point);
    if (it == seen_.end()) return;  // ended meanwhile
    it->second.second = seen;
    Draw();
  });
  return gauge.get();
}

void GridProgress::End(size_t point) {
  std::lock_guard<std::mutex> lock(mu_);
  seen_.erase(point);
  gauges_.erase(point);  // its replay has returned
}

void GridProgress::Done(size_t done, size_t total) {
  std::lock_guard<std::mutex> lock(mu_);
  done_ = done;
  total_ = total;
  Draw();
}

void GridProgress::Draw() {
  if (!bar_ || total_ == 0) return;
  // Each run under way counts as the share of its program steps done.
  size_t units = done_ * steps_;
  double worst = 1;
  std::string note = fmt::format("{}/{} runs", done_, total_);
  const char* sep = "; under way:";
  for (const auto& [point, run] : seen_) {
    const auto& [label, seen] = run;
    units += static_cast<size_t>(seen.step);
    worst = std::max(worst, seen.overhead);
    note += fmt::format("{} {}: step {}/{}, overhead {:.2f} so far", sep, label, seen.step, steps_,
                        seen.overhead);
    sep = ";";
  }
  if (worst > 10 && !thrash_hint_.empty()) note += " " + thrash_hint_;
  bar_->UpdatePercent(std::min(units, total_ * steps_), total_ * steps_, note);
}

}  // namespace dtr::cli
