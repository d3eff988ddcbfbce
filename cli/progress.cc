#include "cli/progress.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>

namespace dtr::cli {

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)), enabled_(isatty(STDERR_FILENO)), start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() {
  if (drawn_) fmt::print(stderr, "\r\033[K");
}

void ProgressBar::Update(size_t done, size_t total) { Draw(done, total, fmt::format("{}/{}", done, total)); }

void ProgressBar::UpdatePercent(size_t done, size_t total, const std::string& note) {
  Draw(done, total, fmt::format("{:.1f}% {}", total ? 100.0 * done / total : 0.0, note));
}

void ProgressBar::Draw(size_t done, size_t total, const std::string& count) {
  if (!enabled_ || total == 0) return;
  auto now = std::chrono::steady_clock::now();
  if (drawn_ && done < total && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  drawn_ = true;
  double secs = std::chrono::duration<double>(now - start_).count();
  constexpr int kWidth = 30;
  int filled = static_cast<int>(kWidth * done / total);
  std::string bar(filled, '#');
  bar.resize(kWidth, '.');
  double eta = done > 0 ? secs * (total - done) / done : 0;
  fmt::print(stderr, "\r{} [{}] {}  {:.1f}s elapsed, ~{:.0f}s left\033[K", label_, bar, count, secs, eta);
  std::fflush(stderr);
}

void ProgressBar::Status(const std::string& text) {
  if (!enabled_) return;
  drawn_ = true;
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string line = fmt::format("{} {:.1f}s: {}", label_, secs, text);
  if (line.size() > 118) line = line.substr(0, 115) + "...";
  fmt::print(stderr, "\r{}\033[K", line);
  std::fflush(stderr);
}

}  // namespace dtr::cli
